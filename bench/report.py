#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns the benchmark's CSV files into one results table and plots.

Usage: report.py <results-dir> <machine description>

Reads every *.csv in <results-dir> whose lines are
"section,config,metric,value,unit" (bench_dp writes section "datapath",
the guest script its own sections), and writes there:
  results.csv   all rows, with the file each came from
  results.md    the tables: the datapath's cost against the floor, and one
                table per guest section with ratios to xdp_flow where the
                section compares configurations
  *.png         plots, when matplotlib is there (bench/run.sh installs it)
"""

import csv
import os
import re
import sys
from collections import OrderedDict


def load(folder):
    rows = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".csv") or name == "results.csv":
            continue
        with open(os.path.join(folder, name), newline="") as f:
            for r in csv.reader(f):
                if len(r) != 5 or r[0] == "section":
                    continue
                try:
                    value = float(r[3])
                except ValueError:
                    continue
                rows.append({"file": name, "section": r[0], "config": r[1],
                             "metric": r[2], "value": value, "unit": r[4]})
    return rows


def fmt(v):
    if v is None:
        return "-"
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.2f" % v


def datapath_table(rows):
    """Rows "M masks R rules hit|miss" per config -> one line per (M, R)."""
    cells = OrderedDict()
    for r in rows:
        if r["section"] != "datapath":
            continue
        words = r["metric"].split()
        if len(words) != 5:
            continue
        key = (int(words[0]), int(words[2]))
        cells.setdefault(key, {})[(r["config"], words[4])] = r["value"]
    if not cells:
        return [], cells
    out = ["| masks | rules | floor ns | hit ns (cache) | hit / floor "
           "| hit ns (search only) | search / floor | miss ns (cache) "
           "| miss ns (search only) |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (m, n), c in sorted(cells.items()):
        fl = c.get(("floor", "hit"))
        hit = c.get(("xdp_flow", "hit"))
        hs = c.get(("search_only", "hit"))
        out.append("| %d | %d | %s | %s | %s | %s | %s | %s | %s |" % (
            m, n, fmt(fl), fmt(hit),
            fmt(hit / fl) if hit and fl else "-", fmt(hs),
            fmt(hs / fl) if hs and fl else "-",
            fmt(c.get(("xdp_flow", "miss"))),
            fmt(c.get(("search_only", "miss")))))
    return out, cells


def shown(r):
    """Single runs and the guest's own ratios stay in results.csv."""
    m = r["metric"]
    return not (re.search(r"_run\d+$", m) or "ratio" in m or
                r["unit"] == "ratio")


def section_table(rows, section):
    """One line per (metric, config); a ratio to xdp_flow's value of the
    same metric where there is one."""
    rs = [r for r in rows if r["section"] == section and shown(r)]
    ref = {r["metric"]: r["value"] for r in rs if r["config"] == "xdp_flow"}
    out = ["| metric | config | value | unit | xdp_flow / this |",
           "|---|---|---:|---|---:|"]
    for r in rs:
        base = ref.get(r["metric"])
        ratio = "-"
        if base and r["value"] and r["config"] != "xdp_flow":
            # higher is better for rates, lower for times
            better_high = r["unit"] in ("pps", "Mpps", "rules/s", "Gbit/s",
                                        "Mbit/s")
            ratio = fmt(base / r["value"] if better_high
                        else r["value"] / base)
        out.append("| %s | %s | %s | %s | %s |" % (
            r["metric"], r["config"], fmt(r["value"]), r["unit"], ratio))
    return out


def plots(folder, rows, cells):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: no matplotlib, no plots", file=sys.stderr)
        return []
    made = []
    if cells:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
        for ax, nrules in zip(axes, (1000, 100000)):
            ms = sorted(m for (m, n) in cells if n == nrules)
            for cfg, what, label in (("floor", "hit", "floor"),
                                     ("xdp_flow", "hit", "hit, cache"),
                                     ("search_only", "hit", "hit, search only"),
                                     ("xdp_flow", "miss", "miss, cache"),
                                     ("search_only", "miss",
                                      "miss, search only")):
                ys = [cells[(m, nrules)].get((cfg, what)) for m in ms]
                if all(y is not None for y in ys):
                    ax.plot(ms, ys, marker="o", label=label)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("masks")
            ax.set_title("%d rules" % nrules)
            ax.grid(True, which="both", alpha=0.3)
        axes[0].set_ylabel("ns per frame (BPF_PROG_TEST_RUN)")
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(folder, "datapath.png"), dpi=100)
        plt.close(fig)
        made.append("datapath.png")
    for section in sorted({r["section"] for r in rows} - {"datapath", "meta"}):
        rs = [r for r in rows if r["section"] == section and shown(r)]
        if not rs:
            continue
        metrics = list(OrderedDict.fromkeys(r["metric"] for r in rs))
        fig, axes = plt.subplots(1, len(metrics),
                                 figsize=(4 * len(metrics), 3.5),
                                 squeeze=False)
        for ax, metric in zip(axes[0], metrics):
            mr = [r for r in rs if r["metric"] == metric]
            ax.bar([r["config"] for r in mr], [r["value"] for r in mr])
            ax.set_title(metric, fontsize=9)
            ax.set_ylabel(mr[0]["unit"])
            ax.tick_params(axis="x", labelrotation=30, labelsize=8)
        fig.tight_layout()
        name = "%s.png" % section.replace("/", "_")
        fig.savefig(os.path.join(folder, name), dpi=100)
        plt.close(fig)
        made.append(name)
    return made


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    folder, machine = sys.argv[1], sys.argv[2]
    rows = load(folder)
    if not rows:
        print("report: no results in %s" % folder, file=sys.stderr)
        return 1
    with open(os.path.join(folder, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["file", "section", "config", "metric", "value", "unit"])
        for r in rows:
            w.writerow([r["file"], r["section"], r["config"], r["metric"],
                        r["value"], r["unit"]])
    md = ["# xdp_flow benchmark results", "", machine, ""]
    dp, cells = datapath_table(rows)
    if dp:
        md += ["## The datapath on the host (BPF_PROG_TEST_RUN, real CPU)",
               "",
               "ns per frame, median of 5 runs. Hit: the frame matches the "
               "rule of the last mask and every mask is searched (all rules "
               "one prio); miss: no rule matches. floor: the same program "
               "without the lookup (parse, rule 0's action and counters).",
               ""] + dp + [""]
    meta = ["%s %s: %s %s" % (r["config"], r["metric"], fmt(r["value"]),
                              r["unit"]) for r in rows if r["section"] == "meta"]
    if meta:
        md += ["Run: " + "; ".join(meta), ""]
    for section in OrderedDict.fromkeys(r["section"] for r in rows):
        if section in ("datapath", "meta"):
            continue
        md += ["## %s" % section, ""] + section_table(rows, section) + [""]
    for name in plots(folder, rows, cells):
        md += ["![%s](%s)" % (name, name), ""]
    with open(os.path.join(folder, "results.md"), "w") as f:
        f.write("\n".join(md))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
