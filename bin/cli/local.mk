# bin/cli: the programs' shared edge (number parsing, --version, exit
# statuses), linked into each program; never part of libq42.
noinst_LTLIBRARIES += bin/cli/libq42cli.la
bin_cli_libq42cli_la_SOURCES = bin/cli/q42_cli.c bin/cli/q42_cli.h
Q42_CLI_LIBS = bin/cli/libq42cli.la
