#!/usr/bin/env bash
# Metrics that see everything (gpuraidd --metrics): a RAID 6 group's state,
# failures tolerated, members per state and rebuild progress and rate are
# exported during a rebuild (before, only gpuraid_dg_failed_members, which
# reads 0 while a spare rebuilds); latency histograms per VD and PD; scrub
# findings; the exposition follows Prometheus conventions; every metric the
# shipped Grafana dashboard queries exists.
source "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
DASH="$HERE/../../daemon/grafana/gpuraid-dashboard.json"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
scrape() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' \
  "http://127.0.0.1:$PORT/metrics" >"$T/metrics" || fail "GET /metrics"; }
m() { python3 "$HERE/prom_check.py" get "$1" <"$T/metrics" || fail "metric $1"; }
# The exposition format and naming: our checker, and Prometheus' own (promtool, Debian's prometheus) when installed.
lint() {
  python3 "$HERE/prom_check.py" lint <"$T/metrics" || fail "the exposition breaks Prometheus conventions"
  if command -v promtool >/dev/null; then
    promtool check metrics <"$T/metrics" || fail "promtool check metrics"
    echo "   ok: exposition lint (prom_check.py, promtool)"
  else
    echo "   ok: exposition lint (prom_check.py; promtool not installed: its check skipped)"
  fi
}

step "a RAID 6 over 6 file drives, a pool spare, a VD with data"
start_daemon --metrics "$PORT"
for i in $(seq 0 7); do gp pd add "$T/d$i.img" --size 48M >/dev/null; done
gp dg create --level 6 --strip 16K --name r6 pd0 pd1 pd2 pd3 pd4 pd5 >/dev/null
gp dg show r6 --watch --interval 0.2 >/dev/null
gp pd spare pd6 >/dev/null
gp vd create r6 --size 64M --name v6 >/dev/null
gp vd write v6 --pattern 7 --length 16M
gp vd read v6 --verify-pattern 7 --length 16M

step "optimal: state, redundancy, members"
scrape
check "state optimal" 1 "$(m 'gpuraid_dg_state{dg="r6",state="optimal"}')"
check "state rebuilding" 0 "$(m 'gpuraid_dg_state{dg="r6",state="rebuilding"}')"
check "failures tolerated" 2 "$(m 'gpuraid_dg_failures_tolerated{dg="r6"}')"
check "members online" 6 "$(m 'gpuraid_dg_members{dg="r6",state="online"}')"

step "fail pd1 with a slow rebuild onto the pool spare: the rebuild window is visible"
gp dg rates r6 --rebuild 4M >/dev/null
gp pd fail pd1 >/dev/null
for _ in $(seq 50); do
  [ "$(gp dg show r6 --json | json 'd["rebuild"]["running"]')" == True ] && break
  sleep 0.1
done
sleep 1.5  # the engine measures the rate over a second
scrape
check "failed members (the old metric: 0 during a rebuild)" 0 "$(m 'gpuraid_dg_failed_members{dg="r6"}')"
check "state rebuilding" 1 "$(m 'gpuraid_dg_state{dg="r6",state="rebuilding"}')"
check "state optimal" 0 "$(m 'gpuraid_dg_state{dg="r6",state="optimal"}')"
check "failures tolerated during the rebuild" 1 "$(m 'gpuraid_dg_failures_tolerated{dg="r6"}')"
check "members rebuilding" 1 "$(m 'gpuraid_dg_members{dg="r6",state="rebuilding"}')"
check "rebuild running" 1 "$(m 'gpuraid_dg_task_running{dg="r6",task="rebuild"}')"
check "rate limit" 4194304 "$(m 'gpuraid_dg_task_rate_limit_bytes_per_second{dg="r6",task="rebuild"}')"
python3 - "$(m 'gpuraid_dg_task_progress_ratio{dg="r6",task="rebuild"}')" \
  "$(m 'gpuraid_dg_task_rate_bytes_per_second{dg="r6",task="rebuild"}')" \
  "$(m 'gpuraid_dg_task_eta_seconds{dg="r6",task="rebuild"}')" <<'PY' || fail "rebuild progress, rate and ETA"
import sys
p, rate, eta = map(float, sys.argv[1:])
assert 0 < p < 1, f"progress {p}"
assert 0 < rate < 4 * 4194304, f"rate {rate}"
assert eta > 0, f"eta {eta}"
print(f"   ok: rebuild progress {p:.2f}, rate {rate / 1e6:.1f} MB/s, ETA {eta:.0f} s")
PY
check "pd6 (the spare) rebuilding" 1 "$(m 'gpuraid_pd_state{pd="pd6",state="rebuilding"}')"
check "pd1 failed" 1 "$(m 'gpuraid_pd_state{pd="pd1",state="failed"}')"

step "the dashboard's queries all exist in this live output"
lint
python3 "$HERE/prom_check.py" dashboard "$DASH" <"$T/metrics" || fail "the dashboard queries metrics that do not exist"

step "finish the rebuild"
gp dg rates r6 --rebuild 0 >/dev/null
gp dg show r6 --watch --interval 0.2 >/dev/null

step "scrub of the rebuilt group: checked and mismatched stripes"
gp dg scrub r6 start >/dev/null
gp dg show r6 --watch --interval 0.2 >/dev/null
scrape
[ "$(m 'gpuraid_dg_scrub_checked_stripes{dg="r6"}')" -gt 0 ] || fail "no scrubbed stripes"
check "scrub mismatches" 0 "$(m 'gpuraid_dg_scrub_mismatched_stripes{dg="r6"}')"
[ "$(m 'gpuraid_events_total{kind="scrub_finished"}')" -ge 1 ] || fail "no scrub_finished counted"
# 1 MiB of member 3 behind the daemon's back, past v6's extent (member data from 2 MiB on; v6 uses its first 16 MiB).
head -c $((1 << 20)) /dev/urandom >"$T/junk"
dd if="$T/junk" of="$T/d3.img" bs=1M seek=32 count=1 conv=notrunc oflag=direct status=none
gp dg scrub r6 start --repair >/dev/null
gp dg show r6 --watch --interval 0.2 >/dev/null
scrape
FOUND=$(m 'gpuraid_dg_scrub_mismatched_stripes{dg="r6"}')
[ "$FOUND" -gt 0 ] || fail "the repair scrub found no mismatches"
check "scrub repaired = found" "$FOUND" "$(m 'gpuraid_dg_scrub_repaired_stripes{dg="r6"}')"
check "scrub made consistent (RAID 6 locates: none unverified)" 0 "$(m 'gpuraid_dg_scrub_made_consistent_stripes{dg="r6"}')"
gp dg scrub r6 start >/dev/null
gp dg show r6 --watch --interval 0.2 >/dev/null
scrape
check "mismatches after the repair" 0 "$(m 'gpuraid_dg_scrub_mismatched_stripes{dg="r6"}')"
echo "   ok: scrub figures ($FOUND stripes found and repaired)"

step "a second failure without a spare: degraded"
gp pd fail pd2 >/dev/null
scrape
check "state degraded" 1 "$(m 'gpuraid_dg_state{dg="r6",state="degraded"}')"
check "failures tolerated, degraded" 1 "$(m 'gpuraid_dg_failures_tolerated{dg="r6"}')"
check "members failed" 1 "$(m 'gpuraid_dg_members{dg="r6",state="failed"}')"

step "latency histograms per VD and PD"
gp vd read v6 --verify-pattern 7 --length 16M
gp vd write v6 --offset 32M --pattern 8 --length 4M
scrape
READS=$(m 'gpuraid_vd_ios_total{vd="v6",op="read"}')
check "vd read latency count = reads" "$READS" "$(m 'gpuraid_vd_latency_seconds_count{vd="v6",op="read"}')"
check "vd read +Inf bucket = count" "$READS" "$(m 'gpuraid_vd_latency_seconds_bucket{vd="v6",op="read",le="+Inf"}')"
python3 - "$(m 'gpuraid_vd_latency_seconds_sum{vd="v6",op="write"}')" \
  "$(m 'gpuraid_pd_latency_seconds_count{pd="pd0",op="read"}')" \
  "$(m 'gpuraid_pd_latency_seconds_count{pd="pd0",op="write"}')" <<'PY' || fail "latency histograms"
import sys
wsum, pr, pw = map(float, sys.argv[1:])
assert wsum > 0 and pr > 0 and pw > 0, (wsum, pr, pw)
print(f"   ok: vd write latency sum {wsum:.4f} s; pd0 member reads {pr:.0f}, writes {pw:.0f} in its histograms")
PY
lint

stop_daemon
echo "metrics: OK"
