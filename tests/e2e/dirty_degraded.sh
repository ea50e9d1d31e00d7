#!/usr/bin/env bash
# Dirty and degraded without the write-hole guard (created with
# --write-hole-guard off; with it, the default, see write_hole_guard.sh):
# a RAID 5 member failed, writes, then gpuraidd is SIGKILLed. At start the group is offline (its parity may be stale where
# writes were in flight: the write hole). gpuraid dg start says why; with
# --force it starts, saying what that risks (regions, stripes, bytes), and
# the group rebuilds onto a replacement, or a pool spare. dg start also
# brings back a group that was offline because its drives were missing.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ways_back_lib.sh"

r5_with_volume --write-hole-guard off

step "dg show says the guard is off"
check "r5 write_hole_guard" False "$(gp dg show r5 --json | json 'd["write_hole_guard"]')"
gp dg show r5 | grep >/dev/null "write-hole guard.*off (" || fail "dg show does not say the write-hole guard is off"

step "fail pd1, write, idle: a SIGKILL then is no dirty degraded stop (r5 starts degraded)"
gp pd fail pd1 >/dev/null
gp vd write v --pattern 1 --length 8M
sleep 7  # past the bitmap's idle time (5 s): the regions written are clean on disk
kill_daemon
start_daemon
check "r5 after a crash while idle" degraded "$(gstate r5)"

step "write, SIGKILL the daemon at once: r5 is offline, saying how to get it back"
gp vd write v --pattern 2 --length 8M
kill_daemon
start_daemon
check "r5 after the crash" offline "$(gstate r5)"
NOTE=$(gp dg show r5 --json | json 'd["note"]')
echo "   note: $NOTE"
grep -q "dg start r5 --force" <<<"$NOTE" || fail "the note does not name the way out (dg start r5 --force)"
expect_rc 1 gp dg scrub r5 start
expect_err_has "dg start r5"

step "dg start without force: assembly is tried again and refused, saying what force would risk"
expect_rc 1 gp dg start r5
echo "   $ERR"
expect_err_has "stopped uncleanly while degraded"
expect_err_has "bytes of data held by member 1"
check "r5 still" offline "$(gstate r5)"

step "bad input"
expect_rc 2 gp dg start
expect_rc 1 gp dg start nope
expect_rc 1 gp dg start 'bad name!'

step "dg start --force: started degraded; the answer says what it risks"
gp dg start r5 --force
check "r5 forced" degraded "$(gstate r5)"
MSG=$(last_event GROUP_STARTED)
echo "   event: $MSG"
grep -q "with force: parity of 1 dirty region " <<<"$MSG" || fail "the GROUP_STARTED event does not give the risk"
expect_rc 1 gp dg start r5
expect_err_has "is running"
# The writes had completed before the kill: the data reads back.
gp vd read v --verify-pattern 2 --length 8M
gp vd read v --offset 8M --verify-pattern 1 --length 56M

step "and it rebuilds onto a replacement as usual; scrub clean"
rebuild_onto_pd4_and_scrub

step "the JSON answer of a forced start gives the figures; a pool spare then takes over"
gp vd export v --nbd --listen "unix:$T/v.sock" >/dev/null
gp pd fail pd2 >/dev/null
gp vd write v --pattern 3 --length 4M
kill_daemon
start_daemon
# pd1 (replaced above) wiped and made a pool spare while r5 is offline.
gp pd wipe pd1 >/dev/null
gp pd spare pd1 >/dev/null
J=$(gp dg start r5 --force --json)
check "stale regions" 1 "$(json 'int(d["stale_regions"])' <<<"$J")"
[ "$(json 'int(d["stale_bytes"])' <<<"$J")" -gt 0 ] || fail "no stale bytes given: $J"
[ "$(json 'int(d["stale_stripes"])' <<<"$J")" -gt 0 ] || fail "no stale stripes given: $J"
echo "   risk: $(json 'd["risk"]' <<<"$J")"
check "the export is back" true "$(gp vd show v --json | json 'str(d["export"]["active"]).lower()')"
gp vd read v --verify-pattern 3 --length 4M
gp dg show r5 --watch --interval 0.2 >/dev/null
check "pd1" "r5 online" "$(gp pd show pd1 --json | json 'd["group"] + " " + d["state"]')"
check "r5 rebuilt onto the pool spare" optimal "$(gstate r5)"
gp vd read v --verify-pattern 3 --length 4M
gp vd read v --offset 4M --verify-pattern 2 --length 4M

step "missing drives: offline at start; dg start once they are back"
stop_daemon
mkdir "$T/away"
mv "$T/drive3.img" "$T/drive4.img" "$T/away/"
start_daemon
check "r5 without two drives" offline "$(gstate r5)"
expect_rc 1 gp dg start r5
echo "   $ERR"
expect_err_has "still offline"
mv "$T/away/drive3.img" "$T/away/drive4.img" "$T/"
gp dg start r5
check "r5 back" optimal "$(gstate r5)"
check "v online again" true "$(gp vd show v --json | json 'str(d.get("online", False)).lower()')"
gp vd read v --verify-pattern 3 --length 4M
stop_daemon
echo "dirty_degraded: OK"
