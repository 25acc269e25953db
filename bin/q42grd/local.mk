# bin/q42grd: the governance filter; logic in lib/governance.
bin_PROGRAMS += bin/q42grd/q42grd
bin_q42grd_q42grd_SOURCES = bin/q42grd/q42grd.c
bin_q42grd_q42grd_LDADD = $(Q42_CLI_LIBS) $(Q42_PROGRAM_LIBS)
dist_man_MANS += man/q42grd.1 man/q42-policy.5
dist_bashcompletion_DATA += completions/q42grd
dist_zshcompletion_DATA += completions/_q42grd
