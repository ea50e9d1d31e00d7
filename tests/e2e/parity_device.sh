#!/usr/bin/env bash
# gpuraidd on an accelerator's data path without a GPU (--parity-backend
# kernel-cpu: the CUDA kernels on threads standing in for the device, as
# strict about memory as a GPU). fio writes, verifies and reads a RAID 6
# volume through NBD, healthy and with a member failed: every parity batch
# reads the daemon's buffers in place (zero-copy; none staged, none fallen
# back): NBD's, the zero block trims write from, the CLI's debug I/O. The
# metrics, `gpuraid status` and `gpuraid info` say so. Bad --gpu-* values are
# refused at start.
source "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
command -v fio >/dev/null || fail "fio is needed (scripts/setup.sh installs it)"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
scrape() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' \
  "http://127.0.0.1:$PORT/metrics" >"$T/metrics" || fail "GET /metrics"; }
m() { python3 "$HERE/prom_check.py" get "$1" <"$T/metrics" || fail "metric $1"; }
# Summed over both reactors.
sum2() { echo $(( $(m "$1{reactor=\"0\",$2}") + $(m "$1{reactor=\"1\",$2}") )); }

step "bad --gpu-* values are refused at start, with the reason"
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/x" --socket "$T/x.sock" --gpu-completion sometimes
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/x" --socket "$T/x.sock" --gpu-route tiny
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/x" --socket "$T/x.sock" --gpu-timeout-ms 1
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/x" --socket "$T/x.sock" --gpu-max-gbps -3
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/x" --socket "$T/x.sock" --gpu-priority urgent

step "a RAID 6 over 6 file drives on the kernel-cpu backend, exported over NBD"
start_daemon --reactors 2 --parity-backend kernel-cpu --gpu-completion poll --metrics "$PORT"
for i in $(seq 0 5); do gp pd add "$T/d$i.img" --size 48M >/dev/null; done
gp dg create --level 6 --strip 16K --name r6 pd0 pd1 pd2 pd3 pd4 pd5 >/dev/null
gp dg show r6 --watch --interval 0.2 >/dev/null
gp vd create r6 --size 96M --name v >/dev/null
URI=$(gp vd export v --nbd --listen "unix:$T/v.sock" --json | json 'd["export"]["uri"]')
check "parity backend" kernel-cpu "$(gp info --json | json 'd["parity_backend"]')"

fio_verify() {  # NAME fio-args...: writes, then reads back and checks every block
  local name=$1; shift
  fio --name="$name" --ioengine=nbd --uri="$URI" --direct=1 --verify=crc32c --do_verify=1 --verify_fatal=1 \
    --size=64M --output="$T/$name.out" "$@" >/dev/null 2>&1 || { cat "$T/$name.out"; fail "fio $name"; }
  echo "   ok: fio $name ($*)"
}

step "small random writes (read-modify-write), large sequential writes, verified"
fio_verify rmw --rw=randwrite --bs=4k --iodepth=16 --number_ios=3000
fio_verify full --rw=write --bs=1M --iodepth=4

step "trims (zeroes written from the daemon's zero block) and the CLI's debug I/O"
python3 "$HERE/../frontends/nbd_client.py" trim "$T/v.sock" 0 $((4 << 20)) || fail "NBD trim"
gp vd write v --pattern 9 --offset 8M --length 2M
gp vd read v --verify-pattern 9 --offset 8M --length 2M >/dev/null || fail "debug read back"

step "a member fails: degraded reads and writes, verified"
gp pd fail pd2 >/dev/null
fio_verify degraded --rw=randrw --bs=64k --iodepth=8 --number_ios=800
fio --name=dread --ioengine=nbd --uri="$URI" --rw=read --bs=256k --iodepth=4 --size=64M \
  --output="$T/dread.out" >/dev/null 2>&1 || fail "degraded sequential read"

step "every parity batch read the daemon's buffers in place"
scrape
zc=$(sum2 gpuraid_parity_batches_total 'path="zero_copy"')
st=$(sum2 gpuraid_parity_batches_total 'path="staged"')
dev=$(sum2 gpuraid_parity_jobs_total 'where="device"')
fb=$(sum2 gpuraid_parity_jobs_total 'where="fallback"')
echo "   zero-copy batches $zc, staged $st, jobs on the device $dev, fallen back $fb"
[ "$zc" -gt 0 ] || fail "no zero-copy batch"
[ "$dev" -gt 0 ] || fail "no job on the device"
check "staged batches (buffers the device could not map)" 0 "$st"
check "jobs fallen back to the CPU" 0 "$fb"
check "reactor 0 on the CPU" 0 "$(m 'gpuraid_parity_backend_fallback{reactor="0"}')"
check "device errors" 0 "$(sum2 gpuraid_parity_device_errors_total 'backend="kernel-cpu"')"
python3 "$HERE/prom_check.py" lint <"$T/metrics" || fail "the exposition breaks Prometheus conventions"

step "gpuraid status and info say where parity ran"
gp status | tee "$T/status" | head -3
grep -q "^parity: .* zero-copy / 0 staged batches" "$T/status" || fail "status has no parity line"
check "info: staged batches" 0 "$(gp info --json | json 'd["parity"].get("staged_batches", 0)')"
gp stats | grep >/dev/null "^parity: " || fail "stats has no parity line"

stop_daemon
echo "parity_device: OK"
