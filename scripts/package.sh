#!/usr/bin/env bash
# Builds the Debian package build/gpuraid_VERSION_ARCH.deb from the tree
# already built in build/ (scripts/build.sh): debian/rules installs it with
# `cmake --install`, then debhelper adds the maintainer scripts, the
# systemd integration and Depends computed by dh_shlibdeps. Nothing is
# compiled again. Options: GPURAID_PKG_VERSION=0.1.0+2 to give the package
# another version than CMake's (e.g. an upgrade test's newer build);
# BUILDDIR=... another build tree; PKGDIR=... where the .deb goes (default
# the build tree).
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=${BUILDDIR:-build}
if [ ! -x "$builddir/bin/gpuraidd" ] || [ ! -x "$builddir/bin/gpuraid" ]; then
  echo "package: $builddir/bin has no gpuraidd/gpuraid: build first (scripts/build.sh)" >&2
  exit 1
fi
# The install layout (/usr, /etc, /lib/systemd/system) is fixed when CMake
# configures; a tree configured for another prefix is configured again
# (no recompilation: the prefix is in no compile line).
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$builddir/CMakeCache.txt")
if [ "$prefix" != /usr ]; then
  echo "package: $builddir was configured for prefix '$prefix': configuring it for /usr"
  cmake -S . -B "$builddir" -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
fi
# The generated man pages and completion (and whatever else is out of date).
cmake --build "$builddir" --target gpuraid_generated_docs
version=${GPURAID_PKG_VERSION:-$("$builddir/bin/gpuraid" --version | awk '{print $2}')}
arch=$(dpkg --print-architecture)
pkgdir=$(mkdir -p "${PKGDIR:-$builddir}" && cd "${PKGDIR:-$builddir}" && pwd)
rm -rf debian/gpuraid debian/.debhelper debian/files debian/*.substvars debian/debhelper-build-stamp debian/*.debhelper.log debian/*.debhelper
rm -f "$pkgdir"/gpuraid_*_"$arch".deb
BUILDDIR=$builddir PKGDIR=$pkgdir GPURAID_VERSION=$version debian/rules binary
# debian/rules clean would run CMake's clean: remove only debhelper's own files.
rm -rf debian/gpuraid debian/.debhelper debian/files debian/*.substvars debian/debhelper-build-stamp debian/*.debhelper.log debian/*.debhelper
echo "package: $pkgdir/gpuraid_${version}_${arch}.deb"
