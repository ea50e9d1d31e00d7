#!/usr/bin/env bash
# Installs everything gpuraid needs to build, test and benchmark, from
# Debian's archive (and PyPI for the report plots). Idempotent: packages
# already present are not fetched again, and apt-get update runs once.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  liburing-dev libisal-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
  libblkid-dev uuid-dev
  fio python3 python3-matplotlib
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi
