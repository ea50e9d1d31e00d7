# Sourced by the guest scripts that run the real gpuraidd and CLI through
# tests/e2e/lib.sh (guest-nvme.sh, guest-powerloss.sh): that library, the
# lane's work dir and results, the modules, and NVMe namespaces by serial.
# Usage: source guest-e2e-lib.sh BINDIR; DAEMON_LOG_COPY (default
# $W/daemon.log) is where the daemon's log is copied at exit.
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh" "$1"
DAEMON_START_S=180
W=${VMLANE_WORK:-/run/lane}
mkdir -p "$W"
RESULTS=${VMLANE_RESULTS:-$W/results}
log() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*"; }
result() { echo "$*" >>"$RESULTS"; log "result: $*"; }
trap 'cp -f "$T/daemon.log" "${DAEMON_LOG_COPY:-$W/daemon.log}" 2>/dev/null; cleanup' EXIT

modprobe nvme && modprobe ublk_drv || fail "modules"
modprobe virtio_scsi && modprobe sd_mod || fail "SCSI modules"   # run.sh VMLANE_BUS=scsi
# Block devices by serial, from sysfs: an NVMe namespace (its device: a
# controller, or with native multipath the subsystem; both have `serial`)
# or a SCSI disk (VPD page 0x80: the serial after a 4-byte header).
dev_of() {
  local b s
  for b in /sys/block/nvme*n1 /sys/block/sd*; do
    [ -e "$b" ] || continue   # a pattern that matched nothing
    case ${b##*/} in
      nvme*) s=$(tr -d ' ' <"$b/device/serial" 2>/dev/null) ;;
      sd*) s=$(tail -c +5 "$b/device/vpd_pg80" 2>/dev/null | tr -d ' \0') ;;
      *) continue ;;
    esac
    [ "$s" = "$1" ] && { echo "/dev/${b##*/}"; return 0; }
  done
  return 1
}
# The path an operator gives gpuraid for that drive: an NVMe namespace's
# node (gpuraidd finds a renumbered namespace by its NVMe id); a SCSI
# disk's /dev/disk/by-id link, made here as udev would (the guest runs no
# udev), since sdX names follow the order of asynchronous probes.
stable_path_of() {
  local dev
  dev=$(dev_of "$1") || return 1
  case $dev in
    /dev/sd*)
      mkdir -p /dev/disk/by-id
      ln -sfn "$dev" "/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_$1"
      echo "/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_$1" ;;
    *) echo "$dev" ;;
  esac
}
