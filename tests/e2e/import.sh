#!/usr/bin/env bash
# dg import (issue 33, item 16; mdadm --assemble --scan): a group's drives
# taken to a daemon that does not know them (another state dir: another
# host) come back as that group with its virtual drives (the volume table
# on its members) and their data; refusals register nothing; a name taken
# here is given another; a group with a drive left behind comes back
# degraded.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ways_back_lib.sh"

step "host A: a RAID 5 group with two virtual drives"
STATE_DIR=$T/a start_daemon
for i in 0 1 2 3; do gp pd add "$T/d$i.img" --size 64M >/dev/null; done
gp dg create --level 5 --name r5 --assume-zeroed pd0 pd1 pd2 pd3 >/dev/null
gp vd create r5 --size 16M --name v >/dev/null
gp vd create r5 --size 24M --name w >/dev/null
gp vd write v --pattern 5 --length 16M >/dev/null
gp vd write w --pattern 6 --length 24M >/dev/null
gp vd delete w >/dev/null     # the table follows deletes
gp vd create r5 --size 20M --name w2 >/dev/null
gp vd write w2 --pattern 7 --length 20M >/dev/null
V_SIZE=$(gp vd show v --json | json 'int(d["size_bytes"])')   # whole stripes: a little over 16M
stop_daemon
check "what pd examine says the drive carries" "v w2" \
  "$(gp pd examine "$T/d2.img" --json | json '" ".join(v["id"] for v in d["volumes"])')"

step "host B: bad input registers nothing"
STATE_DIR=$T/b start_daemon
gp pd add "$T/other.img" --size 64M >/dev/null   # pd0 here
expect_rc 2 gp dg import
head -c 4M /dev/zero >"$T/plain.img"
expect_rc 1 gp dg import "$T/plain.img"
expect_err_has "holds no gpuraid group member"
expect_rc 1 gp dg import "$T/d0.img" "$T/d0.img"
expect_err_has "listed twice"
expect_rc 1 gp dg import "$T/d0.img" "$T/other.img"
check "drives after the refusals" 1 "$(gp pd list --json | json 'len(d["drives"])')"

step "a name taken here: imported under another, its VDs too"
gp pd add "$T/x0.img" --size 64M >/dev/null
gp pd add "$T/x1.img" --size 64M >/dev/null
gp dg create --level 1 --name r5 --assume-zeroed pd1 pd2 >/dev/null
gp vd create r5 --size 4M --name v >/dev/null
expect_rc 1 gp dg import "$T/d0.img" "$T/d1.img" "$T/d2.img" "$T/d3.img"
expect_err_has "named r5 is here already"
OUT=$(gp dg import --name moved "$T/d0.img" "$T/d1.img" "$T/d2.img" "$T/d3.img") || fail "import: $OUT"
echo "$OUT" | sed 's/^/   /'
check "state" optimal "$(gstate moved)"
check "VDs of moved" "v-moved w2" "$(gp vd list --json | json '" ".join(sorted(v["id"] for v in d["volumes"] if v["group"] == "moved"))')"
check "v-moved size (as on A)" "$V_SIZE" "$(gp vd show v-moved --json | json 'int(d["size_bytes"])')"
gp vd read v-moved --verify-pattern 5 --length 16M >/dev/null || fail "v's data"
gp vd read w2 --verify-pattern 7 --length 20M >/dev/null || fail "w2's data"
expect_rc 1 gp dg import "$T/d0.img"
expect_err_has "already registered"

step "after a restart of B: the imported group is B's own"
stop_daemon
STATE_DIR=$T/b start_daemon
check "state" optimal "$(gstate moved)"
gp vd read w2 --verify-pattern 7 --length 20M >/dev/null || fail "w2's data after the restart"
gp dg delete moved --force >/dev/null
stop_daemon

step "host C: a drive left behind: imported degraded, data intact"
# (dg delete wiped the drives: make the group again on A's state first)
STATE_DIR=$T/c start_daemon
for i in 0 1 2 3; do gp pd add "$T/d$i.img" --size 64M >/dev/null 2>&1 || gp pd add "$T/d$i.img" >/dev/null; done
gp dg create --level 5 --name r5 --assume-zeroed pd0 pd1 pd2 pd3 >/dev/null
gp vd create r5 --size 16M --name v >/dev/null
gp vd write v --pattern 9 --length 16M >/dev/null
stop_daemon
STATE_DIR=$T/d start_daemon
gp dg import "$T/d0.img" "$T/d1.img" "$T/d3.img" >/dev/null || fail "a degraded import was refused"
check "state" degraded "$(gstate r5)"
gp vd read v --verify-pattern 9 --length 16M >/dev/null || fail "v's data, degraded"
stop_daemon
echo "import: OK"
