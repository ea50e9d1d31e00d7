#!/usr/bin/env bash
# States that tell the truth (docs/STATES.md), through the CLI, its --json
# and the metrics, which use the same words: RAID 0 has no redundancy; a
# new group is initializing (redundancy pending) until its init is done; a
# RAID 6 with a failed member and no spare is degraded with one more
# failure to go; a group past its redundancy is failed (lost); a group
# that cannot be assembled is offline (unknown), its members that are
# there offline and the ones that are not missing.
source "$(dirname "$0")/lib.sh"

PORT=$(free_port)
start_daemon --metrics "$PORT"
for i in $(seq 0 13); do gp pd add "$T/d$i.img" --size 64M >/dev/null; done
gpj() { gp "$@" --json; }
field() { gpj dg show "$1" | json "$2"; }
# One group's STATE, REDUNDANCY and SURVIVES in the table of `dg list`.
list_row() { gp dg list | awk -v g="$1" '$1 == g { print $(NF-3), $(NF-2), $(NF-1) }'; }
metric() { scrape "$PORT" | grep -F "$1" | awk '{ print $2 }'; }

step "RAID 0 has no redundancy: none, 0 further failures, not claimed"
gp dg create --level 0 --name r0 pd0 pd1 >/dev/null
check "r0 redundancy" none "$(field r0 'd["redundancy"]')"
check "r0 failures tolerated" 0 "$(field r0 'd["failures_tolerated"]')"
check "r0 redundancy claimed" False "$(field r0 'd["redundancy_claimed"]')"
check "r0 state" optimal "$(field r0 'd["state"]')"
gp dg show r0 | grep >/dev/null '^redundancy: *none: raid0 has no redundancy' || fail "dg show r0 does not say none: $(gp dg show r0)"
check "dg list r0 STATE REDUNDANCY SURVIVES" "optimal none -" "$(list_row r0)"
check "metric dg_redundancy r0 none" 1 "$(metric 'gpuraid_dg_redundancy{dg="r0",redundancy="none"}')"

step "a new RAID 6 is initializing, redundancy pending, until its init is done"
# The init runs at the rebuild rate: slow from the start (64 MiB drives init in a fraction of a second).
STATE=$(gp dg create --level 6 --name r6 --rebuild-rate 1M pd2 pd3 pd4 pd5 pd6 pd7 --json | json 'd["state"]')
check "r6 state when created" initializing "$STATE"
check "r6 state" initializing "$(field r6 'd["state"]')"
check "r6 redundancy" pending "$(field r6 'd["redundancy"]')"
check "dg list r6 STATE REDUNDANCY SURVIVES" "initializing pending -" "$(list_row r6)"
gp dg show r6 | grep >/dev/null '^redundancy: *pending: init is making parity' || fail "dg show r6: $(gp dg show r6)"
check "metric dg_state r6 initializing" 1 "$(metric 'gpuraid_dg_state{dg="r6",state="initializing"}')"
check "metric dg_state r6 optimal" 0 "$(metric 'gpuraid_dg_state{dg="r6",state="optimal"}')"
gp dg rates r6 --rebuild 0 >/dev/null
gp dg show r6 --watch --interval 0.2 >/dev/null
check "r6 state after init" optimal "$(field r6 'd["state"]')"
check "r6 redundancy after init" full "$(field r6 'd["redundancy"]')"
check "r6 failures tolerated" 2 "$(field r6 'd["failures_tolerated"]')"
check "dg list r6 STATE REDUNDANCY SURVIVES" "optimal full 2" "$(list_row r6)"

step "RAID 6 with a failed member and no spare: degraded, survives 1 more"
gp pd fail pd4 >/dev/null
check "r6 state" degraded "$(field r6 'd["state"]')"
check "r6 redundancy" reduced "$(field r6 'd["redundancy"]')"
check "r6 failures tolerated" 1 "$(field r6 'd["failures_tolerated"]')"
gp dg show r6 | grep >/dev/null '^redundancy: *reduced: survives 1 more member failure' || fail "dg show r6: $(gp dg show r6)"
check "pd4 state" failed "$(gpj pd show pd4 | json 'd["state"]')"
check "the table says what --json says" failed "$(gp pd list | awk '$1 == "pd4" { print $6 }')"
check "metric pd_state pd4 failed" 1 "$(metric 'gpuraid_pd_state{pd="pd4",dg="r6",state="failed"}')"
check "metric failures tolerated" 1 "$(metric 'gpuraid_dg_failures_tolerated{dg="r6"}')"
gp pd fail pd5 >/dev/null
check "r6 failures tolerated" 0 "$(field r6 'd["failures_tolerated"]')"
gp dg show r6 | grep >/dev/null '^redundancy: *reduced: survives no further member failure' || fail "dg show r6: $(gp dg show r6)"

step "a RAID 5 that loses a second member while its I/O runs: failed, redundancy lost"
gp dg create --level 5 --assume-zeroed --name f5 pd8 pd9 pd10 >/dev/null
gp vd create f5 --rest --name fv >/dev/null
gp vd write fv --pattern 1 --length 16M >/dev/null
gp pd fail pd8 >/dev/null
: >"$T/d9.img"  # the file behind member pd9 loses its contents: reads come up short
gp vd read fv --verify-pattern 1 --length 16M >/dev/null 2>&1 && fail "a read of a failed group succeeded"
check "f5 state" failed "$(field f5 'd["state"]')"
check "f5 redundancy" lost "$(field f5 'd["redundancy"]')"
gp dg show f5 | grep >/dev/null '^redundancy: *lost: the group failed' || fail "dg show f5: $(gp dg show f5)"

step "a group that cannot be assembled: offline, redundancy unknown; members there are offline, the others missing"
gp dg create --level 5 --assume-zeroed --name o5 pd11 pd12 pd13 >/dev/null
stop_daemon
mv "$T/d12.img" "$T/d12.away"
mv "$T/d13.img" "$T/d13.away"
start_daemon --metrics "$PORT"
check "o5 state" offline "$(field o5 'd["state"]')"
check "o5 redundancy" unknown "$(field o5 'd["redundancy"]')"
check "o5 member states" "offline missing missing" "$(field o5 '" ".join(m["state"] for m in d["members"])')"
check "pd11 state" offline "$(gpj pd show pd11 | json 'd["state"]')"
check "pd12 state" missing "$(gpj pd show pd12 | json 'd["state"]')"
gp dg show o5 | grep >/dev/null '^redundancy: *unknown: the group is offline' || fail "dg show o5: $(gp dg show o5)"
check "metric dg_state o5 offline" 1 "$(metric 'gpuraid_dg_state{dg="o5",state="offline"}')"
check "metric pd_state pd11 offline" 1 "$(metric 'gpuraid_pd_state{pd="pd11",dg="o5",state="offline"}')"

step "every state word the metrics use is one the CLI knows (docs/STATES.md)"
DOC="$(dirname "$0")/../../docs/STATES.md"
WORDS=$(scrape "$PORT" | grep -oE '(state|redundancy)="[a-z_]*"' | cut -d'"' -f2 | sort -u | tr '\n' ' ')
echo "   words: $WORDS"
for w in $WORDS; do grep -qF "| \`$w\` |" "$DOC" || fail "the metrics' word '$w' has no row in docs/STATES.md"; done
stop_daemon
echo "states: OK"
