#!/usr/bin/env bash
# Set up, build, and run every test lane that this machine can run
# (ctest labels: unit, model, kernels, e2e, vm, gpu; pass e.g. -L model
# to run one lane). Lanes that need hardware this machine lacks say why
# they skip. Without arguments the tests labelled `long` (the package and
# benchmark-suite VM lanes) are left to scripts/long-lanes.sh. GPURAID_TIMES=FILE: each phase's seconds (and ctest's time per
# label) are appended there (.ci/run prints them as its time table).
set -euo pipefail
cd "$(dirname "$0")/.."
times=${GPURAID_TIMES:-/dev/null}
t=$SECONDS
scripts/setup.sh
echo "setup (apt, pip, kernel package)    $((SECONDS - t)) s" >>"$times"
t=$SECONDS
scripts/build.sh
echo "build (build/, CUDA kernels by nvcc) $((SECONDS - t)) s" >>"$times"
t=$SECONDS
cd build
rc=0
mkdir -p Testing  # a fresh build dir has none before the first ctest run
(($#)) || set -- -LE '^long$'
ctest --output-on-failure -j"$(nproc)" "$@" | tee Testing/ctest-output.txt || rc=$?
echo "ctest (every lane, -j$(nproc))          $((SECONDS - t)) s" >>"$times"
# ctest's own per-label figures (seconds x processes, the lanes overlap).
sed -n '/^Label Time Summary:/,/^$/p' Testing/ctest-output.txt | sed 's/^/  /' >>"$times"
exit $rc
