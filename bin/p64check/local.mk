# bin/p64check: validate and inspect P64 and GGUF files (see p64check(1)).
bin_PROGRAMS += bin/p64check/p64check
bin_p64check_p64check_SOURCES = bin/p64check/p64check.c bin/p64check/p64check.h \
	bin/p64check/list.c bin/p64check/rows.c bin/p64check/rows.h bin/p64check/quality.c \
	bin/p64check/matvec.c
bin_p64check_p64check_LDADD = $(Q42_CLI_LIBS) $(Q42_PROGRAM_LIBS)
dist_man_MANS += man/p64check.1
dist_bashcompletion_DATA += completions/p64check
dist_zshcompletion_DATA += completions/_p64check
