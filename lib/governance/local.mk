# lib/governance: the q42grd policy, facts (from N-Quads files or a volume),
# thermal state and the gates.
lib_libq42core_la_SOURCES += \
	lib/governance/q42_policy.c lib/governance/q42_facts.c lib/governance/q42_facts_vol.c \
	lib/governance/q42_thermal.c lib/governance/q42_grd.c
q42governancedir = $(includedir)/q42/governance
q42governance_HEADERS = lib/governance/q42_policy.h \
	lib/governance/q42_facts.h lib/governance/q42_thermal.h lib/governance/q42_grd.h
