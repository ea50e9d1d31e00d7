#!/usr/bin/env bash
# Set up, build, and run every test lane that this machine can run
# (ctest labels: unit, model, kernels, e2e, vm, gpu; pass e.g. -L model
# to run one lane). Lanes that need hardware this machine lacks say why
# they skip. Without arguments the tests labelled `long` (the package and
# benchmark-suite VM lanes) are left to scripts/long-lanes.sh. The VM lanes
# run in a ctest of their own beside the others (GPURAID_VM_BESIDE=0: not).
# GPURAID_TIMES=FILE: each phase's seconds (and ctest's time per
# label) are appended there (.ci/run prints them as its time table).
# GPURAID_ALSO_EXCLUDE=REGEX: tests the non-VM ctest leaves out as well
# (.ci/run: those its sanitized passes run again), the VM lanes still
# beside it.
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
# The VM lanes (tests vm_*: qemu TCG, about one core each, 20+ minutes in
# all, one at a time) run in a ctest of their own beside the other lanes,
# from the start: under one ctest their RUN_SERIAL made every other test
# wait for them, and half the machine idle. GPURAID_VM_BESIDE=0: one ctest.
# The CPU seconds (user + system) of this shell's finished children. Not in
# a pipe or $(...): times would run in a subshell, which has none.
cpu_seconds() {
  local f
  f=$(mktemp)
  times >"$f"
  tail -1 "$f" | awk '{ split($1, u, "m"); split($2, s, "m"); printf "%.0f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }'
  rm -f "$f"
}
# ctest's own per-label figures of a ctest output file (seconds x processes, the lanes overlap).
label_summary() { sed -n '/^Label Time Summary:/,/^$/p' "$1" | sed 's/^/  /'; }
vm_pid=""
picked=0  # tests picked or left out by name (-R, -E): one ctest, as asked
for a in "$@"; do [[ $a == -R || $a == --tests-regex || $a == -E || $a == --exclude-regex ]] && picked=1; done
if [[ ${GPURAID_VM_BESIDE:-1} == 1 && $picked == 0 ]] && ctest -N "$@" -R '^vm_' | grep >/dev/null '^ *Test *#'; then
  (
    t=$SECONDS
    vrc=0
    ctest --output-on-failure -j1 "$@" -R '^vm_' >Testing/vm-output.txt 2>&1 || vrc=$?
    # With the CPU time they took (qemu, nbdkit: user + system), the share of
    # the 2 cores they left to what runs beside them.
    cpu_seconds >Testing/vm-cpu.txt
    echo "VM lanes (beside the others)          $((SECONDS - t)) s, $(cat Testing/vm-cpu.txt) CPU-s" >Testing/vm-times.txt
    label_summary Testing/vm-output.txt >>Testing/vm-times.txt
    exit $vrc
  ) &
  vm_pid=$!
  set -- "$@" -E "^vm_${GPURAID_ALSO_EXCLUDE:+|$GPURAID_ALSO_EXCLUDE}"
elif [[ -n ${GPURAID_ALSO_EXCLUDE:-} && $picked == 0 ]]; then
  set -- "$@" -E "$GPURAID_ALSO_EXCLUDE"
fi
ctest --output-on-failure -j"$(nproc)" "$@" | tee Testing/ctest-output.txt || rc=$?
lanes="every lane"
[[ -n $vm_pid ]] && lanes="every lane but the VM's"
echo "ctest ($lanes, -j$(nproc)) $((SECONDS - t)) s" >>"$times"
label_summary Testing/ctest-output.txt >>"$times"
if [[ -n $vm_pid ]]; then
  vrc=0
  wait "$vm_pid" || vrc=$?
  echo "== the VM lanes (their own ctest, beside the others)"
  cat Testing/vm-output.txt
  cat Testing/vm-times.txt >>"$times"
  echo "  (they ended $((SECONDS - t)) s after the tests started)" >>"$times"
  ((vrc == 0)) || rc=$vrc
fi
exit $rc
