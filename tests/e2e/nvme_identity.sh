#!/usr/bin/env bash
# NVMe identity in the daemon, on a host without NVMe (the VM lane runs the
# real drives: tests/vm/guest-nvme.sh): file drives get background init and
# say why; a recorded NVMe namespace that is not on the host at start is
# missing (never replaced by whatever sits at its old path), for a free
# drive and for a group member (the group comes up degraded).
source "$(dirname "$0")/lib.sh"

start_daemon
step "a RAID 5 over file drives: background initialisation, and why"
for i in 0 1 2 3 4; do gp pd add "$T/d$i.img" --size 32M >/dev/null; done
gp dg create --level 5 --name dg0 pd0 pd1 pd2 pd3 >/dev/null
EV=$(gp events --json)
[[ "$EV" == *'"group_created"'*'initialisation: background (pd0 is not an NVMe namespace)'* ]] ||
  fail "GROUP_CREATED does not say which initialisation: $(echo "$EV" | grep GROUP_CREATED)"
echo "   ok: background initialisation reported"
check "no NVMe identity on a file drive" False "$(gp pd show pd0 --json | json '"nvme" in d')"
gp dg show dg0 --watch --interval 0.2 >/dev/null
stop_daemon

step "recorded NVMe namespaces that are gone: missing at start"
python3 - "$T/state/registry.json" <<'PY'
import json, sys
p = sys.argv[1]
r = json.load(open(p))
for d in r["drives"]:
    if d["id"] in ("pd1", "pd4"):
        d["nvme"] = {"stable_id": "sn:gone-%s:nsid:1" % d["id"], "serial": "gone-" + d["id"], "nsid": 1}
json.dump(r, open(p, "w"), indent=1)
PY
start_daemon
check "pd4 state" missing "$(gp pd show pd4 --json | json 'd["state"]')"
NOTE=$(gp pd show pd4 --json | json 'd["note"]')
[[ "$NOTE" == *"sn:gone-pd4:nsid:1 (serial gone-pd4, nsid 1) is not on this host"* ]] || fail "pd4 note: $NOTE"
check "dg0 state" degraded "$(gp dg show dg0 --json | json 'd["state"]')"
NOTE=$(gp dg show dg0 --json | json 'd["note"]')
[[ "$NOTE" == *"pd1: the NVMe namespace sn:gone-pd1:nsid:1"* ]] || fail "dg0 note: $NOTE"
check "pd1 state" missing "$(gp pd show pd1 --json | json 'd["state"]')"
check "members still online" 3 "$(gp dg show dg0 --json | json 'sum(m["state"] == "online" for m in d["members"])')"
stop_daemon
echo "PASS"
