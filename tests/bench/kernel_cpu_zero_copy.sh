#!/bin/sh
# The engine on the kernel-cpu backend (the CUDA kernels on threads standing in for a GPU, as strict
# about unregistered memory): every batch of RAID 6 small writes, large writes and degraded reads reads
# the engine's buffers in place (zero-copy, none staged), nothing falls back, and the JSON says which
# backend ran. Usage: kernel_cpu_zero_copy.sh GPURAID_BENCH
set -eu
bench="$1"
for args in "--rw randwrite --bs 4K" "--rw read --bs 256K --fail 1" "--rw write --bs 1M"; do
  # shellcheck disable=SC2086
  "$bench" --parity-backend kernel-cpu --level 6 --members 6 --drive-type mem --drive-size 32M $args \
    --iodepth 8 --threads 2 --runtime 0.3 --warmup 0.1 --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["parity"]
print(sys.argv[1], p)
ok = (p["ran"] == "kernel-cpu" and p["staged_batches"] == 0 and p["zero_copy_batches"] > 0
      and p["device_jobs"] > 0 and p["fallback_jobs"] == 0 and d["raid"]["errors"] == 0)
sys.exit(0 if ok else 1)' "$args"
done
