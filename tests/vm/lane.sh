#!/usr/bin/env bash
# The VM lane as ctest runs it: boots the 6.12 guest with emulated NVMe
# drives and runs one guest script (default guest-ublk.sh: five 128 MiB
# drives, four members and a replacement) against BINDIR's programs.
# Exit 77 (skip) only when qemu or the kernel package cannot be obtained.
#   lane.sh [--guest SCRIPT] [--nvme N] [--nvme-opts "OPTS..."] BINDIR [STEP...]
# --nvme-opts: per-drive qemu nvme options (VMLANE_NVME_OPTS, see run.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
guest=guest-ublk.sh
nvme=5
while [ $# -gt 0 ]; do
  case "$1" in
    --guest) guest=$2; shift 2 ;;
    --nvme) nvme=$2; shift 2 ;;
    --nvme-opts) export VMLANE_NVME_OPTS=$2; shift 2 ;;
    *) break ;;
  esac
done
bin=$(cd "${1:?BINDIR}" && pwd)
shift
[ -f "$here/$guest" ] || { echo "no guest script $here/$guest" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: qemu-system-x86_64 is not installed (scripts/setup.sh)"; exit 77; }
# Fetch/prepare the kernel first, so that a skip is told apart from a failure.
rc=0
"$here/kernel.sh" >/dev/null || rc=$?
[ $rc -eq 77 ] && { echo "SKIP: the Debian 6.12 kernel could not be obtained"; exit 77; }
[ $rc -eq 0 ] || exit $rc
# Figures go to a file in the run dir (shared with the guest) and are printed at the end.
VMLANE_NVME=$nvme VMLANE_NVME_SIZE=${VMLANE_NVME_SIZE:-128M} VMLANE_TIMEOUT=${VMLANE_TIMEOUT:-1080} \
  "$here/run.sh" -- bash -c "VMLANE_WORK=\$PWD/work VMLANE_RESULTS=\$PWD/results bash $here/$guest $bin $*; rc=\$?; cat results 2>/dev/null >&2; exit \$rc"
