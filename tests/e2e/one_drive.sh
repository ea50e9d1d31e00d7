#!/usr/bin/env bash
# One drive is one PD: a registered file under another name (a symlink, a
# hard link, `dir//name`, `dir/./name`) is refused, naming the PD it already
# is, and nothing changes; a `pd add --size` that fails leaves no file
# behind and never touches a file that was there; a registry from before
# this check that names one file twice sets the duplicate aside at start.
source "$(dirname "$0")/lib.sh"

D=$T/disks
mkdir "$D"
start_daemon
for i in 0 1 2 3; do gp pd add "$D/d$i.img" --size 32M >/dev/null; done
gp dg create --level 5 pd0 pd1 pd2 >/dev/null
ln -s d0.img "$D/sym0.img"
ln "$D/d3.img" "$D/hard3.img"
BEFORE=$(gp pd list --json)

step "the same file under another name is refused, naming the PD it is"
for pair in "$D/sym0.img=pd0" "$D//d1.img=pd1" "$D/./d2.img=pd2" "$D/hard3.img=pd3" "$D/../disks/d3.img=pd3"; do
  path=${pair%=*} pd=${pair##*=}
  expect_rc 1 gp pd add "$path"
  [[ "$ERR" == *"is the same file as $pd ("*"already registered as $pd" ]] || fail "the refusal of $path does not name $pd: $ERR"
  echo "   $ERR"
done
expect_rc 1 gp pd add "$D/sym0.img" --type file --id twin
[[ "$ERR" == *"already registered as pd0" ]] || fail "the refusal does not name pd0: $ERR"
[ "$BEFORE" == "$(gp pd list --json)" ] || fail "pd list changed by refused adds"
echo "   ok: pd list unchanged"

step "pd add --size: a failed add leaves no file behind; a file that was there is untouched"
echo "not a drive" >"$D/pre.img"
SUM=$(md5sum <"$D/pre.img")
expect_rc 1 gp pd add "$D/pre.img" --size 32M
[[ "$ERR" == *"already exists"* ]] || fail "unexpected refusal: $ERR"
check "pre-existing file after a refused --size" "$SUM" "$(md5sum <"$D/pre.img")"
# A dangling symlink: nothing is created through it.
ln -s "$D/nowhere.img" "$D/dangling.img"
expect_rc 1 gp pd add "$D/dangling.img" --size 32M
[ -L "$D/dangling.img" ] && [ ! -e "$D/nowhere.img" ] || fail "a file was created through a dangling symlink"
# The registry cannot be saved (its temporary file's name is taken by a
# directory): the add is undone and the file it created removed.
mkdir "$T/state/registry.json.tmp"
expect_rc 1 gp pd add "$D/new.img" --size 32M
echo "   $ERR"
[[ "$ERR" == *"was not added"* ]] || fail "unexpected error: $ERR"
[ ! -e "$D/new.img" ] || fail "the failed add left $D/new.img behind"
# Without --size the file was there before: it stays, as it was.
cp "$D/d3.img" "$D/old.img"
SUM=$(md5sum <"$D/old.img")
expect_rc 1 gp pd add "$D/old.img"
check "pre-existing file after a failed add" "$SUM" "$(md5sum <"$D/old.img")"
# A size this filesystem cannot hold fails after the file was created.
if ! truncate -s 1P "$D/probe.img" 2>/dev/null; then
  rmdir "$T/state/registry.json.tmp"
  expect_rc 1 gp pd add "$D/huge.img" --size 1P
  echo "   $ERR"
  [ ! -e "$D/huge.img" ] || fail "the failed add left $D/huge.img behind"
else
  echo "   (this filesystem holds a 1 PiB file: the too-large case is not tried here)"
  rmdir "$T/state/registry.json.tmp"
fi
rm -f "$D/probe.img"
[ "$BEFORE" == "$(gp pd list --json)" ] || fail "pd list changed by failed adds"
echo "   ok: pd list unchanged"
gp pd add "$D/new.img" --size 32M >/dev/null
check "the next add takes the next id (pd4)" "$D/new.img" "$(gp pd show pd4 --json | json 'd["path"]')"

step "at start: a registry that names a PD's file twice sets the duplicate aside"
stop_daemon
python3 - "$T/state/registry.json" "$D" <<'EOF'
import json, sys
path, d = sys.argv[1], sys.argv[2]
reg = json.load(open(path))
recs = {r["id"]: r for r in reg["drives"]}
for new_id, of, alias in (("pd8", "pd0", d + "/sym0.img"), ("pd9", "pd3", d + "/hard3.img")):
    r = dict(recs["pd3"], id=new_id, path=alias)
    reg["drives"].append(r)
json.dump(reg, open(path, "w"), indent=1)
EOF
start_daemon
for pair in pd8=pd0 pd9=pd3; do
  id=${pair%=*} pd=${pair##*=}
  gp pd show "$id" --json >"$T/pd.json"
  check "$id state" missing "$(json 'd["state"]' <"$T/pd.json")"
  note=$(json 'd["note"]' <"$T/pd.json")
  [[ "$note" == *"same file as $pd ("* ]] || fail "$id's note does not name $pd: $note"
  echo "   $id: $note"
done
check "pd3 state" online "$(gp pd show pd3 --json | json 'd["state"]')"
check "dg0 state" optimal "$(gp dg show dg0 --json | json 'd["state"]')"
expect_rc 1 gp pd spare pd9
gp pd remove pd8 >/dev/null
gp pd remove pd9 >/dev/null
stop_daemon
echo "PASS"
