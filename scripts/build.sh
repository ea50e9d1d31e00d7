#!/usr/bin/env bash
# Configures (once) and builds gpuraid into build/ (programs in build/bin/).
# CUDA kernels are built when nvcc is found; GPURAID_CUDA=OFF forces a CPU-only build.
# GPURAID_LINE_TABLES=1 (.ci/run sets it): debug information as line tables
# only (-g1): stacks and sanitizer reports keep file:line, and the build
# takes about a quarter less; otherwise full debug information (-g).
set -euo pipefail
cd "$(dirname "$0")/.."
g=-g
[ "${GPURAID_LINE_TABLES:-0}" = 1 ] && g=-g1
cmake --preset default -DGPURAID_CUDA="${GPURAID_CUDA:-ON}" -DGPURAID_SKIP_DIRS="" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 $g -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 $g -DNDEBUG" >/dev/null
cmake --build build -j"$(nproc)"
