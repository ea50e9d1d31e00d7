#!/usr/bin/env bash
# Bad input for every command: missing, malformed, out-of-range and
# conflicting arguments get a clear message and a non-zero exit (2 usage,
# 1 refused by the daemon, 3 no daemon), and refused requests change
# nothing in the daemon's state.
source "$(dirname "$0")/lib.sh"

step "no daemon: connection error (3)"
expect_rc 3 gp --socket "$T/nowhere.sock" info
expect_rc 3 gp --socket "$T/nowhere.sock" pd list

start_daemon
for i in 0 1 2 3 4; do gp pd add "$T/d$i.img" --size 32M >/dev/null; done
gp dg create --level 5 pd0 pd1 pd2 >/dev/null
gp vd create dg0 --size 8M >/dev/null
gp dg show dg0 --watch --interval 0.2 >/dev/null
gp pd add "" --type null --size 32M --id pdnull >/dev/null
state() { echo "$(gp pd list --json)$(gp vd list --json)$(gp dg list --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
for g in d.get("groups", []):
    for k in ("init", "resync", "rebuild", "scrub", "last_scrub", "generation"): g.pop(k, None)
print(json.dumps(d, sort_keys=True))')"; }
BEFORE=$(state)

step "usage errors (2)"
expect_rc 2 gp
expect_rc 2 gp bogus
expect_rc 2 gp --bogus info
expect_rc 2 gp pd
expect_rc 2 gp pd add
expect_rc 2 gp pd add "$T/x.img" --size 12Q
expect_rc 2 gp pd add "$T/x.img" --type tape
expect_rc 2 gp pd show
expect_rc 2 gp pd scan extra
expect_rc 2 gp dg create pd3 pd4
expect_rc 2 gp dg create --level 7 pd3 pd4
expect_rc 2 gp dg create --level 5
expect_rc 2 gp dg create --level 5 --strip huge pd3 pd4
expect_rc 2 gp dg show dg0 --interval 0
expect_rc 2 gp dg replace dg0 --with pd4
expect_rc 2 gp dg replace dg0 --member 1 --old pd1 --with pd4
expect_rc 2 gp dg replace dg0 --member 99 --with pd4
expect_rc 2 gp dg scrub dg0 explode
expect_rc 2 gp dg rebuild dg0
expect_rc 2 gp dg rates dg0 --rebuild fast
expect_rc 2 gp pd add "$T/zero.img" --size 0
[[ $ERR == *"no bytes"* ]] || fail "pd add --size 0: $ERR"
expect_rc 2 gp vd create dg0
expect_rc 2 gp vd create dg0 --size 1G --rest
expect_rc 2 gp vd create dg0 --size 0
expect_rc 2 gp vd export vd0
expect_rc 2 gp vd export vd0 --ublk --nbd
expect_rc 2 gp vd export vd0 --ublk --listen unix:/tmp/x
expect_rc 2 gp vd read vd0 --length 4K
expect_rc 2 gp vd read vd0 --length 4K --out "$T/o" --verify-pattern 1
expect_rc 2 gp vd write vd0
expect_rc 2 gp vd write vd0 --pattern 3
expect_rc 2 gp vd resize vd0
expect_rc 2 gp stats --interval -1
expect_rc 2 gp --socket "$SOCK" --connect 127.0.0.1:1 info
expect_rc 2 gp --tls-ca /nonexistent info

step "refused by the daemon (1), with what to fix"
expect_rc 1 gp pd add relative.img --size 32M
echo "   $ERR"
expect_rc 1 gp pd add "$T/missing/d.img"
expect_rc 1 gp pd add "$T/d0.img"
echo "   $ERR"
expect_rc 1 gp pd add "$T/tiny.img" --size 4K
expect_rc 1 gp pd add "$T/b.img" --size 32M --type block
expect_rc 1 gp pd add "$T/d9.img" --size 32M --id 'bad id!'
expect_rc 1 gp pd add "$T/d9.img" --size 32M --id pd0
expect_rc 1 gp pd add "$T/d9.img" --size 32M --id "$(printf 'x%.0s' $(seq 100))"
expect_rc 1 gp pd add "$T/m.img" --type mem
expect_rc 1 gp pd show pd99
echo "   $ERR"
expect_rc 1 gp pd remove pd0
echo "   $ERR"
expect_rc 1 gp pd unspare pd3
expect_rc 1 gp pd spare pd0
expect_rc 1 gp pd spare pd3 --group nope
# A null drive stores nothing: never a spare (a rebuild onto it would only look done).
expect_rc 1 gp pd spare pdnull
[[ $ERR == *"null drive"* ]] || fail "a null pool spare refused without saying why: $ERR"
expect_rc 1 gp pd spare pdnull --group dg0
expect_rc 1 gp dg create --level 5 pd3 pd99
expect_rc 1 gp dg create --level 5 pd3 pd3 pd4
expect_rc 1 gp dg create --level 5 pd0 pd3 pd4
expect_rc 1 gp dg create --level 6 pd3 pd4
echo "   $ERR"
expect_rc 2 gp dg create --level 5 --strip 3K pd3 pd4
# One rule for bad strip sizes, all usage errors (2): 0, too small, too large, not a power of two.
for bad in 0 2K 2M 1T 96K; do
  expect_rc 2 gp dg create --level 5 --strip $bad pd3 pd4
done
[[ $ERR == *"a power of two from 4K to 1M"* ]] || fail "--strip: $ERR"
expect_rc 2 gp dg rates dg0
expect_rc 1 gp dg create --level 5 --parity 2 pd3 pd4
expect_rc 1 gp dg create --level ec pd3 pd4
expect_rc 1 gp dg create --level ec --parity 9 pd3 pd4
expect_rc 1 gp dg create --level 1 --name 'a/b' pd3 pd4
expect_rc 1 gp dg create --level 1 --name dg0 pd3 pd4
expect_rc 1 gp dg create --level 1 --spare pd3 pd3 pd4
expect_rc 1 gp dg show nope
expect_rc 1 gp dg delete dg0
echo "   $ERR"
expect_rc 1 gp dg delete nope
expect_rc 1 gp dg replace dg0 --member 7 --with pd4
expect_rc 1 gp dg replace dg0 --old pd3 --with pd4
expect_rc 1 gp dg replace dg0 --member 0 --with pd1
expect_rc 1 gp dg replace dg0 --member 0 --with pd99
expect_rc 1 gp dg rebuild dg0 pause
echo "   $ERR"
expect_rc 1 gp dg rebuild dg0 start
expect_rc 1 gp dg scrub dg0 stop
expect_rc 1 gp dg scrub dg0 pause --repair
expect_rc 1 gp dg scrub nope start
expect_rc 1 gp dg rates dg0 --rebuild 4P
expect_rc 1 gp dg rates dg0 --rebuild 10M --rebuild-min 20M  # md's min above its max
echo "   $ERR"
grep -q "above its maximum" <<<"$ERR" || fail "no reason for a minimum above the maximum: $ERR"
gp dg rates dg0 --rebuild-min 20M | grep >/dev/null "20.*under I/O" || fail "dg rates does not show the minimum"
expect_rc 1 gp dg rates dg0 --rebuild 10M  # now below the minimum kept
gp dg rates dg0 --rebuild-min 0 >/dev/null
expect_rc 1 gp vd create nope --size 1M
expect_rc 1 gp vd create dg0 --size 1T
echo "   $ERR"
expect_rc 1 gp vd create dg0 --size 1M --name vd0
expect_rc 1 gp vd create dg0 --size 1M --name '-x'
expect_rc 1 gp vd show vd9
expect_rc 1 gp vd resize vd0 --size 4M
echo "   $ERR"
expect_rc 1 gp vd resize vd0 --size 1T
expect_rc 1 gp vd delete vd9
expect_rc 1 gp vd unexport vd0
expect_rc 1 gp vd export vd0 --nbd --listen garbage
expect_rc 1 gp vd export vd0 --nbd --listen tcp:localhost:99999
expect_rc 1 gp vd read vd0 --length 4K --offset 1G --out "$T/o"
expect_rc 1 gp vd read vd0 --length 100 --out "$T/o"
expect_rc 1 gp vd read vd0 --offset 512 --length 4K --out "$T/o"
expect_rc 1 gp vd read nope --length 4K --out "$T/o"
expect_rc 1 gp stats --vd nope
# The NVMe scan reads only (with or without NVMe on this host).
expect_rc 0 gp pd scan
expect_rc 0 gp pd scan --json

step "refused requests changed nothing"
AFTER=$(state)
[ "$BEFORE" == "$AFTER" ] || { diff <(echo "$BEFORE" | python3 -m json.tool 2>/dev/null || echo "$BEFORE") <(echo "$AFTER") | head -20; fail "state changed by refused requests"; }
echo "   ok: state unchanged"

step "NVMe-oF requests with bad fields are refused (1); nothing is connected; the daemon stays up"
expect_rc 1 gp pd discover --traddr 10.0.0.300
expect_rc 1 gp pd discover --traddr 127.0.0.1 --trsvcid 0
expect_rc 1 gp pd discover --transport rdma --traddr 127.0.0.1
expect_rc 1 gp pd connect --traddr 127.0.0.1 --nqn "nqn.bad name"
expect_rc 1 gp pd connect --traddr 127.0.0.1 --nqn nqn.2014-08.org.nvmexpress.discovery
expect_rc 1 gp pd connect --traddr 127.0.0.1 --nqn nqn.2026-11.x:y --ctrl-loss-tmo 2 --reconnect-delay 5
expect_rc 1 gp pd discover --traddr 127.0.0.1 --trsvcid 1  # nothing listens (or no nvme-fabrics here)
echo "   $ERR"
expect_rc 1 gp pd connect --traddr 127.0.0.1 --trsvcid 1 --nqn nqn.2026-11.x:y
expect_rc 1 gp pd disconnect --traddr 127.0.0.1 --nqn nqn.2026-11.x:y
expect_rc 2 gp pd connect --traddr 127.0.0.1
gp info >/dev/null || fail "the daemon went down"
echo "   ok"

step "--help on every command (exit 0)"
for cmd in "" pd "pd add" "pd discover" "pd connect" "pd disconnect" "pd list" "pd show" "pd remove" "pd fail" "pd spare" "pd unspare" dg "dg create" \
  "dg list" "dg show" "dg delete" "dg replace" "dg rebuild" "dg scrub" "dg rates" "dg start" "dg readd" "pd wipe" \
  vd "vd create" "vd list" \
  "vd show" "vd resize" "vd delete" "vd export" "vd unexport" "vd write" "vd read" stats events info; do
  # shellcheck disable=SC2086
  gp $cmd --help >/dev/null || fail "gpuraid $cmd --help failed"
done
echo "   ok"

step "gpuraidd refuses bad options (2)"
expect_rc 2 "$BIN/gpuraidd"
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/s2" --socket "$T/s2.sock" --reactors 0
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/s2" --socket "$T/s2.sock" --parity-backend warp
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/s2" --socket "$T/s2.sock" --socket-mode 999
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/s2" --socket "$T/s2.sock" --log-level loud
echo "bogus_key = 1" >"$T/bad.conf"
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/s2" --socket "$T/s2.sock" --config "$T/bad.conf"
expect_rc 1 "$BIN/gpuraidd" --state-dir "$T/state" --socket "$T/other.sock"
echo "   $ERR" | tail -1
stop_daemon
echo "bad_input: OK"
