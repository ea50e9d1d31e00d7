#!/usr/bin/env bash
# The write-hole guard (on by default): a RAID 5 member failed, writes, then
# gpuraidd is SIGKILLed at once, several times. At each start the group is
# back by itself, degraded (not offline, no force), its log replayed, and
# every block reads back: those written before the failure (pattern 1) and
# the writes that had completed (pattern 2). The same group created with
# the guard off stays offline: dirty_degraded.sh.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ways_back_lib.sh"

r5_with_volume

step "dg show says the guard is on (the default)"
check "r5 write_hole_guard" True "$(gp dg show r5 --json | json 'd["write_hole_guard"]')"
gp dg show r5 | grep >/dev/null "write-hole guard.*on (" || fail "dg show does not say the write-hole guard is on"

step "fail pd1, write, SIGKILL at once, three times: r5 starts degraded by itself each time"
gp pd fail pd1 >/dev/null
for i in 1 2 3; do
  gp vd write v --pattern 2 --length 8M
  kill_daemon
  start_daemon
  check "r5 after crash $i" degraded "$(gstate r5)"
done
NOTE=$(gp dg show r5 --json | json 'd.get("note", "")')
echo "   note: $NOTE"
gp vd read v --verify-pattern 2 --length 8M
gp vd read v --offset 8M --verify-pattern 1 --length 56M

step "it rebuilds onto a replacement as usual; scrub clean"
rebuild_onto_pd4_and_scrub
stop_daemon
echo "write_hole_guard: OK"
