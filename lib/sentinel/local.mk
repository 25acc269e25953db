# lib/sentinel: the Sentinel: wait-free rings between the decode loop and
# its watcher, and the rules that watch each step.
lib_libq42core_la_SOURCES += \
	lib/sentinel/q42_ring.c lib/sentinel/q42_sentinel.c
q42sentineldir = $(includedir)/q42/sentinel
q42sentinel_HEADERS = lib/sentinel/q42_ring.h lib/sentinel/q42_sentinel.h
