#!/usr/bin/env bash
# Wiping metadata (mdadm --zero-superblock): gpuraid pd wipe makes a drive
# that left a group (replaced, failed, of a deleted group) usable again
# without --force; it refuses what a running group uses. dg delete wipes
# the drives of an offline group too, and names those it could not wipe.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ways_back_lib.sh"

refused_for_a_group() {  # PD WHY: a new group over it is refused, saying WHY
  expect_rc 1 gp dg create --level 1 --name probe "$1" pd9
  expect_err_has "$2"
}

start_daemon
for i in $(seq 0 9); do gp pd add "$T/drive$i.img" --size 64M >/dev/null; done
gp dg create --level 5 --name r5 pd0 pd1 pd2 >/dev/null
gp dg show r5 --watch --interval 0.2 >/dev/null
gp vd create r5 --size 32M --name v >/dev/null
gp vd write v --pattern 1 --length 32M

step "a replaced member keeps its superblock: pd wipe makes it a free, usable drive"
gp pd fail pd1 >/dev/null
gp dg replace r5 --old pd1 --with pd3 >/dev/null
gp dg show r5 --watch --interval 0.2 >/dev/null
refused_for_a_group pd1 "failed"
J=$(gp pd wipe pd1 --json)
echo "   $(json 'd["message"]' <<<"$J")"
check "wiped" True "$(json 'd.get("wiped", False)' <<<"$J")"
check "pd1" "free online" "$(gp pd show pd1 --json | json 'd["role"] + " " + d["state"]')"
has_events DRIVE_WIPED
gp dg create --level 1 --name m1 pd1 pd4 >/dev/null
gp dg delete m1

step "wiping again: nothing there"
J=$(gp pd wipe pd1 --json)
check "wiped" False "$(json 'd.get("wiped", False)' <<<"$J")"

step "refused: an active member of a running group, a dedicated spare; bad input"
expect_rc 1 gp pd wipe pd0
expect_err_has "member 0 of running group r5"
gp pd spare pd5 --group r5 >/dev/null
expect_rc 1 gp pd wipe pd5
expect_err_has "unspare it first"
expect_rc 2 gp pd wipe
expect_rc 1 gp pd wipe nope
gp vd read v --verify-pattern 1 --length 32M

step "a failed member of a running group: wiped in place; put back, it is rebuilt in full"
gp pd unspare pd5 >/dev/null
gp pd fail pd2 >/dev/null
gp pd wipe pd2
gp dg readd r5 pd2 >/dev/null
MSG=$(await_event MEMBER_RETURNED "member 2 re-added")
echo "   event: $MSG"
grep -q "no valid superblock" <<<"$MSG" || fail "the re-add of a wiped member does not say why it is in full"
gp dg show r5 --watch --interval 0.2 >/dev/null
check "r5" optimal "$(gstate r5)"
gp vd read v --verify-pattern 1 --length 32M

step "dg delete of an offline group wipes what it can reach and names the rest"
gp dg create --level 0 --name r0 pd6 pd7 >/dev/null
stop_daemon
mv "$T/drive7.img" "$T/drive7.away"
start_daemon
check "r0 without drive7" offline "$(gstate r0)"
# A member of an offline group: only with --force, and then it is a free drive.
expect_rc 1 gp pd wipe pd6
expect_err_has "give --force"
J=$(gp pd wipe pd6 --force --json)
echo "   $(json 'd["message"]' <<<"$J")"
check "pd6 after a forced wipe" "free online in no group" \
  "$(gp pd show pd6 --json | json 'd["role"] + " " + d["state"] + " in " + (d.get("group") or "no group")')"
expect_rc 0 gp dg delete r0
echo "   $ERR"
expect_err_has "pd7 ($T/drive7.img): cannot open it"
J=$(gp dg list --json)
check "groups" "r5" "$(json '" ".join(g["name"] for g in d.get("groups", []))' <<<"$J")"
check "pd6 free" free "$(gp pd show pd6 --json | json 'd["role"]')"
# pd6 was wiped: a group over it needs no --force (it named a group no listing shows).
gp dg create --level 1 --name m2 pd6 pd9 >/dev/null
gp dg delete m2
# pd7, back, still names the deleted group until wiped.
mv "$T/drive7.away" "$T/drive7.img"
refused_for_a_group pd7 "missing"
gp pd wipe pd7
check "pd7" "free online" "$(gp pd show pd7 --json | json 'd["role"] + " " + d["state"]')"
gp dg create --level 1 --name m3 pd6 pd7 >/dev/null
gp dg delete m3

step "dg delete of a running group: every drive wiped"
gp dg create --level 5 --name r5b pd4 pd6 pd7 --spare pd8 >/dev/null
gp dg delete r5b
for pd in pd4 pd6 pd7 pd8; do
  check "$pd" free "$(gp pd show $pd --json | json 'd["role"]')"
done
gp dg create --level 6 --name r6 pd4 pd6 pd7 pd8 >/dev/null
gp dg delete r6
stop_daemon
echo "wipe: OK"
