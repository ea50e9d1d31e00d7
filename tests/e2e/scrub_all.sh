#!/usr/bin/env bash
# packaging/gpuraid-scrub-all (what gpuraid-scrub.timer runs monthly): a scrub
# of every group; a group whose scrub the daemon refuses now (one is running)
# is reported and the others are still scrubbed, the exit status then 1.
source "$(dirname "$0")/lib.sh"
SCRUB_ALL=$(cd "$(dirname "$0")/../.." && pwd)/packaging/gpuraid-scrub-all
export GPURAID=$BIN/gpuraid
start_daemon
for i in $(seq 0 6); do gp pd add "$T/drive$i.img" --size 32M >/dev/null; done
gp dg create --level 5 --strip 64K --name a5 --assume-zeroed pd0 pd1 pd2 >/dev/null
gp dg create --level 1 --name m1 --assume-zeroed pd3 pd4 >/dev/null
gp dg create --level 1 --name z1 --assume-zeroed pd5 pd6 >/dev/null
checked() { gp dg show "$1" --json | json 'int(d.get("last_scrub", {}).get("stripes_checked", 0))'; }
wait_scrubbed() {
  for _ in $(seq 100); do [ "$(checked "$1")" -gt 0 ] && return 0; sleep 0.1; done
  fail "no scrub of $1 finished within 10 s"
}

step "every group healthy: each is scrubbed, exit 0"
expect_rc 0 "$SCRUB_ALL"
for g in a5 m1 z1; do wait_scrubbed $g; echo "   ok: $g scrubbed ($(checked $g) stripes)"; done

step "one group already scrubbing (slowly): reported, the others scrubbed, exit 1"
# scrubs_started: how many scrubs the daemon has started (its events).
scrubs_started() { gp events --json | python3 -c 'import json,sys; print(sum(json.loads(l)["kind"] == "scrub_started" for l in sys.stdin if l.strip()))'; }
gp dg rates m1 --scrub 4K >/dev/null
gp dg scrub m1 start >/dev/null
n=$(scrubs_started)
[ "$n" -eq 4 ] || fail "$n scrub_started events before the second run, want 4"
expect_rc 1 "$SCRUB_ALL"
for _ in $(seq 50); do [ "$(scrubs_started)" -eq 6 ] && break; sleep 0.1; done
check "scrubs started by the second run (a5, z1)" 6 "$(scrubs_started)"
gp dg scrub m1 stop >/dev/null
[[ "$ERR" == *"m1: not scrubbed"* ]] || fail "the degraded group is not reported: $ERR"
echo "scrub_all: OK"
