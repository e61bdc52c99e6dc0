# SPDX-License-Identifier: GPL-2.0
"""Sections rate and scale: the control plane with many rules.

rate   XF_BENCH_RULES (10,000) flower rules (distinct dst_ip, action
       drop) through `tc -b`, with xdp_flow enabled on the device and
       without it (a device in a namespace of its own, where xdp_flow
       binds nothing), in each prio order of XF_BENCH_RATE_ORDERS ("one
       asc desc random": all pref 10, ascending, descending, shuffled with
       a fixed seed); with xdp_flow also until every rule is in XDP
       (`xdp-flow wait` after tc returns: in_xdp_s); then deleting the
       qdisc (with xdp_flow also until XDP is empty). XF_BENCH_RATE_REPS
       rounds, each running both configurations of every order, the first
       of the pair alternating (the host drifts); medians, and the range
       of the rounds' ratios.
scale  XF_BENCH_SCALE_RULES (100,000) rules of one prio, with xdp_flow
       and without (as in rate): the time to add them, `tc -s filter
       show`, `xdp-flow show`, every rule back in XDP after a helper kill
       (the replay), and `tc qdisc del`.
"""

import os
import random
import signal
import tempfile
import time

from benchstats import median, ratio, value_range
from xfpy.net import dev_alone, devs_del, netns_del, veth_pairs
from xfpy.proc import Failed, run

CONFIGS = ("tc_flower", "xdp_flow")


def rules_file(dev, order, n, ns=None):
    """A `tc -b` file of n flower rules on dev, distinct dst_ip, action
    drop, prios in that order."""
    prios = {"one": [10] * n, "asc": list(range(1, n + 1)),
             "desc": list(range(n, 0, -1))}.get(order)
    if order == "random":
        prios = list(range(1, n + 1))
        random.Random(42).shuffle(prios)
    if prios is None:
        raise Failed("unknown prio order %s" % order)
    f = tempfile.NamedTemporaryFile("w", prefix="xfbench-rules.",
                                    delete=False)
    with f:
        for i, prio in enumerate(prios):
            f.write("filter add dev %s ingress pref %d protocol ip flower "
                    "dst_ip 10.%d.%d.%d action drop\n" % (
                        dev, prio, 100 + i // 65536, i // 256 % 256,
                        i % 256))
    return f.name


class Target:
    """The device a configuration adds its rules to: rd_xdp/sc_xdp in the
    initial namespace with xdp_flow, rd_tc/sc_tc in a namespace of its
    own without."""

    def __init__(self, ctx, cfg, dev, ns):
        self.ctx, self.cfg, self.dev = ctx, cfg, dev
        self.ns = None if cfg == "xdp_flow" else ns

    def tc(self, *args, timeout=None):
        return run("tc", *(["-n", self.ns] if self.ns else []), *args,
                   timeout=timeout)

    def up(self):
        if self.cfg == "xdp_flow":
            self.ctx.need_xf().enable(self.dev)
        elif self.tc("qdisc", "add", "dev", self.dev,
                     "clsact").returncode:
            raise Failed("cannot add clsact to %s" % self.dev)

    def down(self):
        self.tc("qdisc", "del", "dev", self.dev, "clsact")
        if self.cfg == "xdp_flow":
            self.ctx.xf.disable(self.dev)

    def timed(self, *args, timeout=None):
        """Seconds the tc command took; Failed when it failed."""
        t0 = time.monotonic()
        p = self.tc(*args, timeout=timeout)
        s = time.monotonic() - t0
        if p.returncode:
            raise Failed("tc %s failed (rc %d) after %.1f s: %s" % (
                args[0], p.returncode, s,
                " ".join((p.stderr or p.stdout).splitlines()[-2:])))
        return s


def rate_run(ctx, cfg, order):
    """One `tc -b` of the rules on cfg's device, then the qdisc deleted:
    {add, rps, del[, in_xdp, empty]} in seconds and rules a second."""
    k, xf = ctx.knobs, ctx.xf
    t = Target(ctx, cfg, "rd_xdp" if cfg == "xdp_flow" else "rd_tc",
               "xf_rate")
    t.up()
    path = rules_file(t.dev, order, k.rules)
    try:
        t0 = time.monotonic()
        v = {"add": t.timed("-b", path, timeout=900)}
        n = k.rules
        if cfg == "xdp_flow":
            # tc returns before the helper has put the last rules into
            # XDP: the time until all are there
            if xf.cmd("wait", "timeout", 600, timeout=660).returncode:
                ctx.out.note("rate", "xdp_flow %s: xdp-flow wait failed"
                             % order)
            v["in_xdp"] = time.monotonic() - t0
            n = xf.dev_rules(t.dev) or 0
            if n != k.rules:
                ctx.out.note("rate", "xdp_flow %s: xdp-flow status counts "
                             "%s rules on %s, not %d" % (order, n, t.dev,
                                                         k.rules))
        v["rps"] = n / v["add"]
        ctx.out.log("rate %s %s: %d rules in %.2f s (%.1f rules/s)%s" % (
            cfg, order, n, v["add"], v["rps"],
            ", all in XDP after %.2f s" % v["in_xdp"] if "in_xdp" in v
            else ""))
        t0 = time.monotonic()
        v["del"] = t.timed("qdisc", "del", "dev", t.dev, "clsact")
        if cfg == "xdp_flow":
            # should the module take them out of XDP after the block went,
            # count that too (one status poll costs ~1 s here)
            while (xf.dev_rules(t.dev) or 0) and time.monotonic() < t0 + 300:
                time.sleep(0.1)
            n = xf.dev_rules(t.dev) or 0
            if n:
                ctx.out.note("rate", "xdp_flow %s: %d rules still in XDP "
                             "after the qdisc went" % (order, n))
            v["empty"] = time.monotonic() - t0
            ctx.out.log("rate %s %s: qdisc del %.2f s, XDP empty after "
                        "%.2f s" % (cfg, order, v["del"], v["empty"]))
        return v
    finally:
        os.unlink(path)
        t.down()


def run_rate(ctx):
    """The rate section; see the module's docstring."""
    out, k = ctx.out, ctx.knobs
    out.log("== rate: %d flower rules through tc -b, with and without "
            "xdp_flow, prio orders: %s, %d rounds" % (
                k.rules, " ".join(k.rate_orders), k.rate_reps))
    vals = {}		# (cfg, order, what) -> [values of the rounds]
    ratios = {}		# order -> [xdp_flow / tc_flower of each round]
    try:
        veth_pairs(("rd_xdp", "rp_xdp"), ("rd_tc", "rp_tc"))
        dev_alone("xf_rate", "rd_tc")
        for rep in range(1, k.rate_reps + 1):
            for order in k.rate_orders:
                rps = {}
                for cfg in CONFIGS if rep % 2 else CONFIGS[::-1]:
                    try:
                        v = rate_run(ctx, cfg, order)
                    except Failed as e:
                        out.note("rate", "%s %s: %s" % (cfg, order, e))
                        continue
                    out.csv("rate", cfg, "add_s_%s_run%d" % (order, rep),
                            v["add"], "s")
                    for what, x in v.items():
                        vals.setdefault((cfg, order, what), []).append(x)
                    rps[cfg] = v["rps"]
                r = ratio(rps.get("xdp_flow"), rps.get("tc_flower"))
                if r is not None:
                    ratios.setdefault(order, []).append(r)
                    out.csv("rate", "xdp_flow", "ratio_to_tc_flower_%s_run%d"
                            % (order, rep), r, "ratio")
    finally:
        if ctx.xf:
            ctx.xf.disable("rd_xdp")
        devs_del("rd_xdp")
        netns_del("xf_rate")
    rate_report(out, k, vals, ratios)


def rate_report(out, k, vals, ratios):
    sm = out.sum
    sm()
    sm("rate: %d rules (distinct dst_ip, action drop) through tc -b, prio "
       "order one (all 10), asc, desc or random; then tc qdisc del; "
       "medians of %d rounds" % (k.rules, k.rate_reps))
    sm("  %-7s %-10s %8s %9s %7s %13s %9s %8s %11s" % (
        "order", "config", "add s", "rules/s", "ratio", "round ratios",
        "in XDP s", "del s", "XDP empty s"))
    names = {"rps": ("rules_per_s_%s", "rules/s"),
             "empty": ("xdp_empty_s_%s", "s")}
    for order in k.rate_orders:
        for cfg in CONFIGS:
            med = {w: median(vals.get((cfg, order, w), []))
                   for w in ("add", "rps", "del", "in_xdp", "empty")}
            if med["rps"] is None:
                continue
            for w, m in med.items():
                name, unit = names.get(w, (w + "_s_%s", "s"))
                out.csv("rate", cfg, name % order, m, unit)
            r, span = None, None
            if cfg == "xdp_flow":
                tc_rps = median(vals.get(("tc_flower", order, "rps"), []))
                r = ratio(med["rps"], tc_rps)
                out.csv("rate", cfg, "ratio_to_tc_flower_" + order, r,
                        "ratio")
                if med["in_xdp"]:
                    out.csv("rate", cfg, "in_xdp_ratio_to_tc_flower_" + order,
                            ratio(k.rules / med["in_xdp"], tc_rps), "ratio")
                span = value_range(ratios.get(order, []))
            sm("  %-7s %-10s %8.2f %9.1f %7s %13s %9s %8.2f %11s" % (
                order, cfg, med["add"], med["rps"],
                "-" if r is None else "%.2f" % r,
                "-" if span is None else "%.2f-%.2f" % span,
                _f2(med["in_xdp"]), med["del"], _f2(med["empty"])))


def _f2(v):
    return "-" if v is None else "%.2f" % v


def scale_one(ctx, cfg):
    """Every timing of scale for one configuration: {name: seconds}."""
    out, k, xf = ctx.out, ctx.knobs, ctx.xf
    t = Target(ctx, cfg, "sc_xdp" if cfg == "xdp_flow" else "sc_tc",
               "xf_scale")
    t.up()
    path = rules_file(t.dev, "one", k.scale_rules)
    v = {}
    try:
        v["add"] = t.timed("-b", path, timeout=1800)
        n = k.scale_rules
        if cfg == "xdp_flow":
            n = xf.dev_rules(t.dev)
            if n != k.scale_rules:
                out.note("scale", "xdp_flow: %s of %d rules in XDP"
                         % (n, k.scale_rules))
        v["show"] = t.timed("-s", "filter", "show", "dev", t.dev, "ingress",
                            timeout=1800)
        out.log("scale %s: %s rules added in %.2f s; tc -s filter show "
                "%.2f s" % (cfg, n, v["add"], v["show"]))
        if cfg == "xdp_flow":
            t0 = time.monotonic()
            xf.cmd("show", "dev", t.dev, timeout=1800)
            v["xshow"] = time.monotonic() - t0
            # the replay: kill the helper; until a new one has every rule
            # in XDP again
            old = xf.status().get("helper_pid")
            if not old:
                raise Failed("xdp-flow status gives no helper pid")
            t0 = time.monotonic()
            os.kill(old, signal.SIGKILL)
            if xf.wait_new_helper(old, 600) is None:
                out.note("scale", "no new helper within 600 s")
            while (xf.dev_rules(t.dev) != k.scale_rules and
                   time.monotonic() < t0 + 600):
                time.sleep(0.5)
            v["replay"] = time.monotonic() - t0
            n = xf.dev_rules(t.dev)
            if n != k.scale_rules:
                out.note("scale", "after the kill, %s of %d rules in XDP"
                         % (n, k.scale_rules))
            out.log("scale %s: xdp-flow show %.2f s; after a helper kill "
                    "every rule in XDP again in %.2f s"
                    % (cfg, v["xshow"], v["replay"]))
        v["del"] = t.timed("qdisc", "del", "dev", t.dev, "clsact")
    finally:
        os.unlink(path)
        t.down()
    return v


def run_scale(ctx):
    """The scale section; see the module's docstring."""
    out, k = ctx.out, ctx.knobs
    out.log("== scale: %d rules, with and without xdp_flow"
            % k.scale_rules)
    v = {}
    names = (("add", "add_s"), ("show", "tc_s_show_s"),
             ("xshow", "xdp_flow_show_s"), ("replay", "replay_s"),
             ("del", "qdisc_del_s"))
    try:
        veth_pairs(("sc_xdp", "sp_xdp"), ("sc_tc", "sp_tc"))
        dev_alone("xf_scale", "sc_tc")
        for cfg in CONFIGS:
            try:
                v[cfg] = scale_one(ctx, cfg)
            except (Failed, OSError) as e:
                out.note("scale", "%s: %s" % (cfg, e))
                continue
            for what, name in names:
                out.csv("scale", cfg, name, v[cfg].get(what), "s")
    finally:
        if ctx.xf:
            ctx.xf.disable("sc_xdp")
        devs_del("sc_xdp")
        netns_del("xf_scale")
    sm = out.sum
    sm()
    sm("scale: %d rules (one prio, distinct dst_ip, action drop), seconds"
       % k.scale_rules)
    sm("  %-10s %10s %12s %14s %12s %10s" % (
        "config", "tc -b", "tc -s show", "xdp-flow show", "replay",
        "qdisc del"))
    for cfg in v:
        sm("  %-10s" % cfg + "".join(
            " %*s" % (w, _f2(v[cfg].get(what))) for (what, _), w in
            zip(names, (10, 12, 14, 12, 10))))
    r = ratio(v.get("tc_flower", {}).get("add"),
              v.get("xdp_flow", {}).get("add"))
    out.csv("scale", "xdp_flow", "add_rate_ratio_to_tc_flower", r, "ratio")
    if r is not None:
        sm("  rules/s with offload, of without: %.2f" % r)
