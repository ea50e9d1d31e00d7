# Shared by the guest scripts (guest-nvmf.sh, guest-fabrics.sh): logging,
# results, the CLI and the daemon. Source it after setting BIN (gpuraid and
# gpuraidd), W (work dir), R (sockets and state), SOCK, RESULTS and
# failures=0; DAEMON_ARGS (an array) adds options to every gpuraidd start.

log() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*"; }
fail() { log "FAIL: $*"; failures=$((failures + 1)); return 1; }
result() { echo "$*" >>"$RESULTS"; log "result: $*"; }
gp() { "$BIN/gpuraid" --socket $SOCK "$@"; }
# json EXPR: a Python expression on the JSON document d read from stdin.
json() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
# refused WHAT EXPECTED-TEXT CMD...: the command must fail and say EXPECTED-TEXT.
refused() {
  local what=$1 want=$2 out
  shift 2
  if out=$("$@" 2>&1); then fail "$what: accepted ($out)"; return 1; fi
  grep -qi -- "$want" <<<"$out" || { fail "$what: said '$out', expected '$want'"; return 1; }
  log "refused as expected ($what): $out"
}

DPID=""
# start_daemon [OPTION...]: gpuraidd on $R/state, answering within 60 s.
start_daemon() {
  $BIN/gpuraidd --state-dir $R/state --socket $SOCK --log-file $W/gpuraidd.log --reactors 2 "${DAEMON_ARGS[@]}" "$@" \
    >>$W/gpuraidd.out 2>&1 &
  DPID=$!
  for _ in $(seq 1 600); do
    gp info >/dev/null 2>&1 && return 0
    kill -0 $DPID 2>/dev/null || { fail "gpuraidd exited during start-up: $(tail -5 $W/gpuraidd.log)"; DPID=""; return 1; }
    sleep 0.1
  done
  fail "gpuraidd did not answer within 60 s"
}
# stop_daemon: SIGTERM; a clean exit within 120 s.
stop_daemon() {
  [ -n "$DPID" ] || return 0
  kill -TERM $DPID
  timeout 120 tail --pid=$DPID -f /dev/null || fail "gpuraidd still running 120 s after SIGTERM"
  wait $DPID || fail "gpuraidd exit status $? on SIGTERM"
  DPID=""
}
# run_steps STEP...: step_STEP for each, in order, then gpuraidd stopped;
# succeeds when nothing failed (the daemon's log tail otherwise).
run_steps() {
  local s before
  for s in "$@"; do
    log "step $s"
    before=$failures
    step_$s || true
    [ $failures -eq $before ] && log "step $s: passed" || log "step $s: FAILED"
  done
  kill -0 $DPID 2>/dev/null || fail "gpuraidd is gone"
  stop_daemon
  [ $failures -eq 0 ] || { log "daemon log:"; tail -40 $W/gpuraidd.log; }
  log "done: $failures failure(s)"
  [ $failures -eq 0 ]
}
