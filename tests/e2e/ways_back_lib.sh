# Helpers of the "ways back" scripts (dirty_degraded, readd, wipe, spares,
# rebuild_control, delete_exported); sourced after lib.sh.

# SIGKILL: the daemon stops uncleanly (its groups' bitmaps stay dirty).
kill_daemon() {
  kill -KILL "$DPID"
  wait "$DPID" 2>/dev/null || true
  DPID=
}

# wait_for "what" SECONDS CMD...: until CMD succeeds.
wait_for() {
  local what=$1 secs=$2
  shift 2
  for _ in $(seq $((secs * 10))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  fail "timed out after ${secs}s waiting for: $what"
}

gstate() { gp dg show "$1" --json | json 'd["state"]'; }

# last_event KIND: (MEMBER_FAILED or member_failed) the message of the newest event of that kind ("" if none).
last_event() {
  gp events --json | python3 -c '
import json, sys
m = ""
for l in sys.stdin:
    if l.strip():
        e = json.loads(l)
        if e["kind"] == sys.argv[1].lower(): m = e.get("message", "")
print(m)' "$1"
}

# await_event KIND TEXT: the message of the newest event of that kind once
# it says TEXT (group events are published a moment after the call that
# caused them returns); fails after 10 s.
await_event() {
  local m
  for _ in $(seq 100); do
    m=$(last_event "$1")
    grep -q -- "$2" <<<"$m" && { echo "$m"; return 0; }
    sleep 0.1
  done
  fail "no $1 event saying '$2' (newest: '$m')"
}

# expect_err_has TEXT: the last expect_rc's stderr says TEXT.
expect_err_has() { grep -q -- "$1" <<<"$ERR" || fail "the message does not say '$1': $ERR"; echo "   ok: says '$1'"; }

# r5_with_volume [dg create options]: a daemon with pd0..pd4 (64 MiB), r5
# over pd0-pd3 (initialised) and v, a 64 MiB VD on it written with pattern 1.
r5_with_volume() {
  start_daemon
  for i in 0 1 2 3 4; do gp pd add "$T/drive$i.img" --size 64M >/dev/null; done
  gp dg create --level 5 --name r5 "$@" pd0 pd1 pd2 pd3 >/dev/null
  gp dg show r5 --watch --interval 0.2 >/dev/null
  gp vd create r5 --size 64M --name v >/dev/null
  gp vd write v --pattern 1 --length 64M
}

# rebuild_onto_pd4_and_scrub: r5's failed pd1 replaced by pd4 and rebuilt;
# v reads back (pattern 2 over the first 8 MiB, 1 after); a scrub is clean.
rebuild_onto_pd4_and_scrub() {
  gp dg replace r5 --old pd1 --with pd4 >/dev/null
  gp dg show r5 --watch --interval 0.2 >/dev/null
  check "r5 rebuilt" optimal "$(gstate r5)"
  gp vd read v --verify-pattern 2 --length 8M
  gp vd read v --offset 8M --verify-pattern 1 --length 56M
  gp dg scrub r5 start >/dev/null
  gp dg show r5 --watch --interval 0.2 >/dev/null
  check "mismatched stripes" 0 "$(gp dg show r5 --json | json 'int(d["last_scrub"].get("mismatched_stripes", 0))')"
}
