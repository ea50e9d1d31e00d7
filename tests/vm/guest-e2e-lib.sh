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
# Block devices by serial, from sysfs (the namespace's device: a controller,
# or with native multipath the subsystem; both have `serial`).
dev_of() {
  for b in /sys/block/nvme*n1; do
    [ "$(tr -d ' ' <"$b/device/serial" 2>/dev/null)" = "$1" ] && { echo "/dev/$(basename "$b")"; return 0; }
  done
  return 1
}
