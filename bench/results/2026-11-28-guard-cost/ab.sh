#!/bin/bash
# usage: ab.sh DRIVE_TYPE LEVEL MEMBERS ROUNDS
T=${1:-null}; L=${2:-5}; M=${3:-8}; R=${4:-4}
for i in $(seq $R); do
 for b in base new; do
  if [ $b = base ]; then BIN=/tmp/base/build/bin/gpuraid-bench; else BIN=/work/main/build/bin/gpuraid-bench; fi
  $BIN --guard-compare --level $L --members $M --strip 64K --drive-type $T --drive-size 1G --rw randwrite --bs 4K --iodepth 32 --threads 2 --runtime 2 --runs 3 --json 2>/dev/null | python3 -c "import json,sys;d=json.load(sys.stdin);print('$b', round(d['guard_cost']['iops'],3), round(d['raid']['iops']/1e6,3), round(d['plain']['iops']/1e6,3))"
 done
done
