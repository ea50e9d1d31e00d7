#!/usr/bin/env bash
# Names are UTF-8: a group or virtual drive named in any script is stored
# (registry, superblock) and comes back intact (tables, --json, errors,
# metrics), also after a restart; what cannot be a name (spaces, invisible
# characters, bytes that are not UTF-8) is refused, quoted readably.
source "$(dirname "$0")/lib.sh"

PORT=$(free_port)
start_daemon --metrics "$PORT"
for i in 0 1 2 3; do gp pd add "$T/d$i.img" --size 32M >/dev/null; done
G=données
V=数据卷
D=диск-4

step "a group, a volume and a drive named in UTF-8"
gp pd add "$T/d4.img" --size 32M --id "$D"
gp dg create --level 5 --assume-zeroed --name "$G" pd0 pd1 pd2
gp vd create "$G" --size 8M --name "$V"
gp vd write "$V" --pattern 7 --length 8M >/dev/null

names() {
  check "group name (--json)" "$G" "$(gp dg list --json | json 'd["groups"][0]["name"]')"
  check "volume name (--json)" "$V" "$(gp vd show "$V" --json | json 'd["id"]')"
  check "volume's group (--json)" "$G" "$(gp vd show "$V" --json | json 'd["group"]')"
  check "drive id (--json)" "$D" "$(gp pd show "$D" --json | json 'd["id"]')"
  check "group name (table)" "$G" "$(gp dg list | awk 'NR == 2 { print $1 }')"
  check "volume name (table)" "$V" "$(gp vd list | awk 'NR == 2 { print $1 }')"
  gp dg show "$G" | grep >/dev/null "^name: *$G\$" || fail "dg show: $(gp dg show "$G")"
  gp vd read "$V" --verify-pattern 7 --length 8M >/dev/null
  # Columns line up by what a terminal shows, not by bytes: GROUP starts
  # under its header in every row.
  gp vd list | python3 -c '
import sys, unicodedata
w = lambda s: sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
rows = sys.stdin.read().splitlines()
cols = [w(r[:r.index(g)]) for r, g in zip(rows, ["GROUP", sys.argv[1]])]
sys.exit(0 if cols[0] == cols[1] else "GROUP column at %s" % cols)' "$G" || fail "vd list columns do not line up: $(gp vd list)"
}
names
check "metrics label" 1 "$(scrape "$PORT" | grep -c "gpuraid_dg_state{dg=\"$G\",state=\"optimal\"} 1")"

step "after a restart: intact (registry and superblock)"
stop_daemon
grep -q "$G" "$T/state/"* || fail "the registry does not hold '$G' as written"
LC_ALL=C grep -qaF "$G" "$T/d0.img" || fail "the superblock does not hold '$G' as written"
start_daemon --metrics "$PORT"
names

step "errors quote names as written"
expect_rc 1 gp dg show "нет"
[[ "$ERR" == *"'нет'"* ]] || fail "the error does not quote the name as written: $ERR"

step "what cannot be a name is refused, quoted readably"
expect_rc 1 gp vd create "$G" --size 4M --name "a b"
expect_rc 1 gp vd create "$G" --size 4M --name $'zero\u200bwidth'
[[ "$ERR" == *"zero\\xe2\\x80\\x8bwidth"* ]] || fail "an invisible character is not shown escaped: $ERR"
# gRPC carries only UTF-8 strings: the CLI refuses the argument itself (a usage error).
expect_rc 2 gp vd create "$G" --size 4M --name $'caf\xe9'
[[ "$ERR" == *"caf\\xe9"*"not valid UTF-8"* ]] || fail "Latin-1 bytes are not refused as such: $ERR"
expect_rc 1 gp vd create "$G" --size 4M --name "$(printf 'ü%.0s' $(seq 32))"  # 64 bytes
[[ "$ERR" == *"too long (64 bytes, at most 63)"* ]] || fail "$ERR"
check "volumes after refusals" 1 "$(gp vd list --json | json 'len(d["volumes"])')"

step "one rule for names: a volume the API takes can be exported (issue 33, item 12: 'ν1')"
gp vd create "$G" --size 4M --name "ν1" >/dev/null
gp vd export "ν1" --nbd --listen "unix:$T/nu.sock" >/dev/null || fail "ν1 could not be exported: $(gp vd export "ν1" --nbd --listen "unix:$T/nu.sock" 2>&1)"
check "ν1 exported" True "$(gp vd show "ν1" --json | json 'd["export"]["active"]')"
gp vd unexport "ν1" >/dev/null

step "one name however it is composed (NFC): 'ün' composed and decomposed are one group"
COMPOSED=$'\u00fcn'       # ü as one character
DECOMPOSED=$'u\u0308n'    # u + combining diaeresis
gp dg create --level 1 --assume-zeroed --name "$COMPOSED" pd3 "$D" >/dev/null
expect_rc 1 gp dg create --level 1 --assume-zeroed --name "$DECOMPOSED" pd3 "$D"
[[ "$ERR" == *"already exists"* ]] || fail "the decomposed form made a second group: $ERR"
check "found by its decomposed form" "$COMPOSED" "$(gp dg show "$DECOMPOSED" --json | json 'd["name"]')"
gp dg delete "$DECOMPOSED" >/dev/null || fail "the decomposed form does not delete the group"
check "groups after the delete" 1 "$(gp dg list --json | json 'len(d["groups"])')"

step "a look-alike name of another script is warned about (Cyrillic ес42 beside Latin ec42)"
gp vd create "$G" --size 4M --name ec42 >/dev/null
expect_rc 0 gp vd create "$G" --size 4M --name $'\u0435\u044142'
[[ "$ERR" == *"looks like the virtual drive 'ec42'"* ]] || fail "no look-alike warning: $ERR"
expect_rc 0 gp vd create "$G" --size 4M --name ec43
[ -z "$ERR" ] || fail "a warning for a name that looks like no other: $ERR"
stop_daemon
echo "utf8_names: OK"
