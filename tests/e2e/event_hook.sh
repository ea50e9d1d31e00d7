#!/usr/bin/env bash
# Alerts: gpuraidd --event-hook CMD runs CMD for every event (as mdadm
# --monitor --program does) with the event as JSON on stdin and
# GPURAID_EVENT_* in the environment; a slow hook never holds the daemon
# up and is killed at its timeout (its children too); a failing hook is
# logged; a full queue drops events and says so.
source "$(dirname "$0")/lib.sh"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
scrape() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' \
  "http://127.0.0.1:$PORT/metrics" >"$T/metrics" || fail "GET /metrics"; }
m() { python3 "$(dirname "$0")/prom_check.py" get "$1" <"$T/metrics" || fail "metric $1"; }
# wait_for CMD...: up to 10 s for CMD to succeed.
wait_for() {
  for _ in $(seq 100); do "$@" && return 0; sleep 0.1; done
  fail "timed out waiting for: $*"
}

step "a hook that records each event (stdin and environment)"
mkdir -p "$T/got"
cat >"$T/record.sh" <<'SH'
#!/bin/sh
cat >"$HOOK_DIR/$GPURAID_EVENT_SEQ.json"
env | grep '^GPURAID_EVENT_' | sort >"$HOOK_DIR/$GPURAID_EVENT_SEQ.env"
SH
chmod +x "$T/record.sh"
export HOOK_DIR=$T/got
start_daemon --event-hook "$T/record.sh" --metrics "$PORT"
for i in 0 1 2 3; do gp pd add "$T/d$i.img" --size 32M >/dev/null; done
gp dg create --level 5 --name r5 pd0 pd1 pd2 >/dev/null
gp dg show r5 --watch --interval 0.2 >/dev/null
gp pd fail pd1 >/dev/null
SEQ=$(gp events --json | python3 -c '
import json, sys
print([json.loads(l) for l in sys.stdin if l.strip() and json.loads(l)["kind"] == "member_failed"][-1]["seq"])')
wait_for test -s "$T/got/$SEQ.env"
# One JSON everywhere (issue 33, item 3): the hook's stdin is exactly the
# line `gpuraid events --json` prints: numbers as numbers, the tables' words.
check "stdin: kind" member_failed "$(json 'd["kind"]' <"$T/got/$SEQ.json")"
check "stdin: seq and time are numbers" "int int" "$(json 'type(d["seq"]).__name__ + " " + type(d["time_unix_ms"]).__name__' <"$T/got/$SEQ.json")"
check "stdin is the CLI's line" "$(gp events --json | python3 -c '
import json, sys
print(json.dumps([json.loads(l) for l in sys.stdin if l.strip() and json.loads(l)["seq"] == '"$SEQ"'][0], sort_keys=True))')" \
  "$(python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin), sort_keys=True))' <"$T/got/$SEQ.json")"
check "the event log's line too" member_failed \
  "$(python3 -c 'import json, sys; print([json.loads(l) for l in open(sys.argv[1]) if json.loads(l)["seq"] == int(sys.argv[2])][0]["kind"])' "$T/state/events.jsonl" "$SEQ")"
check "stdin: group and drive" "r5 pd1" "$(json 'd["group"] + " " + d["drive"]' <"$T/got/$SEQ.json")"
grep -qx "GPURAID_EVENT_KIND=member_failed" "$T/got/$SEQ.env" || fail "GPURAID_EVENT_KIND: $(cat "$T/got/$SEQ.env")"
grep -qx "GPURAID_EVENT_SEVERITY=critical" "$T/got/$SEQ.env" || fail "GPURAID_EVENT_SEVERITY"
grep -qx "GPURAID_EVENT_GROUP=r5" "$T/got/$SEQ.env" || fail "GPURAID_EVENT_GROUP"
grep -qx "GPURAID_EVENT_SEQ=$SEQ" "$T/got/$SEQ.env" || fail "GPURAID_EVENT_SEQ"
echo "   ok: member_failed reached the hook: $(tr '\n' ' ' <"$T/got/$SEQ.env" | cut -c1-150)..."
LAST=$(gp events --json | tail -1 | json 'd["seq"]')
wait_for test -s "$T/got/$LAST.env"
check "every event ran the hook once" "$LAST" "$(ls "$T/got"/*.json | wc -l)"
scrape
check "hook runs ok" "$LAST" "$(m 'gpuraid_event_hook_runs_total{result="ok"}')"
stop_daemon

step "a hook that hangs: the daemon goes on, the hook is killed at its timeout (children too)"
cat >"$T/hang.sh" <<'SH'
#!/bin/sh
sleep 300 &   # a child that would outlive a careless kill
echo $! >"$HOOK_DIR/child.$GPURAID_EVENT_SEQ"
echo "hanging for $GPURAID_EVENT_KIND"
wait
SH
chmod +x "$T/hang.sh"
start_daemon --event-hook "$T/hang.sh" --event-hook-timeout 5 --metrics "$PORT"
# The daemon_started hook hangs now; the API still answers and events still flow.
for i in 4 5 6; do gp pd add "$T/d$i.img" --size 32M >/dev/null; done
gp dg show r5 >/dev/null
scrape
check "hooks finished while the first one hangs" 0 "$(m 'gpuraid_event_hook_runs_total{result="timeout"}')"
[ "$(m gpuraid_event_hook_queued)" -ge 1 ] || fail "events should wait behind the hanging hook"
echo "   ok: 3 drives added while the hook hangs"
wait_for grep -q "still running after 5000 ms: killed; output: hanging for daemon_started" "$T/daemon.log"
sleep 0.5
CHILD=$(ls "$T"/got/child.* | sort -t. -k2 -n | head -1 | xargs cat)  # the daemon_started hook's
[ -n "$CHILD" ] || fail "the hanging hook did not start its child"
# Gone, or a zombie (killed; its new parent has not reaped it yet).
alive() { grep -Eq '^State:[[:space:]]+[^Z[:space:]]' "/proc/$CHILD/status" 2>/dev/null; }
alive && fail "the hook's child (pid $CHILD) survived the timeout: $(grep ^State "/proc/$CHILD/status")"
echo "   ok: timed out, killed with its child"
stop_daemon

step "a failing hook is logged; a full queue drops events and says so"
start_daemon --event-hook 'echo "no mail server" >&2; sleep 1; exit 3' --event-hook-queue 2 --metrics "$PORT"
for i in 7 8 9 10 11; do gp pd add "$T/d$i.img" --size 32M >/dev/null; done
wait_for grep -q "(daemon_started): exited with 3; output: no mail server" "$T/daemon.log"
grep -q "not passed on" "$T/daemon.log" || fail "no log line for dropped events"
scrape
[ "$(m gpuraid_event_hook_dropped_total)" -ge 1 ] || fail "no dropped events counted"
[ "$(m 'gpuraid_event_hook_runs_total{result="failed"}')" -ge 1 ] || fail "no failed runs counted"
echo "   ok: failure logged, $(m gpuraid_event_hook_dropped_total) events dropped"
stop_daemon

step "the shipped example hook (daemon/hooks/gpuraid-alert): journal for all, mail for warnings and worse"
mkdir -p "$T/bin"
printf '#!/bin/sh\necho "$*: $(cat)" >>"%s"\n' "$T/journal" >"$T/bin/systemd-cat"
printf '#!/bin/sh\necho "mail $*" >>"%s"; cat >>"%s"\n' "$T/mail" "$T/mail" >"$T/bin/mail"
chmod +x "$T/bin/systemd-cat" "$T/bin/mail"
PATH="$T/bin:$PATH" start_daemon --event-hook "$(dirname "$0")/../../daemon/hooks/gpuraid-alert"
gp dg create --level 1 --name m1 pd4 pd5 >/dev/null
gp dg show m1 --watch --interval 0.2 >/dev/null
gp pd fail pd5 >/dev/null
wait_for grep -q "member_failed on m1" "$T/mail"
grep -q "^-t gpuraid-alert -p info: gpuraid group_created on m1" "$T/journal" || fail "journal: $(cat "$T/journal")"
grep -q "^-t gpuraid-alert -p crit: gpuraid member_failed on m1" "$T/journal" || fail "journal: $(cat "$T/journal")"
grep -q '"kind":"member_failed"' "$T/mail" || fail "the mail should carry the event: $(cat "$T/mail")"
grep "^mail " "$T/mail" | grep >/dev/null "daemon_started\|group_created\|drive_added" && fail "info events were mailed: $(cat "$T/mail")"
echo "   ok: $(grep -c . "$T/journal") journal lines, $(grep -c "^mail " "$T/mail") mail(s)"
stop_daemon

step "bad hook options are refused"
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/s2" --socket "$T/s2.sock" --event-hook true --event-hook-timeout 0
expect_rc 2 "$BIN/gpuraidd" --state-dir "$T/s2" --socket "$T/s2.sock" --event-log-max 1K
echo "event_hook: OK"
