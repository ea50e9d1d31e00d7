#!/usr/bin/env bash
# Runs inside the lane's guest (see run.sh): NVMe namespaces under the real
# gpuraidd and gpuraid CLI. Usage: guest-nvme.sh BINDIR
# Drives (lane.sh --nvme 5 --nvme-opts, see tests/vm/CMakeLists.txt):
#   vmlane0, vmlane1: 512 B LBAs; vmlane2, vmlane3: 4 KiB; vmlane4: 8 KiB.
# Checks: pd scan shows every namespace's identity; the 512 B / 4 KiB mix
# forms a RAID 5 with instant initialisation when DLFEAT allows (a scrub
# finds every stripe consistent); the 8 KiB namespace, a namespace already
# registered (under another path) and a member are refused, nothing
# changed; data written through the engine and through a ublk export; the
# NVMe controllers are unbound and bound back in another order, so every
# /dev/nvme* number changes, and the restarted daemon reassembles the group
# from the same namespaces, found by identity, and the data verifies. Then
# a real disk's medium error (scsi_debug) under a RAID 1, then under a RAID 5
# (a read, writes into its stripe, the resync after a SIGKILL, then a
# degraded RAID 5's rebuild stopped there and passed once it is written).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/guest-e2e-lib.sh" "$1"
wait_namespaces() {
  for _ in $(seq 300); do
    local n=0
    for i in 0 1 2 3 4; do dev_of vmlane$i >/dev/null && [ -b "$(dev_of vmlane$i)" ] && n=$((n + 1)); done
    [ $n -eq 5 ] && return 0
    sleep 0.1
  done
  fail "expected 5 NVMe namespaces (vmlane0..4); /sys/block has: $(ls /sys/block | tr '\n' ' ')"
}
map() { for i in 0 1 2 3 4; do printf '%s=%s ' vmlane$i "$(dev_of vmlane$i)"; done; }
wait_namespaces
log "namespaces: $(map)"
D=()
for i in 0 1 2 3 4; do D[$i]=$(dev_of vmlane$i); done

start_daemon
step "pd scan: every namespace with its identity"
gp pd scan
gp pd scan --json >"$W/scan.json"
python3 - "$W/scan.json" <<'EOF' || fail "pd scan"
import json, sys
d = json.load(open(sys.argv[1]))
ns = {n["nvme"]["serial"]: n for n in d.get("namespaces", [])}
want = {"vmlane0": 512, "vmlane1": 512, "vmlane2": 4096, "vmlane3": 4096, "vmlane4": 8192}
assert set(want) <= set(ns), f"serials {sorted(ns)}"
for s, lba in want.items():
    n = ns[s]["nvme"]
    assert n["lba_bytes"] == lba, f"{s}: lba {n['lba_bytes']} != {lba}"
    assert n["stable_id"] and n["model"] and n["firmware"] and n["subsystem_nqn"], f"{s}: identity {n}"
    assert n["nsid"] == 1 and n["block_path"].startswith("/dev/nvme"), n
    assert any(f["in_use"] and f["data_bytes"] == lba for f in n["lba_formats"]), n["lba_formats"]
    assert n["transport"] == "pcie", n["transport"]
    assert ns[s]["drive"] == "", f"{s} registered already"
    if lba <= 4096:
        assert ns[s]["usable"] and int(n["capacity_bytes"]) > 0 and int(n["max_transfer_bytes"]) > 0, ns[s]
    else:
        assert not ns[s]["usable"] and "8192-byte logical blocks" in ns[s]["note"], ns[s]
assert len({ns[s]["nvme"]["stable_id"] for s in want}) == 5, "stable ids are not distinct"
print("   ok: 5 namespaces identified; ids", [ns[s]["nvme"]["stable_id"] for s in sorted(want)])
EOF
ZEROES=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(all(n["nvme"]["deallocated_reads_zeroes"] for n in d["namespaces"] if n["nvme"]["serial"] in ("vmlane0","vmlane1","vmlane2","vmlane3")))' "$W/scan.json")
result "DLFEAT of the members: deallocated blocks read zeroes = $ZEROES"

step "pd add: 512 B and 4 KiB namespaces; identity recorded"
for i in 0 1 2 3; do expect_rc 0 gp pd add "${D[$i]}" --id pd$i; done
check "pd2 lba" 4096 "$(gp --json pd show pd2 | json 'd["nvme"]["lba_bytes"]')"
check "pd0 serial" vmlane0 "$(gp --json pd show pd0 | json 'd["nvme"]["serial"]')"
gp pd show pd2

step "refused: an 8 KiB-block namespace, a namespace already registered; nothing changed"
expect_rc 1 gp pd add "${D[4]}"
echo "$ERR" | grep >/dev/null "8192-byte logical blocks" || fail "8 KiB refusal unclear: $ERR"
echo "   refused: $ERR"
ln -sf "${D[0]}" "$W/alias0"
expect_rc 1 gp pd add "$W/alias0"
echo "$ERR" | grep >/dev/null "already registered as pd0" || fail "duplicate namespace refusal unclear: $ERR"
echo "   refused: $ERR"
check "drives after refusals" 4 "$(gp --json pd list | json 'len(d["drives"])')"

step "dg create RAID 5 over 2 x 512 B + 2 x 4 KiB"
t0=$(date +%s.%N)
expect_rc 0 gp dg create pd0 pd1 pd2 pd3 --level 5 --strip 64K --name dg0
t1=$(date +%s.%N)
INIT=$(gp events --json | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e["kind"] == "group_created": print(e["message"].split("initialisation: ", 1)[1])')
result "dg create ($(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s): initialisation: $INIT"
if [ "$ZEROES" = True ]; then
  case "$INIT" in instant*) ;; *) fail "DLFEAT allows instant initialisation, got: $INIT" ;; esac
  check "init running" False "$(gp --json dg show dg0 | json 'd["init"]["running"]')"
  check "redundancy claimed at once" True "$(gp --json dg show dg0 | json 'd["redundancy_claimed"]')"
else
  case "$INIT" in background*) ;; *) fail "DLFEAT does not allow instant initialisation, got: $INIT" ;; esac
fi
grep -q "initialisation: $INIT" "$T/daemon.log" || fail "the daemon log does not say which initialisation"

step "refused: a namespace already in a group; nothing changed"
expect_rc 1 gp dg create pd0 pd1 --level 1 --name dg1
echo "$ERR" | grep >/dev/null "pd0 is not free (in dg0)" || fail "member refusal unclear: $ERR"
echo "   refused: $ERR"
expect_rc 1 gp pd add "${D[1]}"
echo "$ERR" | grep >/dev/null "already registered as pd1" || fail "member path refusal unclear: $ERR"
check "groups" 1 "$(gp --json dg list | json 'len(d["groups"])')"
check "dg0 state" optimal "$(gp --json dg show dg0 | json 'd["state"]')"

step "scrub: every stripe consistent (instant init made parity right)"
t0=$(date +%s.%N)
expect_rc 0 gp dg scrub dg0 start
for _ in $(seq 1200); do
  kill -0 "$DPID" 2>/dev/null || fail "gpuraidd died during the scrub"
  [ "$(gp --json dg show dg0 | json 'd["scrub"]["running"]')" = False ] && break
  sleep 0.5
done
gp --json dg show dg0 >"$W/dg0.json"
check "scrub running" False "$(json 'd["scrub"]["running"]' <"$W/dg0.json")"
check "mismatched stripes" 0 "$(json 'int(d["last_scrub"]["mismatched_stripes"])' <"$W/dg0.json")"
checked=$(json 'int(d["last_scrub"]["stripes_checked"])' <"$W/dg0.json")
[ "$checked" -gt 0 ] || fail "the scrub checked no stripes"
result "scrub of dg0 ($checked stripes, TCG): $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s, no mismatch"

step "data: through the engine and through a ublk export"
expect_rc 0 gp vd create dg0 --rest --name vd0
expect_rc 0 gp vd write vd0 --pattern 7 --offset 0 --length 4M
expect_rc 0 gp vd write vd0 --pattern 8 --offset 200M --length 1M
expect_rc 0 gp vd export vd0 --ublk
UBLK=$(gp --json vd show vd0 | json 'd["export"]["dev_path"]')
[ -b "$UBLK" ] || fail "no ublk device ($UBLK)"
FIO=(--name=nvme --filename="$UBLK" --offset=64M --size=48M --ioengine=io_uring --direct=1 --bsrange=4k-128k
     --blockalign=4k --iodepth=16 --verify=crc32c --verify_fatal=1)
fio "${FIO[@]}" --rw=randwrite --do_verify=1 >"$W/fio.write" 2>&1 || fail "fio write+verify on $UBLK: $(tail -5 "$W/fio.write")"
result "ublk fio randwrite 4k-128k + verify over the 512 B/4 KiB RAID 5 (TCG): $(sed -n 's/.*write: IOPS=\([^,]*\),.*/\1/p' "$W/fio.write") IOPS"
expect_rc 0 gp vd read vd0 --verify-pattern 7 --offset 0 --length 4M

step "renumbering: controllers unbound, bound back so that every number changes"
stop_daemon
BEFORE=$(map)
# Bound one at a time after all are unbound, the k-th controller gets
# instance k (and its namespace nvme<k>n1): the controller that was nvmeJ
# is bound in position (J + 1) mod 5, so no namespace keeps its node.
ORDER=()
for x in /sys/class/nvme/nvme*; do
  j=${x##*/nvme}
  ORDER[$(((j + 1) % 5))]="$(basename "$(readlink -f "$x/device")") $(tr -d ' ' <"$x/serial")"
done
[ ${#ORDER[@]} -eq 5 ] || fail "expected controllers nvme0..4, found $(ls /sys/class/nvme | tr '\n' ' ')"
for e in "${ORDER[@]}"; do echo "${e% *}" >/sys/bus/pci/drivers/nvme/unbind || fail "unbind ${e% *}"; done
for e in "${ORDER[@]}"; do
  echo "${e% *}" >/sys/bus/pci/drivers/nvme/bind || fail "bind ${e% *}"
  # Its namespace up before the next bind, so that instance numbers follow the order.
  for _ in $(seq 300); do dev_of "${e#* }" >/dev/null && break; sleep 0.1; done
done
wait_namespaces
AFTER=$(map)
log "before: $BEFORE"
log "after:  $AFTER"
for i in 0 1 2 3 4; do
  [ "$(dev_of vmlane$i)" != "${D[$i]}" ] || fail "vmlane$i kept ${D[$i]}: the renumbering would prove less"
done
result "renumbered: $BEFORE-> $AFTER"

step "restart: the group assembles from the same namespaces, found by identity"
start_daemon
check "dg0 state" optimal "$(gp --json dg show dg0 | json 'd["state"]')"
for i in 0 1 2 3; do
  gp --json pd show pd$i >"$W/pd$i.json"
  check "pd$i path (vmlane$i)" "$(dev_of vmlane$i)" "$(json 'd["path"]' <"$W/pd$i.json")"
  check "pd$i serial" vmlane$i "$(json 'd["nvme"]["serial"]' <"$W/pd$i.json")"
  check "pd$i member index" $i "$(json 'd["member_index"]' <"$W/pd$i.json")"
  check "pd$i state" online "$(json 'd["state"]' <"$W/pd$i.json")"
done
grep -q "is now at" "$T/daemon.log" || fail "the daemon did not log the new paths"
grep "is now at" "$T/daemon.log" | sed 's/^/   /'
expect_rc 0 gp vd read vd0 --verify-pattern 7 --offset 0 --length 4M
expect_rc 0 gp vd read vd0 --verify-pattern 8 --offset 200M --length 1M
UBLK=$(gp --json vd show vd0 | json 'd["export"]["dev_path"]')
[ -b "$UBLK" ] || fail "the ublk export was not restored ($UBLK)"
fio "${FIO[@]}" --rw=randwrite --verify_only >"$W/fio.verify" 2>&1 || fail "fio verify after renumbering: $(tail -5 "$W/fio.verify")"
gp pd scan
check "scan after restart: members" 4 "$(gp --json pd scan | json 'sum(1 for n in d["namespaces"] if n["group"] == "dg0")')"

step "medium errors: a real disk's unrecovered read error is read around and written back, the member kept"
# scsi_debug with opts=2 answers reads of sectors [start, start + count)
# with MEDIUM ERROR / UNRECOVERED READ ERROR, which the kernel returns as
# BLK_STS_MEDIUM (ENODATA): what a drive with a bad sector does. Its writes
# do not remap it, so every read of it is one more correction.
BAD=$(((2 + 17) * 2048 + 8))   # 17 MiB + 4 KiB into the data area (the metadata is the first 2 MiB)
modprobe scsi_debug dev_size_mb=32 opts=2 medium_error_start=$BAD medium_error_count=8 || fail "scsi_debug"
SD=
for _ in $(seq 100); do
  for b in /sys/block/sd*; do [ "$(tr -d ' ' <"$b/device/model" 2>/dev/null)" = scsi_debug ] && SD=/dev/${b##*/}; done
  [ -n "$SD" ] && [ -b "$SD" ] && break
  sleep 0.1
done
[ -b "$SD" ] || fail "no scsi_debug disk"
dd if="$SD" of=/dev/null bs=4096 skip=$((BAD / 8)) count=1 iflag=direct 2>"$W/dd.err" && fail "scsi_debug read its bad sector"
grep -q "No data available" "$W/dd.err" || fail "the kernel did not answer ENODATA: $(cat "$W/dd.err")"
truncate -s 32M "$W/copy.img"
expect_rc 0 gp pd add "$SD" --id pdm
expect_rc 0 gp pd add "$W/copy.img" --id pdc
expect_rc 0 gp dg create pdm pdc --level 1 --name dgm --assume-zeroed
expect_rc 0 gp vd create dgm --rest --name vdm
VDM_BYTES=$(gp --json vd show vdm | json 'int(d["size_bytes"])')
expect_rc 0 gp vd write vdm --pattern 11 --offset 0 --length "$VDM_BYTES"
expect_rc 0 gp dg scrub dgm start   # reads both copies: meets the bad sector on pdm
for _ in $(seq 600); do [ "$(gp --json dg show dgm | json 'd["scrub"]["running"]')" = False ] && break; sleep 0.2; done
gp --json dg show dgm >"$W/dgm.json"
check "dgm state after the scrub" optimal "$(json 'd["state"]' <"$W/dgm.json")"
check "mismatched stripes" 0 "$(json 'int(d["last_scrub"]["mismatched_stripes"])' <"$W/dgm.json")"
check "pdm state" online "$(gp --json pd show pdm | json 'd["state"]')"
# One bad block, one correction: the scrub's reads of the next stripes, which
# the kernel merged into the failed request, are read again alone and
# succeed (they counted 4 corrections before the reactor did that).
CORR=$(gp --json stats --dg dgm | json 'sum(int(g.get("corrected_reads", 0)) for g in d["groups"])')
check "corrections counted for one bad block" 1 "$CORR"
has_events read_corrected
expect_rc 0 gp vd read vdm --verify-pattern 11 --offset 0 --length "$VDM_BYTES"
result "scsi_debug bad sector under RAID 1: corrected by the scrub (1 correction), member kept, data verifies"
# The last copy: its bad block fails that read only; the group stays degraded, the rest reads.
expect_rc 0 gp pd fail pdc
expect_rc 1 gp vd read vdm --verify-pattern 11 --offset 16M --length 4M
echo "   refused: $ERR"
expect_rc 0 gp vd read vdm --verify-pattern 11 --offset 0 --length 16M
check "dgm state with its last copy's bad block" degraded "$(gp --json dg show dgm | json 'd["state"]')"
check "pdm state" online "$(gp --json pd show pdm | json 'd["state"]')"
has_events read_uncorrectable
# It names the virtual drive's bytes of the block's stripe: within the read that failed.
gp events --json | python3 -c '
import json, re, sys
e = [e for e in map(json.loads, filter(str.strip, sys.stdin)) if e["kind"] == "read_uncorrectable"][-1]
m = re.search(r"on virtual drives: vdm bytes (\d+)-(\d+)", e["message"])
sys.exit(0 if m and 16 << 20 <= int(m.group(1)) <= int(m.group(2)) < 20 << 20 else "no bytes of vdm in the failed read: " + e["message"])' ||
  fail "read_uncorrectable does not name vdm's bytes"

step "medium errors under RAID 5: read around from the parity, a write's pre-read, the resync after a SIGKILL"
# The same bad sector as a RAID 5's middle member, strip 64 KiB: its strip
# 17 MiB / 64 KiB = 272 is row 272 of 3 members (272 % 3 = 2: the parity on
# member 0, data strip 0 on member 1), so the bad 4 KiB is the volume's
# 272 * 128 KiB + 4 KiB (docs/ON-DISK.md: left-symmetric, data after 2 MiB).
expect_rc 0 gp dg delete dgm --force
truncate -s 32M "$W/r5a.img" "$W/r5b.img"
expect_rc 0 gp pd add "$W/r5a.img" --id pd5a
expect_rc 0 gp pd add "$W/r5b.img" --id pd5b
expect_rc 0 gp dg create pd5a pdm pd5b --level 5 --strip 64K --name dg5 --assume-zeroed
expect_rc 0 gp vd create dg5 --rest --name vd5
VD5_BYTES=$(gp --json vd show vd5 | json 'int(d["size_bytes"])')
BAD_VD=$((272 * 131072 + 4096))
expect_rc 0 gp vd write vd5 --pattern 21 --offset 0 --length "$VD5_BYTES"   # full stripes: no reads
corrected() { gp --json stats --dg dg5 | json 'sum(int(g.get("corrected_reads", 0)) for g in d["groups"])'; }
# A user read of the bad block: read around (the other data strip and the
# parity), returned, written back.
expect_rc 0 gp vd read vd5 --verify-pattern 21 --offset 0 --length "$VD5_BYTES"
check "corrections after reading all of vd5" 1 "$(corrected)"
# Writes into its stripe, 4 KiB each: a 2+1 stripe's write of one strip
# reads the other (reconstruct-write), at the same columns. Onto the bad
# block (reads the other strip), then the read of it (corrected again:
# scsi_debug's writes do not remap the sector), then one beside it whose
# read is the bad block's: the write is planned around it and writes it
# back (before, the member failed: "member 1 failed: No data available").
expect_rc 0 gp vd write vd5 --pattern 23 --offset "$BAD_VD" --length 4K
expect_rc 0 gp vd read vd5 --verify-pattern 23 --offset "$BAD_VD" --length 4K
check "corrections after reading it again" 2 "$(corrected)"
expect_rc 0 gp vd write vd5 --pattern 24 --offset $((BAD_VD + 64 * 1024)) --length 4K
check "corrections after a write that reads it" 3 "$(corrected)"
check "dg5 state" optimal "$(gp --json dg show dg5 | json 'd["state"]')"
check "pdm state in dg5" online "$(gp --json pd show pdm | json 'd["state"]')"
expect_rc 0 gp vd read vd5 --verify-pattern 24 --offset $((BAD_VD + 64 * 1024)) --length 4K
expect_rc 0 gp vd read vd5 --verify-pattern 21 --offset $((BAD_VD + 4096)) --length 60K
result "scsi_debug bad sector under RAID 5: read around from the parity by reads and by a write's pre-read, written back (3 corrections), member kept, data verifies"
# An unclean stop with the bad block's region dirty: the restart replays the
# write-hole log, then resyncs the dirty regions, whose read of the bad
# block rebuilds it from the parity (the member kept, as above).
expect_rc 0 gp vd unexport vd0
expect_rc 0 gp vd write vd5 --pattern 25 --offset $((BAD_VD + 68 * 1024)) --length 4K
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null || true   # 137: killed, as meant
echo "=== lane: restart after SIGKILL" >>"$T/daemon.log"
log "gpuraidd SIGKILLed after a write into the bad block's region"
start_daemon
log "gpuraidd answers after the SIGKILL"
for _ in $(seq 1200); do
  [ "$(gp --json dg show dg5 | json 'd["state"]')" = optimal ] && break
  sleep 0.2
done
log "dg5 resynced"
check "dg5 state after the resync" optimal "$(gp --json dg show dg5 | json 'd["state"]')"
check "pdm state after the resync" online "$(gp --json pd show pdm | json 'd["state"]')"
grep -q "dg5.*dirty region" "$T/daemon.log" || fail "dg5's start found no dirty region: $(grep dg5 "$T/daemon.log" | tail -5)"
since_kill() { sed -n '/^=== lane: restart after SIGKILL/,$p' "$T/daemon.log"; }
for _ in $(seq 100); do since_kill | grep -q "read_corrected dg5" && break; sleep 0.2; done   # told from the metadata worker
since_kill | grep -q "read_corrected dg5" ||
  fail "the resync read around no block: $(since_kill | grep dg5 | tail -5)"
has_events resync_finished
expect_rc 0 gp vd read vd5 --verify-pattern 25 --offset $((BAD_VD + 68 * 1024)) --length 4K
expect_rc 0 gp vd read vd5 --verify-pattern 24 --offset $((BAD_VD + 64 * 1024)) --length 4K
expect_rc 0 gp vd read vd5 --verify-pattern 23 --offset "$BAD_VD" --length 4K
expect_rc 0 gp vd read vd5 --verify-pattern 21 --offset $((BAD_VD - 1024 * 1024)) --length 1M
log "dg5 verified"
expect_rc 0 gp dg scrub dg5 start
for _ in $(seq 600); do [ "$(gp --json dg show dg5 | json 'd["scrub"]["running"]')" = False ] && break; sleep 0.2; done
check "dg5 mismatched stripes" 0 "$(gp --json dg show dg5 | json 'int(d["last_scrub"]["mismatched_stripes"])')"
result "scsi_debug bad sector under RAID 5 after a SIGKILL: the resync rebuilt it from the parity, member kept, data verifies, scrub clean"

step "medium errors under a degraded RAID 5: the rebuild stops at the bad block, names vd5's bytes, passes once they are written"
# pd5a fails and a new drive takes its place: the rebuild must read pdm's
# bad block, which nothing else covers now. It stops there, the group
# degraded but whole, and its event names the bytes of vd5 to write whole;
# `dg rebuild start` goes on from there (before the write: stops again).
truncate -s 32M "$W/r5c.img"
expect_rc 0 gp pd add "$W/r5c.img" --id pd5c
expect_rc 0 gp pd fail pd5a
# stopped_events: how many rebuild_finished events of dg5 say it stopped.
stopped_events() { gp events --json | python3 -c '
import json, sys
print(sum(1 for l in sys.stdin if l.strip() and (e := json.loads(l))["kind"] == "rebuild_finished"
          and e["group"] == "dg5" and " stopped at stripe" in e["message"]))'; }
wait_stopped() {  # until there are $1 such events
  for _ in $(seq 600); do [ "$(stopped_events)" -ge "$1" ] && return 0; sleep 0.2; done
  fail "no rebuild_finished event said the rebuild stopped ($1): $(gp events --json | tail -3)"
}
expect_rc 0 gp dg replace dg5 --old pd5a --with pd5c
wait_stopped 1
# vd5's bytes the event names ("vd5 bytes A-B"), and the event's vd field.
# (No process substitution: the guest has no /dev/fd.)
STOPPED=$(gp events --json | python3 -c '
import json, re, sys
e = [e for e in map(json.loads, filter(str.strip, sys.stdin)) if e["kind"] == "rebuild_finished" and " stopped at" in e["message"]][-1]
m = re.search(r"vd5 bytes (\d+)-(\d+)", e["message"])
print(m.group(1), m.group(2), e.get("volume", "") or "-") if m else sys.exit("no vd5 bytes in: " + e["message"])') ||
  fail "the stopped rebuild's event names no bytes of vd5"
read -r RANGE_A RANGE_B RANGE_VD <<<"$STOPPED"
echo "   the event names vd5 bytes $RANGE_A-$RANGE_B (volume $RANGE_VD)"
check "the event's volume" vd5 "$RANGE_VD"
((RANGE_A <= BAD_VD && BAD_VD <= RANGE_B)) || fail "vd5 bytes $RANGE_A-$RANGE_B do not hold the bad block ($BAD_VD)"
check "pdm state with the rebuild stopped" online "$(gp --json pd show pdm | json 'd["state"]')"
check "dg5 rebuild running" False "$(gp --json dg show dg5 | json 'd["rebuild"]["running"]')"
NOTE=$(gp --json dg show dg5 | json 'd.get("note", "")')
case $NOTE in *"stopped at a block"*"vd5 bytes $RANGE_A-$RANGE_B"*"dg rebuild dg5 start"*) echo "   ok: dg show's note: $NOTE" ;;
  *) fail "dg show's note does not say where the rebuild stopped: '$NOTE'" ;; esac
expect_rc 0 gp vd read vd5 --verify-pattern 21 --offset $((RANGE_B + 1)) --length 1M   # the rest reads
expect_rc 0 gp dg rebuild dg5 start
wait_stopped 2
# Written whole (the CLI's writes: 4 MiB, from a stripe's start), then the
# bad sector readable again: scsi_debug does not remap a sector written
# over as a drive does; its medium errors are turned off to stand for that.
expect_rc 0 gp vd write vd5 --pattern 26 --offset "$RANGE_A" --length $((RANGE_B + 1 - RANGE_A))
echo 0 >/sys/bus/pseudo/drivers/scsi_debug/opts || fail "scsi_debug opts"
expect_rc 0 gp dg rebuild dg5 start
for _ in $(seq 600); do [ "$(gp --json dg show dg5 | json 'd["state"]')" = optimal ] && break; sleep 0.2; done
check "dg5 state after the rebuild started again" optimal "$(gp --json dg show dg5 | json 'd["state"]')"
# The rebuilt member holds the right bytes: without pdm.
expect_rc 0 gp pd fail pdm
expect_rc 0 gp vd read vd5 --verify-pattern 26 --offset "$RANGE_A" --length $((RANGE_B + 1 - RANGE_A))
expect_rc 0 gp vd read vd5 --verify-pattern 21 --offset 0 --length "$RANGE_A"
expect_rc 0 gp vd read vd5 --verify-pattern 21 --offset $((RANGE_B + 1)) --length $((VD5_BYTES - RANGE_B - 1))
result "scsi_debug bad sector under a degraded RAID 5: the rebuild stopped there naming vd5 bytes $RANGE_A-$RANGE_B, passed once they were written, the rebuilt member verifies"

step "a degraded RAID 5's rebuild stopped in free space: the daemon writes zeros there and starts it again, once"
# The same bad block in bytes no VD holds (vd6 is the group's first 16 MiB,
# the block at 34 MiB): nobody could write them. The daemon writes zeros
# over the stopped run's stripes and starts the rebuild again by itself;
# scsi_debug does not remap a sector written over, so that start stops
# there again, and the daemon leaves it (no loop) and says so. With its
# medium errors off (a drive's remap), the operator's start passes.
expect_rc 0 gp dg delete dg5 --force
expect_rc 0 gp pd wipe pdm
truncate -s 32M "$W/r6a.img" "$W/r6b.img" "$W/r6c.img"
expect_rc 0 gp pd add "$W/r6a.img" --id pd6a
expect_rc 0 gp pd add "$W/r6b.img" --id pd6b
expect_rc 0 gp pd add "$W/r6c.img" --id pd6c
expect_rc 0 gp dg create pd6a pdm pd6b --level 5 --strip 64K --name dg6 --assume-zeroed
expect_rc 0 gp vd create dg6 --size 16M --name vd6
expect_rc 0 gp vd write vd6 --pattern 31 --offset 0 --length 16M
echo 2 >/sys/bus/pseudo/drivers/scsi_debug/opts || fail "scsi_debug opts"
stops6() { gp events --json | python3 -c '
import json, sys
print(sum(1 for l in sys.stdin if l.strip() and (e := json.loads(l))["kind"] == "rebuild_finished"
          and e["group"] == "dg6" and " stopped at stripe" in e["message"]))'; }
expect_rc 0 gp pd fail pd6a
expect_rc 0 gp dg replace dg6 --old pd6a --with pd6c
for _ in $(seq 600); do [ "$(stops6)" -ge 2 ] && break; sleep 0.2; done
sleep 2   # no third start
check "dg6 rebuild stops (the first, and once after the daemon's zeros)" 2 "$(stops6)"
MSGS=$(gp events --json | python3 -c '
import json, sys
for e in map(json.loads, filter(str.strip, sys.stdin)):
    if e["kind"] == "rebuild_finished" and e["group"] == "dg6": print(e["message"])')
echo "$MSGS" | sed -n 1p | grep >/dev/null "the daemon writes zeros over them (no one.s data is there) and starts the rebuild again" ||
  fail "the first stop does not say the daemon zeros its free bytes: $(echo "$MSGS" | sed -n 1p)"
echo "$MSGS" | sed -n 2p | grep >/dev/null "did not make the block readable" ||
  fail "the second stop does not say the zeros did not help: $(echo "$MSGS" | sed -n 2p)"
grep -q "dg6: the free space a stopped rebuild names .*zeros written over it" "$T/daemon.log" ||
  fail "the daemon log has no zeroing of dg6's free space: $(grep dg6 "$T/daemon.log" | tail -3)"
check "pdm state with dg6's rebuild stopped" online "$(gp --json pd show pdm | json 'd["state"]')"
NOTE=$(gp --json dg show dg6 | json 'd.get("note", "")')
case $NOTE in *"did not make the block readable"*"dg rebuild dg6 start"*) echo "   ok: dg show's note: $NOTE" ;;
  *) fail "dg show's note does not say what is left: '$NOTE'" ;; esac
echo 0 >/sys/bus/pseudo/drivers/scsi_debug/opts || fail "scsi_debug opts"
expect_rc 0 gp dg rebuild dg6 start
for _ in $(seq 600); do [ "$(gp --json dg show dg6 | json 'd["state"]')" = optimal ] && break; sleep 0.2; done
check "dg6 state after the rebuild started again" optimal "$(gp --json dg show dg6 | json 'd["state"]')"
expect_rc 0 gp pd fail pdm
expect_rc 0 gp vd read vd6 --verify-pattern 31 --offset 0 --length 16M
result "scsi_debug bad sector in a degraded RAID 5's free space: the daemon wrote zeros over the stopped run and started the rebuild again by itself (once: it stopped there again, scsi_debug not remapping), passed once the drive read there, the rebuilt member verifies"
stop_daemon
log "done: every check passed"
