#!/usr/bin/env bash
# The write-hole guard's and write-intent bitmap's cost, as a drive group
# writes (both on) against both off, each cell one `gpuraid-bench
# --guard-compare` invocation (2 reactors, QD 32 per reactor):
#   bench/guard_cost.sh OUTDIR [RUNTIME_S] [RUNS]   (GPURAID_BENCH: the bench binary)
# RAID 5 7+1, RAID 6 8+2 and ec 8+3; 4 KiB random, 128 KiB and 1 MiB
# sequential writes; mem drives (memory copies: the whole write path) and
# null drives (no data moved: the engine's own CPU). Writes OUTDIR/*.json
# (the bench's JSON per cell) and OUTDIR/table.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?OUTDIR}
runtime=${2:-3}
runs=${3:-2}
mkdir -p "$out"
bench=${GPURAID_BENCH:-build/bin/gpuraid-bench}  # another build's, to compare
geoms=("5 8" "6 10" "ec 11 --parity 3")
loads=("randwrite 4K" "write 128K" "write 1M")
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
{
  echo "# Write-hole guard + write-intent bitmap vs both off ($(date -u +%F), $(nproc) cores: $cpu)"
  echo
  echo "Each cell: the RAID with both on, as a drive group writes, against the same RAID with both off, in one"
  echo "\`gpuraid-bench --guard-compare\` invocation (2 reactors, QD 32 each, ${runtime} s x ${runs} runs per side):"
  echo "throughput ratio, CPU-efficiency ratio (per CPU%), stripe writes per log batch (one FUA write per parity member each) and flush rounds."
  echo
  echo "| geometry | drives | workload | both on | both off | ratio | per CPU | writes per batch | flush rounds |"
  echo "|---|---|---|---|---|---|---|---|---|"
} >"$out/table.md"
for g in "${geoms[@]}"; do
  read -r level members extra <<<"$g"
  for dt in mem null; do
    for l in "${loads[@]}"; do
      read -r rw bs <<<"$l"
      name="${level}-${members}-${dt}-${rw}-${bs}"
      size=1G; [ "$dt" = mem ] && size=256M
      # shellcheck disable=SC2086
      "$bench" --guard-compare --level "$level" --members "$members" $extra --strip 64K --drive-type "$dt" \
        --drive-size "$size" --rw "$rw" --bs "$bs" --iodepth 32 --threads 2 --runtime "$runtime" --runs "$runs" \
        --json >"$out/$name.json"
      python3 - "$out/$name.json" "$level" "$members" "$dt" "$rw" "$bs" >>"$out/table.md" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
level, members, dt, rw, bs = sys.argv[2:]
g = d["guard_cost"]
k = int(members)
geo = {"5": f"RAID 5 {k-1}+1", "6": f"RAID 6 {k-2}+2", "ec": f"ec {k-3}+3"}[level]
big = bs != "4K"
fig = lambda s: f'{s["mbps"] / 1000:.2f} GB/s' if big else f'{s["iops"] / 1e3:.0f}k IOPS'
ratio = g["mbps"] if big and "mbps" in g else g["iops"]
wpb = g["log_writes"] / g["log_batches"] if g.get("log_batches") else 0
print(f'| {geo} | {dt} | {bs} {"random" if rw == "randwrite" else "sequential"} write | {fig(d["raid"])} | {fig(d["plain"])} '
      f'| **{ratio:.2f}x** | {g["iops_per_cpu_pct"]:.2f}x | {wpb:.1f} | {g["log_flush_rounds"]} |')
PY
      tail -1 "$out/table.md"
    done
  done
done
