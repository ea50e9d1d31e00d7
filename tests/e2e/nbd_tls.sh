#!/usr/bin/env bash
# NBD over TLS (NBD_OPT_STARTTLS, issue 19) with real clients (libnbd's
# nbdinfo and nbdcopy): X.509 with client certificates checked against a CA
# (a client with a certificate from another CA, or none, is rejected), and
# TLS-PSK (a wrong key is rejected); --tls require refuses plain clients
# with the protocol's error (NBD_REP_ERR_TLS_REQD); --tls allow serves both;
# the setting is kept across a daemon restart.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/certs_lib.sh"
for t in nbdinfo nbdcopy openssl; do command -v $t >/dev/null || fail "$t is needed (scripts/setup.sh installs it)"; done
NBDC="$(dirname "$0")/../frontends/nbd_client.py"

C=$T/certs
make_test_certs "$C"
# libnbd's certificate directory layout (what tls-certificates= points at).
mkdir -p "$T/good" "$T/rogue" "$T/nocert"
cp "$C/ca.pem" "$T/good/ca-cert.pem"; cp "$C/client.pem" "$T/good/client-cert.pem"; cp "$C/client.key" "$T/good/client-key.pem"
# The rogue client's certificate names the same issuer as the real CA (so a
# client sends it) but is signed by another key: the signature check fails.
(
  cd "$C"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=gpuraid test CA" -keyout fake-ca.key -out fake-ca.pem
  openssl req -newkey rsa:2048 -nodes -subj "/CN=intruder" -keyout forged.key -out forged.csr
  openssl x509 -req -in forged.csr -CA fake-ca.pem -CAkey fake-ca.key -CAcreateserial -days 2 -out forged.pem
) >/dev/null 2>&1 || fail "openssl could not make the forged certificate"
cp "$C/ca.pem" "$T/rogue/ca-cert.pem"; cp "$C/forged.pem" "$T/rogue/client-cert.pem"; cp "$C/forged.key" "$T/rogue/client-key.pem"
cp "$C/ca.pem" "$T/nocert/ca-cert.pem"
echo "alice:$(openssl rand -hex 32)" >"$T/keys.psk"
echo "alice:$(openssl rand -hex 32)" >"$T/wrong.psk"

start_daemon
for i in 0 1 2; do gp pd add "$T/drive$i.img" --size 64M >/dev/null; done
gp dg create --level 5 --name r5 pd0 pd1 pd2 >/dev/null
gp vd create r5 --size 16M --name v >/dev/null
head -c 8M /dev/urandom >"$T/data"
# readback URI: the export's first 8 MiB are $T/data.
readback() { rm -f "$T/out"; nbdcopy "$1" "$T/out" && cmp -n 8388608 "$T/out" "$T/data"; }
PORT=$(free_port)
X509=(--nbd-tls-cert "$C/server.pem" --nbd-tls-key "$C/server.key" --nbd-tls-ca "$C/ca.pem")

step "bad TLS settings are refused"
expect_rc 1 gp vd export v --nbd --listen "tcp:127.0.0.1:$PORT" --tls require
[[ $ERR == *"needs its keys"* && $ERR != *"not both"* ]] || fail "no keys at all reads as too many: $ERR"
echo "   $ERR"
expect_rc 1 gp vd export v --nbd --listen "tcp:127.0.0.1:$PORT" --tls require --nbd-tls-cert "$C/server.pem" --nbd-tls-key "$C/server.key"
expect_rc 1 gp vd export v --nbd --listen "tcp:127.0.0.1:$PORT" --tls require "${X509[@]}" --nbd-tls-psk "$T/keys.psk"
[[ $ERR == *"not both"* ]] || fail "both kinds of keys: $ERR"
expect_rc 1 gp vd export v --nbd --listen "tcp:127.0.0.1:$PORT" --tls require --nbd-tls-cert "$C/ca.key" --nbd-tls-key "$C/server.key" --nbd-tls-ca "$C/ca.pem"
echo "   $ERR"
echo "not a key" >"$T/bad.psk"
expect_rc 1 gp vd export v --nbd --listen "tcp:127.0.0.1:$PORT" --tls require --nbd-tls-psk "$T/bad.psk"
echo "   $ERR"
check "export after the refusals" None "$(gp vd show v --json | json 'd.get("export")')"

step "X.509, TLS required, on 0.0.0.0 (allowed: TLS is required)"
URI=$(gp vd export v --nbd --listen "tcp:0.0.0.0:$PORT" --tls require "${X509[@]}" --json | json 'd["export"]["uri"]')
check "URI scheme" "nbds://127.0.0.1:$PORT/v" "${URI/0.0.0.0/127.0.0.1}"
gp vd show v | grep >/dev/null "TLS required (X.509" || fail "vd show: $(gp vd show v)"
S="nbds://127.0.0.1:$PORT/v"
nbdcopy "$T/data" "$S?tls-certificates=$T/good" || fail "nbdcopy to the TLS export failed"
readback "$S?tls-certificates=$T/good" || fail "data read back over TLS differs"
echo "   ok: nbdcopy wrote and read back 8 MiB over TLS with a client certificate"
check "nbdinfo size" 16777216 "$(nbdinfo --size "$S?tls-certificates=$T/good")"
! nbdinfo --size "$S?tls-certificates=$T/rogue" >/dev/null 2>"$T/e" || fail "a certificate from another CA was accepted"
echo "   ok: a client certificate from another CA is rejected: $(tail -1 "$T/e")"
! nbdinfo --size "$S?tls-certificates=$T/nocert" >/dev/null 2>"$T/e" || fail "a client without a certificate was accepted"
echo "   ok: a client without a certificate is rejected"
grep -q "TLS handshake failed.*signature" "$T/daemon.log" || fail "the daemon did not log the forged certificate"
grep -q "TLS handshake failed: Certificate is required" "$T/daemon.log" || fail "the daemon did not log the missing one"
! nbdinfo --size "nbd://127.0.0.1:$PORT/v" >/dev/null 2>"$T/e" || fail "a plain client was served"
echo "   ok: a plain libnbd client is refused: $(tail -1 "$T/e")"
python3 "$NBDC" tls-required "tcp:127.0.0.1:$PORT" || fail "the protocol's answers to a plain client"
readback "$S?tls-certificates=$T/good" || fail "data changed by the rejected clients"

step "kept across a daemon restart"
stop_daemon
start_daemon
check "tls after a restart" require "$(gp vd show v --json | json 'd["export"]["nbd_security"]["tls"]')"
readback "$S?tls-certificates=$T/good" || fail "the restored TLS export"
! nbdinfo --size "nbd://127.0.0.1:$PORT/v" >/dev/null 2>&1 || fail "a plain client was served after the restart"
gp vd unexport v >/dev/null

step "TLS-PSK on a Unix socket"
gp vd export v --nbd --listen "unix:$T/v.sock" --tls require --nbd-tls-psk "$T/keys.psk" >/dev/null
P="nbds+unix://alice@/v?socket=$T/v.sock"
readback "$P&tls-psk-file=$T/keys.psk" || fail "reading over TLS-PSK"
! nbdinfo --size "$P&tls-psk-file=$T/wrong.psk" >/dev/null 2>"$T/e" || fail "a wrong PSK was accepted"
echo "   ok: PSK read back; a wrong key is rejected: $(tail -1 "$T/e")"
! nbdinfo --size "nbd+unix:///v?socket=$T/v.sock" >/dev/null 2>&1 || fail "a plain client was served"
gp vd unexport v >/dev/null

step "--tls allow: TLS and plain clients both served"
gp vd export v --nbd --listen "unix:$T/v.sock" --tls allow --nbd-tls-psk "$T/keys.psk" >/dev/null
check "plain size" 16777216 "$(nbdinfo --size "nbd+unix:///v?socket=$T/v.sock")"
check "TLS size" 16777216 "$(nbdinfo --size "nbds+unix://alice@/v?socket=$T/v.sock&tls-psk-file=$T/keys.psk")"
gp vd unexport v >/dev/null
stop_daemon
echo "nbd_tls: OK"
