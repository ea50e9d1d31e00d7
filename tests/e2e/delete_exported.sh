#!/usr/bin/env bash
# dg delete --force with an exported volume in use (fio through NBD): refused
# unless --unexport, and then the export ends cleanly before anything is
# deleted: fio's requests in flight are answered and it is told the server
# shuts down (NBD_ESHUTDOWN), never EIO; an idle client is closed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ways_back_lib.sh"
command -v fio >/dev/null || fail "fio is needed (scripts/setup.sh installs it)"

start_daemon
for i in 0 1 2; do gp pd add "$T/drive$i.img" --size 64M >/dev/null; done
gp dg create --level 5 --name r5 pd0 pd1 pd2 >/dev/null
gp dg show r5 --watch --interval 0.2 >/dev/null
gp vd create r5 --size 32M --name v >/dev/null
URI=$(gp vd export v --nbd --listen "unix:$T/v.sock" --json | json 'd["export"]["uri"]')

step "fio writes and reads through NBD"
fio --name=load --ioengine=nbd --uri="$URI" --rw=randrw --bs=4k --iodepth=16 --size=32M --time_based \
    --runtime=120 --output-format=json --output="$T/fio.json" >/dev/null 2>"$T/fio.err" &
FPID=$!
sleep 2
kill -0 $FPID 2>/dev/null || { cat "$T/fio.err"; fail "fio did not start"; }

step "dg delete --force is refused while the volume is exported; fio goes on"
expect_rc 1 gp dg delete r5 --force
echo "   $ERR"
expect_err_has "exported"
expect_err_has "--unexport"
expect_rc 1 gp dg delete r5 --unexport
expect_err_has "holds virtual drives"
sleep 1
kill -0 $FPID 2>/dev/null || { cat "$T/fio.err"; fail "fio stopped"; }
check "v" true "$(gp vd show v --json | json 'str(d["export"]["active"]).lower()')"

step "dg delete --force --unexport: the export ends cleanly first"
# Beside fio, an idle client (connected, nothing sent): closed after the
# 1 s grace, well before the 10 s drain limit.
python3 "$(dirname "$0")/../frontends/nbd_client.py" idle "$T/v.sock" 5 >"$T/idle.out" 2>&1 &
IPID=$!
for _ in $(seq 50); do grep -q connected "$T/idle.out" && break; sleep 0.1; done
grep -q connected "$T/idle.out" || fail "the idle client did not connect: $(cat "$T/idle.out")"
timeout 60 "$BIN/gpuraid" dg delete r5 --force --unexport ||
  fail "dg delete --force --unexport did not return within 60 s (or failed)"
wait $IPID || fail "the idle client was not closed cleanly: $(cat "$T/idle.out")"
# fio must see the end of the export at once (answered or told to shut down): a bounded wait, so that a
# client left hanging fails here with what fio said rather than as the test's timeout.
for _ in $(seq 300); do kill -0 $FPID 2>/dev/null || break; sleep 0.1; done
if kill -0 $FPID 2>/dev/null; then
  kill -KILL $FPID
  fail "fio still runs 30 s after the export ended (a request left unanswered?): $(tail -5 "$T/fio.err")"
fi
rc=0
wait $FPID || rc=$?
# fio's first error, as a signed errno: 0 none, or 108 ESHUTDOWN (a
# request that arrived while draining: the server tells a busy client so
# before it closes), never EIO or a connection closed under it.
ERRNO=$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["jobs"][0]["error"]; print(e - (1 << 32) if e >= 1 << 31 else e)' "$T/fio.json")
echo "   fio exit $rc, error $ERRNO; $(tail -2 "$T/fio.err" | tr '\n' ' ')"
! grep -qi "input/output error\|EIO" "$T/fio.err" || fail "fio got EIO: $(cat "$T/fio.err")"
[ "$ERRNO" -eq 0 ] || [ "$ERRNO" -eq 108 ] || fail "fio got error $ERRNO (want none, or ESHUTDOWN: 108)"
check "groups" 0 "$(gp dg list --json | json 'len(d.get("groups", []))')"
check "volumes" 0 "$(gp vd list --json | json 'len(d.get("volumes", []))')"
[ ! -e "$T/v.sock" ] || fail "the NBD socket is still there"
has_events VOLUME_UNEXPORTED GROUP_DELETED
stop_daemon
echo "delete_exported: OK"
