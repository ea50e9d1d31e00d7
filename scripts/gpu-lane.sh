#!/usr/bin/env bash
# The GPU lane in one command.
#
#   scripts/gpu-lane.sh pack [DIR]        (here, after scripts/build.sh; DIR defaults to ./gpu-lane)
#       copies the GPU test and benchmarks and every shared library they link that a machine with only
#       the NVIDIA driver lacks (liburing, ISA-L, the CUDA runtime, ...) into DIR, with this script and
#       gpu-lane-table.py.
#   DIR/gpu-lane.sh run OUT [--quick]     (on the GPU machine; about 4-5 minutes on a 16-core H100 box)
#       1. gpu_parity_test (the kernels on the device against ISA-L, bit for bit);
#       2. gpuraid-gpu-bench --lane: copy rates, one 4 KiB job's round trip through the backend (polled and
#          event completion), kernels and backend on host memory (PCIe read share of H2D, zero-copy/staged);
#       3. the engine (gpuraid-bench, mem drives, 2 reactors, raw drives in the same invocation), cpu and
#          cuda backends on every row: RAID 5 7+1 / RAID 6 8+2 / ec 8+3 1 MiB writes, the same with one
#          member failed (1 MiB reads), RAID 5 and RAID 6 4 KiB random writes;
#       4. null drives (the engine's own CPU): RAID 6 8+2 and ec 8+3 1 MiB writes at 1, 2, 4, 8 reactors and
#          their degraded 1 MiB reads at 2, both backends: GB/s, CPU %, CPU per GB/s;
#       5. sharing the GPU (when PyTorch is there): a bf16 matmul loop's rate alone and beside the engine,
#          and the engine's beside it.
#       OUT gets summary.txt (one table of everything) and gpu-lane.tar.gz (every log and JSON). Without a
#       GPU the cuda rows are left out. --quick: seconds-long runs on small drives (what CI runs here).
#
# Keep a run's results in bench/results/<date>-gpu/ (see bench/results/README.md).
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
  cp "$root/scripts/gpu-lane-table.py" "$dir/"
  # Every library the loader resolves, except the C runtime and the driver's own (libcuda comes with the
  # driver and must match it), so the folder runs on any glibc >= this machine's with a driver.
  ldd "${bins[@]/#/$root/build/bin/}" | awk '/=> \//{print $3}' | sort -u |
    grep -Ev '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*|libcuda)\.so' |
    while read -r lib; do cp -L "$lib" "$dir/lib/"; done
  if ldd "$dir"/bin/* 2>/dev/null | grep >/dev/null 'not found'; then
    echo "gpu-lane: unresolved libraries in the pack" >&2
    exit 1
  fi
  echo "gpu-lane: packed $(ls "$dir/bin" | wc -l) programs and $(ls "$dir/lib" | wc -l) libraries ($(du -sh "$dir" | cut -f1)) into $dir"
}

# bench NAME ARGS...: one gpuraid-bench invocation, its JSON kept as NAME.json (a failure as NAME.err).
bench() {
  local name=$1
  shift
  timeout 120 "$BIN/gpuraid-bench" "$@" --json >"$LOGS/$name.json" 2>"$LOGS/$name.err" ||
    echo "$name: failed (see $name.err)" >>"$LOGS/failures"
}

run() {
  local here out quick=0
  here="$(cd "$(dirname "$0")" && pwd)"
  out="${1:?usage: gpu-lane.sh run OUT [--quick]}"
  [[ "${2:-}" == --quick ]] && quick=1
  mkdir -p "$out"
  LOGS="$(mktemp -d)"
  export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  BIN="$here/bin"
  local size=512M runtime=2 null_size=1G corun=8
  ((quick)) && size=32M runtime=0.3 null_size=64M corun=1
  local t0=$SECONDS
  {
    echo "gpu-lane $(date -u +%FT%TZ) on $(hostname), $(nproc) CPUs"
    grep -m1 'model name' /proc/cpuinfo || true
    nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"
  } >"$LOGS/header.txt"

  # 1. The kernels on the device.
  local gpu=0
  if timeout 300 "$BIN/gpu_parity_test" >"$LOGS/gpu_parity_test.log" 2>&1; then
    if grep -q 'no GPU: skipped' "$LOGS/gpu_parity_test.log"; then
      echo "gpu_parity_test: no GPU: skipped" >"$LOGS/gpu_parity_test.txt"
    else
      gpu=1
      echo "gpu_parity_test: passed ($(grep -c '^\[       OK' "$LOGS/gpu_parity_test.log") cases)" >"$LOGS/gpu_parity_test.txt"
    fi
  else
    echo "gpu_parity_test: FAILED (see gpu_parity_test.log)" >"$LOGS/gpu_parity_test.txt"
    echo "gpu_parity_test: failed" >>"$LOGS/failures"
  fi

  # 2. The backend alone.
  local gb_args=(--lane --seconds 0.2 --cap-mib 512)
  ((quick)) && gb_args=(--lane --seconds 0.02 --cap-mib 64)
  timeout 200 "$BIN/gpuraid-gpu-bench" "${gb_args[@]}" >"$LOGS/gpuraid-gpu-bench.txt" 2>&1 ||
    echo "gpuraid-gpu-bench: failed" >>"$LOGS/failures"

  local backends=(cpu)
  ((gpu)) && backends+=(cuda)
  # 3. The engine on mem drives, raw drives measured in the same invocation.
  local M="--strip 64K --drive-type mem --drive-size $size --threads 2 --runtime $runtime --compare"
  local g
  for be in "${backends[@]}"; do
    for g in "r5:--level 5 --members 8" "r6:--level 6 --members 10" "ec:--level ec --members 11 --parity 3"; do
      local n=${g%%:*} geo=${g#*:}
      # shellcheck disable=SC2086
      bench "mem-$n-write1m-$be" $geo $M --rw write --bs 1M --iodepth 8 --parity-backend "$be"
      # shellcheck disable=SC2086
      bench "mem-$n-read1m-fail1-$be" $geo $M --rw read --bs 1M --iodepth 8 --fail 1 --parity-backend "$be"
    done
    # shellcheck disable=SC2086
    bench "mem-r5-randwrite4k-$be" --level 5 --members 8 $M --rw randwrite --bs 4K --iodepth 32 --parity-backend "$be"
    # shellcheck disable=SC2086
    bench "mem-r6-randwrite4k-$be" --level 6 --members 10 $M --rw randwrite --bs 4K --iodepth 32 --parity-backend "$be"
  done

  # 4. Null drives: what the engine itself spends.
  local N="--strip 64K --drive-type null --drive-size $null_size --no-fill --bs 1M --iodepth 16"
  for be in "${backends[@]}"; do
    for g in "r6:--level 6 --members 10" "ec:--level ec --members 11 --parity 3"; do
      local n=${g%%:*} geo=${g#*:} t
      for t in 1 2 4 8; do
        ((t > $(nproc))) && continue
        # shellcheck disable=SC2086
        bench "null-$n-write1m-t$t-$be" $geo $N --runtime "$runtime" --rw write --threads $t --parity-backend "$be"
      done
      # shellcheck disable=SC2086
      bench "null-$n-read1m-fail1-t2-$be" $geo $N --runtime "$runtime" --rw read --fail 1 --threads 2 \
        --parity-backend "$be"
    done
  done

  # 5. Sharing the GPU with a compute job (PyTorch, when the machine has it).
  if ((gpu)) && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    cat >"$LOGS/matmul.py" <<'EOF'
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); b = torch.randn_like(a)
torch.cuda.synchronize(); n = 0; t = time.time()
while time.time() - t < float(sys.argv[1]):
    for _ in range(10): a @ b
    torch.cuda.synchronize(); n += 10
print(f"matmul_tflops {n * 2 * 8192**3 / (time.time() - t) / 1e12:.1f}")
EOF
    python3 "$LOGS/matmul.py" "$corun" >"$LOGS/corun-alone.txt" 2>&1 || echo "co-run: matmul alone failed" >>"$LOGS/failures"
    python3 "$LOGS/matmul.py" "$corun" >"$LOGS/corun-beside.txt" 2>&1 &
    local mm=$!
    sleep 1
    # shellcheck disable=SC2086
    bench "corun-null-r6-write1m-t2-cuda" --level 6 --members 10 $N --rw write --threads 2 --parity-backend cuda \
      --runtime $((corun - 3))
    wait "$mm" || echo "co-run: matmul beside the engine failed" >>"$LOGS/failures"
  else
    echo "no PyTorch with CUDA here: the co-run figures are left out" >"$LOGS/corun-alone.txt"
  fi

  echo "lane time: $((SECONDS - t0)) s" >>"$LOGS/header.txt"
  python3 "$here/gpu-lane-table.py" "$LOGS" >"$out/summary.txt" || echo "summary table failed" >>"$LOGS/failures"
  [[ -f "$LOGS/failures" ]] && cat "$LOGS/failures" >>"$out/summary.txt"
  tar -C "$LOGS" -czf "$out/gpu-lane.tar.gz" .
  rm -rf "$LOGS"
  cat "$out/summary.txt"
  ! grep -qi 'failed' "$out/summary.txt"  # the lane fails when any step did
}

case "${1:-}" in
  pack) shift; pack "$@" ;;
  run) shift; run "$@" ;;
  *) sed -n '2,26p' "$0" >&2; exit 2 ;;
esac
