# bin/q42run: run a model (generate, tokenize, detokenize); logic in lib/engine, lib/run and lib/measure.
bin_PROGRAMS += bin/q42run/q42run
bin_q42run_q42run_SOURCES = bin/q42run/q42run.c
bin_q42run_q42run_LDADD = $(Q42_CLI_LIBS) $(Q42_PROGRAM_LIBS)
dist_man_MANS += man/q42run.1 man/q42-record.5
dist_bashcompletion_DATA += completions/q42run
dist_zshcompletion_DATA += completions/_q42run
