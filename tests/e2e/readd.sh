#!/usr/bin/env bash
# A member that comes back (mdadm --re-add). A RAID 5 member failed by the
# operator keeps its drive; two regions are written meanwhile; put back
# (gpuraid dg readd), only those two regions are rebuilt (bytes from the
# answer and from the member_resynced event), data verifies, scrub clean.
# A drive that was missing at start (its regions missed are not known) and
# is back is rebuilt in full, and says why; dg replace --with the same
# drive does the same as dg readd.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ways_back_lib.sh"

MiB=$((1 << 20))
start_daemon
# 256 MiB drives: 254 MiB of member data = 4 bitmap regions of 64 MiB;
# with 3 data strips a region is 192 MiB of the volume.
for i in 0 1 2 3 4; do gp pd add "$T/drive$i.img" --size 256M >/dev/null; done
gp dg create --level 5 --name r5 --assume-zeroed pd0 pd1 pd2 pd3 >/dev/null
gp vd create r5 --rest --name v >/dev/null
# A member's data (less than 256 - 2 MiB: the write-hole guard's log comes after it).
MEMBER_BYTES=$(gp dg show r5 --json | json 'int(d["member_data_bytes"])')
for r in 0 1 2 3; do gp vd write v --offset $((r * 192))M --pattern 1 --length 4M; done
verify() {  # regions 0 and 2 were rewritten (1 MiB each) while pd1 was out
  gp vd read v --offset 0 --verify-pattern 2 --length 1M
  gp vd read v --offset 1M --verify-pattern 1 --length 3M
  gp vd read v --offset 192M --verify-pattern 1 --length 4M
  gp vd read v --offset 384M --verify-pattern 2 --length 1M
  gp vd read v --offset 385M --verify-pattern 1 --length 3M
  gp vd read v --offset 576M --verify-pattern 1 --length 4M
}
scrub_clean() {
  gp dg scrub r5 start >/dev/null
  gp dg show r5 --watch --interval 0.2 >/dev/null
  check "mismatched stripes" 0 "$(gp dg show r5 --json | json 'int(d["last_scrub"].get("mismatched_stripes", 0))')"
}

step "fail pd1, write into regions 0 and 2"
gp pd fail pd1 >/dev/null
gp vd write v --offset 0 --pattern 2 --length 1M
gp vd write v --offset 384M --pattern 2 --length 1M

step "bad input"
expect_rc 2 gp dg readd r5
expect_rc 1 gp dg readd r5 pd0
expect_err_has "nothing to re-add"
expect_rc 1 gp dg readd r5 pd4
expect_err_has "not a member of r5"
expect_rc 1 gp dg readd nope pd1
expect_rc 1 gp dg readd r5 nope

step "dg readd r5 pd1: only the two regions written meanwhile are rebuilt"
J=$(gp dg readd r5 pd1 --json)
echo "   $(json 'd["message"]' <<<"$J")"
check "partial" True "$(json 'd.get("partial", False)' <<<"$J")"
check "regions" 2 "$(json 'int(d["regions"])' <<<"$J")"
check "rebuild bytes" $((2 * 64 * MiB)) "$(json 'int(d["rebuild_bytes"])' <<<"$J")"
gp dg show r5 --watch --interval 0.2 >/dev/null
check "r5" optimal "$(gstate r5)"
check "pd1" online "$(gp pd show pd1 --json | json 'd["state"]')"
MSG=$(await_event MEMBER_RESYNCED "member 1 resynced")
echo "   event: $MSG"
check "bytes rebuilt (event)" "$((2 * 1024 * 64 * 1024)) of $MEMBER_BYTES bytes" \
  "$(sed -n 's/.*resynced: \([0-9]* of [0-9]* bytes\).*/\1/p' <<<"$MSG")"
verify
scrub_clean

step "a member missing at start (its drive was away) and back: rebuilt in full, saying why"
stop_daemon
mv "$T/drive2.img" "$T/drive2.away"
start_daemon
check "r5 without drive2" degraded "$(gstate r5)"
gp vd write v --offset 192M --pattern 3 --length 1M
mv "$T/drive2.away" "$T/drive2.img"
# dg replace with the member's own drive: a re-add.
gp dg replace r5 --old pd2 --with pd2 >/dev/null
MSG=$(await_event MEMBER_RETURNED "member 2 re-added")
echo "   event: $MSG"
grep -q "rebuilt in full" <<<"$MSG" || fail "a member absent at start is not rebuilt in full"
grep -q "left before this group was started" <<<"$MSG" || fail "the event does not say why it is rebuilt in full"
gp dg show r5 --watch --interval 0.2 >/dev/null
check "r5" optimal "$(gstate r5)"
gp vd read v --offset 192M --verify-pattern 3 --length 1M
gp vd read v --offset 193M --verify-pattern 1 --length 3M
gp vd read v --offset 0 --verify-pattern 2 --length 1M
scrub_clean
stop_daemon
echo "readd: OK"
