#!/usr/bin/env bash
# Runs inside the lane's guest (see run.sh): the benchmark suite's fio jobs
# against the raw emulated NVMe drives, a gpuraid RAID exported through ublk
# (gpuraid-export-harness) and md RAID built by mdadm over the same drives.
#   guest-bench.sh BINDIR PLAN OUTDIR
# PLAN (written by bench/suite/targets/vmlane.py), one command a line:
#   threads T                   reactors of the harness (= fio jobs)
#   fill FIO-ARGS...            how every side is written once before it is measured
#   case ID RUN LEVEL MEMBERS STRIP STATE SIDES FIO-ARGS...
#       SIDES: comma-separated raw, ublk, md, measured in that order; STATE normal or failed
#       (member 0 failed after the fill: harness control FIFO, or mdadm --fail)
# For each case, run and side it writes OUTDIR/ID.RUN.SIDE.json (fio's output)
# and .cpu (/proc samples at the edges of fio's measured window), or .error;
# OUTDIR/done at the end. All figures are TCG figures.
set -uo pipefail
BIN=$1 PLAN=$2 OUT=$3
H=$BIN/gpuraid-export-harness
W=/run/bench-work   # logs in the guest's tmpfs: the host run dir may vanish under a long run (seen on shared hosts)
mkdir -p "$W" "$OUT"
THREADS=2 FILL=() HPID=""
log() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*"; }

modprobe ublk_drv && modprobe nvme && modprobe raid456 || { log "FAIL: modules"; exit 1; }
want=$(awk '$1 == "case" && $5 > n {n = $5} END {print n + 0}' "$PLAN")
for _ in $(seq 1 100); do [ "$(ls /sys/class/nvme 2>/dev/null | wc -l)" -ge "$want" ] && break; sleep 0.1; done
# Members by serial: controller numbers follow probe order, not the command line.
ALL=()
for i in $(seq 0 $((want - 1))); do
  for c in /sys/class/nvme/nvme*; do [ "$(tr -d ' ' <$c/serial)" = "vmlane$i" ] && ALL+=("/dev/$(basename $c)n1"); done
done
[ ${#ALL[@]} -eq "$want" ] || { log "FAIL: expected $want NVMe drives, found ${ALL[*]}"; exit 1; }

# Under TCG every fork costs tens to hundreds of milliseconds: what runs inside fio's window
# (waiting, sampling) uses bash builtins only.
mkfifo /run/bench-sleep && exec 9<>/run/bench-sleep
pause() { read -rt "$1" -u 9; }   # sleep without a fork: nothing ever writes to the FIFO
sample() {  # label pid...: uptime, the machine's and each process's CPU
  local up line role=fio
  read -r up _ </proc/uptime
  read -r line </proc/stat
  echo "$1 uptime $up"
  echo "$1 $line"
  for p in "${@:2}"; do read -r line </proc/$p/stat && echo "$1 pid $role $line"; role=server; done
}
ios() {  # completed I/Os of a block device (reads + writes)
  local r _a _b _c w
  read -r r _a _b _c w _ </sys/block/${1#/dev/}/stat
  echo $((r + w))
}

# measure NAME DEV SERVER_PID WARMUP RUNTIME FIO-ARGS...: fio with samples at the window's edges.
# fio's ramp starts with its first I/O (its set-up is slow under TCG): wait for the device's
# first completions, then sample over the window, its last tenth trimmed so that it stays inside fio's.
measure() {
  local name=$1 dev=$2 spid=$3 warm=$4 rt=$5 first=${2%%:*} n0 n w
  shift 5
  local win=$(awk "BEGIN {print $rt * 0.9}")
  n0=$(ios $first)
  fio --name=$name --ioengine=io_uring --direct=1 --filename=$dev "$@" >"$OUT/$name.json" 2>"$W/$name.fio.err" &
  local fpid=$!
  for _ in {1..3000}; do
    read -r n _ _ _ w _ </sys/block/${first#/dev/}/stat
    [ $((n + w)) != "$n0" ] && break
    [ -d /proc/$fpid ] || break
    pause 0.01
  done
  pause "$warm"
  sample start $fpid $spid >"$OUT/$name.cpu"
  pause "$win"
  sample end $fpid $spid >>"$OUT/$name.cpu"
  wait $fpid || { echo "fio: $(tail -3 $W/$name.fio.err)" >"$OUT/$name.error"; return 1; }
}

fill() {  # dev
  fio --name=fill --ioengine=io_uring --direct=1 --filename=$1 "${FILL[@]}" >"$W/fill.out" 2>&1 ||
    { echo "fill of $1: $(tail -3 $W/fill.out)"; return 1; }
}

CTL=/run/bench-ctl   # a FIFO: not on the 9p run dir
start_ublk() {  # level strip drives
  rm -f $W/state $CTL
  mkfifo $CTL
  $H --level $1 --strip $2 --drive-type block --drives "$3" --reactors $THREADS --ublk --state $W/state \
     --control $CTL >>$W/harness.out 2>$W/harness.err &
  HPID=$!
  for _ in $(seq 1 600); do
    [ -f $W/state ] && { DEV=$(sed -n 's/^ublk_dev=//p' $W/state); return 0; }
    kill -0 $HPID 2>/dev/null || { echo "harness exited: $(tail -3 $W/harness.err)"; HPID=""; return 1; }
    sleep 0.1
  done
  echo "harness did not come up"
}
stop_ublk() {  # prints why when the harness did not stop cleanly
  [ -n "$HPID" ] || return 0
  kill -TERM $HPID
  local rc=0
  wait $HPID || rc=$?
  HPID=""
  [ $rc -eq 0 ] || { echo "harness exit status $rc: $(tail -2 $W/harness.err)"; return 1; }
}

# side_raw|side_ublk|side_md NAME LEVEL STRIP STATE WARM RT FIO-ARGS...: one side of one case run;
# prints why on failure.
side_raw() {
  local name=$1 list
  shift 4
  list=$(IFS=:; echo "${DRIVES[*]}")
  fill "$list" && measure $name "$list" "" "$@"
}
side_ublk() {
  local name=$1 level=$2 strip=$3 state=$4
  shift 4
  start_ublk $level $strip "$(IFS=,; echo "${DRIVES[*]}")" || return 1
  fill $DEV || { stop_ublk; return 1; }
  if [ $state = failed ]; then
    echo "fail 0" >$CTL
    for _ in $(seq 1 100); do grep -q "member 0 failed" $W/harness.err && break; sleep 0.1; done
    grep -q "member 0 failed" $W/harness.err || { stop_ublk; echo "member 0 did not fail"; return 1; }
  fi
  measure $name $DEV $HPID "$@" || { stop_ublk; return 1; }
  stop_ublk
}
side_md() {
  local name=$1 level=$2 strip=$3 state=$4 chunk rc
  shift 4
  case $strip in *K) chunk=${strip%K} ;; *M) chunk=$((${strip%M} * 1024)) ;; *) chunk=$((strip / 1024)) ;; esac
  mdadm --create /dev/md0 --run --level=$level --raid-devices=${#DRIVES[@]} --chunk=$chunk --assume-clean \
        --metadata=1.2 --data-offset=1M "${DRIVES[@]}" >$W/mdadm 2>&1 || { echo "mdadm --create: $(tail -2 $W/mdadm)"; return 1; }
  fill /dev/md0 && { [ $state != failed ] || mdadm /dev/md0 --fail ${DRIVES[0]} >>$W/mdadm 2>&1; } &&
    measure $name /dev/md0 "$(pgrep -x md0_raid$level)" "$@"
  rc=$?
  mdadm --stop /dev/md0 >>$W/mdadm 2>&1
  mdadm --zero-superblock "${DRIVES[@]}" >>$W/mdadm 2>&1
  return $rc
}

WARM=${GUEST_BENCH_WARMUP:-1} RT=${GUEST_BENCH_RUNTIME:-3}
while read -r cmd rest; do
  case $cmd in
    threads) THREADS=$rest ;;
    window) read -r WARM RT <<<"$rest" ;;
    fill) read -r -a FILL <<<"$rest" ;;
    case)
      read -r id run level members strip state sides args <<<"$rest"
      read -r -a fargs <<<"$args"
      DRIVES=("${ALL[@]:0:$members}")
      for side in ${sides//,/ }; do
        name=$id.$run.$side
        log "$name: RAID $level x$members $strip $state ${fargs[*]:0:3}"
        why=$(side_$side $name $level $strip $state $WARM $RT "${fargs[@]}") ||
          { log "$name failed: $why"; echo "${why:-failed}" >>"$OUT/$name.error"; }
      done
      ;;
  esac
done <"$PLAN"
touch "$OUT/done"
log "done"
