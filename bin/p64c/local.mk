# bin/p64c: compile GGUF into P64, or rebuild GGUF from P64 (see p64c(1)).
bin_PROGRAMS += bin/p64c/p64c
bin_p64c_p64c_SOURCES = bin/p64c/p64c.c
bin_p64c_p64c_LDADD = $(Q42_CLI_LIBS) $(Q42_PROGRAM_LIBS)
dist_man_MANS += man/p64c.1
dist_bashcompletion_DATA += completions/p64c
dist_zshcompletion_DATA += completions/_p64c
