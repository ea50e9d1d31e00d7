#!/usr/bin/env bash
# The cost of the NBD frontend: fio's nbd engine against a gpuraid export
# (harness, mem drives) next to the in-process gpuraid-bench on the same
# geometry, and nbdkit's memory plugin as the peer NBD server, in one run.
#   nbd_bench.sh BINDIR [RUNTIME_S]     (a benchmark, not a test)
set -euo pipefail
bin=$(cd "${1:?BINDIR}" && pwd)
rt=${2:-8}
export HARNESS=$bin/gpuraid-export-harness
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need fio nbdkit python3
NPID=""
trap 'cleanup; [ -n "$NPID" ] && kill "$NPID" 2>/dev/null; true' EXIT

# rw:bs:iodepth per job; 2 jobs = 2 connections, as the bench's 2 threads.
WORKLOADS="randread:4k:32 randwrite:4k:32 read:128k:8 write:128k:8"
ROUNDS=${ROUNDS:-3}
fio_one() {  # uri out rw bs qd
  fio --name=b --ioengine=nbd --uri="$1" --rw=$3 --bs=$4 --iodepth=$5 --numjobs=2 --size=200M \
      --time_based --runtime=$rt --ramp_time=1 --group_reporting --output-format=json >"$2"
}
bench_one() {  # level out rw bs qd
  "$bin/gpuraid-bench" --level $1 --members 4 --strip 64K --drive-type mem --drive-size 256M --rw $3 --bs $4 \
      --iodepth $5 --threads 2 --runtime $rt --json >"$2"
}

# The host is shared and noisy: the three servers take turns within each
# round, and the table shows medians over the rounds.
nbdkit --unix "$WORK/kit.sock" --foreground --exit-with-parent memory 1G &
NPID=$!
for level in 0 5; do
  start_harness --level $level --members 4 --strip 64K --drive-type mem --drive-size 256M --reactors 2 \
      --nbd "unix:$WORK/nbd.sock"
  for round in $(seq 1 $ROUNDS); do
    for w in $WORKLOADS; do
      IFS=: read -r rw bs qd <<<"$w"
      fio_one "$(state nbd_uri)" "$WORK/nbd-raid$level.$rw.$bs.$round.json" $rw $bs $qd
      bench_one $level "$WORK/inproc-raid$level.$rw.$bs.$round.json" $rw $bs $qd
      [ $level = 0 ] && fio_one "nbd+unix:///?socket=$WORK/kit.sock" "$WORK/nbdkit.$rw.$bs.$round.json" $rw $bs $qd
    done
  done
  stop_harness
done
kill $NPID; wait $NPID 2>/dev/null || true; NPID=""

python3 - "$WORK" "$WORKLOADS" "$ROUNDS" <<'PY'
import json, statistics, sys
work, workloads, rounds = sys.argv[1], sys.argv[2].split(), int(sys.argv[3])
def load(path):
    t = open(path).read()
    return json.loads(t[t.index("{"):])  # fio may print warnings before the JSON
def fio(label, rw, bs, r):
    j = load(f"{work}/{label}.{rw}.{bs}.{r}.json")["jobs"][0]
    return (j["read"] if "read" in rw else j["write"])["iops"]
def bench(label, rw, bs, r):
    return load(f"{work}/{label}.{rw}.{bs}.{r}.json")["raid"]["iops"]
def med(f, *a):
    v = [f(*a, r) for r in range(1, rounds + 1)]
    return statistics.median(v), (max(v) - min(v)) / statistics.median(v)
print(f"{'workload':22} {'level':5} {'NBD (fio)':>10} {'in-process':>10} {'NBD/inproc':>10} {'nbdkit mem':>10} {'NBD/nbdkit':>10}  spread nbd/inproc/kit")
for w in workloads:
    rw, bs, qd = w.split(":")
    kit, ks = med(fio, "nbdkit", rw, bs)
    for level in ("0", "5"):
        n, ns = med(fio, f"nbd-raid{level}", rw, bs)
        b, bsp = med(bench, f"inproc-raid{level}", rw, bs)
        print(f"{rw+' '+bs+' QD'+qd+'x2':22} {level:5} {n:10.0f} {b:10.0f} {n/b:10.2f} {kit:10.0f} {n/kit:10.2f}  {ns:.0%}/{bsp:.0%}/{ks:.0%}")
print(f"IOPS, median of {rounds} interleaved rounds; 2 connections / 2 reactors / 2 bench threads; mem drives, 4 members,")
print("64K strip; the fio client, the server and other users share the host's 2 cores")
PY
