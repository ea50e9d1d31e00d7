"""The Markdown report of bench/nbd_cost/run.py: per workload and RAID level,
the medians of the rounds and the ratios NBD / in-process and
gpuraid NBD / nbdkit memory (each ratio the median of per-round ratios)."""
import statistics


def _figure(r, workload):
    return r["iops"] if workload.startswith("4K") else r["mbps"]


def _others(r, cores):
    """CPU of everything else on the machine during the window, % of one core."""
    return max(0.0, r["machine_cpu_pct"] * cores - r["cpu_pct"] - r.get("client_cpu_pct", 0.0))


def _pick(results, workload, kind, level):
    return {r["round"]: r for r in results if r["workload"] == workload and r["kind"] == kind and r["level"] == level}


def _ratio(a, b, workload):
    rounds = sorted(set(a) & set(b))
    vals = [_figure(a[i], workload) / _figure(b[i], workload) for i in rounds if _figure(b[i], workload) > 0]
    return statistics.median(vals) if vals else 0.0, (min(vals, default=0), max(vals, default=0))


def _med(sel, key):
    return statistics.median(r[key] for r in sel.values()) if sel else 0.0


def _fmt(x, workload):
    return f"{x / 1e3:,.0f}k IOPS" if workload.startswith("4K") else f"{x / 1e3:.2f} GB/s"


def render(meta, results, levels, workloads):
    m, p, cores = meta["machine"], meta["params"], meta["machine"]["cores"]
    others = [_others(r, cores) for r in results]
    out = ["# The cost of the NBD frontend: fio through NBD vs the in-process engine, and vs nbdkit memory", "",
           f"Command: `{meta['command']}`; commit {meta['commit']['commit']}"
           f"{' with uncommitted changes' if meta['commit']['dirty'] else ''}.",
           f"Machine: {m['cpu_model']}, {cores} cores{' (virtual machine)' if m.get('virtualized') else ''}, "
           f"kernel {m['kernel']}. Host figures (not TCG).", "",
           f"Geometry: {p['members']} mem drives of {p['drive_size']}, strip {p['strip']}; {p['jobs']} fio jobs = "
           f"{p['jobs']} NBD connections = {p['jobs']} harness reactors = {p['jobs']} gpuraid-bench threads; QD per "
           f"job as listed; {p['runtime']} s measured after {p['warmup']} s; {p['rounds']} rounds, the servers "
           "take turns within each round (the order rotates). nbdkit: `nbdkit --unix SOCK memory SIZE` "
           "(its default thread pool), as large as the RAID 0 export. Both exports were written once before "
           "measuring; gpuraid-bench fills its drives itself.", "",
           "Ratios are medians of per-round ratios, [min–max] over the rounds. NBD figures include the fio "
           "client's cost on the same cores (that is the frontend's cost); the in-process figure has no client. "
           "Server CPU: usr+sys of the serving process (harness or nbdkit) over fio's window, % of one core; "
           "for in-process, the whole gpuraid-bench.", "",
           "## Noise",
           f"- Load average before / after: {meta['load_before']} / {meta['load_after']}.",
           f"- CPU used by other processes during the windows (% of one core): median "
           f"{statistics.median(others) if others else 0:.0f}, max {max(others, default=0):.0f}. "
           f"With {cores} cores shared with other users, these figures are noisy.",
           *([f"- {meta['note']}"] if meta.get("note") else []), "",
           "## Results", "",
           "| Workload (QD/job) | RAID | gpuraid NBD | in-process | **NBD / in-process** | nbdkit memory "
           "| **gpuraid NBD / nbdkit** | server CPU % gpuraid / nbdkit | per server CPU% gpuraid / nbdkit |",
           "|---|---|---|---|---|---|---|---|---|"]
    for wname in workloads:
        qd = next((r["qd"] for r in results if r["workload"] == wname), "?")
        kit = _pick(results, wname, "nbdkit", "-")
        for level in levels:
            nbd, inp = _pick(results, wname, "gpuraid-nbd", level), _pick(results, wname, "inproc", level)
            r_in, rng_in = _ratio(nbd, inp, wname)
            r_kit, rng_kit = _ratio(nbd, kit, wname)
            fn = statistics.median(_figure(r, wname) for r in nbd.values())
            fk = statistics.median(_figure(r, wname) for r in kit.values())
            fi = statistics.median(_figure(r, wname) for r in inp.values())
            cn, ck = _med(nbd, "cpu_pct"), _med(kit, "cpu_pct")
            out.append(f"| {wname} ({qd}) | {level} | {_fmt(fn, wname)} | {_fmt(fi, wname)} "
                       f"| **{r_in:.2f}** [{rng_in[0]:.2f}–{rng_in[1]:.2f}] | {_fmt(fk, wname)} "
                       f"| **{r_kit:.2f}** [{rng_kit[0]:.2f}–{rng_kit[1]:.2f}] | {cn:.0f} / {ck:.0f} "
                       f"| {fn / cn if cn else 0:,.0f} / {fk / ck if ck else 0:,.0f} |")
    out += ["", "Per server CPU%: IOPS (4K) or MB/s (128K) per % of one core of the serving process.", ""]
    return "\n".join(out)
