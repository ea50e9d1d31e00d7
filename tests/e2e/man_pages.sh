#!/usr/bin/env bash
# gpuraid(8) and gpuraidd(8) are generated from the programs' own command
# definitions (`gpuraid manpage`, `gpuraidd --manpage`): every command and
# option that --help shows is in the page, the pages render with man(1)
# without a warning, and they carry EXIT STATUS (every exit code), FILES and
# EXAMPLES. The generator itself stays out of --help and of completion.
source "$(dirname "$0")/lib.sh"
command -v man >/dev/null || { echo "SKIP: man(1) is not installed (man-db; scripts/setup.sh)"; exit 77; }

gp manpage >"$T/gpuraid.8" || fail "gpuraid manpage failed"
"$BIN/gpuraidd" --manpage >"$T/gpuraidd.8" || fail "gpuraidd --manpage failed"

# render PAGE: man's text, failing on any groff/man warning.
render() {
  MANWIDTH=100 man --warnings=all -l "$1" 2>"$T/man.err" >"$T/man.txt" || fail "man -l $1 failed: $(cat "$T/man.err")"
  [ ! -s "$T/man.err" ] || fail "man -l $1 warns: $(cat "$T/man.err")"
  cat "$T/man.txt"
}

step "both pages render without a warning and have the sections operators look for"
for p in gpuraid gpuraidd; do
  TXT=$(render "$T/$p.8")
  for sec in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" FILES EXAMPLES "SEE ALSO"; do
    grep -q "^$sec\$" <<<"$TXT" || fail "$p(8) has no $sec section"
  done
  echo "   ok: $p(8): $(wc -l <<<"$TXT") lines"
done
GP_TXT=$(render "$T/gpuraid.8")
grep -q "^COMMANDS\$" <<<"$GP_TXT" || fail "gpuraid(8) has no COMMANDS section"

step "every exit code of gpuraid --help is in gpuraid(8)"
gp --help | awk '/^Exit codes:/ { on = 1; next } on && /^  [0-9]/ { print $1 }' >"$T/codes"
[ "$(wc -l <"$T/codes")" -ge 4 ] || fail "gpuraid --help lists $(wc -l <"$T/codes") exit codes"
while read -r code; do
  grep -q "^\\.TP\$" "$T/gpuraid.8" && grep -qx "\\\\fB$code\\\\fR" "$T/gpuraid.8" || fail "exit code $code not in gpuraid(8)"
done <"$T/codes"

# The subcommands and the long options --help shows for a command.
help_subcommands() { gp "$@" --help | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'; }
help_options() { "$@" --help | grep -oE '^  (-[a-zA-Z], )?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*' | grep -vx -- '--help'; }
roff_opt() { sed 's/-/\\-/g' <<<"$1"; }

step "every gpuraid command and each of its options is in gpuraid(8)"
commands=0
walk() {
  local sub
  for sub in $(help_subcommands "$@"); do
    grep -qF ".SS \"gpuraid $* $sub" "$T/gpuraid.8" || grep -F >/dev/null ".SS \"gpuraid ${*:+$* }$sub" "$T/gpuraid.8" ||
      fail "'gpuraid ${*:+$* }$sub' is not in gpuraid(8)"
    commands=$((commands + 1))
    for o in $(help_options gp "$@" "$sub"); do
      grep -qF "\\fB$(roff_opt "$o")\\fR" "$T/gpuraid.8" || fail "'gpuraid ${*:+$* }$sub $o' is not in gpuraid(8)"
    done
    walk "$@" "$sub"
  done
}
walk
[ "$commands" -ge 30 ] || fail "only $commands commands found in --help"
echo "   ok: $commands commands"

step "every gpuraidd option is in gpuraidd(8)"
n=0
for o in $(help_options "$BIN/gpuraidd"); do
  grep -qF "\\fB$(roff_opt "$o")\\fR" "$T/gpuraidd.8" || fail "gpuraidd $o is not in gpuraidd(8)"
  n=$((n + 1))
done
[ "$n" -ge 20 ] || fail "only $n gpuraidd options found in --help"
echo "   ok: $n options"

step "the generators are hidden: not in --help, not in completion, not in the pages"
! gp --help | grep -w >/dev/null manpage || fail "gpuraid --help lists manpage"
! "$BIN/gpuraidd" --help | grep >/dev/null -- --manpage || fail "gpuraidd --help lists --manpage"
! gp completion bash | grep -w >/dev/null manpage || fail "completion offers manpage"
! grep -qw manpage "$T/gpuraid.8" || fail "gpuraid(8) lists manpage"
echo "man_pages: OK"
