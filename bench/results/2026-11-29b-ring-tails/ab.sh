#!/bin/bash
# ab.sh A B ROUNDS LEVEL MEMBERS DT RW BS: alternated --guard-compare; prints bin ratio on off
A=$1; B=$2; R=$3; L=$4; M=$5; DT=${6:-null}; RW=${7:-randwrite}; BS=${8:-4K}
SZ=1G; [ $DT = mem ] && SZ=256M
for i in $(seq $R); do
 for b in $A $B; do
  $b --guard-compare --level $L --members $M --strip 64K --drive-type $DT --drive-size $SZ --rw $RW --bs $BS --iodepth 32 --threads 2 --runtime 2 --runs 3 --json 2>/dev/null | python3 -c "import json,sys;d=json.load(sys.stdin);g=d['guard_cost'];print('$(basename $b)', round(g['iops'],3), round(d['raid']['iops']/1e6,3), round(d['plain']['iops']/1e6,3), round(g['log_writes']/max(1,g['log_batches']),1))"
 done
done
