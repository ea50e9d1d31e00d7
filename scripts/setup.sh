#!/usr/bin/env bash
# Installs everything gpuraid needs to build, test and benchmark, from
# Debian's archive (and PyPI for the report plots). Idempotent: packages
# already present are not fetched again, and apt-get update runs once.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  liburing-dev libisal-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
  libblkid-dev uuid-dev libnvme-dev libjson-c-dev nvme-cli
  libicu-dev  # names compared as Unicode NFC, look-alikes (engine/unicode_names.cpp)
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libcpp-httplib-dev openssl
  libgnutls28-dev  # NBD over TLS (daemon/frontends/nbd_tls.cpp)
  fio python3 python3-matplotlib
  prometheus  # promtool: tests/e2e/metrics.sh checks the /metrics exposition with it
  debhelper dpkg-dev lintian man-db systemd  # scripts/package.sh and its test (tests/package/)
  nbd-client  # the kernel NBD client over TLS (tests/vm/guest-fabrics.sh, step nbd_tls)
  libnbd-bin nbdkit qemu-system-x86 qemu-user busybox-static cpio kmod xz-utils mdadm e2fsprogs
  iproute2  # ip netns, veth and ss in the VM lanes (tests/vm/guest-nvmf.sh's remote host)
  gdb  # tests/e2e/lib.sh prints every thread's stack when gpuraidd hangs in its stop
  clang libclang-rt-14-dev  # the ASan + UBSan build (CMakePresets asan): a third less CPU than GCC's
)

# The VM lane boots Debian's bookworm-backports 6.12 kernel (fetched with
# apt-get download by tests/vm/kernel.sh, never installed). The suite gets
# priority 100, so nothing on the host is upgraded from it.
need_update=0
if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  # The same archive the machine already uses for bookworm.
  uri=$(grep -hs -m1 '^URIs:' /etc/apt/sources.list.d/debian.sources | awk '{print $2}')
  [ -n "$uri" ] || uri=$(grep -hs -m1 '^deb .* bookworm ' /etc/apt/sources.list | awk '{print $2}')
  if [ -z "$uri" ]; then
    echo "setup: cannot tell which Debian archive this machine uses; add bookworm-backports to apt yourself" >&2
    exit 1
  fi
  printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$uri" |
    $SUDO tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null
  need_update=1
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep >/dev/null "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})) || ((need_update)); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi
