#!/usr/bin/env bash
# run.sh [--nvme N] [--nvme-size SIZE] [--timeout S] -- COMMAND...
# Boots the lane's guest (qemu TCG, Debian 6.12 kernel, host root read-only
# over 9p under a tmpfs overlay, N emulated NVMe drives with serials
# vmlane0.., fresh sparse images) and runs COMMAND in it as root. The exit
# status of COMMAND is passed through; 124: timed out; 125: the guest never
# reported a status. Only the qemu this script started is ever killed.
# VMLANE_NVME_OPTS: per-drive qemu nvme device options, one word per drive
# in order ("-" = none), e.g. "- logical_block_size=4096,physical_block_size=4096".
# VMLANE_SHARE=DIR (an existing host directory) is mounted read-write at the
# same path in the guest, for results that outlive the run dir.
# VMLANE_DRIVES=DIR (an existing host directory): the drive images live there
# and are kept; an image already there is used as it is (the next boot of a
# power-loss test sees what the last one left), a missing one is made fresh.
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
sync
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

# One boot: fresh drive images, qemu in the background (so that a signal
# reaches only it), its exit status in $rc.
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
    drives+=(-drive "file=$dir/nvme$i.img,if=none,id=nv$i,format=raw,cache=none,aio=threads"
             -device "nvme,serial=vmlane$i,drive=nv$i$extra")
  done
  timeout -k 5 "$timeout_s" qemu-system-x86_64 -machine q35 -accel tcg,thread=multi -cpu max -smp "$cpus" -m "$mem" \
    -nodefaults -net none -no-reboot -display none -serial stdio \
    -kernel "$kroot/boot/vmlinuz-$kver" -initrd "$initrd" \
    -append "console=ttyS0 panic=-1 quiet loglevel=3 vmrun=$run" \
    -virtfs "local,path=/,mount_tag=hostroot,readonly=on,$virtfs" \
    -virtfs "local,path=$run,mount_tag=vmrun,$virtfs" "${share[@]}" \
    "${drives[@]}" </dev/null &
  qpid=$!
  rc=0
  wait "$qpid" || rc=$?
  qpid=""
}

# Multi-threaded TCG now and then kills the guest kernel while it boots
# (seen: "Oops: int3" in code being live-patched, before any of our code
# ran). Such a boot is retried, up to twice; a guest that started the
# command is never booted again.
for attempt in 1 2 3; do
  rm -f "$run/status" "$run/started"
  boot
  [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && { echo "vm lane: timed out after ${timeout_s}s" >&2; exit 124; }
  [ -f "$run/status" ] || [ -f "$run/started" ] && break
  [ $attempt -lt 3 ] && echo "vm lane: the guest kernel died while booting (qemu exit $rc, TCG); booting again" >&2
done
[ -f "$run/status" ] || { echo "vm lane: the guest reported no status (qemu exit $rc)" >&2; exit 125; }
exit "$(cat "$run/status")"
