#!/usr/bin/env bash
# NBD bytes in flight per connection (issue 19, --nbd-max-inflight): a client
# with 128 MiB of reads in flight that reads none of its replies would hold
# its reactor's whole 64 MiB arena; bounded per connection, its further
# requests wait unread and a second client on the same reactor (--reactors 1)
# is served, with the right data. Every greedy read is then answered.
# Several greedy clients share half the reactor's arena (NbdShare: each its
# fair share of it): four of them, at 16 MiB each, would hold the whole
# 64 MiB arena; a polite client beside them is still served.
source "$(dirname "$0")/lib.sh"
NBDC="$(dirname "$0")/../frontends/nbd_client.py"

step "--nbd-max-inflight is checked"
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/x" --socket "$T/x.sock" --nbd-max-inflight 512K
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/x" --socket "$T/x.sock" --arena 16M --nbd-max-inflight 9M

start_daemon --reactors 1 --arena 64M
for i in 0 1 2; do gp pd add "$T/drive$i.img" --size 64M >/dev/null; done
gp dg create --level 5 --name r5 pd0 pd1 pd2 >/dev/null
gp vd create r5 --size 16M --name v >/dev/null
gp vd export v --nbd --listen "unix:$T/v.sock" >/dev/null

step "a greedy client (128 x 1 MiB reads, replies unread) beside a polite one"
timeout 120 python3 "$NBDC" greedy "$T/v.sock" 128 10 || fail "greedy (see above)"
step "four greedy clients (128 x 1 MiB reads each, replies unread) beside a polite one"
timeout 150 python3 "$NBDC" greedy "$T/v.sock" 128 10 4 || fail "four greedy clients (see above)"
stop_daemon
echo "nbd_inflight: OK"
