#!/usr/bin/env bash
# Fuzzing the NBD transmission phase (issue 19) against the real daemon:
# nbd_client.py fuzz-tx sends 10^5 generated requests (NBD_FUZZ_CASES to
# change it: 10^7 for the long run), pipelined, with now and then a stream
# the server must close; every reply well-formed, the data kept, and the
# daemon still serves and stops cleanly afterwards.
source "$(dirname "$0")/lib.sh"
NBDC="$(dirname "$0")/../frontends/nbd_client.py"
start_daemon
for i in 0 1 2; do gp pd add "$T/drive$i.img" --size 64M >/dev/null; done
gp dg create --level 5 --name r5 pd0 pd1 pd2 >/dev/null
gp vd create r5 --size 16M --name v >/dev/null
gp vd export v --nbd --listen "unix:$T/v.sock" >/dev/null
SEED=${NBD_FUZZ_SEED:-$(date +%s)} CASES=${NBD_FUZZ_CASES:-100000}
step "fuzz-tx, $CASES cases, seed $SEED"
# 280 s per 10^5 cases (ctest's limit is 300 s): a long run gets its time.
timeout $((280 * ((CASES + 99999) / 100000))) python3 "$NBDC" fuzz-tx "$T/v.sock" "$CASES" "$SEED" ||
  fail "fuzz-tx (seed $SEED: NBD_FUZZ_SEED=$SEED reproduces it)"
kill -0 "$DPID" || fail "gpuraidd died"
python3 "$NBDC" trim "$T/v.sock" 1048576 4096 || fail "the export does not serve after the fuzzing"
gp vd unexport v >/dev/null
stop_daemon
echo "nbd_fuzz_tx: OK"
