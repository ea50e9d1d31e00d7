#!/usr/bin/env bash
# Security: the Unix socket's mode; plain TCP refused (unless loopback and
# asked for); over TLS, a client with a certificate from the right CA gets
# in, clients without a certificate or with a foreign one are rejected.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/certs_lib.sh"
command -v openssl >/dev/null || { echo "SKIP: openssl is not installed (scripts/setup.sh installs it)"; exit 77; }

step "socket mode 0660 by default, 0600 when asked"
start_daemon
check "socket mode" 660 "$(stat -c %a "$SOCK")"
stop_daemon
start_daemon --socket-mode 0600
check "socket mode" 600 "$(stat -c %a "$SOCK")"
stop_daemon
start_daemon --socket-mode 0666
check "socket mode" 666 "$(stat -c %a "$SOCK")"
grep -q "socket-mode 0666: every local user can connect" "$T/daemon.log" || fail "0666 taken without a warning"
stop_daemon

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
step "plain TCP is refused (exit 2) unless on loopback with --insecure-tcp"
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/s2" --socket "$T/s2.sock" --listen-tcp "0.0.0.0:$PORT"
echo "   $ERR" | tail -1
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/s2" --socket "$T/s2.sock" --listen-tcp "0.0.0.0:$PORT" --insecure-tcp
echo "   $ERR" | tail -1
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/s2" --socket "$T/s2.sock" --listen-tcp "127.0.0.1:$PORT" --tls-cert /etc/hostname
echo "   $ERR" | tail -1

step "certificates: a CA, the daemon's, a client's, and a foreign client's"
C=$T/certs
make_test_certs "$C"

step "daemon on TCP with TLS and client certificates"
start_daemon --listen-tcp "127.0.0.1:$PORT" --tls-cert "$C/server.pem" --tls-key "$C/server.key" --tls-ca "$C/ca.pem"
TLS=(--connect "127.0.0.1:$PORT" --tls-ca "$C/ca.pem" --tls-server-name localhost --timeout 5)
expect_rc 0 env -u GPURAID_SOCKET "$BIN/gpuraid" "${TLS[@]}" --tls-cert "$C/client.pem" --tls-key "$C/client.key" info
echo "   ok: a client with a valid certificate gets in"
expect_rc 3 env -u GPURAID_SOCKET "$BIN/gpuraid" "${TLS[@]}" info
echo "   ok: no client certificate: rejected ($ERR)"
expect_rc 3 env -u GPURAID_SOCKET "$BIN/gpuraid" "${TLS[@]}" --tls-cert "$C/rogue.pem" --tls-key "$C/rogue.key" info
echo "   ok: a foreign certificate: rejected ($ERR)"
# The Unix socket still serves local operators.
gp info >/dev/null
stop_daemon
echo "security: OK"
