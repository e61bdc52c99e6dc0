# SPDX-License-Identifier: GPL-2.0
"""Section latency: how long a new rule takes to act.

A steady flow (XF_BENCH_LAT_PPS frames a second) to X through D, sent on
to a sink behind V by a prio 2 redirect. The time from starting `tc
filter add ... prio 1 flower dst_ip X action drop` until (a) tc returns,
(b) the rule's counter first moves in `tc -j -s filter show` (the
hardware counter with xdp_flow), (c) the flow stops arriving at the sink
(the rule acts on the datapath); and after `tc filter del`, until tc
returns and the flow arrives again. With xdp_flow (hook xdp) and in
software TC; both flows run throughout, so that both see the same
background load.
"""

import os
import threading
import time

from benchstats import median, ratio
from guest.common import sink_attach
from xfpy.net import devs_del, gro_on, mac, rx_packets, veth_pairs
from xfpy.proc import Failed, must, run
from xfpy.tc import rule_in_hw, rule_packets
from xfpy.traffic import X, Gen

CONFIGS = ("xdp_flow", "tc_flower")
SHORT = {"xdp_flow": "xdp", "tc_flower": "tc"}
# metric: (csv name, table heading)
METRICS = (("add", "tc_add", "tc add"), ("cnt", "counter", "counter"),
           ("poll", "counter_poll", "(poll)"),
           ("eff", "flow_stops", "flow stops"), ("del", "tc_del", "tc del"),
           ("back", "flow_back", "flow back"))


class Poller(threading.Thread):
    """Watches a device's rx_packets every millisecond until stopped; then
    .last is when it last changed."""

    def __init__(self, dev):
        super().__init__(daemon=True)
        self.dev = dev
        self.halt = threading.Event()
        self.last = time.monotonic()

    def run(self):
        v = rx_packets(self.dev)
        while not self.halt.wait(0.001):
            n = rx_packets(self.dev)
            if n != v:
                v, self.last = n, time.monotonic()

    def stop(self):
        self.halt.set()
        self.join()
        return self.last


def wait_moving(dev, timeout):
    """When the device's rx_packets was first seen moving; Failed when it
    does not within timeout."""
    c0, end = rx_packets(dev), time.monotonic() + timeout
    while time.monotonic() < end:
        time.sleep(0.001)
        if rx_packets(dev) != c0:
            return time.monotonic()
    raise Failed("no traffic at %s" % dev)


def one_rep(out, cfg):
    """One addition and deletion of the drop rule: {metric: ms}, without
    the metrics that could not be seen."""
    s = SHORT[cfg]
    d, p = "ld_" + s, "lp_" + s
    hw = cfg == "xdp_flow"
    ms = {}
    wait_moving(p, 5)
    poll = Poller(p)
    poll.start()
    try:
        time.sleep(0.05)
        t0 = time.monotonic()
        res = run("tc", "filter", "add", "dev", d, "ingress", "pref", 1,
                  "protocol", "ip", "flower", "dst_ip", X, "action", "drop")
        ms["add"] = (time.monotonic() - t0) * 1e3
        if res.returncode != 0:
            raise Failed("tc filter add failed: " + res.stderr.strip())
        # the counter: one tc process a poll, which sets the resolution
        while time.monotonic() < t0 + 10:
            tp = time.monotonic()
            if (rule_packets(d, 1, hw=hw) or 0) > 0:
                t2 = time.monotonic()
                ms["cnt"], ms["poll"] = (t2 - t0) * 1e3, (t2 - tp) * 1e3
                break
        # the flow has stopped when the counter at the sink stays still
        time.sleep(0.5)
    finally:
        last = poll.stop()
    if time.monotonic() - last < 0.4:
        out.log("%s: the flow did not stop within %.0f ms"
                % (cfg, (time.monotonic() - t0) * 1e3))
    else:
        ms["eff"] = (last - t0) * 1e3
    if hw and not rule_in_hw(d, 1):
        out.log("%s: the drop rule is not in_hw" % cfg)
    t0 = time.monotonic()
    must("tc", "filter", "del", "dev", d, "ingress", "pref", 1)
    ms["del"] = (time.monotonic() - t0) * 1e3
    try:
        ms["back"] = (wait_moving(p, 10) - t0) * 1e3
    except Failed:
        out.log("%s: the flow did not come back after the delete" % cfg)
    return ms


def setup(ctx, gens):
    """The two paths, their prio 2 redirects and their flows; the
    configurations that are ready."""
    out, k = ctx.out, ctx.knobs
    veth_pairs(("lg_xdp", "ld_xdp"), ("lv_xdp", "lp_xdp"),
               ("lg_tc", "ld_tc"), ("lv_tc", "lp_tc"))
    sink_attach("lp_xdp", "lp_tc")
    gro_on("ld_xdp", "ld_tc")
    ready = []
    for cfg in CONFIGS:
        s = SHORT[cfg]
        try:
            if cfg == "xdp_flow":
                ctx.need_xf().enable("ld_xdp")
            else:
                must("tc", "qdisc", "add", "dev", "ld_tc", "clsact")
            # the base path: prio 2 sends the flow to the sink
            must("tc", "filter", "add", "dev", "ld_" + s, "ingress", "pref",
                 2, "protocol", "ip", "flower", "dst_ip", X, "action",
                 "mirred", "egress", "redirect", "dev", "lv_" + s,
                 what="the prio 2 redirect")
            if cfg == "xdp_flow" and not rule_in_hw("ld_xdp", 2):
                raise Failed("the prio 2 redirect is not in_hw")
            gens.append(Gen(k.xdp_gen, "xdp_gen", "lg_" + s, mac("ld_" + s),
                            pps=k.lat_pps, keep="xgk%d" % len(gens)))
            ready.append(cfg)
        except Failed as e:
            out.note("latency", "%s: %s" % (cfg, e))
    return ready


def run_section(ctx):
    """The latency section; see the module's docstring."""
    out, k = ctx.out, ctx.knobs
    out.log("== latency: a flow of %d pps to %s; tc filter add prio 1 ... "
            "action drop; %d times each" % (k.lat_pps, X, k.lat_reps))
    if not ctx.sink_ok or not os.access(k.xdp_gen, os.X_OK):
        raise Failed("no usable %s or %s (make -C bench on the host)"
                     % (k.sink_obj, k.xdp_gen))
    gens = []
    vals = {(c, m[0]): [] for c in CONFIGS for m in METRICS}
    try:
        ready = setup(ctx, gens)
        # what a tc process costs here, whatever it does
        noop = []
        for _ in range(3):
            t0 = time.monotonic()
            run("tc", "filter", "show", "dev", "lo", "ingress")
            noop.append((time.monotonic() - t0) * 1e3)
        for r in range(1, k.lat_reps + 1):
            for cfg in ready:
                try:
                    ms = one_rep(out, cfg)
                except Failed as e:
                    out.note("latency", "%s rep %d failed: %s" % (cfg, r, e))
                    continue
                out.log("latency %s rep %d: %s" % (cfg, r, ", ".join(
                    "%s %.1f ms" % (m[2], ms[m[0]]) for m in METRICS
                    if m[0] in ms)))
                for m in ms:
                    vals[(cfg, m)].append(ms[m])
    finally:
        for g in gens:
            g.stop()
        if ctx.xf:
            ctx.xf.disable("ld_xdp")
        devs_del("lg_xdp", "lv_xdp", "lg_tc", "lv_tc")
    report(out, k, noop, vals)


def report(out, k, noop, vals):
    sm = out.sum
    med = {key: median(v) for key, v in vals.items()}
    sm()
    sm("latency: a flow of %d pps to %s through D; tc filter add prio 1 "
       "flower dst_ip %s action drop, then tc filter del; median ms of %d"
       % (k.lat_pps, X, X, k.lat_reps))
    sm("  (each tc process costs ~%.1f ms here by itself: tc filter show "
       "dev lo)" % median(noop))
    out.csv("latency", "tc_process", "noop_ms", median(noop), "ms")
    sm("  %-10s" % "config" + "".join(" %10s" % m[2] for m in METRICS))
    for cfg in CONFIGS:
        if not vals[(cfg, "add")]:
            continue
        for m in METRICS:
            out.csv("latency", cfg, m[1] + "_ms", med[(cfg, m[0])], "ms")
        sm("  %-10s" % cfg + "".join(
            " %10s" % _f1(med[(cfg, m[0])]) for m in METRICS))
    if vals[("xdp_flow", "add")] and vals[("tc_flower", "add")]:
        line = "  %-10s" % "xdp/sw"
        for m in METRICS:
            r = ratio(med[("xdp_flow", m[0])], med[("tc_flower", m[0])])
            out.csv("latency", "xdp_flow", m[1] + "_ratio_to_tc_flower", r,
                    "ratio")
            line += " %10s" % ("-" if r is None else "%.2f" % r)
        sm(line)
    sm("  ms from the start of the tc command: tc add, tc del: until the "
       "command returned (a tc process")
    sm("  alone costs the time above); counter: until a poll (one tc "
       "process each, lasting (poll))")
    sm("  saw the rule's counter move (the hardware counter with "
       "xdp_flow); flow stops / flow back: until")
    sm("  the flow stopped / came back at the sink (1 ms polls of its "
       "rx_packets)")


def _f1(v):
    return "-" if v is None else "%.1f" % v
