#!/usr/bin/env bash
# Set up, build, and run every test lane that this machine can run
# (ctest labels: unit, model, kernels, e2e, vm, gpu; pass e.g. -L model
# to run one lane). Lanes that need hardware this machine lacks say why
# they skip.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)" "$@"
