#!/usr/bin/env python3
"""PNG charts from results.json: one per suite; a panel per geometry and
workload; per life-cycle state the baseline bar beside the solution bar
(median, whiskers min–max of the runs), the solution/baseline ratio on top.
Needs matplotlib; run_suite.py calls it with an interpreter that has it.
Usage: charts.py RESULTS_JSON OUT_DIR   (prints the file names it wrote)"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TITLES = {"random": "Spec Sheet Random", "sequential": "Spec Sheet Sequential"}
BASE_COLOR, SOL_COLOR = "#9e9e9e", "#1f77b4"


def _bar(ax, x, side, color, label):
    fig = side["figure"]
    err = [[fig - side["figure_min"]], [side["figure_max"] - fig]]
    return ax.bar(x, fig, 0.38, color=color, label=label, yerr=err, capsize=3, ecolor="#333333")


def panel(ax, cases, states, labels):
    top = max([c["summary"][s]["figure_max"] for c in cases if c["status"] == "measured"
               for s in ("baseline", "solution")] +
              [c["summary"]["baseline"]["figure"] * (c["summary"]["io_count_bound"] or 0) for c in cases
               if c["status"] == "measured"] or [1])
    for i, st in enumerate(states):
        c = next((c for c in cases if c["state"]["name"] == st["name"]), None)
        if c is None or c["status"] != "measured":
            ax.bar(i, top * 0.98, 0.8, color="none", edgecolor="#bbbbbb", linestyle="--")
            ax.text(i, top * 0.5, "not\nmeasured", ha="center", va="center", fontsize=9, color="#777777")
            continue
        m = c["summary"]
        _bar(ax, i - 0.2, m["baseline"], BASE_COLOR, labels[0])
        _bar(ax, i + 0.2, m["solution"], SOL_COLOR, labels[1])
        bound = m["baseline"]["figure"] * (m["io_count_bound"] or 0)  # where the solution bar would end at the bound
        if m["io_count_bound"]:
            ax.hlines(bound, i + 0.01, i + 0.39, colors="black", linestyles="--", linewidth=1.5,
                      label="I/O-count bound × raw")
        ax.text(i + 0.2, max(m["solution"]["figure_max"], bound) + top * 0.02, f"{m['ratio']:.2f}×", ha="center",
                va="bottom", fontsize=9, fontweight="bold")
    ax.set_xticks(range(len(states)), [s["label"] for s in states], fontsize=9)
    ax.set_ylim(0, top * 1.18)
    ax.grid(axis="y", alpha=0.3)


def suite_chart(meta, cases, suite, out_dir):
    sel = [c for c in cases if c["workload"]["suite"] == suite]
    geos = list(dict.fromkeys(c["geometry"]["label"] for c in sel))
    works = list(dict.fromkeys(c["workload"]["name"] for c in sel))
    states = list({c["state"]["name"]: c["state"] for c in sel}.values())
    labels = (meta["target"].get("baseline_label", "baseline"), meta["target"].get("solution_label", "gpuraid"))
    fig, axes = plt.subplots(len(geos), len(works), figsize=(max(10.0, 4.2 * len(works)), 3.4 * len(geos) + 1.6),
                             squeeze=False)
    unit = "MIOPS" if suite == "random" else "GB/s"
    for r, g in enumerate(geos):
        for col, w in enumerate(works):
            ax = axes[r][col]
            panel(ax, [c for c in sel if c["geometry"]["label"] == g and c["workload"]["name"] == w], states, labels)
            ax.set_title(f"{g} · {w}", fontsize=11)
            if col == 0:
                ax.set_ylabel(unit)
    legend = {}
    for ax in axes.flat:
        for h, n in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(n, h)
    p, m = meta["params"], meta["machine"]
    fig.suptitle(f"{TITLES[suite]} — {meta['target']['target']} target ({meta['target']['environment']}), "
                 f"{p['drive_type']} drives, QD {p['iodepth']} × {p['threads']} threads\n"
                 f"median of {p['runs']} runs, whiskers min–max, label = gpuraid/raw\n"
                 f"{m['cpu_model']}, {m['cores']} cores, commit {(meta['commit']['commit'] or '?')[:10]}, "
                 f"{meta['started'][:10]}", fontsize=11)
    fig.legend(list(legend.values()), list(legend.keys()), loc="lower center", ncol=len(legend), frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 0.92))
    name = f"chart-{suite}.png"
    fig.savefig(os.path.join(out_dir, name), dpi=110)
    plt.close(fig)
    return name


def main():
    with open(sys.argv[1]) as f:
        data = json.load(f)
    # A suite none of whose cases was measured gets no chart (the report says why they were not).
    for suite in dict.fromkeys(c["workload"]["suite"] for c in data["cases"] if c["status"] == "measured"):
        print(suite_chart(data["meta"], data["cases"], suite, sys.argv[2]))


if __name__ == "__main__":
    main()
