# lib/run: the request loop: generation with the Sentinel and the sieve,
# typed choices, prefix reuse, and the q42-record line.
lib_libq42core_la_SOURCES += \
	lib/run/q42_generate.c lib/run/q42_choices.c lib/run/q42_record.c \
	lib/run/q42_prefix.c lib/run/q42_statefile.c lib/run/q42_chat.c lib/run/q42_embed.c \
	lib/run/q42_jsonl.c
q42rundir = $(includedir)/q42/run
q42run_HEADERS = lib/run/q42_generate.h lib/run/q42_choices.h lib/run/q42_record.h \
	lib/run/q42_prefix.h lib/run/q42_statefile.h lib/run/q42_chat.h lib/run/q42_embed.h \
	lib/run/q42_jsonl.h
