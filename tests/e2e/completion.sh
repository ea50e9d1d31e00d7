#!/usr/bin/env bash
# `gpuraid completion bash` prints a completion script generated from the
# CLI's own command tree: it loads in bash, completes `gpuraid dg <TAB>` to
# exactly the dg subcommands that `gpuraid dg --help` lists, options after
# `-`, and an option's fixed values.
source "$(dirname "$0")/lib.sh"

gp completion bash >"$T/gpuraid.bash" || fail "gpuraid completion bash failed"
# complete WORDS...: what the completion offers for the last word (may be "").
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    fn=$(complete -p gpuraid | sed -E "s/.* -F ([^ ]+) gpuraid$/\1/"); "$fn"; printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' \
    _ "$T/gpuraid.bash" "$@"
}
# The subcommands `--help` lists for a command, sorted.
help_subcommands() { gp "$@" --help | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }' | sort | tr '\n' ' '; }

step "the script loads and registers a completion for gpuraid"
bash -c 'source "$1" && complete -p gpuraid' _ "$T/gpuraid.bash" || fail "the script does not load"

step "gpuraid dg <TAB>: the dg subcommands"
WANT=$(help_subcommands dg)
[[ "$WANT" == *create*list*show* ]] || fail "dg --help lists: $WANT"
check "gpuraid dg <TAB>" "$WANT" "$(complete_words gpuraid dg "")"
check "gpuraid <TAB>" "$(help_subcommands)" "$(complete_words gpuraid "")"
check "gpuraid d<TAB>" "dg " "$(complete_words gpuraid d)"
check "gpuraid --json vd cr<TAB>" "create " "$(complete_words gpuraid --json vd cr)"

step "options and their values"
check "gpuraid dg create --le<TAB>" "--level " "$(complete_words gpuraid dg create --le)"
check "gpuraid dg create --level <TAB>" "0 1 10 5 50 6 60 draid5 draid6 ec " "$(complete_words gpuraid dg create --level "")"
check "gpuraid dg list --js<TAB> (a global option)" "--json " "$(complete_words gpuraid dg list --js)"
echo "completion: OK"
