#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns the benchmark's CSV files into one results table and plots.

Usage: report.py <results-dir> <machine description>

Reads every *.csv in <results-dir> whose lines are
"section,config,metric,value,unit" (bench_miss.sh writes section
"miss_host", the guest harness its own sections, "miss" among them), or
bench_dp's "dp,variant,masks,rules,flows,ns_min,ns_median", and writes
there:
  results.csv   all rows, with the file each came from
  results.md    the tables: the datapath against the textbook references, the
                miss path (host and guest, ratios to disabled), and one
                table per other guest section with ratios to xdp_flow
                (peer: to tc_flower, flowtable: to forward) where the
                section compares configurations
  *.png         plots, when matplotlib is there (bench/run.sh installs it)
"""

import csv
import os
import re
import sys
from collections import OrderedDict

from benchstats import fmt, fmt_range
from benchstats import ratio as ratio_of


def load(folder):
    """Rows "section,config,metric,value,unit", and bench_dp's rows
    "dp,variant,masks,rules,flows,ns_min,ns_median" apart."""
    rows, dp = [], []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".csv") or name == "results.csv":
            continue
        with open(os.path.join(folder, name), newline="") as f:
            for r in csv.reader(f):
                if len(r) == 7 and r[0] == "dp" and r[1] != "variant":
                    try:
                        dp.append({"variant": r[1], "masks": int(r[2]),
                                   "rules": int(r[3]), "flows": int(r[4]),
                                   "min": float(r[5]),
                                   "median": float(r[6])})
                    except ValueError:
                        pass
                    continue
                if len(r) != 5 or r[0] == "section":
                    continue
                try:
                    value = float(r[3])
                except ValueError:
                    continue
                rows.append({"file": name, "section": r[0], "config": r[1],
                             "metric": r[2], "value": value, "unit": r[4]})
    return rows, dp


def dp_cells(dp):
    """{(masks, rules): {(variant, flows): median ns}}."""
    cells = OrderedDict()
    for r in sorted(dp, key=lambda r: (r["masks"], r["rules"])):
        cells.setdefault((r["masks"], r["rules"]), {})[
            (r["variant"], r["flows"])] = r["median"]
    return cells


def ratio(a, b):
    return fmt(ratio_of(a, b)) if a else "-"


def datapath_table(dp):
    """One line per (masks, rules): xdp_flow against the references."""
    cells = dp_cells(dp)
    if not cells:
        return [], cells
    out = ["| masks | rules | ref parse | ref floor (x ref parse) "
           "| floor (x ref parse) "
           "| cached hit (x ref parse) | search hit, 1 flow: ref / xdp_flow "
           "| ratio | uncached miss: ref / xdp_flow | ratio "
           "| cached hit, 1,024 / 4,096 flows (x 1 flow) |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (m, n), c in cells.items():
        rp = c.get(("ref_parse", 1))
        rf = c.get(("ref_floor", 1))
        fl = c.get(("floor", 1))
        ch = c.get(("cached_hit", 1))
        rs, sh = c.get(("ref_search", 1)), c.get(("search_hit", 1))
        miss = [c.get((v, f)) for (v, f) in c if v == "uncached_miss"]
        rmiss = [c.get((v, f)) for (v, f) in c if v == "ref_miss"]
        um = miss[0] if miss else None
        rm = rmiss[0] if rmiss else None
        c1k, c4k = c.get(("cached_hit", 1024)), c.get(("cached_hit", 4096))
        out.append("| %d | %d | %s | %s (%s) | %s (%s) | %s (%s) "
                   "| %s / %s | %s "
                   "| %s / %s | %s | %s / %s (%s / %s) |" % (
                       m, n, fmt(rp), fmt(rf), ratio(rf, rp), fmt(fl),
                       ratio(fl, rp), fmt(ch),
                       ratio(ch, rp), fmt(rs), fmt(sh), ratio(sh, rs),
                       fmt(rm), fmt(um), ratio(um, rm), fmt(c1k), fmt(c4k),
                       ratio(c1k, ch), ratio(c4k, ch)))
    return out, cells


# The miss path: section -> where it was measured, and the configuration
# the targets apply to (the auto hook; on the host, whose helper
# runs without the module, tc: what auto picks on veth).
MISS = OrderedDict([("miss_host", ("host, real CPU", "tc")),
                    ("miss", ("guest, QEMU TCG", "auto"))])
MISS_ORDER = ["disabled", "xdp", "tc", "auto", "bare_xdp_pass",
              "bare_tc_pass"]
MISS_TARGET = {"tcp": 0.9, "udp": 0.95}


def miss_notes(folder):
    """Why miss configurations were not measured: {section: [lines]}."""
    out = {"miss_host": [], "miss": []}
    for path, sec, prefix in (
            (os.path.join(folder, "host_miss_notes.txt"), "miss_host", ""),
            (os.path.join(folder, "guest_notes.txt"), "miss", "miss: "),
            (os.path.join(folder, "guest", "guest_notes.txt"), "miss",
             "miss: ")):
        try:
            with open(path) as f:
                for line in f:
                    line = line.strip()
                    if line.startswith(prefix) and line not in out[sec]:
                        out[sec].append(line[len(prefix):])
        except OSError:
            pass
    return out


def miss_cells(rows):
    """{section: {config: {metric: value}}} for the miss sections, the
    host's first."""
    cells = OrderedDict()
    for sec in MISS:
        for r in rows:
            if r["section"] == sec:
                c = cells.setdefault(sec, {}).setdefault(r["config"], {})
                c[r["metric"]] = r["value"]
                m = re.match(r"(tcp|udp)_\w+_run\d+$", r["metric"])
                if m:
                    c.setdefault(m.group(1) + "_runs", []).append(r["value"])
    return cells


def spread(c, what):
    """The slowest and the fastest run: how far one run may be off."""
    return fmt_range(c.get(what + "_runs", []))


def miss_configs(cfgs):
    return ([c for c in MISS_ORDER if c in cfgs] +
            sorted(c for c in cfgs if c not in MISS_ORDER))


def miss_table(cells, notes):
    if not cells:
        return []
    out = ["| where | config | TCP Gbit/s | runs | TCP / disabled "
           "| best / best | UDP 64 B pps | runs | UDP / disabled "
           "| best / best | UDP delivered pps |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    verdicts = []
    for sec, cfgs in cells.items():
        where, target_cfg = MISS[sec]
        for cfg in miss_configs(cfgs):
            c = cfgs[cfg]
            if not c.get("measured", 1):
                why = [n for n in notes.get(sec, []) if n.startswith(cfg + ":")
                       and "not measured" in n]
                out.append("| %s | %s | not measured%s | | | | | | | | |" % (
                    where, cfg, ": " + why[0].split("not measured:", 1)[-1]
                    .strip().replace("|", "/") if why else ""))
                continue
            name = cfg
            if cfg == "auto" and "hook_is_tc" in c:
                name += " (%s)" % ("tc" if c["hook_is_tc"] else "xdp")
            cells = (where, name, fmt(c.get("tcp_gbps")), spread(c, "tcp"),
                     fmt(c.get("tcp_ratio_to_disabled")),
                     fmt(c.get("tcp_best_ratio_to_disabled")),
                     fmt(c.get("udp_pps")), spread(c, "udp"),
                     fmt(c.get("udp_ratio_to_disabled")),
                     fmt(c.get("udp_best_ratio_to_disabled")),
                     fmt(c.get("udp_delivered_pps")))
            out.append("| " + " | ".join(cells) + " |")
        c = cfgs.get(target_cfg, {})
        if c.get("measured", 0):
            parts = []
            for what in ("tcp", "udp"):
                v = c.get(what + "_ratio_to_disabled")
                if v is None:
                    parts.append("%s not measured" % what.upper())
                else:
                    parts.append("%s %s (target %s: %s)" % (
                        what.upper(), fmt(v), MISS_TARGET[what],
                        "met" if v >= MISS_TARGET[what] else "NOT met"))
            verdicts.append("- %s, %s: %s" % (where, target_cfg,
                                              "; ".join(parts)))
        else:
            verdicts.append("- %s, %s: not measured" % (where, target_cfg))
    out += ["", "Targets (issue 6, the auto hook; on veth auto is tc), "
            "medians against disabled's (compare with the runs' spread: "
            "a verdict within it says little):", ""] + verdicts
    rest = [(MISS[sec][0], n) for sec in cells for n in notes.get(sec, [])
            if "not measured:" not in n]
    if rest:
        out += ["", "Remarks:", ""] + ["- %s: %s" % (w, n) for w, n in rest]
    return out


def shown(r):
    """Single runs and the guest's own ratios stay in results.csv."""
    m = r["metric"]
    return not (re.search(r"_run\d+$", m) or "ratio" in m or
                r["unit"] == "ratio")


# The configuration a section's other ones are compared with: xdp_flow,
# but for peer, which compares xdp_flow's TC hook with TC in software, and
# flowtable, whose configurations all forward the same connections.
BASE = {"peer": "tc_flower", "flowtable": "forward", "start": "both"}


def section_table(rows, section):
    """One line per (metric, config); a ratio to the base configuration's
    value of the same metric where there is one."""
    rs = [r for r in rows if r["section"] == section and shown(r)]
    base_cfg = BASE.get(section, "xdp_flow")
    ref = {r["metric"]: r["value"] for r in rs if r["config"] == base_cfg}
    out = ["| metric | config | value | unit | %s / this |" % base_cfg,
           "|---|---|---:|---|---:|"]
    for r in rs:
        base = ref.get(r["metric"])
        rel = "-"
        if base and r["value"] and r["config"] != base_cfg:
            # higher is better for rates, lower for times
            better_high = r["unit"] in ("pps", "Mpps", "rules/s", "Gbit/s",
                                        "Mbit/s")
            rel = fmt(ratio_of(base, r["value"]) if better_high
                      else ratio_of(r["value"], base))
        out.append("| %s | %s | %s | %s | %s |" % (
            r["metric"], r["config"], fmt(r["value"]), r["unit"], rel))
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
        for ax, large in zip(axes, (False, True)):
            # per mask count: the rules its flows need, or 100,000
            conf = {}
            for (m, n) in cells:
                if (n >= 100000) == large:
                    conf[m] = n
            ms = sorted(conf)
            for variant, flows, label in (
                    ("ref_search", 1, "textbook search, hit"),
                    ("search_hit", 1, "xdp_flow search, hit"),
                    ("ref_miss", 65535, "textbook search, miss"),
                    ("uncached_miss", 65535, "xdp_flow, uncached miss"),
                    ("cached_hit", 1, "xdp_flow, cached hit"),
                    ("ref_parse", 1, "textbook parse")):
                ys = [cells[(m, conf[m])].get((variant, flows)) for m in ms]
                if ys and all(y is not None for y in ys):
                    ax.plot(ms, ys, marker="o", label=label)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("masks")
            ax.set_title("100,000 rules" if large else
                         "the rules the flows need")
            ax.grid(True, which="both", alpha=0.3)
        axes[0].set_ylabel("ns per frame (BPF_PROG_TEST_RUN)")
        axes[0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(folder, "datapath.png"), dpi=100)
        plt.close(fig)
        made.append("datapath.png")
    miss = miss_cells(rows)
    if miss:
        fig, axes = plt.subplots(1, len(miss), figsize=(6 * len(miss), 3.8),
                                 squeeze=False)
        for ax, (sec, cfgs) in zip(axes[0], miss.items()):
            names = [c for c in miss_configs(cfgs)
                     if cfgs[c].get("measured", 1)]
            xs = list(range(len(names)))
            for off, what, label in ((-0.2, "tcp", "TCP stream"),
                                     (0.2, "udp", "UDP 64 B pps")):
                ys = [cfgs[c].get(what + "_ratio_to_disabled") or 0
                      for c in names]
                ax.bar([x + off for x in xs], ys, width=0.4, label=label)
            for what, style in (("tcp", "--"), ("udp", ":")):
                ax.axhline(MISS_TARGET[what], color="gray", linestyle=style,
                           linewidth=1)
            ax.set_xticks(xs)
            ax.set_xticklabels(names, rotation=30, fontsize=8)
            ax.set_title("miss path, %s" % MISS[sec][0], fontsize=9)
            ax.set_ylabel("ratio to disabled (median)")
            ax.grid(True, axis="y", alpha=0.3)
        axes[0][0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(folder, "miss.png"), dpi=100)
        plt.close(fig)
        made.append("miss.png")
    for section in sorted({r["section"] for r in rows} -
                          {"datapath", "meta"} - set(MISS)):
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
    rows, dp_rows = load(folder)
    if not rows and not dp_rows:
        print("report: no results in %s" % folder, file=sys.stderr)
        return 1
    with open(os.path.join(folder, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["file", "section", "config", "metric", "value", "unit"])
        for r in rows:
            w.writerow([r["file"], r["section"], r["config"], r["metric"],
                        r["value"], r["unit"]])
        for r in dp_rows:
            w.writerow(["host.csv", "dp", r["variant"],
                        "%d masks %d rules %d flows" % (
                            r["masks"], r["rules"], r["flows"]),
                        r["median"], "ns"])
    md = ["# xdp_flow benchmark results", "", machine, ""]
    dp, cells = datapath_table(dp_rows)
    if dp:
        md += ["## The datapath on the host (BPF_PROG_TEST_RUN, real CPU)",
               "",
               "ns per frame, medians of the rounds (bench/README.md says "
               "how bench_dp runs). ref: the textbook parser and "
               "tuple-space search, run in the same rounds; floor: xdp_flow "
               "without the lookup; search hit: the cache off, the single "
               "flow hits the last mask; uncached miss: 65,535 flows, none "
               "matching; cached hit: the cache on.",
               ""] + dp + [""]
    meta = ["%s %s: %s %s" % (r["config"], r["metric"], fmt(r["value"]),
                              r["unit"])
            for r in rows if r["section"] == "meta"]
    if meta:
        md += ["Run: " + "; ".join(meta), ""]
    mt = miss_table(miss_cells(rows), miss_notes(folder))
    if mt:
        md += ["## The miss path: traffic that matches no rule",
               "",
               "veth between two namespaces; the traffic matches none of "
               "the offloaded rules. TCP: an iperf3 stream (Gbit/s "
               "received); UDP: iperf3 64-byte datagrams at full speed, "
               "a second, that reached the receiver's UDP layer (veth "
               "receives in the sender's context: the receive path sets "
               "the rate); delivered: of them, read by iperf3. Medians; "
               "ratios to disabled (nothing on the device), best / best: "
               "of the fastest runs; runs: the slowest and the fastest run "
               "(host: also those disturbed by other processes, which the "
               "medians leave out when there are undisturbed ones). "
               "xdp, tc: xdp_flow's datapath at that "
               "hook (host: the helper alone, one non-matching rule; guest: "
               "the module and `xdp-flow enable dev X hook ...`, one "
               "non-matching flower rule); auto: the hook xdp_flow picks; "
               "bare_*: a program that only passes, at that hook (host).",
               ""] + mt + [""]
    for section in OrderedDict.fromkeys(r["section"] for r in rows):
        if section in ("datapath", "meta") or section in MISS:
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
