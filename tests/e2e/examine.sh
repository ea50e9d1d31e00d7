#!/usr/bin/env bash
# gpuraid pd examine PATH (mdadm --examine; issue 33, item 16): the
# superblock a drive holds, read from the drive itself, with the daemon
# running or not, without its registry.
source "$(dirname "$0")/lib.sh"

start_daemon
for i in 0 1 2 3; do gp pd add "$T/d$i.img" --size 64M >/dev/null; done
gp dg create --level 5 --name r5 pd0 pd1 pd2 --spare pd3 >/dev/null
gp dg show r5 --watch --interval 0.2 >/dev/null

step "a member and a spare, while the daemon runs"
J=$(gp pd examine "$T/d1.img" --json)
check "d1" "r5 member 1 raid5 3" "$(json 'd["group"] + " " + d["role"] + " " + str(d["slot"]) + " " + d["level"] + " " + str(d["members"])' <<<"$J")"
check "d1 slots" "active active active spare" "$(json '" ".join(s["state"] for s in d["slots"])' <<<"$J")"
check "d3" "spare" "$(gp pd examine "$T/d3.img" --json | json 'd["role"]')"
gp pd examine "$T/d0.img" | grep >/dev/null "^group_uuid" || fail "the text form: $(gp pd examine "$T/d0.img")"

step "after a failure, with the daemon stopped: the generations tell who is stale"
gp pd fail pd2 >/dev/null
stop_daemon
G0=$(gp pd examine "$T/d0.img" --json | json 'd["generation"]')
G2=$(gp pd examine "$T/d2.img" --json | json 'd["generation"]')
[ "$G2" -lt "$G0" ] || fail "the failed member's generation $G2 is not behind $G0"
# The spare took slot 2 over: d0's table names the spare's uuid there, not d2's.
U2=$(gp pd examine "$T/d2.img" --json | json 'd["member_uuid"]')
check "slot 2 as d0 sees it is d2" False \
  "$(gp pd examine "$T/d0.img" --json | json '" ".join(str(s["uuid"] == "'"$U2"'") for s in d["slots"] if s["slot"] == 2)')"

step "no superblock, no drive: exit 1, saying why"
head -c 8M /dev/zero >"$T/blank.img"
expect_rc 1 gp pd examine "$T/blank.img"
[[ $ERR == *"holds no valid gpuraid superblock"* ]] || fail "$ERR"
expect_rc 1 gp pd examine "$T/none.img"
expect_rc 2 gp pd examine
echo "examine: OK"
