#!/usr/bin/env bash
# make-initramfs.sh KROOT KVER OUT: busybox-static, the modules that mount
# the host's root over 9p with a tmpfs overlay (uncompressed, for busybox
# insmod, in dependency order), and init.sh as /init.
set -euo pipefail
kroot=$1 kver=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
[ -x /bin/busybox ] || { echo "busybox-static is missing (scripts/setup.sh installs it)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,dev,proc,sys,lower,upper,newroot,lib/modules}
cp /bin/busybox "$tmp/bin/busybox"
cp "$here/init.sh" "$tmp/init"
chmod +x "$tmp/init"
mdir=$kroot/lib/modules/$kver
: >"$tmp/lib/modules/order"
for m in 9p overlay 9pnet_virtio; do
  # modprobe --show-depends lists a module's dependencies first.
  modprobe -d "$kroot" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" {print $2}' | while read -r ko; do
    name=$(basename "$ko"); name=${name%.xz}; name=${name%.zst}
    [ -f "$tmp/lib/modules/$name" ] && continue
    case "$ko" in
      *.xz) xz -dc "$ko" >"$tmp/lib/modules/$name" ;;
      *.zst) zstd -dcq "$ko" >"$tmp/lib/modules/$name" ;;
      *) cp "$ko" "$tmp/lib/modules/$name" ;;
    esac
    echo "$name" >>"$tmp/lib/modules/order"
  done
done
(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
echo "initramfs: $out ($(tr '\n' ' ' <"$tmp/lib/modules/order"))"
