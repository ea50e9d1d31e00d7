"""The Markdown report: what ran where, the headline, and per geometry and
suite two tables in the seeds' form (throughput and ratios; latency and CPU)."""
import statistics

from matrix import SUITE_TITLES
from targets import TARGETS

DASH = "–"
ENVIRONMENTS = {
    "host": "host figures only (never mixed with TCG/VM-lane figures).",
    "tcg": "**TCG figures** (the VM lane: qemu without KVM, every guest instruction emulated, the guest's "
           "2 vCPUs on the host's cores): they compare the sides of one run with each other, and say nothing about "
           "speed on real hardware. Never compare them with host figures.",
}
NOISY_COV = 0.20  # a side's runs spread more than this: the cell is marked noisy


def _noisy(m):
    return "†" if max(m["baseline"]["cov"], m["solution"]["cov"]) > NOISY_COV else ""


def _bound(x, fmt="{:.2f}"):
    return fmt.format(x) if x is not None else DASH


def _fig(x, unit):
    return f"{x:.3f}" if unit == "MIOPS" else f"{x:.2f}"


def _num(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def _pair(b, s, fmt=_num):
    return f"{fmt(b)} / {fmt(s)}"


def _measured(cases):
    return [c for c in cases if c.status == "measured"]


def headline(cases, geometries, states, peer_label="peer"):
    """Solution figure, ratio to baseline (and to a peer measured in the same runs) and I/O-count
    bound per workload and measured state."""
    cols = [(g, s) for g in geometries for s in states if any(
        c.geometry == g and c.state == s and c.status == "measured" for c in cases)]
    if not cols:
        return ["(nothing measured)"]
    lines = ["| Workload | " + " | ".join(f"{g.label}, {s.label}" for g, s in cols) + " |",
             "|---|" + "---|" * len(cols)]
    for w in dict.fromkeys(c.workload for c in cases):
        cells = []
        for g, s in cols:
            c = next((c for c in cases if c.geometry == g and c.workload == w and c.state == s), None)
            if c is None or c.status != "measured":
                cells.append(DASH)
                continue
            m = c.summary
            u = m["solution"]["unit"]
            peer = f", **{m['peer_ratio']:.2f}×** {peer_label}" if m.get("peer_ratio") else ""
            cells.append(f"{_fig(m['solution']['figure'], u)} {u}: **{m['ratio']:.2f}×** baseline{_noisy(m)}{peer}, "
                         f"{m['per_cpu_ratio']:.2f}× per CPU (bound {_bound(m['io_count_bound'])})")
        lines.append(f"| {w.name} | " + " | ".join(cells) + " |")
    return lines


def _throughput_table(cases, labels):
    lines = [f"| Workload | State | {labels[0]} | {labels[1]} | Solution/Baseline [min–max] | I/O-count bound "
             f"| % of bound | CoV base / sol |", "|---|---|---|---|---|---|---|---|"]
    for c in cases:
        if c.status != "measured":
            lines.append(f"| {c.workload.name} | {c.state.label} | {c.reason} | {DASH} | {DASH} | {DASH} | {DASH} "
                         f"| {DASH} |")
            continue
        m, b, s = c.summary, c.summary["baseline"], c.summary["solution"]
        u = b["unit"]
        lines.append(f"| {c.workload.name} | {c.state.label} | {_fig(b['figure'], u)} {u} | {_fig(s['figure'], u)} {u} "
                     f"| **{m['ratio']:.2f}**{_noisy(m)} [{m['ratio_min']:.2f}–{m['ratio_max']:.2f}] "
                     f"| {_bound(m['io_count_bound'])} "
                     f"| {_bound(m['fraction_of_bound'] and 100 * m['fraction_of_bound'], '{:.0f}%')} "
                     f"| {100 * b['cov']:.1f}% / {100 * s['cov']:.1f}% |")
    return lines


def _latency_cpu_table(cases):
    per_cpu = next((c.summary["per_cpu_name"] for c in _measured(cases)), "per CPU%")
    lines = ["| Workload | State | p50 µs base / sol | p99 µs base / sol | p99.9 µs base / sol "
             f"| CPU usr+sys % base / sol | {per_cpu} base / sol | sol/base per CPU% | others' CPU % |",
             "|---|---|---|---|---|---|---|---|---|"]
    for c in _measured(cases):
        b, s = c.summary["baseline"], c.summary["solution"]
        lines.append(f"| {c.workload.name} | {c.state.label} | {_pair(b['lat_p50_us'], s['lat_p50_us'])} "
                     f"| {_pair(b['lat_p99_us'], s['lat_p99_us'])} | {_pair(b['lat_p999_us'], s['lat_p999_us'])} "
                     f"| {_pair(b['cpu_pct'], s['cpu_pct'])} | {_pair(b['per_cpu'], s['per_cpu'])} "
                     f"| {c.summary['per_cpu_ratio']:.2f} | {_num(statistics.median([b['others_cpu_pct'], s['others_cpu_pct']]))} |")
    return lines


def _rebuild_table(cases):
    sel = [c for c in _measured(cases) if c.summary.get("rebuild")]
    if not sel:
        return []
    limit = sel[0].summary["rebuild"]["rate_limit"]
    lines = [f"Rebuild of one member (rate cap {f'{limit / 1e6:.1f} MB/s' if limit else 'none'}: the suite caps it so "
             "that it outlasts the measured window; the idle rebuild runs free), MB/s of member "
             "data, and as a share of the replacement drive's raw sequential write rate (its second pass: a mem "
             "drive's first writes allocate its pages). The I/O bound is the rebuild's own member I/O (k survivor "
             "reads and one replacement write per 1 MiB run, the same window) done raw, with no parity: on drives "
             "that share the same cores it is well below the raw write rate. \"Lasted\": runs in which "
             "the rebuild was still running at the end of the measured window (otherwise part of the window was "
             "a healthy array).", "",
             "| Workload | under this load: MB/s (share of raw write) | foreground idle: MB/s (share) "
             "| I/O bound MB/s (idle share of it) | replacement raw write MB/s | lasted the window |",
             "|---|---|---|---|---|---|"]
    for c in sel:
        r = c.summary["rebuild"]
        bound = (f"{r['io_bound_mbps']:,.0f} ({r['idle_ratio_to_bound']:.2f})" if r.get("io_bound_mbps") is not None
                 else DASH)
        lines.append(f"| {c.workload.name} | {_rate(r, 'under_load')} | {_rate(r, 'idle')} | {bound} "
                     f"| {_rate(r, 'replacement_raw_write')} | {r['lasted_window_runs']} of {r['runs']} runs |")
    return lines + [""]


def _rate(r, what):
    """A rebuild rate (MB/s, with its share of the raw write rate when known), or a dash: only the
    in-process target measures rebuild rates."""
    if f"{what}_mbps" not in r:
        return DASH
    share = r.get(f"{what}_ratio_to_raw_write")
    return f"{r[f'{what}_mbps']:,.0f}" + (f" ({share:.2f})" if share is not None else "")


def _peer_note(t, cases):
    peers = [c for c in _measured(cases) if c.summary.get("peer")]
    if not peers:
        return []
    lines = ["", f"Peer: {t.get('peer_label')}, measured in the same runs as the solution and the baseline; "
             f"\"× {t.get('peer_label')}\" = solution / peer.", "",
             f"| Workload | State | baseline | solution | {t.get('peer_label')} | solution / {t.get('peer_label')} |",
             "|---|---|---|---|---|---|"]
    for c in peers:
        m = c.summary
        u = m["solution"]["unit"]
        lines.append(f"| {c.geometry.label} {c.workload.name} | {c.state.label} | {_fig(m['baseline']['figure'], u)} {u} "
                     f"| {_fig(m['solution']['figure'], u)} {u} | {_fig(m['peer']['figure'], u)} {u} "
                     f"| **{m['peer_ratio']:.2f}** |")
    return lines


def _noise(meta, cases):
    others = [c.summary[side]["others_cpu_pct"] for c in _measured(cases) for side in ("baseline", "solution")]
    lines = [f"- Load average before / after: {meta.get('load_before')} / {meta.get('load_after')}."]
    if others:
        lines.append(f"- CPU used by other processes during the measured windows (% of one core, median of runs "
                     f"per case and side): median {statistics.median(others):.0f}, max {max(others):.0f}. "
                     f"With {meta['machine']['cores']} cores, anything above a few % means the figures are noisy.")
    if meta.get("noise_note"):
        lines.append(f"- {meta['noise_note']}")
    return lines


def render(meta, cases, geometries, states, charts):
    p, m, t = meta["params"], meta["machine"], meta["target"]
    out = [f"# gpuraid benchmark suite: {t['target']} target ({t['environment']})", "",
           f"Run {meta['started']} – {meta['finished']}. Command: `{meta['command']}`", "",
           "## Machine and build",
           f"- CPU: {m['cpu_model']}, {m['cores']} cores{' (virtual machine)' if m.get('virtualized') else ''}, "
           f"{m['memory_gib']} GiB; caches {m.get('caches') or DASH}; kernel {m['kernel']}.",
           f"- Commit {meta['commit']['commit']}{' with uncommitted changes' if meta['commit']['dirty'] else ''}; "
           f"tool {t.get('tool', DASH)} (built {t.get('tool_built') or '?'}); parity backend {meta.get('parity_backend') or DASH}.",
           f"- Environment: {ENVIRONMENTS[t['environment']]}", "",
           "## Parameters",
           f"- Drives: {t.get('drives') or p['drive_type']}, {p['drive_size']} each; strip {p['strip']}; QD {p['iodepth']} per thread × "
           f"{p['threads']} threads; {p['runtime']} s measured after {p['warmup']} s warm-up; {p['runs']} runs per case; "
           f"seed {p['seed']} (+ run index)"
           + (f"; writes with the write-hole guard and bitmap {p['guard']}" if p.get('guard') else "") + ".", "",
           "## Method",
           f"- Baseline: {t.get('baseline_label', 'raw drives')}; solution: {t.get('solution_label', 'gpuraid')}. "
           "Every ratio is from one run that measured both; a case's ratio is the median of its runs' ratios.",
           *[f"- {line}" for line in t.get("method") or TARGETS[t["target"]].method],
           "- The runs of a case are spread over the whole matrix (run 1 of every case, then run 2, …), so slow "
           "phases of a noisy machine do not land on one case.",
           "- I/O-count bound: the share of raw throughput left once each logical I/O is charged the member I/Os "
           "(random) or member bytes (sequential) it needs; `% of bound` = ratio / bound. None for the rebuilding "
           "state, where rebuild traffic shares the drives.",
           "- Per CPU% = IOPS (random) or MB/s (sequential) per CPU% of the measured process.",
           "- CoV: sample standard deviation / mean of the runs' IOPS.", "",
           "## Noise", *_noise(meta, cases), "",
           "## Headline (median of runs)",
           "Cell: the solution's figure; its ratio to the baseline (throughput); the ratio of throughput per "
           "CPU% (efficiency, steadier than throughput on a busy machine); the I/O-count bound. "
           f"† = the runs of a side spread by more than {100 * NOISY_COV:.0f}% (CoV): a noisy ratio.", "",
           *headline(cases, geometries, states, t.get("peer_label") or "peer"), *_peer_note(t, cases), ""]
    not_measured = {c.reason for c in cases if c.status != "measured"}
    if not_measured:
        out += ["States or cases not measured: " + "; ".join(sorted(not_measured)) + ".", ""]
    for g in geometries:
        for suite in dict.fromkeys(c.workload.suite for c in cases):
            sel = [c for c in cases if c.geometry == g and c.workload.suite == suite]
            if not sel:
                continue
            out += [f"## {g.label}: {SUITE_TITLES[suite]}", "",
                    *_throughput_table(sel, (f"Baseline ({t.get('baseline_label', 'raw drives')})",
                                             t.get("solution_label", "gpuraid"))), "",
                    *_latency_cpu_table(sel), "", *_rebuild_table(sel)]
    if charts:
        out += ["## Charts", ""] + [f"![{name}]({name})" for name in charts] + [""]
    else:
        out += ["No charts: " + meta.get("charts_note", "matplotlib unavailable") + ".", ""]
    return "\n".join(out)
