#!/usr/bin/env bash
# The power-loss lane: boots the guest (run.sh) with seven emulated drives
# whose images outlive the boot, runs guest-powerloss.sh's `cut`
# phase (applications on a ublk RAID 5, then sysrq b: the power cut), boots
# again on the same images and runs its `check` phase. Once per scenario
# (the group's state at the cut), each from fresh drives:
#   powerloss.sh BINDIR [normal] [degraded] [rebuilding]   (default: all three)
# POWERLOSS_CACHE=volatile (default): the drives have volatile write caches
# that the cut loses (run.sh VMLANE_VOLATILE: nbdkit's cache filter; the
# host kills it, then qemu, when the guest asks) and are SCSI disks, whose
# qemu model honours FUA (its NVMe model does not); durable: NVMe drives
# that keep every write they were given, and the guest cuts with sysrq b.
# Exit 77 (skip) only when qemu or the kernel package cannot be obtained.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "${1:?BINDIR}" && pwd)
shift
scenarios=${*:-normal degraded rebuilding}
cache=${POWERLOSS_CACHE:-volatile}
# Volatile caches need drives that honour FUA: SCSI disks (run.sh VMLANE_BUS).
case $cache in volatile) volatile=1 bus=scsi ;; durable) volatile=0 bus=nvme ;; *) echo "POWERLOSS_CACHE=volatile|durable" >&2; exit 2 ;; esac
command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: qemu-system-x86_64 is not installed (scripts/setup.sh)"; exit 77; }
rc=0
"$here/kernel.sh" >/dev/null || rc=$?
[ $rc -eq 77 ] && { echo "SKIP: the Debian 6.12 kernel could not be obtained"; exit 77; }
[ $rc -eq 0 ] || exit $rc

dir=$(mktemp -d /tmp/gpuraid-powerloss-XXXXXX)
trap 'rm -rf "$dir"' EXIT
guest() {  # phase scenario: one boot running guest-powerloss.sh; its status
  VMLANE_NVME=7 VMLANE_BUS=$bus VMLANE_NVME_SIZE=128M VMLANE_TIMEOUT=${VMLANE_TIMEOUT:-600} VMLANE_DRIVES=$dir/drives \
    VMLANE_SHARE=$dir/share VMLANE_VOLATILE=$volatile VMLANE_CUT_FILE=$dir/share/cut-now "$here/run.sh" -- \
    bash -c "VMLANE_WORK=\$PWD/work VMLANE_RESULTS=$dir/share/results bash $here/guest-powerloss.sh $bin $1 $dir/share $2 $cache"
}
for round in $scenarios; do
  rm -rf "$dir/drives" "$dir/share"
  mkdir -p "$dir/drives" "$dir/share"
  echo "== $round: applications, then the power cut ($cache drive caches)"
  rc=0
  guest cut $round || rc=$?
  # The cut leaves no status (125): the guest died at sysrq b, or the host
  # killed the drives and qemu, as meant.
  if [ ! -f "$dir/share/cut" ] || [ $rc -ne 125 ]; then
    echo "FAIL ($round): the cut phase ended with $rc before cutting the power" >&2
    tail -30 "$dir/share/daemon-cut.log" 2>/dev/null >&2 || true
    exit 1
  fi
  rm -f "$dir/share/cut-now"
  echo "== $round: the next boot on the same drives"
  rc=0
  guest check $round || rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL ($round): the check after the power cut (exit $rc)" >&2
    tail -40 "$dir/share/daemon-check.log" 2>/dev/null >&2 || true
    exit 1
  fi
  cat "$dir/share/results"
done
