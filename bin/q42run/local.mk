# bin/q42run: run a model (see q42run(1)); one file per mode (q42run.h), logic in libq42.
bin_PROGRAMS += bin/q42run/q42run
bin_q42run_q42run_SOURCES = bin/q42run/q42run.c bin/q42run/q42run.h bin/q42run/common.c \
	bin/q42run/text.c bin/q42run/generate.c bin/q42run/score.c bin/q42run/bench.c \
	bin/q42run/quality.c bin/q42run/devices.c bin/q42run/reuse.c \
	bin/q42run/chat.c
bin_q42run_q42run_LDADD = $(Q42_CLI_LIBS) $(Q42_PROGRAM_LIBS)
dist_man_MANS += man/q42run.1 man/q42-record.5 man/q42-state.5
dist_bashcompletion_DATA += completions/q42run
dist_zshcompletion_DATA += completions/_q42run
