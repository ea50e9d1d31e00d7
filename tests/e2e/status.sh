#!/usr/bin/env bash
# gpuraid status: one overview in the spirit of /proc/mdstat — groups with
# level and state, [n/m] [UU_U] member maps, redundancy words, progress bars
# with rate and ETA for a running rebuild, failed and missing drives,
# volumes and their exports; the same as JSON.
source "$(dirname "$0")/lib.sh"

start_daemon
step "status of an empty daemon"
gp status | tee "$T/status"
grep -q "^gpuraidd .*, parity .*reactors" "$T/status" || fail "no daemon line"
grep -q "no drive groups" "$T/status" || fail "an empty daemon should say it has no groups"

step "a RAID 6 rebuilding slowly onto a pool spare, a degraded RAID 1, an exported VD, a free and a failed drive"
for i in $(seq 0 9); do gp pd add "$T/d$i.img" --size 48M >/dev/null; done
gp dg create --level 6 --strip 16K --name r6 pd0 pd1 pd2 pd3 pd4 pd5 >/dev/null
gp dg create --level 1 --name m1 pd7 pd8 >/dev/null
gp dg show r6 --watch --interval 0.2 >/dev/null
gp dg show m1 --watch --interval 0.2 >/dev/null
gp vd create r6 --size 32M --name v6 >/dev/null
gp vd create m1 --size 16M --name v1 >/dev/null
gp vd export v6 --nbd --listen "unix:$T/v6.sock" >/dev/null
gp vd write v6 --pattern 3 --length 16M
gp pd spare pd6 >/dev/null
gp dg rates r6 --rebuild 2M >/dev/null
gp pd fail pd1 >/dev/null
gp pd fail pd8 >/dev/null
for _ in $(seq 50); do
  [ "$(gp dg show r6 --json | json 'd["rebuild"]["running"]')" == True ] && break
  sleep 0.1
done
sleep 1.5  # the rate is measured over a second
gp status | tee "$T/status"
grep -q "^r6 : rebuilding raid6 pd0\[0\] pd6\[1\](rebuilding) pd2\[2\]" "$T/status" || fail "r6 line"
grep -Eq "^      .*\[5/6\] \[URUUUU\], redundancy reduced \(survives 1 more\)" "$T/status" || fail "r6 member map and redundancy"
grep -Eq "^      rebuild +\[#*-+\] +[0-9.]+%  .*/s  ETA [0-9:]+$" "$T/status" || fail "r6 rebuild progress bar with rate and ETA"
grep -Eq "^      vd v6  32(\.0)? ?MiB  nbd nbd\+unix" "$T/status" || fail "v6 and its NBD export"
grep -q "^m1 : degraded raid1 pd7\[0\] pd8\[1\](failed)" "$T/status" || fail "m1 line"
grep -q "\[1/2\] \[U_\], redundancy reduced (survives 0 more)" "$T/status" || fail "m1 member map and redundancy"
grep -q "^free drives: pd9" "$T/status" || fail "free drives"
grep -q "^      pd1 failed .*d1.img" "$T/status" || fail "pd1 (replaced, failed) needs attention"
grep -q "^      pd8 failed .*(m1): replace it (gpuraid dg replace m1 --old pd8 --with PD) or put it back (gpuraid dg readd m1 pd8)" "$T/status" || fail "pd8 (failed in m1): the ways on"

step "status --json"
gp status --json >"$T/status.json"
python3 - "$T/status.json" <<'PY' || fail "status --json"
import json, sys
d = json.load(open(sys.argv[1]))
g = {x["name"]: x for x in d["groups"]}
assert g["r6"]["state"] == "rebuilding", g["r6"]["state"]
assert g["r6"]["failures_tolerated"] == 1 and g["m1"]["failures_tolerated"] == 0
assert g["r6"]["rebuild"]["running"] and 0 < g["r6"]["rebuild"]["fraction"] < 1
assert {v["id"] for v in d["volumes"]} == {"v6", "v1"}
assert d["daemon"]["pid"] > 0 and len(d["drives"]) == 10
print("   ok: status --json")
PY
gp dg rates r6 --rebuild 0 >/dev/null
gp dg show r6 --watch --interval 0.2 >/dev/null
gp status | grep >/dev/null "^r6 : optimal raid6" || fail "r6 optimal after its rebuild"
stop_daemon
echo "status: OK"
