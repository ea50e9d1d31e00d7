#!/usr/bin/env bash
# The CLI keeps the conventions scripts rely on: --version; an unknown
# command is called unknown; --help lists the exit codes; --json prints
# numbers as numbers and enum values as the words the tables print; under
# --json an error is one JSON object on stderr (stdout empty) with the exit
# code in it; events --json is JSON Lines, as its help says.
source "$(dirname "$0")/lib.sh"

step "--version"
expect_rc 0 gp --version
[[ "$OUT" =~ ^gpuraid\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "--version printed '$OUT'"
echo "   $OUT"

step "an unknown command is called unknown (exit 2)"
expect_rc 2 gp frobnicate
[[ "$ERR" == *"unknown command 'frobnicate'"*"info"*"pd"*"dg"*"vd"* ]] || fail "$ERR"
expect_rc 2 gp dg frobnicate
[[ "$ERR" == *"unknown command 'dg frobnicate'"*"create"*"list"* ]] || fail "$ERR"
expect_rc 2 gp dg
[[ "$ERR" == *"gpuraid dg: say what to do: create, list"* ]] || fail "$ERR"
expect_rc 2 gp dg list extra
[[ "$ERR" == *"extra"* ]] || fail "$ERR"

step "--help lists every exit code"
expect_rc 0 gp --help
[[ "$OUT" == *"Exit codes:"* ]] || fail "no exit codes in --help"
for code in 0 1 2 3 4; do
  grep -qE "^  $code  [a-z]" <<<"$OUT" || fail "exit code $code is not in --help"
done
[[ "$OUT" == *"JSON Lines"* ]] || fail "--help does not say how --json prints streams"
expect_rc 0 gp events --help
[[ "$OUT" == *"JSON Lines"* ]] || fail "events --help does not say JSON Lines"

step "errors under --json: one JSON object on stderr, stdout empty"
expect_rc 3 gp --json --socket "$T/nowhere.sock" info
[ -z "$OUT" ] || fail "stdout is not empty: $OUT"
check "unreachable error" "3 unreachable" "$(json '"%d %s" % (d["code"], d["kind"])' <<<"$ERR")"
expect_rc 2 gp frobnicate --json
check "usage error" "2 usage" "$(json '"%d %s" % (d["code"], d["kind"])' <<<"$ERR")"
expect_rc 2 gp --json dg create pd0
check "usage error (CLI11)" "2 usage" "$(json '"%d %s" % (d["code"], d["kind"])' <<<"$ERR")"

start_daemon
expect_rc 1 gp dg show nope --json
[ -z "$OUT" ] || fail "stdout is not empty: $OUT"
check "daemon error" "1 not_found" "$(json '"%d %s" % (d["code"], d["kind"])' <<<"$ERR")"
[[ "$(json 'd["error"]' <<<"$ERR")" == "no drive group 'nope'"* ]] || fail "error text: $ERR"
expect_rc 1 gp dg show nope
[[ "$ERR" == "gpuraid: not found: no drive group 'nope'"* ]] || fail "the text form changed: $ERR"

step "GPURAID_TIMEOUT is --timeout's default: used, and checked as it is"
GPURAID_TIMEOUT=120 expect_rc 0 gp status
GPURAID_TIMEOUT=abc expect_rc 2 gp status
[[ "$ERR" == *"--timeout"*"abc"* ]] || fail "$ERR"

step "--json: numbers are numbers, enum values the words the tables print"
for i in 0 1 2; do gp pd add "$T/d$i.img" --size 32M >/dev/null; done
gp dg create --level 5 --assume-zeroed pd0 pd1 pd2 >/dev/null
gp vd create dg0 --size 8M >/dev/null
gp pd list --json >"$T/pd.json"
check "size_bytes is a number" int "$(json 'type(d["drives"][0]["size_bytes"]).__name__' <"$T/pd.json")"
check "member_index is a number" int "$(json 'type(d["drives"][0]["member_index"]).__name__' <"$T/pd.json")"
check "pd0 type, role, state" "file member online" "$(json '" ".join(d["drives"][0][k] for k in ("type", "role", "state"))' <"$T/pd.json")"
check "the table's words" "file member online" "$(gp pd list | awk '$1 == "pd0" { print $3, $5, $6 }')"
gp dg show dg0 --json >"$T/dg.json"
check "capacity is a number" int "$(json 'type(d["capacity_bytes"]).__name__' <"$T/dg.json")"
check "generation is a number" int "$(json 'type(d["generation"]).__name__' <"$T/dg.json")"
check "level, state, redundancy" "raid5 optimal full" "$(json '" ".join(d[k] for k in ("level", "state", "redundancy"))' <"$T/dg.json")"
check "the table's words" "raid5 optimal full" "$(gp dg list | awk '$1 == "dg0" { print $2, $7, $8 }')"
check "member states" "online online online" "$(json '" ".join(m["state"] for m in d["members"])' <"$T/dg.json")"
check "vd write --json" int "$(gp vd write vd0 --pattern 1 --length 4M --json | json 'type(d["bytes_written"]).__name__')"
check "vd read --json" 4194304 "$(gp vd read vd0 --verify-pattern 1 --length 4M --json | json 'd["verified_bytes"]')"
check "stats: counters are numbers" int "$(gp stats --json | json 'type(d["volumes"][0]["io"]["writes"]).__name__')"

step "events --json: JSON Lines, kinds as the table's words"
gp events --json >"$T/events.jsonl"
python3 - "$T/events.jsonl" <<'PY' || fail "events --json is not JSON Lines"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) >= 3, lines
for l in lines:
    e = json.loads(l)  # one whole object a line
    assert isinstance(e["seq"], int) and isinstance(e["time_unix_ms"], int), e
    assert e["kind"] == e["kind"].lower() and not e["kind"].startswith("event_kind"), e
PY
check "kinds as in the table" "$(gp events | awk '{ print $4 }' | tr '\n' ' ')" \
  "$(python3 -c 'import json,sys; print(" ".join(json.loads(l)["kind"] for l in open(sys.argv[1])), end=" ")' "$T/events.jsonl")"
stop_daemon
echo "cli_conventions: OK"
