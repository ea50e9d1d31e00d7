# Shared by the e2e scripts: a gpuraidd on a temporary state dir, the CLI,
# and assertions. Usage: source lib.sh BIN_DIR
set -euo pipefail
BIN=${1:?usage: $0 BIN_DIR (where gpuraidd and gpuraid are)}
T=$(mktemp -d /tmp/gpuraid-e2e-XXXXXX)
SOCK=$T/gpuraid.sock
export GPURAID_SOCKET=$SOCK
DPID=

# gone_within PID SECONDS: whether PID has exited within SECONDS.
gone_within() {
  local _
  for _ in $(seq $(($2 * 10))); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  ! kill -0 "$1" 2>/dev/null
}

# A script that failed must still end: a daemon that does not stop within
# 60 s of SIGTERM (a mounted device it serves, say) is killed.
cleanup() {
  if [ -n "$DPID" ] && kill -0 "$DPID" 2>/dev/null; then
    kill -TERM "$DPID"
    gone_within "$DPID" 60 || kill -KILL "$DPID" 2>/dev/null || true
    wait "$DPID" || true
  fi
  rm -rf "$T"
}
trap cleanup EXIT

step() { echo "== $*"; }
fail() {
  echo "FAIL: $*" >&2
  [ -f "$T/daemon.log" ] && { echo "--- daemon log (last 30 lines)" >&2; tail -30 "$T/daemon.log" >&2; }
  # A sanitized daemon (scripts/sanitize.sh asan, tsan-daemon): its report whole, from the top.
  local report='ERROR: (Address|Leak)Sanitizer|runtime error:|WARNING: ThreadSanitizer'
  [ -f "$T/daemon.log" ] && grep -q -E "$report" "$T/daemon.log" && {
    echo "--- sanitizer report in the daemon log" >&2
    sed -n -E "/$report/,\$p" "$T/daemon.log" | head -150 >&2
  }
  exit 1
}
gp() { "$BIN/gpuraid" "$@"; }

# start_daemon [OPTION...]: gpuraidd on STATE_DIR (default $T/state).
start_daemon() {
  "$BIN/gpuraidd" --state-dir "${STATE_DIR:-$T/state}" --socket "$SOCK" "$@" >>"$T/daemon.log" 2>&1 &
  DPID=$!
  # DAEMON_START_S: how long to wait (slow machines, e.g. the TCG VM lane).
  for _ in $(seq $((${DAEMON_START_S:-10} * 10))); do
    gp info >/dev/null 2>&1 && return 0
    kill -0 "$DPID" 2>/dev/null || fail "gpuraidd exited at start"
    sleep 0.1
  done
  fail "gpuraidd did not answer within ${DAEMON_START_S:-10} s"
}

# stop_daemon: SIGTERM, and the clean stop must end within DAEMON_STOP_S (default 60): a
# daemon that hangs in its stop fails here with every thread's stack (gdb) and its log,
# rather than as the test's timeout with nothing to go on.
stop_daemon() {
  kill -TERM "$DPID"
  local rc=0
  if ! gone_within "$DPID" "${DAEMON_STOP_S:-60}"; then
    echo "--- gpuraidd did not stop within ${DAEMON_STOP_S:-60} s of SIGTERM; its threads:" >&2
    if command -v gdb >/dev/null; then
      timeout 60 gdb -p "$DPID" -batch -ex "thread apply all bt" 2>&1 | grep -E "^Thread|^#" | head -300 >&2
    else
      echo "(gdb is not installed: no stacks)" >&2
    fi
    kill -KILL "$DPID"
    wait "$DPID" 2>/dev/null
    DPID=
    fail "gpuraidd hung in its clean stop (SIGTERM)"
  fi
  wait "$DPID" || rc=$?
  DPID=
  [ "$rc" -eq 0 ] || fail "gpuraidd exited with $rc on SIGTERM (want 0)"
}

# expect_rc CODE CMD...: runs CMD, wants exit CODE and (when non-zero) a message on stderr.
expect_rc() {
  local want=$1 rc=0
  shift
  OUT=$("$@" 2>"$T/stderr") || rc=$?
  ERR=$(cat "$T/stderr")
  [ "$rc" -eq "$want" ] || fail "exit $rc (want $want) from: $* -- $ERR"
  if [ "$want" -ne 0 ] && [ -z "$ERR" ]; then fail "no error message from: $*"; fi
  return 0
}

# json EXPR: evaluates a Python expression on the JSON document d read from stdin.
json() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

# check "what" EXPECTED ACTUAL
check() { [ "$2" == "$3" ] || fail "$1: got '$3', want '$2'"; echo "   ok: $1 = $3"; }

# has_events KIND...: every kind (its word, as `gpuraid events` prints it:
# MEMBER_FAILED or member_failed) is among the daemon's recent events
# (gpuraid events --json: JSON Lines, one object a line).
has_events() {
  gp events --json | python3 -c '
import json, sys
kinds = {json.loads(l)["kind"] for l in sys.stdin if l.strip()}
missing = {k.lower() for k in sys.argv[1:]} - kinds
sys.exit("missing events: %s" % sorted(missing) if missing else 0)' "$@" || fail "events missing"
  echo "   ok: events $*"
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on now.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# scrape PORT: the daemon's metrics page (python3: no curl needed); fails when nothing answers.
scrape() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "http://127.0.0.1:$1/metrics"; }
