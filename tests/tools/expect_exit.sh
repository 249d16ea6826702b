#!/bin/sh
# ctest helper: expect_exit.sh STATUS REGEX COMMAND [ARGS...]
# Passes when COMMAND exits with STATUS and its output (stdout and stderr) matches the extended
# regular expression REGEX. Used for the CLI's error paths (issue 11 reproducers).
want=$1
pattern=$2
shift 2
out=$("$@" 2>&1)
got=$?
printf '%s\n' "$out" | tail -n 20
if [ "$got" -ne "$want" ]; then
    echo "expect_exit: exit status $got, expected $want"
    exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq -- "$pattern"; then
    echo "expect_exit: output does not match: $pattern"
    exit 1
fi
