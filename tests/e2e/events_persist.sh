#!/usr/bin/env bash
# Events survive restarts (STATE_DIR/events.jsonl): the sequence goes on
# after a clean stop and after a SIGKILL (no duplicate, no gap: a published
# event is written before anyone sees it), `events --since N` finds the new
# ones, the file is capped and rotated, a torn last line is cut; a scrub
# that finds hundreds of mismatches lists the first few one by one and
# summarises the rest in one event.
source "$(dirname "$0")/lib.sh"

# seqs: every seq the daemon returns, one a line.
seqs() { gp events --json | python3 -c 'import json,sys; [print(json.loads(l)["seq"]) for l in sys.stdin if l.strip()]'; }
# contiguous: the seqs are 1..N, each once.
contiguous() {
  seqs | python3 -c '
import sys
s = [int(l) for l in sys.stdin]
assert s == list(range(1, len(s) + 1)), "seqs not 1..N: %s" % s[-20:]
print(len(s))' || fail "duplicate or missing event sequence numbers"
}

step "events before a clean restart"
start_daemon
for i in 0 1 2; do gp pd add "$T/d$i.img" --size 32M >/dev/null; done
LAST=$(gp events --json | tail -1 | json 'd["seq"]')
check "events so far (daemon_started + 3 drive_added)" 4 "$LAST"
stop_daemon
start_daemon
check "the first event after the restart" "daemon_started $((LAST + 1))" \
  "$(gp events --since "$LAST" --json | head -1 | json 'd["kind"] + " " + str(d["seq"])')"
check "events kept across the restart" $((LAST + 1)) "$(contiguous)"
[ -s "$T/state/events.jsonl" ] || fail "no events.jsonl in the state dir"

step "SIGKILL: nothing published is lost, nothing repeats"
gp pd add "$T/d3.img" --size 32M >/dev/null
BEFORE=$(gp events --json | tail -1 | json 'd["seq"]')
kill -KILL "$DPID"
wait "$DPID" || true
DPID=
start_daemon
check "the first event after the kill" $((BEFORE + 1)) "$(gp events --since "$BEFORE" --json | head -1 | json 'd["seq"]')"
check "events after the kill" $((BEFORE + 1)) "$(contiguous)"

step "a torn last line (a crash in the middle of a write) is cut"
stop_daemon
printf '{"seq": "99999", "kind": "EVENT_KIN' >>"$T/state/events.jsonl"
start_daemon
grep -q "cutting a torn last line" "$T/daemon.log" || fail "the torn line was not reported"
check "events after the torn line" $((BEFORE + 2)) "$(contiguous)"

step "rotation: the file is capped, one older file is kept, the sequence goes on"
stop_daemon
start_daemon --event-log-max 16K
for i in $(seq 60); do
  gp pd add "$T/r.img" --size 8M --id rot >/dev/null
  gp pd remove rot >/dev/null
  rm -f "$T/r.img"
done
[ -f "$T/state/events.jsonl.1" ] || fail "no rotated events.jsonl.1"
for f in events.jsonl events.jsonl.1; do
  [ "$(stat -c %s "$T/state/$f")" -le 16384 ] || fail "$f is larger than 16K"
done
TOP=$(gp events --json | tail -1 | json 'd["seq"]')
stop_daemon
start_daemon --event-log-max 16K
check "seq after a restart on rotated files" $((TOP + 1)) "$(gp events --json | tail -1 | json 'd["seq"]')"
echo "   ok: $(stat -c %s "$T/state/events.jsonl") + $(stat -c %s "$T/state/events.jsonl.1") bytes on disk"

step "a scrub finding hundreds of mismatches: the first 8 listed, the rest in one summary"
gp dg create --level 5 --strip 4K --name r5 pd0 pd1 pd2 >/dev/null
gp dg show r5 --watch --interval 0.2 >/dev/null
FROM=$(gp events --json | tail -1 | json 'd["seq"]')
# Overwrite 2 MiB of member pd1's data area (after its 2 MiB of metadata) behind the daemon's back.
head -c $((2 << 20)) /dev/urandom >"$T/junk"
dd if="$T/junk" of="$T/d1.img" bs=1M seek=3 count=2 conv=notrunc oflag=direct status=none
gp dg scrub r5 start >/dev/null
gp dg show r5 --watch --interval 0.2 >/dev/null
MISMATCHED=$(gp dg show r5 --json | json 'int(d["last_scrub"]["mismatched_stripes"])')
[ "$MISMATCHED" -gt 100 ] || fail "the scrub found only $MISMATCHED mismatches"
# The watch ends when the scrub reads as over; the daemon publishes its
# SCRUB_FINISHED (told before that) from its event queue a moment later.
for _ in $(seq 100); do
  gp events --since "$FROM" --json >"$T/scrub-events"
  grep -q '"scrub_finished"' "$T/scrub-events" && break
  sleep 0.1
done
# A task reads as running until its end is told, so the init's end comes
# before the scrub's start (a late one cut the scrub's events in two).
gp events --json | python3 -c '
import json, sys
k = [e["kind"] for e in map(json.loads, filter(str.strip, sys.stdin)) if e.get("group") == "r5"]
assert k.index("init_finished") < k.index("scrub_started"), k' || fail "init_finished was told after the next task started"
python3 - "$MISMATCHED" "$T/scrub-events" <<'PY' || fail "repetitive scrub events not summarised"
import json, sys
total = int(sys.argv[1])
ev = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
kinds = [e["kind"] for e in ev]  # gpuraid events --json: the words the table prints
one_by_one = kinds.count("mismatch_found")
summaries = [e for e in ev if e["kind"] == "events_suppressed" and e["summarised_kind"] == "mismatch_found"]
assert one_by_one == 8, f"{kinds}: {one_by_one} MISMATCH_FOUND events listed (want the first 8 of {total})"
assert sum(int(s["summarised_count"]) for s in summaries) == total - 8, summaries
assert kinds.index("events_suppressed") < kinds.index("scrub_finished"), kinds
print(f"   ok: {total} mismatches -> {one_by_one} events + {len(summaries)} summary: {summaries[-1]['message'][:90]}...")
PY

step "groups deleted as their initialisation ends: group_deleted is each one's last event"
# The init's end is told by the group's housekeeper, also during the stop
# that a delete makes: that event was published after group_deleted.
for i in 4 5 6; do gp pd add "$T/i$i.img" --size 16M --id i$i >/dev/null; done
for r in 1 2 3 4 5 6; do
  gp dg create --level 5 --name slow$r i4 i5 i6 >/dev/null
  sleep 0.0$r
  gp dg delete slow$r >/dev/null
done
sleep 0.5  # events the stops queued
gp events --json | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin if l.strip()]
seen_end = 0
for r in range(1, 7):
    kinds = [e["kind"] for e in ev if e.get("group") == "slow%d" % r]
    assert kinds[-1] == "group_deleted", kinds
    seen_end += "init_finished" in kinds
print("   ok: group_deleted last in 6 groups (%d ended their init first)" % seen_end)' ||
  fail "an event of a deleted group came after group_deleted"
stop_daemon
echo "events_persist: OK"
