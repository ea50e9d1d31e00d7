#!/usr/bin/env bash
# Runs inside the lane's guest (see run.sh): ublk exports of a RAID 5 over
# the emulated NVMe drives, checked with real tools. Usage:
#   guest-ublk.sh BINDIR [STEP...]     (default: every step but the long ones, in order)
# Steps: params conformance passthru daemon_fs daemon_degraded_crash daemon_draid fio_kill daemon_fail daemon_cycles
# Long steps (ctest vm_ublk_long_lane, label long: scripts/long-lanes.sh): passthru daemon_draid md_compare cycles
# (daemon_*: gpuraidd + the gpuraid CLI, in steps-daemon.sh; the others
# drive gpuraid-export-harness, which serves one volume with no daemon)
# Figures go to $VMLANE_RESULTS (a file) when set; timings are TCG.
set -uo pipefail
BIN=$1
shift
STEPS=${*:-params conformance daemon_fs daemon_degraded_crash fio_kill daemon_fail daemon_cycles}
H=$BIN/gpuraid-export-harness
W=${VMLANE_WORK:-/run/lane}   # lane.sh puts it in the run dir: kept with VMLANE_KEEP=1
mkdir -p $W /mnt/vd
RESULTS=${VMLANE_RESULTS:-$W/results}
HPID=""
failures=0

log() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*"; }
fail() {
  log "FAIL: $*"
  [ -f $W/harness.err ] && tail -20 $W/harness.err
  [ -f $W/gpuraidd.log ] && tail -20 $W/gpuraidd.log
  failures=$((failures + 1))
  return 1
}
result() { echo "$*" >>"$RESULTS"; log "result: $*"; }

modprobe ublk_drv && modprobe nvme || { log "FAIL: modules"; exit 1; }
for _ in $(seq 1 100); do [ "$(ls /sys/class/nvme 2>/dev/null | wc -l)" -ge 5 ] && break; sleep 0.1; done
# Members by serial: controller numbers follow probe order, not the command line.
DRIVES=()
for i in 0 1 2 3; do
  for c in /sys/class/nvme/nvme*; do
    [ "$(cat $c/serial | tr -d ' ')" = "vmlane$i" ] && DRIVES+=("/dev/$(basename $c)n1") && CTRL[$i]=$c
  done
done
[ ${#DRIVES[@]} -eq 4 ] || { log "FAIL: expected 4 NVMe drives, found ${DRIVES[*]}"; exit 1; }
SPARE=""   # vmlane4: the pool spare in daemon_fail
for c in /sys/class/nvme/nvme*; do [ "$(cat $c/serial | tr -d ' ')" = vmlane4 ] && SPARE=/dev/$(basename $c)n1; done
DLIST=$(IFS=,; echo "${DRIVES[*]}")
GEOM=(--level 5 --strip 64K --drive-type block --drives "$DLIST" --reactors 2 --ublk-depth 64)

start_harness() {  # extra args; waits for the state file
  rm -f $W/state
  $H "${GEOM[@]}" --state $W/state "$@" >>$W/harness.out 2>>$W/harness.err &
  HPID=$!
  for _ in $(seq 1 600); do
    [ -f $W/state ] && { DEV=$(sed -n 's/^ublk_dev=//p' $W/state); ID=$(sed -n 's/^ublk_id=//p' $W/state); return 0; }
    kill -0 $HPID 2>/dev/null || { fail "harness exited during start-up"; return 1; }
    sleep 0.1
  done
  fail "harness did not come up"
}
stop_harness() {
  [ -n "$HPID" ] || return 0
  kill -TERM $HPID 2>/dev/null
  local rc=0
  wait $HPID || rc=$?
  HPID=""
  [ $rc -eq 0 ] || fail "harness exit status $rc"
}
fio_verify() {  # name file/dev size extra...
  local name=$1 f=$2 size=$3
  shift 3
  # fio would lay out a regular file in /dev if the device were missing.
  case $f in /dev/*) [ -b $f ] || { fail "$f is not a block device"; return 1; } ;; esac
  fio --name=$name --filename=$f --size=$size --ioengine=io_uring --direct=1 --rw=randwrite --bs=4k \
      --iodepth=16 --numjobs=2 --cpus_allowed=0-1 --cpus_allowed_policy=split --offset_increment=$size \
      --verify=crc32c --do_verify=1 --verify_fatal=1 --group_reporting "$@" >$W/fio.$name 2>&1
}
# Returns once fio (pid) has made FILE at least BYTES long and a second
# more has passed, so that a kill lands while it writes whatever the
# machine's speed; false if fio ended first.
fio_writing() {  # pid file bytes
  for _ in $(seq 1 150); do
    kill -0 $1 2>/dev/null || return 1
    [ "$(stat -c %s $2 2>/dev/null || echo 0)" -ge $3 ] && break
    sleep 0.2
  done
  sleep 1
  kill -0 $1 2>/dev/null
}
fio_iops() { sed -n 's/.*\(write\|read\): IOPS=\([^,]*\),.*/\1 \2/p' $W/fio.$1 | tr '\n' ' '; }

step_params() {
  start_harness --ublk || return 1
  local b=$(basename $DEV) q=/sys/block/$(basename $DEV)/queue
  [ -b $DEV ] || fail "$DEV is not a block device"
  [ "$(cat $q/logical_block_size)" = 4096 ] || fail "logical block $(cat $q/logical_block_size)"
  [ "$(cat $q/physical_block_size)" = 4096 ] || fail "physical block"
  [ "$(cat $q/minimum_io_size)" = 65536 ] || fail "io_min $(cat $q/minimum_io_size) != strip"
  # io_opt is a shift in the ublk ABI: the largest power of two within the
  # full stripe (3 x 64K here: 128K).
  [ "$(cat $q/optimal_io_size)" = 131072 ] || fail "io_opt $(cat $q/optimal_io_size)"
  [ "$(cat $q/discard_granularity)" = 65536 ] || fail "discard granularity $(cat $q/discard_granularity)"
  [ "$(cat $q/write_cache)" = "write back" ] || fail "write cache '$(cat $q/write_cache)'"
  [ "$(cat $q/fua)" = 1 ] || fail "fua"
  [ "$(cat $q/rotational)" = 0 ] || fail "rotational"
  [ "$(ls /sys/block/$b/mq | wc -l)" = 2 ] || fail "expected 2 hardware queues"
  # Discard and write-zeroes read back zeroes; data around them is kept.
  head -c 4M /dev/urandom >$W/pat
  dd if=$W/pat of=$DEV bs=1M oflag=direct status=none || fail "write pattern"
  blkdiscard -o 1M -l 1M $DEV || fail "blkdiscard"
  blkdiscard -z -o 2M -l 512K $DEV || fail "blkdiscard -z (write zeroes)"
  dd if=$DEV of=$W/back bs=1M count=4 iflag=direct status=none
  cmp -n 1M $W/pat $W/back || fail "data before the discard changed"
  [ "$(dd if=$W/back bs=512K skip=2 count=3 status=none | tr -d '\0' | wc -c)" = 0 ] || fail "discarded/zeroed range is not zero"
  cmp -i $((2560 << 10)) $W/pat $W/back || fail "data after the zeroed range changed"
  # Flush and FUA reach the engine (sync, O_DSYNC writes).
  dd if=$W/pat of=$DEV bs=64K count=8 oflag=direct,dsync status=none && sync || fail "dsync writes"
  stop_harness
  [ -e $DEV ] && fail "$DEV still exists after the harness stopped"
}

step_conformance() {
  # ublk_conformance_test: negotiation, invalid arguments, SET_PARAMS on a
  # live device, errors reaching the application, delete with every tag
  # held in the server, exclusive char device.
  $BIN/ublk_conformance_test >$W/conformance 2>&1 || { fail "ublk_conformance_test"; grep -v "^\[ *\(RUN\|OK\) " $W/conformance | tail -30; return 1; }
  grep -q "SKIPPED" $W/conformance && { fail "ublk_conformance_test skipped in the VM"; return 1; }
  result "$(grep "delete with" $W/conformance) (TCG)"
}

step_passthru() {
  # The RAID 5 with NVMe passthrough members (nvme-char: /dev/ngXnY through
  # io_uring URING_CMD) and with the block devices gives the same bytes:
  # fio writes verifiable data through one and verifies it through the
  # other, both ways; O_DSYNC writes go out as FUA on the passthrough path.
  local ng=() d
  for d in "${DRIVES[@]}"; do ng+=("/dev/ng${d#/dev/nvme}"); done
  local saved=("${GEOM[@]}")
  GEOM=(--level 5 --strip 64K --drive-type nvme-char --drives "$(IFS=,; echo "${ng[*]}")" --reactors 2 --ublk-depth 64)
  start_harness --ublk || { GEOM=("${saved[@]}"); return 1; }
  fio_verify pt_a $DEV 16M --bsrange=4k-128k --blockalign=4k || fail "fio through passthrough members"
  dd if=/dev/urandom of=$DEV bs=64K count=4 seek=1000 oflag=direct,dsync status=none || fail "dsync (FUA) writes through passthrough"
  stop_harness
  GEOM=("${saved[@]}")
  start_harness --ublk || return 1
  fio_verify pt_a $DEV 16M --bsrange=4k-128k --blockalign=4k --verify_only || fail "block members read other bytes than passthrough wrote"
  fio_verify pt_b $DEV 16M --offset=64M || fail "fio through block members"
  stop_harness
  GEOM=(--level 5 --strip 64K --drive-type nvme-char --drives "$(IFS=,; echo "${ng[*]}")" --reactors 2 --ublk-depth 64)
  start_harness --ublk || { GEOM=("${saved[@]}"); return 1; }
  fio_verify pt_b $DEV 16M --offset=64M --verify_only || fail "passthrough members read other bytes than block wrote"
  stop_harness
  GEOM=("${saved[@]}")
  # The bench on both paths (TCG: functional, not speed).
  local b
  for t in block nvme-char; do
    if [ $t = block ]; then b=$DLIST; else b=$(IFS=,; echo "${ng[*]}"); fi
    $BIN/gpuraid-bench --level 0 --members 4 --drive-type $t --drives $b --force --rw randread --bs 4k \
      --iodepth 32 --threads 2 --runtime 3 --runs 1 --no-fill >$W/bench.$t 2>&1 || fail "gpuraid-bench on $t members"
  done
  result "gpuraid-bench RAID0 4K randread QD32x2 IOPS, block vs nvme-char members (TCG): $(awk '$1 == "raid" {print $2}' $W/bench.block) vs $(awk '$1 == "raid" {print $2}' $W/bench.nvme-char)"
}

step_fio_kill() {
  # Raw device, multi-queue, QD16 x 2 jobs, mixed sizes; SIGKILL mid-run.
  # On an engine Group: after the kill the group is reassembled (unclean:
  # dirty regions resync) while the kernel re-issues the queued writes, so
  # REISSUE lands on stripes whose parity is being recomputed.
  start_harness --group create --ublk || return 1
  fio --name=raw --filename=$DEV --size=64M --ioengine=io_uring --direct=1 --rw=randwrite --bsrange=4k-256k \
      --blockalign=4k --iodepth=16 --numjobs=2 --cpus_allowed=0-1 --cpus_allowed_policy=split --offset_increment=64M \
      --verify=crc32c --do_verify=1 --verify_fatal=1 --group_reporting >$W/fio.raw 2>&1 &
  local fpid=$!
  sleep 5
  kill -KILL $HPID; wait $HPID 2>/dev/null; HPID=""
  sleep 1   # requests queue in the kernel meanwhile
  start_harness --group assemble --ublk-id $ID || { kill $fpid; return 1; }
  wait $fpid || fail "raw fio across the kill: $(tail -5 $W/fio.raw)"
  grep -Eq "dirty regions? will be resynced" $W/harness.err || fail "the reassembled group did not resync dirty regions"
  result "ublk raw fio randwrite 4k-256k QD16x2 across SIGKILL (TCG): $(fio_iops raw)"
  fio_verify perf $DEV 32M
  result "ublk RAID5 fio randwrite 4k QD16x2 + verify (TCG): $(fio_iops perf)"
  stop_harness
}

step_md_compare() {
  # The same RAID 5 with md over the same drives: md's left-symmetric
  # layout and a 1 MiB data offset, so md must read what gpuraid wrote and
  # find every parity block consistent (check: mismatch_cnt 0).
  start_harness --ublk || return 1
  local size=$(sed -n 's/^size=//p' $W/state)
  fio --name=fill --filename=$DEV --ioengine=io_uring --direct=1 --rw=write --bs=192k --iodepth=8 \
      --size=$size --refill_buffers >$W/fio.fill 2>&1 || fail "fill"
  fio_verify r5small $DEV 32M || fail "fio r5small"   # random partial-stripe writes (RMW) too
  dd if=$DEV bs=1M iflag=direct status=none | sha256sum >$W/gp.sum
  stop_harness
  modprobe raid456
  mdadm --create /dev/md0 --run --level=5 --raid-devices=4 --chunk=64 --layout=left-symmetric \
        --assume-clean --metadata=1.2 --data-offset=1M "${DRIVES[@]}" >$W/mdadm 2>&1 || { fail "mdadm create"; cat $W/mdadm; return 1; }
  head -c "$size" /dev/md0 | sha256sum >$W/md.sum
  cmp -s $W/gp.sum $W/md.sum || fail "md reads other data than gpuraid wrote"
  echo check >/sys/block/md0/md/sync_action
  sleep 1
  while grep -q check /sys/block/md0/md/sync_action; do sleep 1; done
  local mm=$(cat /sys/block/md0/md/mismatch_cnt)
  [ "$mm" = 0 ] || fail "md found $mm parity mismatches in gpuraid's stripes"
  fio_verify md /dev/md0 32M || fail "fio on md"
  result "md RAID5 fio randwrite 4k QD16x2 + verify (TCG): $(fio_iops md)"
  mkfs.ext4 -q -F /dev/md0 && mount /dev/md0 /mnt/vd && head -c 8M /dev/urandom >/mnt/vd/f && sync &&
    umount /mnt/vd && fsck.ext4 -fn /dev/md0 >/dev/null || fail "ext4 on md"
  mdadm --stop /dev/md0 >/dev/null
  mdadm --zero-superblock "${DRIVES[@]}"
  log "md_compare: byte-identical reads, mismatch_cnt=$mm"
}

# Member 2's controller was removed (daemon_fail): the spare (vmlane4) holds
# its data now, and the later steps use the group's current members.
member2_replaced() {
  DRIVES[2]=$SPARE
  DLIST=$(IFS=,; echo "${DRIVES[*]}")
  GEOM=(--level 5 --strip 64K --drive-type block --drives "$DLIST" --reactors 2 --ublk-depth 64)
}

step_cycles() {
  log "members: $DLIST"
  local t0=$(date +%s)
  $H "${GEOM[@]}" --ublk-cycles 50 >$W/cycles 2>&1 ||
    { fail "ublk add/delete x50"; cat $W/cycles; ls -l /dev/ublk*; return 1; }
  result "$(tail -1 $W/cycles) in $(( $(date +%s) - t0 ))s"
}

source "$(dirname "$0")/steps-daemon.sh"

for s in $STEPS; do
  log "step $s"
  before=$failures
  step_$s || true
  [ $failures -eq $before ] && log "step $s: passed" || log "step $s: FAILED"
  if [ -n "$HPID" ]; then
    # A step that failed half way: a clean stop deletes its device (a
    # SIGKILL would leave it waiting for recovery).
    kill -TERM $HPID 2>/dev/null
    for _ in $(seq 1 300); do kill -0 $HPID 2>/dev/null || break; sleep 0.1; done
    kill -KILL $HPID 2>/dev/null; wait $HPID 2>/dev/null; HPID=""
  fi
  mountpoint -q /mnt/vd && umount /mnt/vd
  if [ -n "$DPID" ]; then kill -TERM $DPID 2>/dev/null; wait $DPID 2>/dev/null; DPID=""; fi
done
log "done: $failures failure(s)"
[ $failures -eq 0 ]
