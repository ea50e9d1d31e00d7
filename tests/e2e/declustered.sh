#!/usr/bin/env bash
# Declustered parity through the CLI (issue 34): dg create --level draid6
# --data D --distributed-spares S (and its refusals), a VD written with a
# pattern, two members failed (draid6 survives any two), each rebuilt into
# the distributed spare room by itself (a replacement drive refused: no
# copy-back yet), the daemon restarted (the group comes back from its
# superblocks with its shape and its room), then two other members failed
# with the rebuilt ones relied on; the data verified after each step.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ways_back_lib.sh"

start_daemon
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
gp vd create dr --size 96M --name v1 >/dev/null
gp vd write v1 --pattern 7 --length 96M >/dev/null

step "two members fail: every byte still reads"
# Held slow, the rebuilds into the room (which start by themselves) cannot
# end before the state is read, however loaded the machine.
gp dg rates dr --rebuild 1M >/dev/null
gp pd fail pd2 >/dev/null
gp pd fail pd9 >/dev/null
check dr degraded "$(gstate dr)"
gp vd read v1 --verify-pattern 7 --length 96M >/dev/null
gp dg rates dr --rebuild 0 >/dev/null

step "both rebuilt into the distributed spare room, by themselves"
for i in $(seq 1 600); do [ "$(gstate dr)" = optimal ] && break; sleep 0.2; done
check dr optimal "$(gstate dr)"
# The event log is written behind the state (a queue of its own): wait for it.
for i in $(seq 1 50); do gp events --json | grep -q "rebuilt into the distributed spare room" && break; sleep 0.2; done
gp events --json | grep -q "rebuilt into the distributed spare room" || fail "no event says a member was rebuilt into the room: $(gp events)"
gp vd read v1 --verify-pattern 7 --length 96M >/dev/null
expect_rc 1 gp dg replace dr --old pd2 --with pd12
expect_err_has "not built yet"


step "a restart brings the group back with its shape"
stop_daemon
start_daemon
check dr optimal "$(gstate dr)"
check "declustered_data after restart" 3 "$(gp dg show dr --json | json 'd["declustered_data"]')"
gp vd read v1 --verify-pattern 7 --length 96M >/dev/null

step "the rebuilt members carry their strips: two others fail"
gp pd fail pd0 >/dev/null
gp pd fail pd5 >/dev/null
gp vd read v1 --verify-pattern 7 --length 96M >/dev/null
stop_daemon
echo "PASS"
