#!/usr/bin/env bash
# Configures (once) and builds gpuraid into build/ (programs in build/bin/).
# CUDA kernels are built when nvcc is found; GPURAID_CUDA=OFF forces a CPU-only build.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default -DGPURAID_CUDA="${GPURAID_CUDA:-ON}" -DGPURAID_SKIP_DIRS="" >/dev/null
cmake --build build -j"$(nproc)"
