#!/usr/bin/env bash
# The lanes scripts/test.sh leaves out by default (ctest label `long`): the
# Debian package installed and used in the VM (vm_package_lane), the
# benchmark suite's VM target on tiny settings (vm_bench_smoke) and the
# ublk lane's long steps (vm_ublk_long_lane: md reads gpuraid's RAID 5,
# ublk add/delete x50), about 4 minutes on 2 cores. .ci/run runs them when its time budget allows.
# Needs a built tree (scripts/test.sh or scripts/build.sh first).
set -euo pipefail
cd "$(dirname "$0")/../build"
t=$SECONDS
rc=0
ctest --output-on-failure -L '^long$' "$@" || rc=$?
echo "long lanes (package, bench smoke, ublk long steps in the VM) $((SECONDS - t)) s" >>"${GPURAID_TIMES:-/dev/null}"
exit $rc
