#!/usr/bin/env bash
# The main job: set up, build, then walk a RAID 6 life cycle through the
# daemon and CLI on file-backed drives (daemon/demo-daemon.sh), and run the
# engine-level demo (two members lost, every byte checked).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
daemon/demo-daemon.sh build/bin
build/bin/gpuraid-demo "$@"
