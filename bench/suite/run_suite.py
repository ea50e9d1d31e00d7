#!/usr/bin/env python3
"""gpuraid benchmark suite: runs the Spec Sheet Random / Sequential matrix in
every life-cycle state against a target, and writes results.json,
runs.csv, summary.csv, report.md and chart-*.png into --out.
  bench/suite/run_suite.py --target inproc --out bench/results/$(date +%F)
  bench/suite/run_suite.py --quick --out /tmp/suite      (tiny settings, seconds)
See bench/suite/README.md."""
import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402
import matrix  # noqa: E402
import outputs  # noqa: E402
import plotenv  # noqa: E402
import report  # noqa: E402
import stats  # noqa: E402
from params import QUICK, Params  # noqa: E402
from targets import TARGETS  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parse_args(argv):
    d = Params()
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--target", default="inproc", choices=sorted(TARGETS))
    a.add_argument("--out", required=True, help="output folder (created)")
    a.add_argument("--quick", action="store_true", help=f"tiny settings for a smoke run: {QUICK}")
    a.add_argument("--geometries", default="5:7+1,6:8+2", help="level:k+m list, e.g. 5:7+1,6:8+2,ec:8+3")
    a.add_argument("--suites", default="random,sequential")
    a.add_argument("--workloads", default="", help="only these workloads of the suites, e.g. '4K randwrite,128K read'")
    a.add_argument("--states", default="normal,failed,rebuilding")
    a.add_argument("--bench", default=os.path.join(REPO, "build", "bin", "gpuraid-bench"), help="gpuraid-bench binary")
    a.add_argument("--charts", default="auto", choices=("auto", "system", "off"),
                   help="auto: a Python with matplotlib, else a venv from PyPI; system: no venv; off")
    a.add_argument("--note", default="", help="a sentence on the machine's load, put in the report")
    a.add_argument("--report-only", action="store_true",
                   help="measure nothing: rebuild summaries, report and charts from --out/results.json")
    for name, val in d.to_json().items():
        a.add_argument("--" + name.replace("_", "-"), type=type(val), default=None, help=f"default {val}")
    args = a.parse_args(argv)
    values = {**d.to_json(), **(QUICK if args.quick else {})}
    values.update({k: v for k, v in vars(args).items() if k in values and v is not None})
    if values["guard"] not in ("on", "off"):
        a.error(f"--guard on|off, not {values['guard']!r}")
    if values["guard"] == "off" and args.target != "inproc":
        a.error("--guard off: the inproc target only (the others write through a drive group)")
    return args, Params(**values)


def select(names, known, what):
    out = []
    for n in names.split(","):
        if n not in known:
            sys.exit(f"run_suite: unknown {what} '{n}' (known: {', '.join(known)})")
        out.append(known[n])
    return out


def run_matrix(target, cases, runs):
    todo = [c for c in cases if c.status == "pending"]
    for i in range(runs):
        for n, c in enumerate(todo):
            if c.status == "failed":
                continue
            t0 = time.time()
            try:
                c.runs.append(target.run(c, i))
            except (RuntimeError, OSError, ValueError, KeyError, subprocess.TimeoutExpired) as e:
                c.status, c.reason = "failed", f"failed: {e}"
                print(f"[run {i + 1}/{runs} case {n + 1}/{len(todo)}] {c.key}: {c.reason}", file=sys.stderr)
                continue
            r = c.runs[-1]
            print(f"[run {i + 1}/{runs} case {n + 1}/{len(todo)}] {c.key}: ratio {r['ratio']['iops']:.3f} "
                  f"(raw {r['baseline']['iops']:.0f} IOPS, raid {r['solution']['iops']:.0f} IOPS) "
                  f"{time.time() - t0:.1f}s", flush=True)
    for c in todo:
        if c.status == "pending":
            c.status, c.summary = "measured", stats.summarize(c)


def make_charts(out, mode):
    if mode == "off":
        return [], "charts turned off (--charts off)"
    py, why = plotenv.find_python(allow_venv=mode == "auto")
    if not py:
        return [], why
    p = subprocess.run([py, os.path.join(os.path.dirname(__file__), "charts.py"), os.path.join(out, "results.json"), out],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        return [], f"charts.py failed: {p.stderr.strip()[-500:]}"
    return p.stdout.split(), None


def write_outputs(out, meta, cases, geometries, states, charts_mode):
    outputs.write_json(os.path.join(out, "results.json"), meta, cases)
    outputs.write_runs_csv(os.path.join(out, "runs.csv"), meta, cases)
    outputs.write_summary_csv(os.path.join(out, "summary.csv"), meta, cases)
    charts, why = make_charts(out, charts_mode)
    meta["charts_note"] = why or ""
    if why:
        print(f"run_suite: no charts: {why}", file=sys.stderr)
    outputs.write_json(os.path.join(out, "results.json"), meta, cases)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(report.render(meta, cases, geometries, states, charts))
    print("\n".join(report.headline(cases, geometries, states, meta["target"].get("peer_label") or "peer")))
    print(f"run_suite: wrote {out}/report.md, results.json, runs.csv, summary.csv, {' '.join(charts)}")


def report_only(out, charts_mode):
    with open(os.path.join(out, "results.json")) as f:
        data = json.load(f)
    cases = [matrix.Case.from_json(c) for c in data["cases"]]
    for c in cases:
        if c.status == "measured":
            c.summary = stats.summarize(c, data["meta"]["machine"]["cores"])
    geometries = list(dict.fromkeys(c.geometry for c in cases))
    states = list(dict.fromkeys(c.state for c in cases))
    write_outputs(out, data["meta"], cases, geometries, states, charts_mode)
    return 0


def start_meta(argv, args, params, target):
    return {"command": shlex.join([os.path.relpath(sys.argv[0], REPO) if sys.argv[0] else "run_suite.py", *argv]),
            "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "machine": machine.machine_info(), "commit": machine.commit_info(REPO), "params": params.to_json(),
            "target": {**target.describe(), "baseline_label": target.baseline_label,
                       "solution_label": target.solution_label},
            "load_before": machine.load_average(), "noise_note": args.note}


def write_skipped(argv, args, params, target, why):
    """A target that cannot run here (e.g. no GPU): the report and results.json say why; exit 77."""
    os.makedirs(args.out, exist_ok=True)
    meta = {**start_meta(argv, args, params, target), "skipped": why}
    outputs.write_json(os.path.join(args.out, "results.json"), meta, [])
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(f"# gpuraid benchmark suite: {target.name} target\n\n{why}\n\nCommand: `{meta['command']}`; "
                f"commit {meta['commit']['commit']}; machine {meta['machine']['cpu_model']}, "
                f"{meta['machine']['cores']} cores.\n")
    print(f"run_suite: target {target.name}: {why}")
    return 77


def main(argv):
    args, params = parse_args(argv)
    if args.report_only:
        return report_only(args.out, args.charts)
    target = TARGETS[args.target](params, tool=args.bench)
    why = target.unavailable()
    if why and why.startswith("skipped"):
        return write_skipped(argv, args, params, target, why)
    if why:
        sys.exit(f"run_suite: target {args.target}: {why}")
    try:
        geometries = [matrix.Geometry.parse(g, params.strip) for g in args.geometries.split(",")]
    except ValueError as e:
        sys.exit(f"run_suite: {e}")
    suites = select(args.suites, {s: s for s in matrix.SUITES}, "suite")
    states = select(args.states, {s.name: s for s in matrix.STATES}, "state")
    cases = matrix.build(geometries, suites, states)
    if args.workloads:
        names = select(args.workloads, {c.workload.name: c.workload.name for c in cases}, "workload")
        cases = [c for c in cases if c.workload.name in names]
    for c in cases:
        why = target.unsupported(c)
        if why:
            c.status, c.reason = "not measured", why
    n = sum(c.status == "pending" for c in cases)
    est = params.runs * sum(params.run_seconds(c.state.name == "rebuilding") for c in cases if c.status == "pending")
    print(f"run_suite: {n} cases x {params.runs} runs on {args.target}, about {est / 60:.0f} min", flush=True)
    os.makedirs(args.out, exist_ok=True)
    meta = start_meta(argv, args, params, target)
    if target.batch:  # one session measures every run (a VM boot for the VM lane targets)
        target.run_batch([c for c in cases if c.status == "pending"], params.runs)
        for c in cases:
            if c.status == "pending" and not c.runs:
                c.status, c.reason = "failed", "failed: the batch measured no run of this case"
            elif c.status == "pending":
                c.status, c.summary = "measured", stats.summarize(c)
    else:
        run_matrix(target, cases, params.runs)
    meta.update(finished=datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                load_after=machine.load_average(),
                parity_backend=next((r["parity_backend"] for c in cases for r in c.runs), ""))
    write_outputs(args.out, meta, cases, geometries, states, args.charts)
    return 1 if any(c.status == "failed" for c in cases) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
