#!/usr/bin/env bash
# A second gpuraidd that asks for a port the first one serves is refused at
# start, as for the API socket: the metrics port (--metrics) and the API's
# TCP port (--listen-tcp). Neither may start and share the scrapes or the
# clients with the first.
source "$(dirname "$0")/lib.sh"

MPORT=$(free_port)
APORT=$(free_port)
start_daemon --metrics "$MPORT" --listen-tcp "127.0.0.1:$APORT" --insecure-tcp
scrape "$MPORT" | grep >/dev/null gpuraid_member_ios_total || fail "no metrics from the first daemon"

# second NAME SOCKET ARGS...: a second daemon on its own state dir; it must exit non-zero.
second() {
  local name=$1 sock=$2 rc=0
  shift 2
  timeout 20 "$BIN/gpuraidd" --state-dir "$T/$name" --socket "$sock" "$@" >"$T/$name.log" 2>&1 || rc=$?
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "a second gpuraidd with $* started (exit $rc): $(cat "$T/$name.log")"
  echo "   ok: refused (exit $rc): $(tail -1 "$T/$name.log")"
}

step "the same --metrics port: refused"
second m2 "$T/m2.sock" --metrics "$MPORT"
grep -q "cannot listen for metrics on 127.0.0.1:$MPORT" "$T/m2.log" || fail "no reason given: $(cat "$T/m2.log")"

step "the same --listen-tcp port: refused"
second t2 "$T/t2.sock" --listen-tcp "127.0.0.1:$APORT" --insecure-tcp
grep -q "cannot listen" "$T/t2.log" || fail "no reason given: $(cat "$T/t2.log")"

step "the same socket: refused (as before)"
second s2 "$SOCK"
[ "$(gp info --json | json 'd["pid"]')" == "$DPID" ] || fail "the first daemon no longer answers on its socket"

step "the first daemon still serves every scrape"
for _ in $(seq 10); do
  scrape "$MPORT" | grep >/dev/null gpuraid_member_ios_total || fail "a scrape went elsewhere"
done
stop_daemon
echo "exclusive_listen: OK"
