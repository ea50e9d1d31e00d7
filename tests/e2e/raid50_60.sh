#!/usr/bin/env bash
# RAID 50 and RAID 60 through the CLI: dg create --level 50|60 --subgroups G
# (and its refusals; the write-hole guard on by default), a VD written with
# a pattern, one member per sub-group failed (60: two in one sub-group too),
# each replaced and rebuilt, the data verified after each step and with the
# rebuilt members relied on.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ways_back_lib.sh"

start_daemon
for i in $(seq 0 18); do gp pd add "$T/drive$i.img" --size 64M >/dev/null; done

step "refusals say why"
expect_rc 1 gp dg create --level 50 pd0 pd1 pd2 pd3 pd4 pd5
expect_err_has "--subgroups"
expect_rc 1 gp dg create --level 50 --subgroups 2 pd0 pd1 pd2 pd3 pd4 pd5 pd6
expect_err_has "do not divide into 2 equal sub-groups"
expect_rc 1 gp dg create --level 60 --subgroups 2 pd0 pd1 pd2 pd3 pd4 pd5
expect_err_has "at least 4 members each"
expect_rc 1 gp dg create --level 5 --subgroups 2 pd0 pd1 pd2 pd3
expect_err_has "raid50 and raid60 only"

# Each level over its own drives: raid50 pd0-pd5 (spares pd6, pd7), raid60
# pd8-pd15 (spares pd16-pd18).
for spec in "50 2 6 0" "60 2 8 8"; do
  set -- $spec
  L=$1 G=$2 N=$3 B=$4 W=$(($3 / $2))
  name=r$L
  pd() { echo "pd$((B + $1))"; }
  step "$name: create over $N members in $G sub-groups"
  members=$(for i in $(seq 0 $((N - 1))); do pd "$i"; done | tr '\n' ' ')
  gp dg create --level "$L" --subgroups "$G" --name "$name" $members >/dev/null
  check "$name subgroups" "$G" "$(gp dg show "$name" --json | json 'd["subgroups"]')"
  check "$name write_hole_guard" True "$(gp dg show "$name" --json | json 'd["write_hole_guard"]')"
  gp dg show "$name" | grep >/dev/null "write-hole guard.*on (" || fail "dg show does not say $name's write-hole guard is on"
  timeout 120 "$BIN/gpuraid" dg show "$name" --watch --interval 0.2 >/dev/null || fail "init of $name did not finish in 120 s"
  check "$name" optimal "$(gstate "$name")"
  gp vd create "$name" --size 64M --name "v$L" >/dev/null
  gp vd write "v$L" --pattern 3 --length 64M >/dev/null

  step "$name: one member of each sub-group fails"
  gp pd fail "$(pd 1)" >/dev/null
  gp pd fail "$(pd $((W + 1)))" >/dev/null
  check "$name" degraded "$(gstate "$name")"
  gp vd read "v$L" --verify-pattern 3 --length 64M >/dev/null
  lost="$(pd 1) $(pd $((W + 1)))"
  if [ "$L" = 60 ]; then
    step "$name: a second member of sub-group 0 fails: still serves"
    gp pd fail "$(pd 2)" >/dev/null
    gp vd read "v$L" --verify-pattern 3 --length 64M >/dev/null
    lost="$lost $(pd 2)"
  fi

  step "$name: replace and rebuild"
  s=$N
  for old in $lost; do
    gp dg replace "$name" --old "$old" --with "$(pd $s)" >/dev/null
    timeout 120 "$BIN/gpuraid" dg show "$name" --watch --interval 0.2 >/dev/null ||
      fail "rebuild onto $(pd $s) did not finish in 120 s: $(gp dg show "$name")"
    s=$((s + 1))
  done
  check "$name" optimal "$(gstate "$name")"
  gp vd read "v$L" --verify-pattern 3 --length 64M >/dev/null

  step "$name: the rebuilt members carry their sub-groups"
  gp pd fail "$(pd 0)" >/dev/null
  gp pd fail "$(pd $((W + 2)))" >/dev/null
  gp vd read "v$L" --verify-pattern 3 --length 64M >/dev/null
done
stop_daemon
echo "PASS"
