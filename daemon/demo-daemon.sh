#!/usr/bin/env bash
# The main job's walk-through: starts gpuraidd on file-backed drives in a
# temporary directory and drives a RAID 6 life cycle through the gpuraid
# CLI, printing every command and what it shows; stops the daemon cleanly.
#   daemon/demo-daemon.sh [BIN_DIR]   (default: build/bin)
set -euo pipefail
BIN=${1:-$(cd "$(dirname "$0")/.." && pwd)/build/bin}
[ -x "$BIN/gpuraidd" ] && [ -x "$BIN/gpuraid" ] || { echo "demo: build first (no gpuraidd/gpuraid in $BIN)" >&2; exit 1; }
T=$(mktemp -d /tmp/gpuraid-demo-XXXXXX)
export GPURAID_SOCKET=$T/gpuraid.sock
DPID=
cleanup() {
  if [ -n "$DPID" ] && kill -0 "$DPID" 2>/dev/null; then kill -TERM "$DPID"; wait "$DPID" || true; fi
  rm -rf "$T"
}
trap cleanup EXIT
say() { printf '\n### %s\n' "$*"; }
run() { printf '$ gpuraid %s\n' "$*"; "$BIN/gpuraid" "$@"; }
start() {
  "$BIN/gpuraidd" --state-dir "$T/state" --socket "$GPURAID_SOCKET" --log-file "$T/gpuraidd.log" &
  DPID=$!
  for _ in $(seq 100); do "$BIN/gpuraid" info >/dev/null 2>&1 && return; sleep 0.1; done
  echo "demo: gpuraidd did not start; its log:" >&2; cat "$T/gpuraidd.log" >&2; exit 1
}
stop() {
  kill -TERM "$DPID"; local rc=0; wait "$DPID" || rc=$?; DPID=
  echo "gpuraidd exited with $rc"; [ "$rc" -eq 0 ]
}

say "1. start gpuraidd --state-dir $T/state --socket $GPURAID_SOCKET"
start
run info

say "2. register eight 128 MiB file-backed drives"
for i in $(seq 0 7); do run pd add "$T/nvme$i.img" --size 128M; done
run pd spare pd7
run pd list

say "3. a RAID 6 group over six drives (pd6 stays free, pd7 is a pool spare), and a virtual drive"
run dg create --level 6 --strip 64K --name data pd0 pd1 pd2 pd3 pd4 pd5
run dg show data --watch --interval 0.5
run vd create data --size 256M --name vol0

say "4. write 256 MiB through the engine and read it back"
run vd write vol0 --pattern 42 --length 256M
run vd read vol0 --verify-pattern 42 --length 256M

say "5. restart the daemon: the group is reassembled from its members' superblocks"
stop
start
run dg show data
run vd read vol0 --verify-pattern 42 --length 256M

say "6. member pd2 fails: the pool spare pd7 takes its place and the rebuild runs"
run pd fail pd2
sleep 0.5
run dg show data --watch --interval 0.5
run vd read vol0 --verify-pattern 42 --length 256M

say "7. member pd4 fails too; replace it by pd6 by hand"
run pd fail pd4
run vd read vol0 --verify-pattern 42 --length 256M
run dg replace data --old pd4 --with pd6
run dg show data --watch --interval 0.5

say "8. scrub: every stripe's parity checked"
run dg scrub data start
run dg show data --watch --interval 0.5
run dg show data

say "9. what happened, the I/O figures, and the overview (as /proc/mdstat)"
run events
run stats
run status

say "10. clean up: delete the VD and the group, stop the daemon (SIGTERM, exit 0)"
run vd delete vol0
run dg delete data
run pd list
stop
echo "demo-daemon: OK"
