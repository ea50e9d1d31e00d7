#!/usr/bin/env bash
# Declustered parity through the CLI (issue 34): dg create --level draid6
# --data D --distributed-spares S (and its refusals), a VD written with a
# pattern, two members failed (draid6 survives any two), each rebuilt into
# the distributed spare room by itself (the second waiting for the first's
# rebuild across a daemon restart; the room's use in status, dg show and the
# metrics), the daemon restarted (the group comes back from its superblocks
# with its shape and its room), the room's last member copied back onto a
# replacement drive with dg replace (the first one refused: only the last
# can leave), a daemon stop in the middle of that copy-back (it resumes),
# then two other members failed: the first takes the room freed, the rebuilt
# ones are relied on; the data verified after each step.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ways_back_lib.sh"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
metric() {
  python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' \
    "http://127.0.0.1:$PORT/metrics" | python3 "$(dirname "$0")/prom_check.py" get "$1" || fail "metric $1"
}
used() { gp dg show dr --json | json 'd.get("distributed_spares_used", 0)'; }
start_daemon --metrics "$PORT"
for i in $(seq 0 13); do gp pd add "$T/drive$i.img" --size 64M >/dev/null; done

step "refusals say why"
expect_rc 1 gp dg create --level draid6 pd0 pd1 pd2 pd3 pd4 pd5
expect_err_has "--data"
expect_rc 1 gp dg create --level draid6 --data 3 pd0 pd1 pd2 pd3 pd4 pd5
expect_err_has "--spares"
expect_rc 1 gp dg create --level draid6 --data 4 --distributed-spares 1 pd0 pd1 pd2 pd3 pd4 pd5
expect_err_has "cannot hold a stripe of 6 and 1 spare(s)"
expect_rc 1 gp dg create --level 6 --data 4 --distributed-spares 1 pd0 pd1 pd2 pd3 pd4 pd5
expect_err_has "draid5 and draid6 only"

step "create: 12 members, stripes of 3+2, 2 spare strips a row"
gp dg create --level draid6 --data 3 --distributed-spares 2 --name dr pd0 pd1 pd2 pd3 pd4 pd5 pd6 pd7 pd8 pd9 pd10 pd11 >/dev/null
check "declustered_data" 3 "$(gp dg show dr --json | json 'd["declustered_data"]')"
check "declustered_spares" 2 "$(gp dg show dr --json | json 'd["declustered_spares"]')"
check "level" draid6 "$(gp dg show dr --json | json 'd["level"]')"
timeout 120 "$BIN/gpuraid" dg show dr --watch --interval 0.2 >/dev/null || fail "init did not finish in 120 s"
check dr optimal "$(gstate dr)"
check "room used, new group" 0 "$(used)"
gp status | grep >/dev/null "distributed spare room: 0 of 2 used, 2 free" || fail "status does not show the free room: $(gp status)"
gp vd create dr --size 96M --name v1 >/dev/null
gp vd write v1 --pattern 7 --length 96M >/dev/null

step "two members fail: every byte still reads"
# Held slow, the rebuilds into the room (which start by themselves) cannot
# end before the state is read, however loaded the machine.
gp dg rates dr --rebuild 1M >/dev/null
gp pd fail pd2 >/dev/null
gp pd fail pd9 >/dev/null
check dr degraded "$(gstate dr)"
check "room used: the first failure, the second waits" 1 "$(used)"
gp vd read v1 --verify-pattern 7 --length 96M >/dev/null

step "a restart while the second waits: both rebuilt into the room after it, by themselves"
stop_daemon
start_daemon --metrics "$PORT"
check "dr after the restart" degraded "$(gstate dr)"
gp dg rates dr --rebuild 0 >/dev/null
for i in $(seq 1 600); do [ "$(gstate dr)" = optimal ] && break; sleep 0.2; done
check dr optimal "$(gstate dr)"
check "room used" 2 "$(used)"
gp status | grep >/dev/null "distributed spare room: 2 of 2 used, 0 free" || fail "status does not show the room used: $(gp status)"
check "metric: room used" 2 "$(metric 'gpuraid_dg_distributed_spares{dg="dr",state="used"}')"
check "metric: room free" 0 "$(metric 'gpuraid_dg_distributed_spares{dg="dr",state="free"}')"
# The event log is written behind the state (a queue of its own): wait for it.
for i in $(seq 1 50); do gp events --json | grep >/dev/null "rebuilt into the distributed spare room" && break; sleep 0.2; done
gp events --json | grep >/dev/null "rebuilt into the distributed spare room" || fail "no event says a member was rebuilt into the room: $(gp events)"
gp vd read v1 --verify-pattern 7 --length 96M >/dev/null
expect_rc 1 gp dg replace dr --old pd2 --with pd12
expect_err_has "only the last member into the distributed spare room (member 9) can leave it"


step "a restart brings the group back with its shape"
stop_daemon
start_daemon --metrics "$PORT"
check dr optimal "$(gstate dr)"
check "declustered_data after restart" 3 "$(gp dg show dr --json | json 'd["declustered_data"]')"
gp vd read v1 --verify-pattern 7 --length 96M >/dev/null

step "copy-back: the room's last member onto a replacement drive, across a restart"
gp dg rates dr --rebuild 2M >/dev/null
gp dg replace dr --old pd9 --with pd12 >/dev/null
check "dr while copying back" rebuilding "$(gstate dr)"
gp dg show dr | grep >/dev/null "pd12.*rebuilding" || fail "dg show does not show pd12 rebuilding: $(gp dg show dr)"
gp status | grep >/dev/null "member 9 is being copied back onto its drive" || fail "status does not show the copy-back: $(gp status)"
check "copy-back member (API)" 9 "$(gp dg show dr --json | json 'd["distributed_spare_copy_back"]')"
gp vd write v1 --pattern 8 --length 8M >/dev/null
gp vd read v1 --verify-pattern 8 --length 8M >/dev/null
stop_daemon
start_daemon --metrics "$PORT"
grep >/dev/null "copy-back of member 9 out of the distributed spare room resumes" "$T/daemon.log" ||
  fail "the restart did not resume the copy-back: $(tail -5 "$T/daemon.log")"
gp dg rates dr --rebuild 0 >/dev/null
for i in $(seq 1 600); do [ "$(gstate dr)" = optimal ] && break; sleep 0.2; done
check dr optimal "$(gstate dr)"
check "room used after the copy-back" 1 "$(used)"
gp status | grep >/dev/null "distributed spare room: 1 of 2 used, 1 free" || fail "status: $(gp status)"
for i in $(seq 1 50); do gp events --json | grep >/dev/null "copied back onto" && break; sleep 0.2; done
gp events --json | grep >/dev/null "copied back onto" || fail "no event says member 9 was copied back: $(gp events)"
gp vd read v1 --verify-pattern 8 --length 8M >/dev/null
gp vd read v1 --verify-pattern 7 --offset 8M --length 88M >/dev/null

step "two others fail: the first takes the room freed, every byte still reads"
gp pd fail pd0 >/dev/null
for i in $(seq 1 600); do [ "$(used)" = 2 ] && [ "$(gstate dr)" = optimal ] && break; sleep 0.2; done
check "room used" 2 "$(used)"
gp pd fail pd5 >/dev/null
gp vd read v1 --verify-pattern 8 --length 8M >/dev/null
gp vd read v1 --verify-pattern 7 --offset 8M --length 88M >/dev/null
expect_rc 1 gp dg rebuild dr start
expect_err_has "the distributed spare room is full"
stop_daemon
echo "PASS"
