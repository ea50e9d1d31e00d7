#!/usr/bin/env bash
# Runs inside the lane's guest (see run.sh): the Debian package installed and
# used as an operator would. Usage: guest-package.sh BINDIR DEB NEWER_DEB
# (package_vm.sh builds both). The guest has no systemd, so gpuraidd is started
# exactly as its unit would start it: the package's own ExecStartPre/ExecStart
# lines, after making the StateDirectory/RuntimeDirectory systemd would make.
#   install: dpkg -i; the group gpuraid exists; gpuraid is /usr/bin/gpuraid.
#   use:     an unprivileged user in group gpuraid drives /usr/bin/gpuraid over
#            the packaged socket: drives, a RAID 5 group, a volume exported as
#            /dev/ublkbN; ext4 on it, mounted, files written.
#   upgrade: with fio (crc32c verify) running on the mounted filesystem, the
#            newer package is installed and the daemon restarted as the package
#            does (SIGTERM, start again): the packaged ublk-on-exit = keep keeps
#            the device, the filesystem stays mounted, fio verifies, the files
#            are intact, and the new daemon is the newer version.
set -uo pipefail
BIN=${1:?usage: $0 BINDIR DEB NEWER_DEB}
DEB=${2:?}
NEWER=${3:?}
W=${VMLANE_WORK:-/run/lane}
mkdir -p "$W"
RESULTS=${VMLANE_RESULTS:-$W/results}
log() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*"; }
result() { echo "$*" >>"$RESULTS"; log "result: $*"; }
fail() {
  log "FAIL: $*" >&2
  [ -f "$W/gpuraidd.log" ] && tail -20 "$W/gpuraidd.log" >&2
  exit 1
}
step() { log "== $*"; }
DPID=
cleanup() {
  [ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID"
  umount /mnt/pkg 2>/dev/null
  return 0
}
trap cleanup EXIT

UNIT=/lib/systemd/system/gpuraidd.service
# start_unit: what systemd does for gpuraidd.service (the directives we use).
start_unit() {
  install -d -m 0755 /var/lib/gpuraid
  install -d -m 0755 /run/gpuraid
  local pre exec
  pre=$(sed -n 's/^ExecStartPre=-//p' $UNIT)
  exec=$(sed -n 's/^ExecStart=//p' $UNIT)
  [ -n "$exec" ] || fail "no ExecStart in $UNIT"
  $pre || true
  $exec >>"$W/gpuraidd.log" 2>&1 &
  DPID=$!
  for _ in $(seq 600); do
    op info >/dev/null 2>&1 && return 0
    kill -0 $DPID 2>/dev/null || fail "gpuraidd ($exec) exited at start"
    sleep 0.1
  done
  fail "gpuraidd ($exec) did not answer within 60 s"
}
# stop_unit: systemctl stop (KillSignal=SIGTERM); the clean stop exits 0.
stop_unit() {
  kill -TERM $DPID
  local rc=0
  timeout 60 tail --pid=$DPID -f /dev/null || fail "gpuraidd did not stop within TimeoutStopSec (60 s)"
  wait $DPID || rc=$?
  DPID=
  [ $rc -eq 0 ] || fail "gpuraidd exited $rc on SIGTERM (want 0)"
}
# op ARGS: the packaged CLI as an unprivileged operator in group gpuraid.
op() { setpriv --reuid=nobody --regid=nogroup --groups=gpuraid -- /usr/bin/gpuraid "$@"; }

step "install $(basename "$DEB")"
rm -f /var/lib/man-db/auto-update   # no man-db index rebuild under TCG
t0=$(cut -d' ' -f1 /proc/uptime)
dpkg -i --force-unsafe-io "$DEB" >"$W/dpkg1.log" 2>&1 || { cat "$W/dpkg1.log"; fail "dpkg -i $DEB"; }
getent group gpuraid >/dev/null || fail "the package made no group gpuraid"
[ "$(command -v gpuraid)" = /usr/bin/gpuraid ] || fail "gpuraid is $(command -v gpuraid)"
[ -f /etc/gpuraid/gpuraidd.conf ] || fail "no /etc/gpuraid/gpuraidd.conf"
[ -L /etc/systemd/system/multi-user.target.wants/gpuraidd.service ] || fail "gpuraidd.service was not enabled"
result "package: dpkg -i $(basename "$DEB") in $(awk "BEGIN{print $(cut -d' ' -f1 /proc/uptime) - $t0}") s (TCG)"

modprobe nvme || fail "modprobe nvme"
start_unit
S=$(stat -c '%a %G' /run/gpuraid/gpuraid.sock)
[ "$S" = "660 gpuraid" ] || fail "socket is '$S', want '660 gpuraid'"
setpriv --reuid=nobody --regid=nogroup --clear-groups -- /usr/bin/gpuraid info >/dev/null 2>&1 &&
  fail "a user outside group gpuraid reached the daemon"

step "the operator (group gpuraid, not root) makes a RAID 5 and exports a volume"
for s in 0 1 2 3; do
  dev=
  for b in /sys/block/nvme*n1; do [ "$(tr -d ' ' <"$b/device/serial")" = vmlane$s ] && dev=/dev/$(basename "$b"); done
  [ -b "$dev" ] || fail "no namespace with serial vmlane$s"
  op pd add "$dev" --id pd$s >/dev/null || fail "pd add $dev"
done
op dg create --level 5 --strip 64K --name r5 --assume-zeroed pd0 pd1 pd2 pd3 || fail "dg create"
op vd create r5 --size 96M --name v1 >/dev/null || fail "vd create"
op vd export v1 --ublk || fail "vd export --ublk"
DEV=$(op --json vd show v1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["export"]["dev_path"])')
[ -b "$DEV" ] || fail "no block device $DEV"
mkfs.ext4 -q "$DEV" && mkdir -p /mnt/pkg && mount "$DEV" /mnt/pkg || fail "ext4 on $DEV"
head -c 8M /dev/urandom >/mnt/pkg/a && cp /usr/bin/gpuraid /mnt/pkg/b && (cd /mnt/pkg && sha256sum a b >"$W/sums")
result "package: the CLI from /usr/bin (group gpuraid) exported $DEV; ext4 mounted"

step "upgrade to $(basename "$NEWER") with the filesystem mounted and fio running"
fio --name=up --filename=/mnt/pkg/fio.dat --size=24M --ioengine=io_uring --direct=1 --rw=randwrite --bs=4k \
  --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 >"$W/fio.up" 2>&1 &
fpid=$!
sleep 3
kill -0 $fpid 2>/dev/null || fail "fio ended before the upgrade: $(tail -3 "$W/fio.up")"
tu=$(cut -d' ' -f1 /proc/uptime)
dpkg -i --force-unsafe-io "$NEWER" >"$W/dpkg2.log" 2>&1 || { cat "$W/dpkg2.log"; fail "dpkg -i $NEWER"; }
# Without systemd, postinst's restart (deb-systemd-invoke) does nothing: do what it does.
stop_unit
[ -b "$DEV" ] || fail "$DEV vanished when the daemon stopped (ublk-on-exit = keep in the packaged config?)"
start_unit
kill -0 $fpid 2>/dev/null || log "note: fio finished during the restart"
timeout 300 tail --pid=$fpid -f /dev/null || fail "fio did not finish within 300 s after the restart"
wait $fpid || fail "fio across the upgrade: $(tail -5 "$W/fio.up")"
grep -q "err= 0" "$W/fio.up" || fail "fio reported errors: $(grep err= "$W/fio.up")"
mountpoint -q /mnt/pkg || fail "/mnt/pkg is no longer mounted"
(cd /mnt/pkg && sha256sum -c --quiet "$W/sums") || fail "file checksums after the upgrade"
want=$(dpkg-deb -f "$NEWER" Version)
[ "$(dpkg-query -W -f='${Version}' gpuraid)" = "$want" ] || fail "installed: $(dpkg-query -W -f='${Version}' gpuraid), want $want"
[ "$(op --json vd show v1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["export"]["dev_path"])')" = "$DEV" ] ||
  fail "the new daemon does not export v1 as $DEV"
result "package: upgraded to $want in $(awk "BEGIN{print $(cut -d' ' -f1 /proc/uptime) - $tu}") s (dpkg -i, stop, start; TCG)"
result "package: upgraded to $want under fio with $DEV mounted: fio verified, files intact"
umount /mnt/pkg || fail "umount"
stop_unit
echo "guest-package: OK"
