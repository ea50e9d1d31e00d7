# Shared by the frontend host tests: start the export harness on mem drives,
# wait for its exports, stop it (only the process we started) at exit.
set -euo pipefail
: "${HARNESS:?HARNESS must point to gpuraid-export-harness}"
WORK=$(mktemp -d /tmp/gpuraid-fe-XXXXXX)
HPID=""
cleanup() {
  if [ -n "$HPID" ] && kill -0 "$HPID" 2>/dev/null; then kill -TERM "$HPID"; wait "$HPID" || true; fi
  [ -n "${KEEP_WORK:-}" ] && echo "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"   # fio and friends write state files into the working directory

skip() { echo "SKIP: $*"; exit 77; }
need() { for t in "$@"; do command -v "$t" >/dev/null || skip "$t is not installed (scripts/setup.sh installs it)"; done; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# start_harness ARGS...: starts it in the background, waits for the state file.
start_harness() {
  rm -f "$WORK/state"
  "$HARNESS" --state "$WORK/state" "$@" >"$WORK/harness.out" 2>"$WORK/harness.err" &
  HPID=$!
  for _ in $(seq 1 200); do
    [ -f "$WORK/state" ] && return 0
    kill -0 "$HPID" 2>/dev/null || { cat "$WORK/harness.err" >&2; fail "harness exited during start-up"; }
    sleep 0.05
  done
  fail "harness did not come up"
}
state() { sed -n "s/^$1=//p" "$WORK/state"; }

# stop_harness: SIGTERM, expect a clean exit (status 0) and no crash.
stop_harness() {
  kill -0 "$HPID" 2>/dev/null || { cat "$WORK/harness.err" >&2; fail "harness is not running any more"; }
  kill -TERM "$HPID"
  local rc=0
  wait "$HPID" || rc=$?
  HPID=""
  [ "$rc" -eq 0 ] || { cat "$WORK/harness.err" >&2; fail "harness exited with status $rc"; }
}
