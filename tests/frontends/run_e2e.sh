#!/usr/bin/env bash
# Host end-to-end tests of the NBD frontend with real clients:
#   nbd_fio_verify   fio's nbd engine, crc32c verify, 4K and mixed 4K..1M blocks (RAID 5, RAID 0)
#   nbd_multiconn    four connections at once (fio jobs), each verifying its own region
#   nbd_tools        nbdinfo (size, block sizes), nbdcopy round trip over Unix and TCP,
#                    sparse copy (write-zeroes), trim reads back zeroes
#   nbd_group_rebuild  a Group behind the export: member failed, replaced, rebuilt, data intact
#   nbd_bad_clients  garbage handshake, oversized requests, disconnect mid-write: clean
#                    errors, the server stays up and keeps the data
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
test_name=${1:?test name}

fio_verify() {  # URI NAME extra-fio-args...
  local uri=$1 name=$2
  shift 2
  fio --name="$name" --ioengine=nbd --uri="$uri" --direct=1 --verify=crc32c --do_verify=1 --verify_fatal=1 \
      "$@" >"$WORK/fio.$name" 2>&1 || { cat "$WORK/fio.$name" >&2; fail "fio $name"; }
  grep -q "err= 0" "$WORK/fio.$name" && ! grep -Eq "err= *[1-9]" "$WORK/fio.$name" ||
    { cat "$WORK/fio.$name" >&2; fail "fio $name reported errors"; }
}

case "$test_name" in
nbd_fio_verify)
  need fio
  fio --enghelp=nbd >/dev/null 2>&1 || skip "this fio has no nbd engine"
  start_harness --level 5 --members 4 --strip 64K --drive-type mem --drive-size 64M --reactors 2 \
      --nbd "unix:$WORK/nbd.sock"
  uri=$(state nbd_uri)
  [ "$uri" = "nbd+unix:///vd0?socket=$WORK/nbd.sock" ] || fail "unexpected URI $uri"
  fio_verify "$uri" r5-4k --rw=randwrite --bs=4k --iodepth=16 --size=64M
  fio_verify "$uri" r5-mixed --rw=randwrite --bsrange=4k-1m --blockalign=4k --iodepth=16 --size=96M
  fio_verify "$uri" r5-seq --rw=write --bs=128k --iodepth=8 --size=128M
  stop_harness
  start_harness --level 0 --members 4 --strip 64K --drive-type mem --drive-size 64M --reactors 2 \
      --nbd "tcp:127.0.0.1:0"
  uri=$(state nbd_uri)
  case "$uri" in nbd://127.0.0.1:*/vd0) ;; *) fail "unexpected TCP URI $uri" ;; esac
  fio_verify "$uri" r0-tcp --rw=randwrite --bs=4k --iodepth=32 --size=64M
  stop_harness
  ;;
nbd_multiconn)
  need fio
  start_harness --level 6 --members 6 --strip 32K --drive-type mem --drive-size 64M --reactors 2 \
      --nbd "unix:$WORK/nbd.sock"
  # Each fio job is its own NBD connection, spread over both reactors.
  fio_verify "$(state nbd_uri)" multi --rw=randwrite --bs=16k --iodepth=16 --size=32M --numjobs=4 \
      --offset_increment=32M --group_reporting
  stop_harness
  ;;
nbd_tools)
  need nbdinfo nbdcopy cmp
  start_harness --level 5 --members 5 --strip 16K --drive-type mem --drive-size 40M --reactors 2 \
      --nbd "unix:$WORK/nbd.sock"
  uri=$(state nbd_uri)
  size=$(state size)
  nbdinfo --json "$uri" >"$WORK/info.json"
  python3 - "$WORK/info.json" "$size" <<'PY'
import json, sys
info = json.load(open(sys.argv[1]))
e = info["exports"][0]
assert e["export-size"] == int(sys.argv[2]), e
assert e["block_size_minimum"] == 4096, e
assert e["block_size_maximum"] == 1 << 20, e
assert e["can_flush"] and e["can_fua"] and e["can_trim"] and e["can_zero"] and e["can_multi_conn"], e
assert not e["is_read_only"], e
PY
  # Round trip of random data.
  head -c "$size" /dev/urandom >"$WORK/in.img"
  nbdcopy "$WORK/in.img" "$uri"
  nbdcopy "$uri" "$WORK/out.img"
  cmp "$WORK/in.img" "$WORK/out.img" || fail "nbdcopy round trip differs"
  # A sparse source: nbdcopy zeroes the holes (NBD_CMD_WRITE_ZEROES / TRIM).
  truncate -s "$size" "$WORK/sparse.img"
  head -c 1M /dev/urandom | dd of="$WORK/sparse.img" bs=1M seek=3 conv=notrunc status=none
  nbdcopy "$WORK/sparse.img" "$uri"
  nbdcopy "$uri" "$WORK/out2.img"
  cmp "$WORK/sparse.img" "$WORK/out2.img" || fail "sparse copy differs (write-zeroes)"
  # Trim reads back as zeroes: data in, trim 1 MiB, read.
  nbdcopy "$WORK/in.img" "$uri"
  python3 "$here/nbd_client.py" trim "$WORK/nbd.sock" $((2 << 20)) $((1 << 20))
  nbdcopy "$uri" "$WORK/out3.img"
  cmp -n $((2 << 20)) "$WORK/in.img" "$WORK/out3.img" || fail "trim changed data before the range"
  cmp -i $((3 << 20)) "$WORK/in.img" "$WORK/out3.img" || fail "trim changed data after the range"
  [ "$(dd if="$WORK/out3.img" bs=1M skip=2 count=1 status=none | tr -d '\0' | wc -c)" -eq 0 ] ||
    fail "trimmed range does not read back zeroes"
  stop_harness
  # TCP on loopback.
  start_harness --level 1 --members 2 --drive-type mem --drive-size 16M --reactors 1 --nbd "tcp:0"
  uri=$(state nbd_uri)
  case "$uri" in nbd://127.0.0.1:*) ;; *) fail "TCP must default to loopback, got $uri" ;; esac
  head -c "$(state size)" /dev/urandom >"$WORK/in4.img"
  nbdcopy "$WORK/in4.img" "$uri"
  nbdcopy "$uri" "$WORK/out4.img"
  cmp "$WORK/in4.img" "$WORK/out4.img" || fail "TCP round trip differs"
  stop_harness
  ;;
nbd_bad_clients)
  need nbdinfo
  start_harness --level 5 --members 4 --strip 64K --drive-type mem --drive-size 32M --reactors 2 \
      --nbd "unix:$WORK/nbd.sock"
  python3 "$here/nbd_client.py" bad-clients "$WORK/nbd.sock"
  nbdinfo "$(state nbd_uri)" >/dev/null || fail "the server no longer serves real clients"
  stop_harness
  grep -q "handshake failed: bad option magic" "$WORK/harness.err" || fail "garbage handshake was not reported"
  ;;
nbd_group_rebuild)
  # An engine/group Group behind the export: fail a member, replace it
  # through the harness's control FIFO, read everything back after the
  # rebuild, then with another member failed.
  need nbdcopy cmp
  for i in 0 1 2 3 4; do truncate -s 48M "$WORK/d$i"; done
  mkfifo "$WORK/ctl"
  start_harness --group create --level 5 --members 4 --strip 64K --drive-type file --reactors 2 \
      --drives "$WORK/d0,$WORK/d1,$WORK/d2,$WORK/d3" --control "$WORK/ctl" --nbd "unix:$WORK/nbd.sock"
  uri=$(state nbd_uri)
  head -c "$(state size)" /dev/urandom >"$WORK/in.img"
  nbdcopy "$WORK/in.img" "$uri"
  echo "fail 2" >"$WORK/ctl"
  echo "replace 2 $WORK/d4" >"$WORK/ctl"
  for _ in $(seq 1 300); do grep -q rebuild_finished "$WORK/harness.err" && break; sleep 0.1; done
  grep -q rebuild_finished "$WORK/harness.err" || { cat "$WORK/harness.err"; fail "no rebuild"; }
  nbdcopy "$uri" "$WORK/out.img"
  cmp "$WORK/in.img" "$WORK/out.img" || fail "data differs after the rebuild"
  echo "fail 0" >"$WORK/ctl"
  for _ in $(seq 1 50); do grep -q "member 0 failed" "$WORK/harness.err" && break; sleep 0.1; done
  nbdcopy "$uri" "$WORK/out2.img"
  cmp "$WORK/in.img" "$WORK/out2.img" || fail "data differs with the rebuilt member in use"
  stop_harness
  ;;
*) fail "unknown test $test_name" ;;
esac
echo "PASS: $test_name"
