#!/usr/bin/env bash
# Hot replace (issue 33, item 15; mdadm --replace): `dg replace` of a
# working member copies it onto the new drive while it serves, the group
# optimal and its redundancy whole all along, and moves it there when done;
# the old drive is a free, healthy drive again, its metadata wiped. Data
# written during the copy verifies afterwards, also with another member
# failed (so the new drive's strips are read); the move survives a restart.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ways_back_lib.sh"

start_daemon
for i in 0 1 2 3 4; do gp pd add "$T/drive$i.img" --size 96M >/dev/null; done
gp dg create --level 5 --name r5 --assume-zeroed pd0 pd1 pd2 pd3 >/dev/null
gp vd create r5 --rest --name v >/dev/null
gp vd write v --offset 0 --pattern 1 --length 64M >/dev/null

step "dg replace of a working member: copied while it serves"
gp dg rates r5 --rebuild 8M >/dev/null  # a copy of some seconds
OUT=$(gp dg replace r5 --member 1 --with pd4)
echo "   $OUT"
[[ "$OUT" == *"copying member 1 onto pd4 while it serves"* ]] || fail "dg replace said: $OUT"
check "replace running" True "$(gp dg show r5 --json | json 'd["replace"].get("running", False)')"
check "dg list's task" replace "$(gp dg list | awk '$1 == "r5" { print $NF }')"
check "state during the copy" optimal "$(gstate r5)"
check "redundancy during the copy" full "$(gp dg show r5 --json | json 'd["redundancy"]')"
check "pd1 still the member" pd1 "$(gp dg show r5 --json | json 'd["members"][1]["drive"]')"
gp status | grep >/dev/null "replace" || fail "gpuraid status shows no replace: $(gp status)"
expect_rc 1 gp dg replace r5 --member 2 --with pd4
gp vd write v --offset 8M --pattern 2 --length 4M >/dev/null
gp vd write v --offset 40M --pattern 3 --length 4M >/dev/null
gp dg rates r5 --rebuild 0 >/dev/null
gp dg show r5 --watch --interval 0.2 >/dev/null
member1() { gp dg show r5 --json | json 'd["members"][1]["drive"]'; }
for _ in $(seq 600); do [ "$(member1)" = pd4 ] && break; sleep 0.1; done
check "member 1" pd4 "$(member1)"
gp dg show r5 --watch --interval 0.2 >/dev/null
check "state" optimal "$(gstate r5)"
MSG=$(await_event REPLACE_FINISHED "moved from")
echo "   event: $MSG"
check "pd1 role" free "$(gp pd show pd1 --json | json 'd["role"]')"
check "pd1 failed" False "$(gp pd show pd1 --json | json 'd.get("failed", False)')"
# The drive that joined gets the volume table (dg import), once its resync is done.
for _ in $(seq 100); do
  [ "$(gp pd examine "$T/drive4.img" --json | json '" ".join(v["id"] for v in d["volumes"])')" = v ] && break
  sleep 0.1
done
check "the new member's volume table" v "$(gp pd examine "$T/drive4.img" --json | json '" ".join(v["id"] for v in d["volumes"])')"

verify() {
  gp vd read v --offset 0 --verify-pattern 1 --length 8M >/dev/null || fail "first 8M"
  gp vd read v --offset 8M --verify-pattern 2 --length 4M >/dev/null || fail "written during the copy (8M)"
  gp vd read v --offset 12M --verify-pattern 1 --length 28M >/dev/null || fail "12M..40M"
  gp vd read v --offset 40M --verify-pattern 3 --length 4M >/dev/null || fail "written during the copy (40M)"
  gp vd read v --offset 44M --verify-pattern 1 --length 20M >/dev/null || fail "44M..64M"
}
step "data: as written, also read through the new member with another one failed"
verify
gp pd fail pd0 >/dev/null
verify

step "after a restart: pd4 is member 1, pd1 a free drive that a new group may take"
stop_daemon
start_daemon
check "member 1" pd4 "$(gp dg show r5 --json | json 'd["members"][1]["drive"]')"
verify
gp dg create --level 1 --name m pd1 "$(gp pd add "$T/extra.img" --size 96M --json | json 'd["id"]')" >/dev/null ||
  fail "pd1 cannot be used again (its metadata was not wiped?)"
stop_daemon
echo "hot_replace: OK"
