# lib/wal: the Q42 volume (q42-volume(5)): reader, Merkle tree, writer with
# group commit, the index (checkpoint and node store), indexed readers and
# streaming verify, review, archives, model binding.
lib_libq42core_la_SOURCES += \
	lib/wal/q42_merkle.c lib/wal/q42_merkle.h \
	lib/wal/q42_volume.c lib/wal/q42_volume.h \
	lib/wal/q42_wal.c lib/wal/q42_wal.h lib/wal/q42_wal_impl.h \
	lib/wal/q42_walidx.c lib/wal/q42_walidx.h lib/wal/q42_walread.c \
	lib/wal/q42_walrev.c lib/wal/q42_walrev.h \
	lib/wal/q42_walrec.c lib/wal/q42_walarc.c lib/wal/q42_walbind.c lib/wal/q42_walcheck.c
q42waldir = $(includedir)/q42/wal
q42wal_HEADERS = lib/wal/q42_merkle.h lib/wal/q42_volume.h lib/wal/q42_wal.h
dist_man_MANS += man/q42-volume.5
