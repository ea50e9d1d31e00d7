#!/usr/bin/env bash
# The NBD listen policy (issue 19): plain NBD on a TCP address that is not
# loopback is refused with a clear message; --insecure-listen accepts it,
# and then it is logged, kept across a restart, and shown by vd show (text
# and --json) and the metrics. Loopback and Unix sockets are unaffected.
source "$(dirname "$0")/lib.sh"
command -v nbdinfo >/dev/null || fail "nbdinfo is needed (libnbd-bin; scripts/setup.sh installs it)"

MPORT=$(free_port)
start_daemon --metrics "$MPORT"
for i in 0 1 2; do gp pd add "$T/drive$i.img" --size 64M >/dev/null; done
gp dg create --level 5 --name r5 pd0 pd1 pd2 >/dev/null
gp vd create r5 --size 16M --name v >/dev/null
PORT=$(free_port)

step "plain NBD on 0.0.0.0 is refused, and nothing is exported"
expect_rc 1 gp vd export v --nbd --listen "tcp:0.0.0.0:$PORT"
echo "   $ERR"
[[ $ERR == *"refusing plain NBD on '0.0.0.0'"* && $ERR == *"--insecure-listen"* && $ERR == *"--tls require"* ]] ||
  fail "the refusal does not say why and what to do: $ERR"
check "export after the refusal" None "$(gp vd show v --json | json 'd.get("export")')"
python3 -c 'import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0)' "$PORT" ||
  fail "something listens on $PORT after the refusal"
expect_rc 1 gp vd export v --nbd --listen "tcp:[::]:$PORT"
expect_rc 1 gp vd export v --nbd --listen "tcp:0.0.0.0:$PORT" --tls allow --nbd-tls-psk /etc/hostname
echo "   ok: --tls allow is not enough on an exposed address"

step "--insecure-listen only where it means something"
expect_rc 1 gp vd export v --nbd --listen "unix:$T/v.sock" --insecure-listen
expect_rc 1 gp vd export v --nbd --listen "tcp:127.0.0.1:$PORT" --insecure-listen
echo "   $ERR"

step "loopback and Unix sockets need no flag"
gp vd export v --nbd --listen "tcp:127.0.0.1:$PORT" >/dev/null
gp vd unexport v >/dev/null
gp vd export v --nbd --listen "unix:$T/v.sock" >/dev/null
gp vd show v | grep >/dev/null "export security.*no TLS" || fail "vd show: $(gp vd show v)"
gp vd unexport v >/dev/null

step "a Unix socket another process listens on is never taken; a stale one is (issue 33, item 9)"
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1); time.sleep(60)' "$T/busy.sock" &
OTHER=$!
for _ in $(seq 50); do [ -S "$T/busy.sock" ] && break; sleep 0.1; done
expect_rc 1 gp vd export v --nbd --listen "unix:$T/busy.sock"
[[ $ERR == *"in use: another process listens on it"* ]] || fail "the refusal does not say why: $ERR"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$T/busy.sock" ||
  fail "the other process's socket was taken away"
kill $OTHER; wait $OTHER 2>/dev/null || true
gp vd export v --nbd --listen "unix:$T/busy.sock" >/dev/null  # stale now: replaced
# Replaced behind the daemon's back: the unexport leaves the newcomer's socket alone.
rm "$T/busy.sock"
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$T/busy.sock"
gp vd unexport v >/dev/null
[ -S "$T/busy.sock" ] || fail "the unexport removed a socket it did not make"
echo "   ok: refused while served elsewhere, stale one replaced, a foreign one left alone"

step "--insecure-listen: accepted, logged, shown, in the metrics"
gp vd export v --nbd --listen "tcp:0.0.0.0:$PORT" --insecure-listen >/dev/null
nbdinfo --size "nbd://127.0.0.1:$PORT/v" >/dev/null || fail "nbdinfo cannot reach the insecure export"
check "vd show --json insecure_listen" True "$(gp vd show v --json | json 'd["export"]["nbd_security"]["insecure_listen"]')"
gp vd show v | grep >/dev/null "INSECURE listen" || fail "vd show does not say the export is insecure: $(gp vd show v)"
grep -q "WITHOUT TLS (--insecure-listen)" "$T/daemon.log" || fail "the daemon did not log the insecure export"
scrape "$MPORT" | grep >/dev/null '^gpuraid_vd_nbd_insecure_listen{vd="v",dg="r5",tls="off"} 1$' ||
  fail "metrics: $(scrape "$MPORT" | grep nbd_insecure || echo 'no gpuraid_vd_nbd_insecure_listen')"
echo "   ok: logged, vd show, --json and the metrics say so"

step "kept across a restart"
stop_daemon
start_daemon --metrics "$MPORT"
check "insecure_listen after a restart" True "$(gp vd show v --json | json 'd["export"]["nbd_security"]["insecure_listen"]')"
check "active after a restart" True "$(gp vd show v --json | json 'd["export"]["active"]')"
nbdinfo --size "nbd://127.0.0.1:$PORT/v" >/dev/null || fail "the restored export does not answer"
gp vd unexport v >/dev/null
scrape "$MPORT" | grep >/dev/null 'gpuraid_vd_nbd_insecure_listen{' && fail "the metric outlived the export"
stop_daemon
echo "nbd_listen_policy: OK"
