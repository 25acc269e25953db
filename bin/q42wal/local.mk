# bin/q42wal: commit records to a Q42 volume, verify, prove (see q42wal(1)).
bin_PROGRAMS += bin/q42wal/q42wal
bin_q42wal_q42wal_SOURCES = bin/q42wal/q42wal.c
bin_q42wal_q42wal_LDADD = $(Q42_CLI_LIBS) $(Q42_PROGRAM_LIBS)
dist_man_MANS += man/q42wal.1
dist_bashcompletion_DATA += completions/q42wal
dist_zshcompletion_DATA += completions/_q42wal
