#!/usr/bin/env bash
# The Debian package in the VM lane (guest-package.sh): builds the package
# from this build tree twice (the second with a newer version, as an upgrade
# would bring) and boots the guest to install, use and upgrade it.
# Usage: package_vm.sh BINDIR WORKDIR. Exit 77 (skip) as lane.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "${1:?usage: $0 BINDIR WORKDIR}" && pwd)
work=${2:?usage: $0 BINDIR WORKDIR}
build=$(dirname "$bin")
command -v dh >/dev/null || { echo "SKIP: debhelper is not installed (scripts/setup.sh)"; exit 77; }
rm -rf "$work"
mkdir -p "$work/old" "$work/new"
version=$("$bin/gpuraid" --version | awk '{print $2}')
BUILDDIR=$build PKGDIR=$work/old "$here/../../scripts/package.sh" >"$work/package-old.log" 2>&1 ||
  { tail -20 "$work/package-old.log"; exit 1; }
BUILDDIR=$build PKGDIR=$work/new GPURAID_PKG_VERSION="$version+upgrade" "$here/../../scripts/package.sh" \
  >"$work/package-new.log" 2>&1 || { tail -20 "$work/package-new.log"; exit 1; }
exec "$here/lane.sh" --guest guest-package.sh --nvme 4 "$bin" "$work"/old/gpuraid_*.deb "$work"/new/gpuraid_*.deb
