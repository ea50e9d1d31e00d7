#!/usr/bin/env bash
# What the daemon says about a state change reads right: a member failed by
# the operator (`pd fail`) is logged as such, not as an I/O error ("Operation
# canceled"); a group's note after a degraded start lists its reasons with no
# empty item ("starting degraded; ; pd3 missing").
source "$(dirname "$0")/lib.sh"

start_daemon
for i in 0 1 2 3; do gp pd add "$T/d$i.img" --size 32M >/dev/null; done
gp dg create --level 6 --assume-zeroed pd0 pd1 pd2 pd3 >/dev/null

step "pd fail: the event says the operator failed the member"
gp pd fail pd1 >/dev/null
MSG=$(gp events --json | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e["kind"] == "member_failed": print(e["message"])')
check "member_failed message" "member 1 was failed by the operator" "$MSG"
gp events | grep >/dev/null "member_failed .*member 1 was failed by the operator" || fail "events table: $(gp events)"

step "a degraded start: the note lists each reason once, no empty item"
stop_daemon
mv "$T/d3.img" "$T/d3.away"
start_daemon
NOTE=$(gp dg show dg0 --json | json 'd["note"]')
echo "   note: $NOTE"
case "$NOTE" in
  *"; ;"* | *"; " | "; "* | "") fail "the note has an empty item: '$NOTE'" ;;
esac
[[ "$NOTE" == *"starting degraded"* ]] || fail "the note does not say the group starts degraded: '$NOTE'"
[[ "$NOTE" == *"pd3 missing at $T/d3.img"* ]] || fail "the note does not name pd3: '$NOTE'"
check "dg0 state" degraded "$(gp dg show dg0 --json | json 'd["state"]')"
check "pd3 state" missing "$(gp pd show pd3 --json | json 'd["state"]')"

step "the note goes once the group is whole again (it outlived the recovery)"
stop_daemon
mv "$T/d3.away" "$T/d3.img"
start_daemon
for pd in pd1 pd3; do  # failed by the operator, and stale from its absence
  gp dg readd dg0 $pd >/dev/null
  gp dg show dg0 --watch --interval 0.2 >/dev/null
done
check "dg0 state" optimal "$(gp dg show dg0 --json | json 'd["state"]')"
check "dg0 note" "" "$(gp dg show dg0 --json | json 'd.get("note", "")')"
stop_daemon
echo "state_wording: OK"
