#!/usr/bin/env bash
# dg rebuild GROUP start|stop|pause|resume: start begins a rebuild onto a
# spare when none runs (a pool spare added after the failure is taken at
# once); stop holds it at its checkpoint, also across a daemon restart;
# start lets it go on to the end. Refusals say why.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ways_back_lib.sh"

done_bytes() { gp dg show r5 --json | json 'int(d["rebuild"].get("done_bytes", 0))'; }
held() { gp dg show r5 --json | json 'str(d.get("rebuild_held", False)).lower()'; }

r5_with_volume

step "nothing to hold or start yet"
expect_rc 1 gp dg rebuild r5 stop
expect_err_has "no rebuild is running"
expect_rc 1 gp dg rebuild r5 start
expect_err_has "nothing to rebuild"
expect_rc 1 gp dg rebuild r5 resume
expect_err_has "no rebuild is held"

step "pd1 fails with no spare: start says how to get one"
gp pd fail pd1 >/dev/null
expect_rc 1 gp dg rebuild r5 start
echo "   $ERR"
expect_err_has "no spare"

step "a pool spare added after the failure: the degraded group takes it at once"
gp dg rates r5 --rebuild 4M >/dev/null
OUT=$(gp pd spare pd4)
echo "   $OUT"
case "$OUT" in *"r5 took it for member 1"*) ;; *) fail "pd spare did not say r5 took pd4: $OUT" ;; esac
check "pd4 rebuilds" "r5 rebuilding" "$(gp pd show pd4 --json | json 'd["group"] + " " + d["state"]')"
gp dg rebuild r5 start  # running: what start asks for, no error

step "stop: held at its checkpoint"
sleep 1
gp dg rebuild r5 stop
check "held" true "$(held)"
sleep 0.5  # stripes in flight at the hold land first
D1=$(done_bytes)
sleep 1.5
check "rebuilt bytes while held" "$D1" "$(done_bytes)"
expect_rc 1 gp dg rebuild r5 stop
expect_err_has "already held"
expect_rc 1 gp dg rebuild r5 pause

step "still held after a daemon restart"
stop_daemon
start_daemon
check "held after restart" true "$(held)"
check "r5" rebuilding "$(gstate r5)"
D2=$(done_bytes)
sleep 1.5
check "rebuilt bytes while held after restart" "$D2" "$(done_bytes)"
[ "$D2" -gt 0 ] || fail "the rebuild restarted from the beginning"

step "start: it goes on to the end"
gp dg rates r5 --rebuild 0 >/dev/null
gp dg rebuild r5 start
check "held" false "$(held)"
gp dg show r5 --watch --interval 0.2 >/dev/null
check "r5" optimal "$(gstate r5)"
gp vd read v --verify-pattern 1 --length 64M

step "pause/resume are the same hold"
gp pd fail pd2 >/dev/null
gp pd add "$T/drive5.img" --size 64M >/dev/null
gp dg rates r5 --rebuild 4M >/dev/null
gp dg replace r5 --old pd2 --with pd5 >/dev/null
gp dg rebuild r5 pause
check "held" true "$(held)"
gp dg rebuild r5 resume
check "held" false "$(held)"
expect_rc 1 gp dg rebuild r5 resume
expect_err_has "not held"
gp dg rates r5 --rebuild 0 >/dev/null
gp dg show r5 --watch --interval 0.2 >/dev/null
gp vd read v --verify-pattern 1 --length 64M

step "a spare given to the group right before start: whoever starts it, start answers no error"
# The group's housekeeper takes a dedicated spare for a failed member by
# itself: start comes before it, during it (it waits) or after it.
gp pd fail pd3 >/dev/null
gp pd add "$T/drive6.img" --size 64M >/dev/null
gp dg rates r5 --rebuild 4M >/dev/null
gp pd spare pd6 --group r5 >/dev/null
gp dg rebuild r5 start
# (The registry follows the group's events: a moment later when the housekeeper took it.)
pd6_rebuilds() { [ "$(gp pd show pd6 --json | json 'd["group"] + " " + d["state"]')" = "r5 rebuilding" ]; }
wait_for "pd6 rebuilding in r5" 10 pd6_rebuilds
gp dg rebuild r5 start
gp dg rates r5 --rebuild 0 >/dev/null
gp dg show r5 --watch --interval 0.2 >/dev/null
check "r5" optimal "$(gstate r5)"
gp vd read v --verify-pattern 1 --length 64M
stop_daemon
echo "rebuild_control: OK"
