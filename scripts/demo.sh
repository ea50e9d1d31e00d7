#!/usr/bin/env bash
# The main job: set up, build, and run the demo on file-backed drives.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build/bin/gpuraid-demo "$@"
