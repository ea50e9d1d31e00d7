#!/usr/bin/env bash
# Fetches (once) the newest Debian bookworm-backports kernel and prepares it
# for the VM lane: the .deb and its unpacked tree live in the cache dir
# (outside the repository), modules indexed with depmod, an initramfs with
# busybox and the 9p/overlay modules built next to it.
# Prints: KVER KROOT INITRAMFS. Exit 77 (skip) only when the kernel cannot be had.
set -euo pipefail
CACHE=${GPURAID_VM_CACHE:-$HOME/.cache/gpuraid-vm}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9   # one lane at a time prepares the cache

skip() { echo "SKIP: $*" >&2; exit 77; }

pkg=""
if [ -n "${GPURAID_VM_KERNEL_PKG:-}" ]; then
  pkg=$GPURAID_VM_KERNEL_PKG
else
  # The metapackage's newest backports version names the image package.
  ver=$(apt-cache madison linux-image-amd64 2>/dev/null | awk -F'|' '/bookworm-backports/ {gsub(/ /,"",$2); print $2}' | sort -V | tail -1)
  if [ -n "$ver" ]; then
    pkg=$(apt-cache show "linux-image-amd64=$ver" | sed -n 's/^Depends: .*\(linux-image-[^ ,]*-amd64\).*/\1/p' | head -1)
  fi
fi
if [ -z "$pkg" ]; then
  # No apt metadata for backports: fall back to a kernel cached earlier.
  deb=$(ls "$CACHE"/linux-image-*-amd64_*.deb 2>/dev/null | sort -V | tail -1 || true)
  [ -n "$deb" ] || skip "no bookworm-backports kernel in apt (scripts/setup.sh adds the suite) and none cached in $CACHE"
else
  deb=$(ls "$CACHE"/"${pkg}"_*.deb 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$deb" ]; then
    (cd "$CACHE" && apt-get download "$pkg" >&2) || skip "apt-get download $pkg failed (offline?)"
    deb=$(ls "$CACHE"/"${pkg}"_*.deb | sort -V | tail -1)
  fi
fi
kver=$(dpkg-deb -f "$deb" Package | sed 's/^linux-image-//')
kroot=$CACHE/root-$kver
if [ ! -f "$kroot/.ready" ]; then
  rm -rf "$kroot"
  dpkg-deb -x "$deb" "$kroot"
  # The .deb ships no modules.dep.
  depmod -a -b "$kroot" "$kver"
  touch "$kroot/.ready"
fi
initrd=$CACHE/initramfs-$kver.cpio.gz
if [ ! -f "$initrd" ] || [ "$here/init.sh" -nt "$initrd" ] || [ "$0" -nt "$initrd" ]; then
  "$here/make-initramfs.sh" "$kroot" "$kver" "$initrd" >&2
fi
echo "$kver $kroot $initrd"
