#!/usr/bin/env bash
# Two daemons, one set of drives (issue 33, item 9): a second gpuraidd
# started over a copy of the first one's registry (another state dir) must
# not assemble the groups the first runs (each group claims its drives:
# Drive::claim), must say why, and must not take the first one's NBD
# socket, nor remove it when it stops.
source "$(dirname "$0")/lib.sh"

start_daemon
for i in 0 1 2; do gp pd add "$T/d$i.img" --size 64M >/dev/null; done
gp dg create --level 5 --name r5 pd0 pd1 pd2 >/dev/null
gp dg show r5 --watch --interval 0.2 >/dev/null
gp vd create r5 --size 16M --name v >/dev/null
gp vd export v --nbd --listen "unix:$T/v.sock" >/dev/null
gp vd write v --pattern 3 --length 16M

step "a second daemon over a copy of the registry: the group stays offline there, saying why"
mkdir -p "$T/state2"
cp "$T/state/registry.json" "$T/state2/"
"$BIN/gpuraidd" --state-dir "$T/state2" --socket "$T/two.sock" >"$T/two.log" 2>&1 &
TWO=$!
for _ in $(seq 100); do [ -S "$T/two.sock" ] && break; sleep 0.1; done
g2() { "$BIN/gpuraid" --socket "$T/two.sock" "$@"; }
check "r5 in the second daemon" offline "$(g2 dg show r5 --json | json 'd["state"]')"
NOTE=$(g2 dg show r5 --json | json 'd.get("note", "")')
echo "   note: $NOTE"
[[ $NOTE == *"is in use"* ]] || fail "the offline group does not say its drives are in use: $NOTE"
expect_rc 1 g2 dg start r5 --force
echo "   $ERR"
[ -S "$T/v.sock" ] || fail "the second daemon took the first one's NBD socket"
kill -TERM $TWO
wait $TWO || true
[ -S "$T/v.sock" ] || fail "the second daemon removed the first one's NBD socket at its stop"

step "the first daemon is untouched"
check "r5" optimal "$(gp dg show r5 --json | json 'd["state"]')"
gp vd read v --verify-pattern 3 --length 16M
stop_daemon
echo "two_daemons: OK"
