#!/usr/bin/env bash
# Members of different sizes: every member gives as much as the smallest.
# dg create says so (what each gives, what is left unused and where), and
# dg show keeps saying it, per member, also after a restart.
source "$(dirname "$0")/lib.sh"

start_daemon
for i in 0 1 2; do gp pd add "$T/d$i.img" --size 64M >/dev/null; done
gp pd add "$T/d3.img" --size 96M >/dev/null

step "dg create over 3 x 64 MiB + 1 x 96 MiB says what is unused"
OUT=$(gp dg create --level 5 --assume-zeroed pd0 pd1 pd2 pd3)
echo "$OUT"
[[ "$OUT" == *"note: members differ in size"*"32MiB unused (pd3 32MiB)"* ]] || fail "dg create does not say what is wasted: $OUT"

check_sizes() {
  gp dg show dg0 --json >"$T/dg0.json"
  check "pd3 size" $((96 << 20)) "$(json 'd["members"][3]["size_bytes"]' <"$T/dg0.json")"
  check "pd3 unused" $((32 << 20)) "$(json 'd["members"][3]["unused_bytes"]' <"$T/dg0.json")"
  check "pd0 unused" 0 "$(json 'd["members"][0]["unused_bytes"]' <"$T/dg0.json")"
  check "group unused" $((32 << 20)) "$(json 'd["unused_bytes"]' <"$T/dg0.json")"
  check "used = metadata + data on every member" 1 \
    "$(json 'int(all(m["used_bytes"] == d["members"][0]["used_bytes"] and m["used_bytes"] + m["unused_bytes"] == m["size_bytes"] for m in d["members"]) and d["member_data_bytes"] < d["members"][0]["used_bytes"])' <"$T/dg0.json")"
  check "capacity = 3 data members" 1 "$(json 'int(d["capacity_bytes"] == 3 * d["member_data_bytes"])' <"$T/dg0.json")"
  gp dg show dg0 | tee "$T/show.txt" | grep -E '^(unused|member data):'
  grep -q '^unused: *32MiB (members differ in size' "$T/show.txt" || fail "dg show does not say what is unused"
  check "the UNUSED column of pd3" 32MiB "$(awk '$2 == "pd3" { print $5 }' "$T/show.txt")"
}
check_sizes

step "after a restart dg show still says it"
stop_daemon
start_daemon
check_sizes
stop_daemon
echo "mixed_sizes: OK"
