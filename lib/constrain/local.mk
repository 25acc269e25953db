# lib/constrain: constrained decoding: the grammar (EBNF) compiler and the
# sieve that masks the tokens a grammar state cannot take.
lib_libq42core_la_SOURCES += \
	lib/constrain/q42_grammar.c lib/constrain/q42_sieve.c
q42constraindir = $(includedir)/q42/constrain
q42constrain_HEADERS = lib/constrain/q42_grammar.h lib/constrain/q42_sieve.h
