#!/usr/bin/env bash
# gpuraidd --config FILE: options from a "key = value" file (the long option
# names); the command line wins over the file; an unknown key or a missing
# file is a configuration error (exit 2, changing nothing); the packaged
# configuration (daemon/gpuraidd.conf) is accepted as it is.
source "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)

# run_daemon ARGS...: starts gpuraidd with ARGS, waits until SOCKET answers.
run_daemon() {
  local sock=$1
  shift
  "$BIN/gpuraidd" "$@" >>"$T/daemon.log" 2>&1 &
  DPID=$!
  for _ in $(seq 100); do
    gp --socket "$sock" info >/dev/null 2>&1 && return 0
    kill -0 "$DPID" 2>/dev/null || fail "gpuraidd exited at start"
    sleep 0.1
  done
  fail "gpuraidd did not answer on $sock within 10 s"
}

step "state dir, socket and log level from the file alone"
cat >"$T/a.conf" <<CONF
# a comment
state-dir = $T/state-a
socket = $T/a.sock
log-level = debug
reactors = 1
CONF
run_daemon "$T/a.sock" --config "$T/a.conf"
OUT=$(gp --socket "$T/a.sock" --json info)
check "reactors from the file" 1 "$(json 'd["reactors"]' <<<"$OUT")"
[ -d "$T/state-a" ] || fail "the state dir of the file was not used"
stop_daemon

step "the command line wins over the file"
run_daemon "$T/b.sock" --config "$T/a.conf" --socket "$T/b.sock" --reactors 2
check "reactors from the command line" 2 "$(gp --socket "$T/b.sock" --json info | json 'd["reactors"]')"
[ ! -e "$T/a.sock" ] || fail "the file's socket was used as well"
stop_daemon

step "an unknown key, a bad value, a missing file: exit 2, nothing made"
printf 'state-dir = %s\nno-such-option = 1\n' "$T/state-c" >"$T/c.conf"
expect_rc 2 "$BIN/gpuraidd" --config "$T/c.conf"
[[ "$ERR" == *"no-such-option"* ]] || fail "the error does not name the key: $ERR"
printf 'state-dir = %s\nreactors = many\n' "$T/state-c" >"$T/d.conf"
expect_rc 2 "$BIN/gpuraidd" --config "$T/d.conf"
printf 'state-dir = %s\nlog-level = loud\n' "$T/state-c" >"$T/e.conf"
expect_rc 2 "$BIN/gpuraidd" --config "$T/e.conf"
[[ "$ERR" == *"loud"* ]] || fail "the error does not name the bad level: $ERR"
expect_rc 2 "$BIN/gpuraidd" --config "$T/missing.conf"
[ ! -e "$T/state-c" ] || fail "a refused configuration made the state dir"

step "the packaged configuration is accepted (its paths overridden here)"
run_daemon "$T/p.sock" --config "$SRC/daemon/gpuraidd.conf" --state-dir "$T/state-p" --socket "$T/p.sock" \
  --socket-group "$(id -gn)"
check "socket mode from the packaged file" 660 "$(stat -c %a "$T/p.sock")"
stop_daemon
echo "config_file: OK"
