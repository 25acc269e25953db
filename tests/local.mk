# tests: unit tests (cmocka, TAP), command-line tests (bats), tools, fuzzing.
# Fragments per area live beside this file (tests/*.mk).
