#!/usr/bin/env bash
# expect_exit.sh CODE COMMAND...: runs COMMAND, passes only if it exits
# with exactly CODE (a refusal test: a usage error is 2, a crash is not).
want=${1:?CODE}
shift
"$@"
rc=$?
[ "$rc" -eq "$want" ] && exit 0
echo "expect_exit: '$*' exited $rc, want $want" >&2
exit 1
