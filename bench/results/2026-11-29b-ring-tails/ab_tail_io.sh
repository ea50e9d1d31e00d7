#!/bin/bash
# alternated: tails on (new) vs NO_TAIL_IO=1 (same binary)
for i in $(seq $1); do
 for e in "" "NO_TAIL_IO=1"; do
  env $e /tmp/bench_exp --guard-compare --level 6 --members 10 --strip 64K --drive-type null --drive-size 1G --rw randwrite --bs 4K --iodepth 32 --threads 2 --runtime 2 --runs 3 --json 2>/dev/null | python3 -c "import json,sys;d=json.load(sys.stdin);g=d['guard_cost'];print('${e:-tails}', round(g['iops'],3), round(d['raid']['iops']/1e6,3), round(d['plain']['iops']/1e6,3), g['log_tail_writes'])"
 done
done
