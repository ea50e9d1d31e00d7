#!/usr/bin/env bash
# The whole life cycle through the CLI against a real gpuraidd with
# file-backed drives: drives, RAID 5 and RAID 6 groups, VDs, data written
# and verified through the engine, a restart, member failures (a pool
# spare taken automatically, explicit replaces), rebuilds (one across a
# daemon restart), scrub, stats, events, --json everywhere, deletion.
source "$(dirname "$0")/lib.sh"

step "start gpuraidd on $T"
start_daemon
gp info

step "add 12 file-backed drives of 64 MiB"
for i in $(seq 0 11); do gp pd add "$T/drive$i.img" --size 64M >/dev/null; done
check "drives" 12 "$(gp pd list --json | json 'len(d["drives"])')"

step "create RAID 5 (r5) over pd0-pd3 and RAID 6 (r6) over pd4-pd9; pd10 into the spare pool"
gp dg create --level 5 --strip 64K --name r5 pd0 pd1 pd2 pd3
gp dg create --level 6 --strip 32K --name r6 pd4 pd5 pd6 pd7 pd8 pd9
gp pd spare pd10
check "r6 level" raid6 "$(gp dg show r6 --json | json 'd["level"]')"
check "r6 members" 6 "$(gp dg show r6 --json | json 'len(d["members"])')"
gp dg show r5 --watch --interval 0.2
gp dg show r6 --watch --interval 0.2
check "r5 state" optimal "$(gp dg show r5 --json | json 'd["state"]')"

step "create VDs and write patterns through the engine"
gp vd create r5 --size 48M --name v5
gp vd create r6 --rest --name v6
V6=$(gp vd show v6 --json | json 'int(d["size_bytes"])')
gp vd write v5 --pattern 5 --length 48M
gp vd write v6 --pattern 6 --length 64M
head -c 1000000 /dev/urandom >"$T/blob"
gp vd write v6 --offset 100M --in "$T/blob"
gp vd read v5 --verify-pattern 5 --length 48M
gp vd read v6 --verify-pattern 6 --length 64M
gp vd read v6 --offset 100M --length 1003520 --out "$T/blob.back"
cmp -n 1000000 "$T/blob" "$T/blob.back" || fail "file data read back differs"
gp vd list

step "export v5 over NBD from the daemon: nbdinfo, fio verify and the written pattern through it"
URI=$(gp vd export v5 --nbd --listen "unix:$T/v5.sock" --json | json 'd["export"]["uri"]')
echo "   $URI"
nbdinfo "$URI" | grep >/dev/null "export-size: $((48 * 1024 * 1024))" || fail "nbdinfo: wrong size for v5"
fio --name=nbdverify --ioengine=nbd --uri="$URI" --rw=randwrite --bs=4k --iodepth=8 --size=8M --offset=40M \
    --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse >/dev/null || fail "fio verify through the daemon's NBD export"
gp vd read v5 --verify-pattern 5 --length 40M  # the part fio did not touch still holds the pattern
gp vd write v5 --pattern 5 --offset 40M --length 8M
gp vd read v5 --verify-pattern 5 --length 48M

step "restart the daemon: everything comes back"
stop_daemon
start_daemon
check "v5 export after restart" true "$(gp vd show v5 --json | json 'str(d["export"]["active"]).lower()')"
nbdinfo "$URI" >/dev/null || fail "the NBD export did not come back after the restart"
check "groups after restart" "r5 r6" "$(gp dg list --json | json '" ".join(g["name"] for g in d["groups"])')"
check "r6 after restart" optimal "$(gp dg show r6 --json | json 'd["state"]')"
check "v6 size after restart" "$V6" "$(gp vd show v6 --json | json 'int(d["size_bytes"])')"
gp vd read v5 --verify-pattern 5 --length 48M
gp vd read v6 --verify-pattern 6 --length 64M

step "fail r5's member pd1: the pool spare pd10 replaces it, the rebuild runs"
gp pd fail pd1 >/dev/null
gp vd read v5 --verify-pattern 5 --length 48M
for _ in $(seq 50); do
  [ "$(gp pd show pd10 --json | json 'd["group"]')" == r5 ] && break
  sleep 0.1
done
check "pd10 taken by" r5 "$(gp pd show pd10 --json | json 'd["group"]')"
has_events MEMBER_FAILED SPARE_TAKEN
gp dg show r5 --watch --interval 0.2
check "r5 after rebuild" optimal "$(gp dg show r5 --json | json 'd["state"]')"
gp vd read v5 --verify-pattern 5 --length 48M

step "fail two of r6's members (pd5, pd6): data still reads"
gp pd fail pd5 >/dev/null
gp pd fail pd6 >/dev/null
check "r6 degraded" degraded "$(gp dg show r6 --json | json 'd["state"]')"
gp vd read v6 --verify-pattern 6 --length 64M
gp vd write v6 --offset 64M --pattern 66 --length 8M

step "replace pd5 by pd11, rebuild slowly, restart the daemon in the middle of it"
gp dg rates r6 --rebuild 16M
gp dg replace r6 --old pd5 --with pd11
sleep 0.5
stop_daemon
start_daemon
gp dg show r6
gp dg rates r6 --rebuild 0
gp dg show r6 --watch --interval 0.2
check "pd11 after its rebuild" online "$(gp pd show pd11 --json | json 'd["state"]')"
gp vd read v6 --verify-pattern 6 --length 64M
gp vd read v6 --offset 64M --verify-pattern 66 --length 8M

step "add a new drive and replace the other failed member by index"
gp pd add "$T/drive12.img" --size 64M
IDX=$(gp pd show pd6 --json | json 'd["member_index"]')
gp dg replace r6 --member "$IDX" --with pd12
gp dg show r6 --watch --interval 0.2
check "r6 after two rebuilds" optimal "$(gp dg show r6 --json | json 'd["state"]')"
check "r6 members online" 6 "$(gp dg show r6 --json | json 'sum(m["state"] == "online" for m in d["members"])')"
gp vd read v6 --verify-pattern 6 --length 64M

step "scrub r6: no mismatches"
gp dg scrub r6 start
gp dg show r6 --watch --interval 0.2
check "mismatched stripes" 0 "$(gp dg show r6 --json | json 'int(d["last_scrub"]["mismatched_stripes"])')"
[ "$(gp dg show r6 --json | json 'int(d["last_scrub"]["stripes_checked"])')" -gt 0 ] || fail "scrub checked nothing"

step "stats and events"
gp vd read v5 --verify-pattern 5 --length 4M
sleep 1.2  # rates are sampled every second
gp stats
[ "$(gp stats --vd v5 --json | json 'int(d["volumes"][0]["io"]["reads"])')" -gt 0 ] || fail "no reads counted on v5"
[ "$(gp stats --json | json 'sum(int(x.get("reads", 0)) for x in d["drives"])')" -gt 0 ] || fail "no member reads counted per drive"
has_events DAEMON_STARTED REBUILD_FINISHED SCRUB_FINISHED MEMBER_REPLACED
gp events | tail -8

step "resize, delete"
gp vd create r5 --size 8M --name small
gp vd resize small --size 12M
check "small grown" 1 "$(gp vd show small --json | json 'int(int(d["size_bytes"]) >= 12 << 20)')"
gp vd delete small
gp vd unexport v5
gp vd delete v5
gp dg delete r5
check "pd0 after delete" free "$(gp pd show pd0 --json | json 'd["role"]')"
gp dg delete r6 --force
check "groups left" 0 "$(gp dg list --json | json 'len(d.get("groups", []))')"
gp pd remove pd1
gp pd list

step "a new group on the freed drives (their metadata was wiped)"
NEW=$(gp dg create --level 6 pd0 pd2 pd3 pd4 --json | json 'd["name"]')
gp dg delete "$NEW"

step "stop: exit 0"
stop_daemon
echo "lifecycle: OK"
