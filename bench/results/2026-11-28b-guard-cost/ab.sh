#!/bin/bash
# ab3.sh LEVEL MEMBERS ROUNDS: base (4766008) and new alternated, --guard-compare, null 4K random
L=$1; M=$2; R=$3
for i in $(seq $R); do
 for b in base final; do
  /tmp/bench-$b --guard-compare --level $L --members $M --strip 64K --drive-type null --drive-size 1G --rw randwrite --bs 4K --iodepth 32 --threads 2 --runtime 2 --runs 3 --json 2>/dev/null | python3 -c "import json,sys;d=json.load(sys.stdin);g=d['guard_cost'];print('$b', round(g['iops'],3), round(d['raid']['iops']/1e6,3), round(d['plain']['iops']/1e6,3), round(g['log_writes']/g['log_batches'],1))"
 done
done
