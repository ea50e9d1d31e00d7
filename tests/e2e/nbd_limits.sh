#!/usr/bin/env bash
# NBD limits against a hostile client (issue 19): connections per export
# (--nbd-max-connections: one more is closed at once) and the handshake
# timeout (--nbd-handshake-timeout: the whole handshake, so a client that
# trickles bytes in is dropped too); the client being served is unaffected
# and afterwards the limit's worth of clients connect again (nothing leaked).
source "$(dirname "$0")/lib.sh"
NBDC="$(dirname "$0")/../frontends/nbd_client.py"

start_daemon --nbd-max-connections 4 --nbd-handshake-timeout 2
for i in 0 1 2; do gp pd add "$T/drive$i.img" --size 64M >/dev/null; done
gp dg create --level 5 --name r5 pd0 pd1 pd2 >/dev/null
gp vd create r5 --size 16M --name v >/dev/null
gp vd export v --nbd --listen "unix:$T/v.sock" >/dev/null

step "4 connections at most, 2 s for a handshake"
timeout 60 python3 "$NBDC" limits "$T/v.sock" 4 2 || fail "limits (see above)"
grep -q "connection refused: 4 connections already" "$T/daemon.log" || fail "the refused connection was not logged"
grep -q "did not finish its handshake in 2000 ms: dropped" "$T/daemon.log" || fail "the dropped handshake was not logged"
# The server reaps closed clients every 200 ms or so: count the daemon's fds
# once they have settled (the same count twice, 0.3 s apart), not at once.
nfds() { ls /proc/"$DPID"/fd | wc -l; }
settled_fds() {
  local prev=-1 n
  for _ in $(seq 50); do
    n=$(nfds)
    [ "$n" == "$prev" ] && break
    prev=$n
    sleep 0.3
  done
  echo "$n"
}
fds=$(settled_fds)
timeout 60 python3 "$NBDC" limits "$T/v.sock" 4 2 >/dev/null || fail "limits, second round"
for _ in $(seq 50); do [ "$(nfds)" == "$fds" ] && break; sleep 0.2; done  # a leak stays above it
check "daemon fds after a second round" "$fds" "$(nfds)"
stop_daemon
echo "nbd_limits: OK"
