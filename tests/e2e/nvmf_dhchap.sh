#!/usr/bin/env bash
# vd export --nvmf --dhchap-secret[-file] on any host: malformed keys are
# refused with a reason that never quotes the key, before anything is
# created; a key never reaches the daemon's log, the registry or the state
# dir when the export is refused. The real target: tests/vm/guest-nvmf.sh.
source "$(dirname "$0")/lib.sh"

# A configfs root where nvmet is not: the refusal is checked on every host,
# also where the kernel's target is loaded (issue 33, item 4).
start_daemon --nvmet-root "$T/no-nvmet"
for i in 0 1 2; do gp pd add "$T/d$i.img" --size 32M >/dev/null; done
gp dg create --level 5 --assume-zeroed --name g pd0 pd1 pd2 >/dev/null
gp vd create g --size 8M --name v >/dev/null
H=nqn.2014-08.org.nvmexpress:uuid:0f0e0d0c-0b0a-0908-0706-050403020100
NVMF=(--nvmf tcp://127.0.0.1:4420 --allow-host "$H")
# Made by nvme-cli (nvme gen-dhchap-key -s 000102...1f -m 0); BODY: a part that must never be shown.
KEY='DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:'
BODY=AAECAwQFBgcICQoLDA0ODxAREhMU
echo "$KEY" >"$T/key"
chmod 600 "$T/key"

refused() {  # CODE TEXT ARGS...: `vd export v ARGS` fails with exit CODE saying TEXT, quoting no key
  local code=$1 text=$2
  shift 2
  expect_rc "$code" gp vd export v "$@"
  grep -qi -- "$text" <<<"$ERR" || fail "vd export v $*: said '$ERR', want '$text'"
  grep -q "AAECAwQF\|KfiaR" <<<"$ERR" && fail "the error quotes the key: $ERR"
  echo "   ok: refused: $ERR"
}

step "bad command lines"
refused 2 "excludes" "${NVMF[@]}" --dhchap-secret "$KEY" --dhchap-secret-file "$T/key"
refused 2 "requires" --nvmf tcp://127.0.0.1:4420 --allow-any-host --dhchap-secret "$KEY"
refused 2 "cannot open" "${NVMF[@]}" --dhchap-secret-file "$T/no-such-key"

step "malformed keys, given and read from a file or stdin"
refused 1 "DHHC-1:HH:BASE64:" "${NVMF[@]}" --dhchap-secret "secret"
refused 2 "empty" "${NVMF[@]}" --dhchap-secret-file /dev/null
refused 2 "empty" "${NVMF[@]}" --dhchap-secret ""
refused 1 "empty" "${NVMF[@]}" --dhchap-secret-file - <<<"  "
refused 1 "CRC does not match" "${NVMF[@]}" --dhchap-secret "${KEY/AAECAwQF/AAECAwQG}"
refused 1 "32, 48 or 64" "${NVMF[@]}" --dhchap-secret "DHHC-1:00:AAECAwQFBgcICQoL:"
refused 1 "not 00, 01, 02 or 03" "${NVMF[@]}" --dhchap-secret "${KEY/:00:/:07:}"
refused 1 "not valid base64" "${NVMF[@]}" --dhchap-secret-file - <<<"DHHC-1:00:${BODY//A/*}AAAAAAAAAAAAAAAAAAAA:"
refused 1 "DHHC-1:HH:BASE64:" "${NVMF[@]}" --dhchap-secret-file - <<<"${KEY%:}"

step "a good key, without the kernel's target"
refused 1 "modprobe nvmet" "${NVMF[@]}" --dhchap-secret-file "$T/key"
refused 1 "modprobe nvmet" "${NVMF[@]}" --dhchap-secret-file - <"$T/key"
check "v still not exported" "" "$(gp vd show v --json | json 'd.get("export", "")')"
check "no secret kept for a refused export" "" "$(ls -A "$T/state/secrets" 2>/dev/null)"
stop_daemon
grep -rl "$BODY" "$T/daemon.log" "$T/state" && fail "the key is in the files above"
echo "   ok: the key is in neither the daemon's log nor its state dir"
