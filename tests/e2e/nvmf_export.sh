#!/usr/bin/env bash
# vd export --nvmf on any host: bad requests are refused with a clear reason
# before anything is created (the VD stays unexported); without the kernel's
# target the refusal names the modprobe. The real target: tests/vm/guest-nvmf.sh.
source "$(dirname "$0")/lib.sh"

# A configfs root where nvmet is not: the refusal is checked on every host,
# also where the kernel's target is loaded (issue 33, item 4).
start_daemon --nvmet-root "$T/no-nvmet"
for i in 0 1 2; do gp pd add "$T/d$i.img" --size 32M >/dev/null; done
gp dg create --level 5 --assume-zeroed --name g pd0 pd1 pd2 >/dev/null
gp vd create g --size 8M --name v >/dev/null
H=nqn.2014-08.org.nvmexpress:uuid:0f0e0d0c-0b0a-0908-0706-050403020100

refused() {  # CODE TEXT ARGS...: `vd export v ARGS` fails with exit CODE saying TEXT
  local code=$1 text=$2
  shift 2
  expect_rc "$code" gp vd export v "$@"
  grep -qi -- "$text" <<<"$ERR" || fail "vd export v $*: said '$ERR', want '$text'"
  echo "   ok: refused ($*): $ERR"
}

step "bad command lines"
refused 2 "excludes" --nvmf tcp://127.0.0.1:4420 --ublk --allow-host "$H"
refused 2 "excludes" --nvmf tcp://127.0.0.1:4420 --allow-host "$H" --allow-any-host
refused 2 "requires" --allow-host "$H"

step "bad requests"
refused 1 "allow-host" --nvmf tcp://127.0.0.1:4420
refused 1 "no transport" --nvmf 127.0.0.1:4420 --allow-host "$H"
refused 1 "not supported" --nvmf rdma://127.0.0.1:4420 --allow-host "$H"
refused 1 "not an IPv4 or IPv6" --nvmf tcp://localhost:4420 --allow-host "$H"
refused 1 "1 to 65535" --nvmf tcp://127.0.0.1:0 --allow-host "$H"
refused 1 "no port" --nvmf tcp://127.0.0.1 --allow-host "$H"
refused 1 "nqn." --nvmf tcp://127.0.0.1:4420 --allow-host foo
refused 1 "every host" --nvmf tcp://192.0.2.1:4420 --allow-any-host

step "without the kernel's target"
refused 1 "modprobe nvmet" --nvmf tcp://127.0.0.1:4420 --allow-host "$H"
check "v still not exported" "" "$(gp vd show v --json | json 'd.get("export", "")')"
stop_daemon
