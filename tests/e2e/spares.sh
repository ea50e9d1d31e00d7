#!/usr/bin/env bash
# Spares: a dedicated spare can be taken back (pd unspare): its group's
# spare slot is released (also after a restart: the members' superblocks
# and the registry agree) and the drive is wiped, free for anything. RAID 0
# has no redundancy, so spares for it are refused (dg create --spare, pd
# spare --group) with a clear message. A pool spare for a second failure
# waits for the first's rebuild.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ways_back_lib.sh"

start_daemon
for i in $(seq 0 7); do gp pd add "$T/drive$i.img" --size 64M >/dev/null; done

step "a dedicated spare taken back"
gp dg create --level 5 --name r5 pd0 pd1 pd2 --spare pd3 >/dev/null
gp dg show r5 --watch --interval 0.2 >/dev/null
check "spares" pd3 "$(gp dg show r5 --json | json '",".join(d.get("spares", []))')"
gp pd unspare pd3
check "pd3" "free " "$(gp pd show pd3 --json | json 'd["role"] + " " + d.get("group", "")')"
check "spares of r5" "" "$(gp dg show r5 --json | json '",".join(d.get("spares", []))')"
has_events SPARE_REMOVED
stop_daemon
start_daemon
check "spares of r5 after a restart" "" "$(gp dg show r5 --json | json '",".join(d.get("spares", []))')"
check "pd3 after a restart" free "$(gp pd show pd3 --json | json 'd["role"]')"

step "the group no longer takes it: a failure leaves r5 degraded"
gp pd fail pd1 >/dev/null
sleep 1
check "r5" degraded "$(gstate r5)"
check "pd3 still" free "$(gp pd show pd3 --json | json 'd["role"]')"

step "the drive is wiped: a new group over it needs no --force"
gp dg create --level 1 --name m1 pd3 pd4 >/dev/null
gp dg delete m1

step "spares for raid0 are refused"
expect_rc 1 gp dg create --level 0 --name r0 pd4 pd5 --spare pd6
echo "   $ERR"
expect_err_has "no redundancy"
expect_rc 1 gp dg show r0
gp dg create --level 0 --name r0 pd4 pd5 >/dev/null
expect_rc 1 gp pd spare pd6 --group r0
echo "   $ERR"
expect_err_has "no redundancy"
check "pd6" free "$(gp pd show pd6 --json | json 'd["role"]')"

step "a pool spare given while r5 waits for a drive: r5 takes it at once"
for i in $(seq 8 15); do gp pd add "$T/drive$i.img" --size 64M >/dev/null; done
OUT=$(gp pd spare pd15)
echo "   $OUT"
case "$OUT" in *"r5 took it for member 1"*) ;; *) fail "pd spare did not say r5 took pd15: $OUT" ;; esac
optimal() { [ "$(gstate "$1")" = optimal ]; }
wait_for "r5 optimal again" 60 optimal r5

step "two members of a RAID 6 fail, two pool spares: the second waits for the first's rebuild, then is taken"
gp dg create --level 6 --name r6 pd8 pd9 pd10 pd11 pd12 >/dev/null
gp dg show r6 --watch --interval 0.2 >/dev/null
gp pd spare pd13 >/dev/null
gp pd spare pd14 >/dev/null
gp dg rates r6 --rebuild 4M >/dev/null
gp pd fail pd9 >/dev/null
rebuilding() { [ "$(gstate "$1")" = rebuilding ]; }
wait_for "a pool spare taken for pd9" 10 rebuilding r6
gp pd fail pd11 >/dev/null
sleep 1
WAITING=$(gp pd list --json | json '" ".join(x["id"] for x in d["drives"] if x["role"] == "spare" and x.get("group", "") == "")')
check "one pool spare waits" 1 "$(echo $WAITING | wc -w)"
check "and says nothing went wrong" "" "$(gp pd show $WAITING --json | json 'd.get("note", "")')"
gp dg rates r6 --rebuild 0 >/dev/null
wait_for "r6 optimal again" 60 optimal r6
check "$WAITING" "member r6" "$(gp pd show $WAITING --json | json 'd["role"] + " " + d["group"]')"
gp events --json | grep -q '"spare_failed"' && fail "a spare_failed event: $(gp events | grep -i spare)"
echo "   ok: no spare_failed event"

step "a crash just after r5 took a pool spare, before the registry said so: the restart finds it by its superblock"
# The registry from before the spare (it is saved after the members' superblocks).
gp pd fail pd15 >/dev/null
gp dg rates r5 --rebuild 1M >/dev/null
cp "$T/state/registry.json" "$T/registry.before"
gp pd spare pd7 >/dev/null
check "pd7" "member r5 rebuilding" "$(gp pd show pd7 --json | json 'd["role"] + " " + d["group"] + " " + d["state"]')"
kill_daemon
cp "$T/registry.before" "$T/state/registry.json"
start_daemon
check "pd7 after the restart" "member r5" "$(gp pd show pd7 --json | json 'd["role"] + " " + d["group"]')"
check "its note" "" "$(gp pd show pd7 --json | json 'd.get("note", "")')"
check "r5" rebuilding "$(gstate r5)"
gp dg rates r5 --rebuild 0 >/dev/null
wait_for "r5 optimal again" 60 optimal r5
check "pd15" "free failed" "$(gp pd show pd15 --json | json 'd["role"] + " " + d["state"]')"
check "pd6 (free, untouched)" "free online" "$(gp pd show pd6 --json | json 'd["role"] + " " + d["state"]')"

step "bad input"
expect_rc 1 gp pd unspare pd6
expect_err_has "not a spare"
expect_rc 1 gp pd unspare nope
expect_rc 2 gp pd unspare
stop_daemon
echo "spares: OK"
