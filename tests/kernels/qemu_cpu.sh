#!/bin/sh
# Runs a parity test binary on an emulated x86-64 CPU (qemu's user-mode
# emulator), so that ISA-L dispatches to the version for that CPU: the
# native run covers one ISA-L path only (AVX-512 on a machine that has it,
# AVX2 on one that has not).
#   qemu_cpu.sh MODEL ISAL_PATH BINARY [ARGS...]
# MODEL is a qemu -cpu model; ISAL_PATH is the path it must give (the test's
# first line says which it got and fails if it differs). The parity grid runs
# small (GPURAID_PARITY_GRID=small): emulation is some 50 times slower.
# Exit 77 (ctest: skipped) when qemu-x86_64 is not installed.
set -eu
model=$1 path=$2
shift 2
if ! command -v qemu-x86_64 >/dev/null 2>&1; then
  echo "skipped: qemu-x86_64 not found (Debian package qemu-user; scripts/setup.sh installs it):" \
       "the ISA-L $path path is not covered by this run"
  exit 77
fi
GPURAID_EMULATED_CPU=$model GPURAID_EXPECT_ISAL_PATH=$path GPURAID_PARITY_GRID=small
export GPURAID_EMULATED_CPU GPURAID_EXPECT_ISAL_PATH GPURAID_PARITY_GRID
exec qemu-x86_64 -cpu "$model" "$@"
