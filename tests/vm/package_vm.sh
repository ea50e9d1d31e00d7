#!/usr/bin/env bash
# The Debian package in the VM lane (guest-package.sh): builds the package
# from this build tree, repacks it under a newer version (as an upgrade would
# bring), and boots the guest to install, use and upgrade it.
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
# The newer package: the same one under a higher version (what an upgrade
# changes is the version dpkg sees; the binaries are this build's either way).
dpkg-deb -R "$work"/old/gpuraid_*.deb "$work/tree"
sed -i "s/^Version: .*/Version: $version+upgrade/" "$work/tree/DEBIAN/control"
dpkg-deb --root-owner-group -b "$work/tree" "$work/new/gpuraid_${version}+upgrade_$(dpkg --print-architecture).deb" >/dev/null
rm -rf "$work/tree"
exec "$here/lane.sh" --guest guest-package.sh --nvme 4 "$bin" "$work"/old/gpuraid_*.deb "$work"/new/gpuraid_*.deb
