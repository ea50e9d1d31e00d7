#!/usr/bin/env bash
# run.sh [--nvme N] [--nvme-size SIZE] [--timeout S] -- COMMAND...
# Boots the lane's guest (qemu TCG, Debian 6.12 kernel, host root read-only
# over 9p under a tmpfs overlay, N emulated NVMe drives with serials
# vmlane0.., fresh sparse images) and runs COMMAND in it as root. The exit
# status of COMMAND is passed through; 124: timed out; 125: the guest never
# reported a status. Only the qemu this script started is ever killed.
# VMLANE_NVME_OPTS: per-drive qemu drive device options (nvme or scsi-hd), one word per drive
# in order ("-" = none), e.g. "- logical_block_size=4096,physical_block_size=4096".
# VMLANE_SHARE=DIR (an existing host directory) is mounted read-write at the
# same path in the guest, for results that outlive the run dir.
# VMLANE_DRIVES=DIR (an existing host directory): the drive images live there
# and are kept; an image already there is used as it is (the next boot of a
# power-loss test sees what the last one left), a missing one is made fresh.
# VMLANE_BUS=scsi: the drives are SCSI disks (virtio-scsi, scsi-hd with
# DPO/FUA, target i for drive i, serial vmlaneI in VPD page 0x80) instead
# of NVMe namespaces. qemu's NVMe model ignores the FUA bit (hw/nvme has no
# FUA handling, 7.2 to 10.0): behind a volatile cache a FUA write it
# acknowledges is not durable, which no real NVMe drive does; its SCSI disk
# does what a drive must (the write, then a flush).
# VMLANE_VOLATILE=1: each drive sits behind a volatile write cache that a
# power cut really loses. nbdkit serves its image through the cache filter
# (cache=writeback: a write stays in nbdkit's memory-backed cache until a
# flush or FUA), qemu reaches it over NBD with cache=writeback, so the guest's
# drive reports a volatile write cache and its flushes are NBD flushes.
# VMLANE_CUT_FILE=PATH (host path, e.g. in VMLANE_SHARE): when the guest
# creates it, the power is cut: every nbdkit is killed (their unflushed
# writes are gone), then qemu. run.sh then exits 125 (no status), as after
# sysrq b.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nvme=${VMLANE_NVME:-4}
nvme_size=${VMLANE_NVME_SIZE:-256M}
timeout_s=${VMLANE_TIMEOUT:-900}
mem=${VMLANE_MEM:-2G}
cpus=${VMLANE_CPUS:-2}
while [ $# -gt 0 ]; do
  case "$1" in
    --nvme) nvme=$2; shift 2 ;;
    --nvme-size) nvme_size=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: run.sh [--nvme N] [--nvme-size S] [--timeout S] -- COMMAND..." >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: qemu-system-x86_64 is not installed" >&2; exit 77; }

read -r kver kroot initrd < <("$here/kernel.sh")
run=$(mktemp -d /tmp/gpuraid-vm-XXXXXX)
qpid=""
cleanup() {
  if [ -n "$qpid" ] && kill -0 "$qpid" 2>/dev/null; then kill -TERM "$qpid" 2>/dev/null || true; wait "$qpid" 2>/dev/null || true; fi
  declare -F stop_nbdkits >/dev/null && stop_nbdkits TERM
  if [ -n "${VMLANE_KEEP:-}" ]; then echo "run dir kept: $run" >&2; else rm -rf "$run"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

printf '%q ' "$@" >"$run/cmd.sh"
echo >>"$run/cmd.sh"
cat >"$run/stage2.sh" <<EOS
# PID 1 of the guest (bash from the host root).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb
mount -t proc proc /proc; mount -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm; mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run   # /tmp stays on the overlay: the run dir may live there
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /lib/modules/$kver && mount --bind $kroot/lib/modules/$kver /lib/modules/$kver
modprobe configfs 2>/dev/null; mount -t configfs configfs /sys/kernel/config 2>/dev/null
ip link set lo up 2>/dev/null
${VMLANE_SHARE:+mkdir -p $VMLANE_SHARE && mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 vmshare $VMLANE_SHARE}
[ -n "${VMLANE_VERBOSE:-}" ] || echo 1 >/proc/sys/kernel/printk
cd $run
: >$run/started   # from here on a failure is the command's, not the boot's
bash $run/cmd.sh </dev/null
echo \$? >$run/status
# The shared folders only: a global sync would wait for ever on a
# filesystem whose device has no server left (a ublk device a failed step
# left mounted).
sync -f $run/status ${VMLANE_SHARE:+$VMLANE_SHARE}
[ -n "${VMLANE_VERBOSE:-}" ] || echo 0 >/proc/sys/kernel/printk
exec busybox poweroff -f
EOS

virtfs=security_model=none,multidevs=remap
share=()
if [ -n "${VMLANE_SHARE:-}" ]; then
  [ -d "$VMLANE_SHARE" ] || { echo "VMLANE_SHARE=$VMLANE_SHARE is not a directory" >&2; exit 2; }
  share=(-virtfs "local,path=$VMLANE_SHARE,mount_tag=vmshare,$virtfs")
fi
read -r -a dev_opts <<<"${VMLANE_NVME_OPTS:-}"
volatile=${VMLANE_VOLATILE:-0}
bus=${VMLANE_BUS:-nvme}
case $bus in nvme|scsi) ;; *) echo "VMLANE_BUS=nvme|scsi" >&2; exit 2 ;; esac
if [ "$volatile" = 1 ]; then
  command -v nbdkit >/dev/null || { echo "SKIP: VMLANE_VOLATILE needs nbdkit (scripts/setup.sh)" >&2; exit 77; }
fi
nbdkit_pids=()
stop_nbdkits() {  # $1: signal
  local p
  for p in "${nbdkit_pids[@]}"; do kill "-$1" "$p" 2>/dev/null || true; done
  for p in "${nbdkit_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  nbdkit_pids=()
}
# One drive behind a volatile cache: nbdkit on a unix socket in the run dir,
# its cache file there too (TMPDIR), gone with it.
serve_volatile() {  # image socket
  rm -f "$2"
  TMPDIR=$run nbdkit -f --exit-with-parent -U "$2" --filter=cache file "$1" \
    cache=writeback cache-min-block-size=4096 &
  nbdkit_pids+=($!)
  local _
  for _ in $(seq 100); do [ -S "$2" ] && return 0; sleep 0.1; done
  echo "vm lane: nbdkit did not start for $1" >&2
  return 1
}
# The power cut: the guest frozen at once (SIGSTOP: no further I/O, qemu
# flushes nothing), the nbdkits killed (their caches are the volatile part),
# then qemu. $1 is timeout's pid; qemu is its child.
watch_cut() {  # timeout pid
  while kill -0 "$1" 2>/dev/null; do
    if [ -e "$VMLANE_CUT_FILE" ]; then
      : >"$run/cut"
      pkill -STOP -P "$1" 2>/dev/null
      stop_nbdkits KILL
      pkill -KILL -P "$1" 2>/dev/null
      kill -KILL "$1" 2>/dev/null
      return
    fi
    sleep 0.1
  done
}

# One boot: fresh drive images, qemu in the background (so that a signal
# reaches only it) for at most $1 seconds, its exit status in $rc.
boot() {
  local drives=() i extra
  local dir=${VMLANE_DRIVES:-$run}
  for i in $(seq 0 $((nvme - 1))); do
    if [ -z "${VMLANE_DRIVES:-}" ] || [ ! -f "$dir/nvme$i.img" ]; then
      rm -f "$dir/nvme$i.img"
      truncate -s "$nvme_size" "$dir/nvme$i.img"
    fi
    extra=${dev_opts[$i]:--}
    [ "$extra" = - ] && extra="" || extra=",$extra"
    if [ "$volatile" = 1 ]; then
      serve_volatile "$dir/nvme$i.img" "$run/nbd$i.sock" || { rc=1; return; }
      drives+=(-drive "driver=raw,file.driver=nbd,file.server.type=unix,file.server.path=$run/nbd$i.sock,if=none,id=nv$i,cache=writeback")
    else
      drives+=(-drive "file=$dir/nvme$i.img,if=none,id=nv$i,format=raw,cache=none,aio=threads")
    fi
    if [ "$bus" = scsi ]; then
      drives+=(-device "scsi-hd,bus=scsi0.0,channel=0,scsi-id=$i,lun=0,drive=nv$i,serial=vmlane$i,dpofua=on$extra")
    else
      drives+=(-device "nvme,serial=vmlane$i,drive=nv$i$extra")
    fi
  done
  [ "$bus" = scsi ] && drives=(-device virtio-scsi-pci,id=scsi0 "${drives[@]}")
  timeout -k 5 "$1" qemu-system-x86_64 -machine q35 -accel tcg,thread=multi -cpu max -smp "$cpus" -m "$mem" \
    -nodefaults -net none -no-reboot -display none \
    -chardev "stdio,id=console,logfile=$run/console.log" -serial chardev:console \
    -kernel "$kroot/boot/vmlinuz-$kver" -initrd "$initrd" \
    -append "console=ttyS0 panic=-1 oops=panic quiet loglevel=3 vmrun=$run" \
    -virtfs "local,path=/,mount_tag=hostroot,readonly=on,$virtfs" \
    -virtfs "local,path=$run,mount_tag=vmrun,$virtfs" "${share[@]}" \
    "${drives[@]}" </dev/null &
  qpid=$!
  local watcher=""
  if [ -n "${VMLANE_CUT_FILE:-}" ]; then
    watch_cut "$qpid" &
    watcher=$!
  fi
  rc=0
  wait "$qpid" || rc=$?
  qpid=""
  if [ -n "$watcher" ]; then kill "$watcher" 2>/dev/null || true; wait "$watcher" 2>/dev/null || true; fi
  # A clean end: qemu flushed its drives as it exited (NBD flush: nothing
  # is left in the caches); the servers go with it.
  stop_nbdkits TERM
}

# Multi-threaded TCG now and then kills the guest kernel (seen: "Oops: int3"
# in code being live-patched while it boots, before any of our code ran; a
# double fault inside the kernel's kmalloc under a plain read(2) mid-run; a
# NULL instruction fetch in nvme_tcp's I/O worker). oops=panic makes every
# oops a panic, so that a driver worker's oops ends the guest at once instead
# of leaving its queues dead until the lane times out.
# A boot that died before the command started is retried, up to twice. A
# guest kernel that died mid-run (its console says "Kernel panic") runs the
# whole command again once, from a clean run dir and fresh drives, and only
# where nothing outlives a boot (no VMLANE_DRIVES, VMLANE_SHARE or cut file):
# a panic our code causes happens again and fails the lane. All boots share
# the one time limit, so that a rerun cannot outlast ctest's.
rerun_left=1
[ -n "${VMLANE_DRIVES:-}${VMLANE_SHARE:-}${VMLANE_CUT_FILE:-}" ] && rerun_left=0
deadline=$((SECONDS + timeout_s))
attempt=0
while :; do
  attempt=$((attempt + 1))
  rm -f "$run/status" "$run/started" "$run/cut" "$run/console.log"
  boot $((deadline - SECONDS))
  [ -f "$run/cut" ] && { echo "vm lane: power cut (VMLANE_CUT_FILE), no status, as meant" >&2; exit 125; }
  [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && { echo "vm lane: timed out after ${timeout_s}s" >&2; exit 124; }
  [ -f "$run/status" ] && break
  # Time for a useful run: the lanes take minutes; with less left, the
  # failure is reported as it is.
  [ $((deadline - SECONDS)) -ge 120 ] || break
  if [ -f "$run/started" ]; then
    panic=$(grep -a -m1 -E 'Kernel panic|Oops:|PANIC:' "$run/console.log" 2>/dev/null | tr -d '\r' || true)
    [ -n "$panic" ] && [ "$rerun_left" -gt 0 ] || break
    rerun_left=0
    echo "vm lane: the guest kernel died mid-run (TCG: $panic); running the command again from the start on fresh drives" >&2
    find "$run" -mindepth 1 -maxdepth 1 ! -name cmd.sh ! -name stage2.sh -exec rm -rf {} +
    continue
  fi
  [ $attempt -lt 3 ] || break
  echo "vm lane: the guest kernel died while booting (qemu exit $rc, TCG); booting again" >&2
done
[ -f "$run/status" ] || { echo "vm lane: the guest reported no status (qemu exit $rc)" >&2; exit 125; }
exit "$(cat "$run/status")"
