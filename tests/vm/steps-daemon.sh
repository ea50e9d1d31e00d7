# Sourced by guest-ublk.sh: steps that run the real daemon and CLI
# (gpuraidd + gpuraid) over the emulated NVMe drives and export through
# ublk with `gpuraid vd export VD --ublk`. Uses guest-ublk.sh's helpers
# (log, fail, result, fio_verify, fio_iops, DRIVES, CTRL, SPARE).
#   daemon_fs:     RAID 5 VD, ext4 + files; fio on a file while gpuraidd is
#                  SIGKILLed and restarted (the registry brings the export
#                  back on the same /dev/ublkbN, queued I/O completes); a
#                  planned restart (--ublk-on-exit keep: SIGTERM, the device
#                  stays mounted, fio goes on, nothing to resync); a default
#                  clean stop deletes the device and the next start brings
#                  it back under the same name; fsck.
#   daemon_degraded_crash: RAID 5 VD (the write-hole guard on: the default)
#                  with a member failed and no spare: ext4 + files; fio with
#                  verify on a file while gpuraidd is SIGKILLed, twice; each
#                  start brings the group back degraded by itself (no
#                  force; the log replayed), the export on the same device,
#                  fio completes and verifies, fsck is clean and the files'
#                  checksums hold after each crash (issue 15).
#   daemon_fail:   a member's NVMe controller is removed from the PCI bus
#                  during fio: failed, the pool spare takes over, rebuild,
#                  data verifies; a second failure is refused (it would
#                  lose data); unexport with I/O in flight: fio ends, the
#                  daemon stays up, export again works. (EIO past
#                  redundancy through ublk: ublk_conformance_test.)
#   daemon_draid:  a draid6 group (3+2, 2 distributed spares) over 12 file
#                  drives in the guest's tmpfs, the guest's CPU (TCG: AVX2,
#                  no AVX-512) picking ISA-L's path: ext4 + files on its
#                  ublk device; fio verify while a member fails and is
#                  rebuilt into the distributed spare room, gpuraidd
#                  SIGKILLed mid-rebuild (it resumes by itself); the
#                  member copied back onto a new drive (dg replace) under
#                  fio verify, SIGKILLed mid-copy (it resumes); two more
#                  failures with the rebuilt member relied on; fsck and the
#                  files' checksums after each (issue 34).
#   daemon_cycles: on NVMe passthrough members (--nvme-passthru, /dev/ngXn1),
#                  export/unexport x5 through the API: the daemon's fds,
#                  threads and ublkc mappings come back to where they were
#                  (the harness's cycles step does x50 with memory counts).

C=$BIN/gpuraid
GPURAIDD=$BIN/gpuraidd
export GPURAID_SOCKET=/run/gpuraid-lane.sock
DSTATE=/run/gpuraidd-state   # tmpfs: survives the daemon, not the guest
DLOG=$W/gpuraidd.log
DPID=""

# extra gpuraidd flags (DAEMON_PARITY: a --parity-backend for every start). An accelerator backend's
# time limit per batch is 500 ms by default, made for a GPU: kernel-cpu's threads in an emulated (TCG)
# guest beside CI's other lanes took longer once (CI: 139 jobs "fell back to the CPU" after one batch
# ran out of time), so the lane gives them 30 s; the check that no job fell back stays strict.
start_daemon() {
  $GPURAIDD --state-dir $DSTATE --socket $GPURAID_SOCKET --log-file $DLOG --reactors 2 --ublk-depth 64 \
    ${DAEMON_PARITY:+--parity-backend $DAEMON_PARITY --gpu-timeout-ms 30000} "$@" \
    >>$W/gpuraidd.out 2>&1 &
  DPID=$!
  for _ in $(seq 1 600); do
    $C info >/dev/null 2>&1 && return 0
    kill -0 $DPID 2>/dev/null || { fail "gpuraidd exited during start-up: $(tail -5 $DLOG)"; DPID=""; return 1; }
    sleep 0.1
  done
  fail "gpuraidd did not answer"
}
stop_daemon() {  # clean stop: SIGTERM, exit status 0
  [ -n "$DPID" ] || return 0
  kill -TERM $DPID
  local rc=0
  wait $DPID || rc=$?
  DPID=""
  [ $rc -eq 0 ] || fail "gpuraidd exit status $rc on SIGTERM"
}
kill_daemon() {
  kill -KILL $DPID
  wait $DPID 2>/dev/null
  DPID=""
}
vd_dev() { $C --json vd show $1 | python3 -c 'import json,sys; print(json.load(sys.stdin).get("export",{}).get("dev_path",""))'; }
group_field() {  # group python-expression-on-g
  $C --json dg show $1 | python3 -c "import json,sys; g=json.load(sys.stdin); print($2)"
}
wait_group() {  # group python-condition-on-g timeout_s
  for _ in $(seq 1 $(($3 * 2))); do
    [ "$(group_field $1 "bool($2)")" = True ] && return 0
    sleep 0.5
  done
  fail "group $1: '$2' not reached within $3 s: $($C dg show $1)"
}
# What one daemon holds: fds, ublk char-device mappings and the threads it
# started itself (every one is named gpuraid*: engine/thread_name.h) must not
# change over export cycles. Library pools come and go on their own (gRPC's
# executor/poller/timer threads, io_uring's iou-wrk workers), so the total is
# reported with a per-name breakdown and only bounded by the caller.
daemon_own_state() {
  echo "fds=$(ls /proc/$DPID/fd | wc -l) own_threads=$(cat /proc/$DPID/task/*/comm | grep -c '^gpuraid') ublkc_maps=$(grep -c ublkc /proc/$DPID/maps)"
}
daemon_threads() { ls /proc/$DPID/task | wc -l; }
daemon_thread_names() { cat /proc/$DPID/task/*/comm | sort | uniq -c | tr -s ' \n' ' '; }

# A RAID 5 over DRIVES[0..3] with pd4 as pool spare, one VD exported over ublk.
make_daemon_group() {
  rm -rf $DSTATE
  start_daemon || return 1
  # Earlier steps left data on the drives: zero them (Write Zeroes) so that
  # --assume-zeroed is true, and --force past their old signatures.
  local ids=() i=0
  for d in "${DRIVES[@]}" $SPARE; do
    blkdiscard -z $d || { fail "blkdiscard -z $d"; return 1; }
    $C pd add $d --id pd$i >/dev/null || { fail "pd add $d"; return 1; }
    ids+=(pd$i); i=$((i + 1))
  done
  $C pd spare pd4 --force >/dev/null || { fail "pd spare pd4"; return 1; }
  $C dg create --level 5 --strip 64K --name r5 --force --assume-zeroed "${ids[@]:0:4}" >/dev/null || { fail "dg create"; return 1; }
  $C vd create r5 --rest --name vol0 >/dev/null || { fail "vd create"; return 1; }
  local out
  out=$($C vd export vol0 --ublk) || { fail "vd export --ublk: $out"; return 1; }
  DEV=$(vd_dev vol0)
  [ -b "$DEV" ] || { fail "export printed '$out' but '$DEV' is no block device"; return 1; }
  echo "$out" | grep >/dev/null "$DEV" || fail "vd export did not print $DEV: $out"
}

# On the kernel-cpu backend (the GPU's data path, its kernels on CPU threads): ublk's request buffers are
# mapped for the "device" like the arenas, so ext4's and fio's full-strip writes read them in place.
step_daemon_fs() {
  DAEMON_PARITY=kernel-cpu
  daemon_fs_steps
  local rc=$?
  DAEMON_PARITY=
  return $rc
}

# Where parity ran since the daemon's start: no staged batch (a buffer the device could not map).
check_parity_zero_copy() {
  local p
  p=$($C --json info | python3 -c 'import json,sys; p=json.load(sys.stdin).get("parity",{}); print(p.get("zero_copy_batches",0), p.get("staged_batches",0), p.get("fallback_jobs",0))')
  set -- $p
  [ "${1:-0}" -gt 0 ] || fail "no zero-copy parity batch ($p)"
  [ "${2:-1}" -eq 0 ] || fail "$2 staged parity batches: buffers the device could not map"
  [ "${3:-1}" -eq 0 ] || fail "$3 parity jobs fell back to the CPU"
  result "gpuraidd on kernel-cpu: $1 zero-copy parity batches, none staged"
}

daemon_fs_steps() {
  make_daemon_group || return 1
  mkfs.ext4 -q -F -E nodiscard $DEV || { fail "mkfs.ext4"; return 1; }
  mount $DEV /mnt/vd || { fail "mount"; return 1; }
  for i in 1 2 3; do head -c 8M /dev/urandom >/mnt/vd/file$i; done
  sync
  (cd /mnt/vd && sha256sum file1 file2 file3 >$W/sums)
  fio_verify dfsfio /mnt/vd/fio.dat 48M &
  local fpid=$!
  sleep 6
  kill -0 $fpid 2>/dev/null || fail "fio ended before the kill (make it longer)"
  check_parity_zero_copy
  kill_daemon
  log "gpuraidd SIGKILLed; restarting it with the same state dir"
  local old=$DEV t1=$(date +%s.%N)
  start_daemon --ublk-on-exit keep || { kill $fpid; return 1; }
  local t2=$(date +%s.%N)
  DEV=$(vd_dev vol0)
  [ "$DEV" = "$old" ] || fail "the restarted daemon exports $DEV, not $old"
  wait $fpid || fail "fio across the daemon kill: $(tail -5 $W/fio.dfsfio)"
  grep -q "err= 0" $W/fio.dfsfio || fail "fio reported errors"
  result "gpuraidd: ublk fs fio across SIGKILL+restart (TCG): $(fio_iops dfsfio) restart=$(awk "BEGIN{printf \"%.1f\", $t2 - $t1}")s"
  (cd /mnt/vd && sha256sum -c --quiet $W/sums) || fail "file checksums after the restart"
  # A planned restart (--ublk-on-exit keep): SIGTERM exits 0 and leaves the
  # device, mounted, with fio running; the next daemon takes it over.
  fio_verify dfsfio2 /mnt/vd/fio2.dat 32M &
  fpid=$!
  sleep 5
  kill -0 $fpid 2>/dev/null || fail "fio ended before the planned restart (make it longer)"
  stop_daemon
  [ -b $old ] || fail "$old vanished at a clean stop with --ublk-on-exit keep"
  local lines=$(wc -l <$DLOG)
  start_daemon --ublk-on-exit keep || { kill $fpid; return 1; }
  [ "$(vd_dev vol0)" = "$old" ] || fail "after a planned restart the export is $(vd_dev vol0), not $old"
  wait $fpid || fail "fio across a planned restart: $(tail -5 $W/fio.dfsfio2)"
  # The SIGKILL's resync may still run (slow under TCG): it goes on, but a
  # planned stop is never an unclean one (no log replay, no new regions).
  tail -n +$((lines + 1)) $DLOG | grep >/dev/null "unclean stop" && fail "a planned restart was an unclean stop"
  grep -q "kept for the next daemon" $DLOG || fail "the daemon did not log that it kept the device"
  result "gpuraidd: ublk fs fio across a planned restart (--ublk-on-exit keep, TCG): $(fio_iops dfsfio2)"
  (cd /mnt/vd && sha256sum -c --quiet $W/sums) || fail "file checksums after the planned restart"
  umount /mnt/vd || fail "umount"
  # By default a clean stop deletes the device; the next start exports it
  # again under the same name.
  stop_daemon
  start_daemon || return 1
  stop_daemon
  [ -e $old ] && fail "$old still exists after a clean stop"
  start_daemon || return 1
  DEV=$(vd_dev vol0)
  [ "$DEV" = "$old" ] || fail "after a clean restart the export is $DEV, not $old"
  fsck.ext4 -fn $DEV >$W/fsck 2>&1 || { fail "fsck after the restarts"; cat $W/fsck; }
  mount $DEV /mnt/vd && (cd /mnt/vd && sha256sum -c --quiet $W/sums) || fail "checksums after the clean restart"
  umount /mnt/vd
}

step_daemon_degraded_crash() {
  make_daemon_group || return 1
  $C pd unspare pd4 >/dev/null || { fail "pd unspare pd4"; return 1; }
  [ "$(group_field r5 'g["write_hole_guard"]')" = True ] || fail "the write-hole guard is not on by default"
  mkfs.ext4 -q -F -E nodiscard $DEV || { fail "mkfs.ext4"; return 1; }
  mount $DEV /mnt/vd || { fail "mount"; return 1; }
  for i in 1 2; do head -c 4M /dev/urandom >/mnt/vd/file$i; done
  sync
  (cd /mnt/vd && sha256sum file1 file2 >$W/dsums)
  $C pd fail pd1 >/dev/null || { fail "pd fail pd1"; return 1; }
  local round fpid
  for round in 1 2; do
    fio_verify dcrash$round /mnt/vd/crash$round.dat 32M &
    fpid=$!
    fio_writing $fpid /mnt/vd/crash$round.dat $((32 << 20)) || fail "fio ended before the kill (make it longer)"
    kill_daemon
    start_daemon --ublk-on-exit keep || { kill $fpid; return 1; }
    local state=$(group_field r5 'g["state"]')
    [ "$state" = degraded ] || fail "r5 is $state after crash $round (want degraded, by itself)"
    [ "$(vd_dev vol0)" = "$DEV" ] || fail "the export moved from $DEV to $(vd_dev vol0)"
    wait $fpid || fail "fio across crash $round: $(tail -5 $W/fio.dcrash$round)"
    grep -q "err= 0" $W/fio.dcrash$round || fail "fio reported errors (crash $round)"
    umount /mnt/vd || { fail "umount"; return 1; }
    fsck.ext4 -fn $DEV >$W/fsck.dcrash$round 2>&1 || { fail "fsck after crash $round"; cat $W/fsck.dcrash$round; }
    mount $DEV /mnt/vd || { fail "mount after crash $round"; return 1; }
    (cd /mnt/vd && sha256sum -c --quiet $W/dsums) || fail "file checksums after crash $round"
  done
  umount /mnt/vd
  local note=$(group_field r5 'g.get("note", "")')
  result "gpuraidd: RAID 5 with a member failed, ext4 + fio verify, SIGKILL x2: degraded by itself each time, fsck clean ($note)"
}

step_daemon_fail() {
  [ -n "$DPID" ] || { make_daemon_group || return 1; }
  fio_verify dfail $DEV 48M &
  local fpid=$!
  sleep 4
  kill -0 $fpid 2>/dev/null || fail "fio ended before the member was removed (make it longer)"
  local pci=$(readlink -f ${CTRL[2]}/device)
  echo 1 >$pci/remove
  log "removed member 2's controller ($pci)"
  member2_replaced
  wait $fpid || fail "fio with a member removed: $(tail -5 $W/fio.dfail)"
  result "gpuraidd: ublk RAID5 fio with a member removed mid-run (TCG): $(fio_iops dfail)"
  # The pool spare (pd4) takes member 2's place and the group rebuilds.
  local t0=$(date +%s.%N)
  wait_group r5 'g["members"][2]["drive"] == "pd4"' 60 || return 1
  wait_group r5 'g["state"] == "optimal"' 600 || return 1
  local t1=$(date +%s.%N)
  result "gpuraidd: spare takeover + rebuild of a 128 MiB member (TCG): $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s"
  $C events | grep >/dev/null "rebuild_finished" || fail "no rebuild_finished event"
  fio_verify dfail $DEV 48M --verify_only || fail "verify after the rebuild"
  # The rebuilt member's bytes count: verify again with another member failed.
  $C pd fail pd0 >/dev/null || fail "pd fail pd0"
  fio_verify dfail $DEV 48M --verify_only || fail "verify with pd0 failed after the rebuild"
  # Failing another member would lose data: the daemon refuses and keeps serving.
  local out
  out=$($C pd fail pd1 2>&1) && fail "pd fail past redundancy was accepted"
  echo "$out" | grep >/dev/null "would fail the group" || fail "pd fail past redundancy: '$out'"
  [ "$(group_field r5 'g["members"][1]["state"]')" = online ] || fail "the refused pd fail changed member 1"
  # Unexport while I/O is in flight (this fio overwrites the verified
  # data): fio ends with errors, the daemon stays up, the device goes
  # away; exporting again works.
  fio --name=inflight --filename=$DEV --ioengine=io_uring --direct=1 --rw=randrw --bs=16k --iodepth=32 \
      --time_based --runtime=30 >$W/fio.inflight 2>&1 &
  fpid=$!
  sleep 3
  $C vd unexport vol0 >/dev/null || fail "unexport with I/O in flight"
  local t=0
  while kill -0 $fpid 2>/dev/null && [ $t -lt 60 ]; do sleep 1; t=$((t + 1)); done
  kill -0 $fpid 2>/dev/null && { fail "fio hangs on an unexported device"; kill -9 $fpid; }
  wait $fpid 2>/dev/null
  [ -e $DEV ] && fail "$DEV still exists after unexport"
  $C info >/dev/null || fail "the daemon stopped answering after unexport under I/O"
  $C vd export vol0 --ublk >/dev/null || fail "export again"
  DEV=$(vd_dev vol0)
  $C vd unexport vol0 >/dev/null
  stop_daemon
}

step_daemon_cycles() {
  # Its own group over three of the remaining drives, as NVMe passthrough
  # members (/dev/ngXn1, gpuraidd --nvme-passthru; the type comes from the path).
  local ds=() c
  for c in /sys/class/nvme/nvme*; do ds+=("/dev/ng${c##*/nvme}n1"); done
  rm -rf $DSTATE
  start_daemon --nvme-passthru || return 1
  local i=0 ids=()
  for d in "${ds[@]:0:3}"; do $C pd add $d --id c$i >/dev/null && ids+=(c$i); i=$((i + 1)); done
  $C --json pd show c0 | grep >/dev/null "\"nvme_char\"" || fail "${ds[0]} was not added as nvme-char: $($C pd show c0)"
  $C dg create --level 5 --strip 64K --name cyc --force --assume-zeroed "${ids[@]}" >/dev/null || { fail "dg create"; return 1; }
  $C vd create cyc --size 64M --name cv >/dev/null || { fail "vd create"; return 1; }
  $C vd export cv --ublk >/dev/null && $C vd unexport cv >/dev/null || { fail "first export"; return 1; }
  local cycles=5 before=$(daemon_own_state) tb=$(daemon_threads) names_before=$(daemon_thread_names) t0=$(date +%s)
  for n in $(seq 1 $cycles); do
    $C vd export cv --ublk >/dev/null || { fail "export #$n"; break; }
    local d=$(vd_dev cv)
    dd if=$d of=/dev/null bs=4K count=1 iflag=direct status=none || fail "read #$n from $d"
    $C vd unexport cv >/dev/null || { fail "unexport #$n"; break; }
  done
  local after=$(daemon_own_state) ta=$(daemon_threads)
  [ "$before" = "$after" ] || fail "daemon resources changed over $cycles export cycles: $before -> $after"
  # A thread leaked per cycle, even one named by a library, adds $cycles.
  [ $((ta - tb)) -lt $cycles ] ||
    fail "daemon threads grew over $cycles export cycles: $tb -> $ta ($names_before -> $(daemon_thread_names))"
  result "gpuraidd: ublk export/unexport x$cycles through the API in $(( $(date +%s) - t0 ))s ($after, threads $tb -> $ta)"
  stop_daemon
}

# gpuraidd SIGKILLed while fio (pid, its name) writes through the draid
# group's ublk device: restarted keeping the device, the rebuild let run
# free, fio ends without an error. `what`: what it ran across.
draid_sigkill_under_fio() {  # pid name dev what
  kill_daemon
  start_daemon --ublk-on-exit keep || { kill $1; return 1; }
  [ "$(vd_dev dvol)" = "$3" ] || fail "the export moved from $3 to $(vd_dev dvol)"
  $C dg rates dr --rebuild 0 >/dev/null
  wait $1 || fail "fio across $4 and the SIGKILL: $(tail -5 $W/fio.$2)"
  grep -q "err= 0" $W/fio.$2 || fail "fio reported errors ($2)"
}

step_daemon_draid() {
  local dir=/run/draid i ids=() round
  rm -rf $DSTATE $dir && mkdir -p $dir
  start_daemon || return 1
  for i in $(seq 0 11); do
    $C pd add $dir/d$i.img --size 32M --id f$i >/dev/null || { fail "pd add $dir/d$i.img"; return 1; }
    ids+=(f$i)
  done
  $C dg create --level draid6 --data 3 --distributed-spares 2 --name dr "${ids[@]}" >/dev/null || { fail "dg create draid6"; return 1; }
  wait_group dr 'g["state"] == "optimal"' 300 || return 1
  $C vd create dr --rest --name dvol >/dev/null || { fail "vd create"; return 1; }
  $C vd export dvol --ublk >/dev/null || { fail "vd export --ublk"; return 1; }
  local dev=$(vd_dev dvol)
  [ -b "$dev" ] || { fail "no block device for dvol ('$dev')"; return 1; }
  mkfs.ext4 -q -F -E nodiscard $dev || { fail "mkfs.ext4 on draid6"; return 1; }
  mount $dev /mnt/vd || { fail "mount"; return 1; }
  for i in 1 2; do head -c 4M /dev/urandom >/mnt/vd/file$i; done
  sync
  (cd /mnt/vd && sha256sum file1 file2 >$W/drsums)
  # Held slow, so that the SIGKILL lands while the room's rebuild runs.
  $C dg rates dr --rebuild 2M >/dev/null
  fio_verify draid /mnt/vd/fio.dat 16M &
  local fpid=$!
  fio_writing $fpid /mnt/vd/fio.dat $((16 << 20)) || fail "fio ended before the failure (make it longer)"
  $C pd fail f4 >/dev/null || { fail "pd fail f4"; kill $fpid; return 1; }
  wait_group dr 'g.get("distributed_spares_used") == 1 and g.get("rebuild", {}).get("running")' 30 || { kill $fpid; return 1; }
  draid_sigkill_under_fio $fpid draid $dev "the failure" || return 1
  local t0=$(date +%s.%N)
  wait_group dr 'g["state"] == "optimal"' 600 || return 1
  local t1=$(date +%s.%N)
  grep -q "rebuilt into the distributed spare room" $DLOG || $C events | grep >/dev/null "distributed spare room" ||
    fail "no event of the room's rebuild"
  # Copy-back: f4 (in the room) onto a new drive under a fio verify load,
  # gpuraidd SIGKILLed in the middle: it resumes at the persisted
  # checkpoint, the room's copies past it read around until it passes them.
  $C pd add $dir/d12.img --size 32M --id f12 >/dev/null || { fail "pd add $dir/d12.img"; return 1; }
  $C dg rates dr --rebuild 1M >/dev/null
  fio_verify draidcb /mnt/vd/fio2.dat 8M &
  fpid=$!
  fio_writing $fpid /mnt/vd/fio2.dat $((8 << 20)) || fail "fio ended before the copy-back (make it longer)"
  $C dg replace dr --old f4 --with f12 >/dev/null || { fail "dg replace f4 (copy-back)"; kill $fpid; return 1; }
  wait_group dr 'g.get("rebuild", {}).get("running")' 30 || { kill $fpid; return 1; }
  sleep 2
  draid_sigkill_under_fio $fpid draidcb $dev "the copy-back" || return 1
  grep -q "copy-back of member 4 out of the distributed spare room resumes" $DLOG ||
    fail "the restart did not resume the copy-back: $(tail -3 $DLOG)"
  local t2=$(date +%s.%N)
  wait_group dr 'g["state"] == "optimal" and g.get("distributed_spares_used", 0) == 0' 600 || return 1
  local t3=$(date +%s.%N)
  for round in rebuilt relied; do
    umount /mnt/vd || { fail "umount"; return 1; }
    fsck.ext4 -fn $dev >$W/fsck.draid 2>&1 || { fail "fsck on draid6 ($round)"; cat $W/fsck.draid; }
    mount $dev /mnt/vd || { fail "mount ($round)"; return 1; }
    (cd /mnt/vd && sha256sum -c --quiet $W/drsums) || fail "file checksums on draid6 ($round)"
    fio_verify draid /mnt/vd/fio.dat 16M --verify_only || fail "fio verify on draid6 ($round)"
    fio_verify draidcb /mnt/vd/fio2.dat 8M --verify_only || fail "fio verify of the copy-back's writes ($round)"
    # The member rebuilt into the room is relied on: two others fail.
    if [ $round = rebuilt ]; then
      $C pd fail f0 >/dev/null && $C pd fail f9 >/dev/null || fail "pd fail f0 f9 after the rebuild into the room"
    fi
  done
  umount /mnt/vd
  local avx2=no avx512=no
  grep -qw avx2 /proc/cpuinfo && avx2=yes
  grep -qw avx512f /proc/cpuinfo && avx512=yes
  result "gpuraidd: draid6 3+2 over 12 files, ext4 + fio verify, a member rebuilt into the distributed spare room across a SIGKILL (finished $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s after the restart, TCG), copied back onto a new drive across a SIGKILL (finished $(awk "BEGIN{printf \"%.1f\", $t3 - $t2}") s after fio), then two more failures: fsck clean, checksums hold (guest CPU avx2=$avx2 avx512f=$avx512)"
  $C vd unexport dvol >/dev/null
  stop_daemon
  rm -rf $dir
}
