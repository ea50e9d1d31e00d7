#!/usr/bin/env bash
# The GPU lane in one command.
#
#   scripts/gpu-lane.sh pack [DIR]        (here, after scripts/build.sh; DIR defaults to ./gpu-lane)
#       copies the GPU test and benchmarks and every shared library they link that a machine with only
#       the NVIDIA driver lacks (liburing, ISA-L, the CUDA runtime, ...) into DIR, with this script.
#   DIR/gpu-lane.sh run OUT [--quick]     (on the GPU machine)
#       runs gpu_parity_test, gpuraid-gpu-bench, gpuraid-bench with the cuda backend beside the cpu
#       backend (RAID 5 7+1, RAID 6 8+2, ec 8+3; normal and one member failed), and the engine's scaling
#       with reactors (1..16 threads, null and mem drives). OUT gets summary.txt and gpu-lane.tar.gz
#       (every log and JSON). Without a GPU the parity test says it skipped and the cuda runs are left out.
#       --quick: seconds-long runs on small drives (what CI runs here, to keep the pack honest).
#
# Results worth keeping go to bench/results/<date>-gpu/ (see bench/results/README.md).
set -euo pipefail

pack() {
  local root dir
  root="$(cd "$(dirname "$0")/.." && pwd)"
  dir="${1:-$root/gpu-lane}"
  local bins=(gpu_parity_test gpuraid-gpu-bench gpuraid-bench)
  for b in "${bins[@]}"; do
    [[ -x "$root/build/bin/$b" ]] || { echo "gpu-lane: build/bin/$b missing (build with CUDA first: scripts/build.sh)" >&2; exit 2; }
  done
  rm -rf "$dir"
  mkdir -p "$dir/bin" "$dir/lib"
  for b in "${bins[@]}"; do cp "$root/build/bin/$b" "$dir/bin/"; done
  cp "$0" "$dir/gpu-lane.sh"
  # Every library the loader resolves, except the C runtime and the driver's own (libcuda comes with the
  # driver and must match it), so the folder runs on any glibc >= this machine's with a driver.
  ldd "${bins[@]/#/$root/build/bin/}" | awk '/=> \//{print $3}' | sort -u |
    grep -Ev '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*|libcuda)\.so' |
    while read -r lib; do cp -L "$lib" "$dir/lib/"; done
  if ldd "$dir"/bin/* 2>/dev/null | grep -q 'not found'; then
    echo "gpu-lane: unresolved libraries in the pack" >&2
    exit 1
  fi
  echo "gpu-lane: packed $(ls "$dir/bin" | wc -l) programs and $(ls "$dir/lib" | wc -l) libraries ($(du -sh "$dir" | cut -f1)) into $dir"
}

run() {
  local here out quick=0
  here="$(cd "$(dirname "$0")" && pwd)"
  out="${1:?usage: gpu-lane.sh run OUT [--quick]}"
  [[ "${2:-}" == --quick ]] && quick=1
  mkdir -p "$out"
  local logs
  logs="$(mktemp -d)"
  export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local bin="$here/bin" size=1G runtime=10 scale_size=256M
  ((quick)) && size=64M runtime=0.5 scale_size=16M
  local summary="$out/summary.txt"
  {
    echo "gpu-lane $(date -u +%FT%TZ) on $(hostname), $(nproc) CPUs"
    grep -m1 'model name' /proc/cpuinfo || true
    nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"
  } >"$summary"

  local gpu=0
  if "$bin/gpu_parity_test" >"$logs/gpu_parity_test.log" 2>&1; then
    grep -q 'no GPU: skipped' "$logs/gpu_parity_test.log" && echo "gpu_parity_test: no GPU: skipped" >>"$summary" ||
      { gpu=1; echo "gpu_parity_test: passed ($(grep -c '^\[       OK' "$logs/gpu_parity_test.log") cases)" >>"$summary"; }
  else
    echo "gpu_parity_test: FAILED (see gpu_parity_test.log)" >>"$summary"
  fi
  local gb_args=()
  ((quick)) && gb_args=(--quick)
  "$bin/gpuraid-gpu-bench" "${gb_args[@]}" >"$logs/gpuraid-gpu-bench.txt" 2>&1 || echo "gpuraid-gpu-bench: failed" >>"$summary"

  # The engine with each parity backend, one invocation per figure (raw drives measured in the same run).
  local backends=(cpu)
  ((gpu)) && backends+=(cuda)
  local geos=("5 8" "6 10" "ec 11 3")
  for be in "${backends[@]}"; do
    for g in "${geos[@]}"; do
      read -r level members parity <<<"$g"
      for fail in 0 1; do
        local rw=write
        ((fail)) && rw=read
        local name="bench-r$level-$be-fail$fail"
        "$bin/gpuraid-bench" --level "$level" --members "$members" ${parity:+--parity "$parity"} --strip 64K \
          --drive-type mem --drive-size "$size" --rw "$rw" --bs 1M --iodepth 8 --threads 2 --runtime "$runtime" \
          --fail "$fail" --parity-backend "$be" --compare --json >"$logs/$name.json" 2>"$logs/$name.err" &&
          python3 - "$logs/$name.json" "$name" >>"$summary" <<'EOF' || echo "$name: failed (see $name.err)" >>"$summary"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["ratio"]
print(f"{sys.argv[2]}: raid {d['raid']['mbps']:.0f} MB/s, raw {d['raw']['mbps']:.0f} MB/s, raid/raw {r['mbps']:.3f} "
      f"({100 * r['fraction_of_bound']:.0f}% of the I/O-count bound), parity {d['config']['parity_backend']}")
EOF
      done
    done
  done

  # Scaling with reactors: 4K random reads, RAID 5 7+1, null and mem drives, 1..16 threads (up to the CPUs).
  for dt in null mem; do
    for t in 1 2 4 8 16; do
      ((t > $(nproc))) && continue
      local name="scale-$dt-t$t"
      "$bin/gpuraid-bench" --level 5 --members 8 --drive-type "$dt" --drive-size "$scale_size" --rw randread --bs 4K \
        --iodepth 32 --threads "$t" --runtime "$runtime" --compare --json >"$logs/$name.json" 2>"$logs/$name.err" ||
        echo "$name: failed (see $name.err)" >>"$summary"
    done
  done
  python3 - "$logs" >>"$summary" <<'EOF'
import glob, json, os, sys
rows = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "scale-*.json"))):
    try:
        d = json.load(open(f))
    except ValueError:
        continue
    name = os.path.basename(f)[:-5]
    rows.append(f"{name}: raid {d['raid']['iops']:.0f} IOPS, raw {d['raw']['iops']:.0f} IOPS, "
                f"raid CPU {d['raid']['cpu_pct']:.0f}%")
print("\n".join(rows) if rows else "scaling: no results")
EOF
  tar -C "$logs" -czf "$out/gpu-lane.tar.gz" .
  rm -rf "$logs"
  cat "$summary"
  ! grep -qi 'failed' "$summary"  # the lane fails when any step did
}

case "${1:-}" in
  pack) shift; pack "$@" ;;
  run) shift; run "$@" ;;
  *) sed -n '2,15p' "$0" >&2; exit 2 ;;
esac
