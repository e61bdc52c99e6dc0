# SPDX-License-Identifier: GPL-2.0
"""Section forward: the seed scenario, the prior art's table.

One UDP flow of 64-byte frames from a generator into veth D; D's ingress
sends it to veth V, and an XDP program on V's peer P counts and drops it
(bench/xdp_sink.bpf.c). Packets a second at P for:

  xdp_flow     `xdp-flow enable dev D` and a flower rule dst_ip X action
               mirred egress redirect dev V (in_hw: XDP runs it)
  xdp_flow_tc  the same through xdp_flow's TC hook (tcx)
  tc_flower    the same rule in TC software (D not enabled)
  ovs          D and V ports of an OVS bridge (kernel datapath,
               hw-offload=false), flow in_port=D actions=output:V
  xdp_floor    bench/xdp_floor.bpf.c on D: bpf_redirect to V, no parsing,
               no lookup (what any XDP forwarding costs at the least)
  gen_only     the sink on D itself: what generating and receiving cost
               without forwarding

Generator and forwarding share CPU 0, so the time a packet costs adds up:
1/pps - 1/pps(gen_only) is what forwarding costs (from each one's best
run: a busy host only slows runs down, and a difference amplifies noise).
XF_BENCH_SPLIT=1 runs D's NAPI in a thread on CPU 1 instead: TC and OVS
are then measured alone, but the XDP configurations forward as fast as
the generator sends. The configurations take turns (round robin), so that
a slow spell of the shared host hits all alike.
"""

import os
import time

from benchstats import best, median, ratio
from guest.common import PIN, sink_attach
from xfpy.net import (devs_del, ethtool_stat, gro_on, ifindex, mac, rx_packets,
                      veth_pairs)
from xfpy.ovs import Ovs
from xfpy.proc import Failed, must, ok, run
from xfpy.tc import rule_in_hw, rule_packets
from xfpy.traffic import X, Gen

CONFIGS = ("xdp_flow", "xdp_flow_tc", "tc_flower", "ovs", "xdp_floor",
           "gen_only")
SHORT = {"xdp_flow": "xdp", "xdp_flow_tc": "xtc", "tc_flower": "tc",
         "ovs": "ovs", "xdp_floor": "flr", "gen_only": "nul"}
FORWARDING = ("xdp", "xtc", "tc", "ovs", "flr")


def rx_dev(cfg):
    """Where the configuration's frames are counted: P, or D itself for
    gen_only (the sink on D)."""
    s = SHORT[cfg]
    return "fd_nul" if cfg == "gen_only" else "fp_" + s


class Forward:
    def __init__(self, ctx):
        self.ctx, self.out, self.k = ctx, ctx.out, ctx.knobs
        self.ready = []
        self.split = False

    def note(self, text):
        self.out.note("forward", text)

    def cleanup(self):
        if self.ctx.ovs.running:
            self.ctx.ovs.stop()
        if self.ctx.xf:
            self.ctx.xf.disable("fd_xdp", "fd_xtc")
        devs_del(*("fg_" + s for s in FORWARDING + ("nul",)),
                 *("fv_" + s for s in FORWARDING))
        run("rm", "-rf", PIN + "/floor", PIN + "/floor_maps")

    def setup(self):
        """Every configuration's devices and rules; self.ready lists those
        that could be set up, a note says why for the others."""
        veth_pairs(*[p for s in FORWARDING
                     for p in (("fg_" + s, "fd_" + s),
                               ("fv_" + s, "fp_" + s))],
                   ("fg_nul", "fd_nul"))
        sink_attach(*("fp_" + s for s in FORWARDING))
        # NAPI on every D: the generator's frames arrive by ndo_xdp_xmit
        gro_on(*("fd_" + s for s in FORWARDING))
        setups = {"xdp_flow": lambda: self.setup_xdp_flow("xdp", "xdp"),
                  "xdp_flow_tc": lambda: self.setup_xdp_flow("xtc", "tc"),
                  "tc_flower": self.setup_tc, "ovs": self.setup_ovs,
                  "xdp_floor": self.setup_floor,
                  "gen_only": lambda: sink_attach("fd_nul")}
        for cfg in CONFIGS:
            try:
                setups[cfg]()
                self.ready.append(cfg)
            except Failed as e:
                self.note("%s: %s" % (cfg, e))
        if self.k.split:
            self.napi_split()

    def redirect_rule(self, s):
        must("tc", "filter", "add", "dev", "fd_" + s, "ingress", "pref", 1,
             "protocol", "ip", "flower", "dst_ip", X, "action", "mirred",
             "egress", "redirect", "dev", "fv_" + s,
             what="tc filter add (redirect to fv_%s)" % s)

    def setup_xdp_flow(self, s, hook):
        self.ctx.need_xf().enable("fd_" + s, hook)
        self.redirect_rule(s)
        if not rule_in_hw("fd_" + s, 1):
            raise Failed("the redirect rule is not in_hw")

    def setup_tc(self):
        must("tc", "qdisc", "add", "dev", "fd_tc", "clsact")
        self.redirect_rule("tc")
        if rule_in_hw("fd_tc", 1):
            raise Failed("the rule on fd_tc is in_hw (should run in TC)")

    def setup_ovs(self):
        ovs = self.ctx.ovs
        why = ovs.unavailable()
        if why:
            raise Failed(why)
        ovs.start(offload=False)
        must("ovs-vsctl", "--", "add-br", "xfbr", "--", "add-port", "xfbr",
             "fd_ovs", "--", "add-port", "xfbr", "fv_ovs")
        must("ovs-ofctl", "del-flows", "xfbr")
        must("ovs-ofctl", "add-flow", "xfbr",
             "in_port=fd_ovs,actions=output:fv_ovs")

    def setup_floor(self):
        obj = self.k.floor_obj
        if not os.path.exists(obj):
            raise Failed("no %s (make -C bench on the host)" % obj)
        must("bpftool", "prog", "load", obj, PIN + "/floor", "type", "xdp",
             "pinmaps", PIN + "/floor_maps")
        # the ifindex goes into the program's .bss before it is attached
        v = ifindex("fv_flr")
        must("bpftool", "map", "update", "pinned",
             PIN + "/floor_maps/xdp_floo_bss", "key", 0, 0, 0, 0, "value",
             *(v >> s & 255 for s in (0, 8, 16, 24)))
        must("ip", "link", "set", "dev", "fd_flr", "xdpdrv", "pinned",
             PIN + "/floor")

    def napi_split(self):
        """Each D's NAPI (and with it all the forwarding) in a kernel
        thread on CPU 1; the generator stays on CPU 0."""
        devs = ["fd_" + s for s in FORWARDING + ("nul",)]
        try:
            if os.cpu_count() < 2:
                raise Failed("one CPU")
            for d in devs:
                with open("/sys/class/net/%s/threaded" % d, "w") as f:
                    f.write("1")
                pids = [p for p in os.listdir("/proc") if p.isdigit() and
                        _comm(p).startswith("napi/%s-" % d)]
                if not pids:
                    raise Failed("no NAPI thread for " + d)
                for p in pids:
                    must("taskset", "-pc", 1, p)
            self.split = True
        except (Failed, OSError) as e:
            self.note("cannot run the NAPI of fd_* in threads on CPU 1 (%s):"
                      " generator and forwarding share CPU 0" % e)
            for d in devs:
                run("sh", "-c", "echo 0 >/sys/class/net/%s/threaded" % d)

    def measure(self, gen, cfg):
        """One run: (pps at the sink, offered pps)."""
        s, rxd = SHORT[cfg], rx_dev(cfg)
        g = Gen(self.k.xdp_gen, gen, "fg_" + s, mac("fd_" + s))
        try:
            time.sleep(self.k.warm)
            c0, t0 = rx_packets(rxd), time.monotonic()
            time.sleep(self.k.secs)
            c1, t1 = rx_packets(rxd), time.monotonic()
            if not g.alive():
                raise Failed("%s died: %s" % (gen, g.output()))
        finally:
            offered = g.stop()
        return (c1 - c0) / (t1 - t0), offered

    @staticmethod
    def check(cfg):
        """After the runs: the traffic went where the configuration says
        (XDP's or the TC hook's counter, TC's, the datapath flow, the
        floor's redirects, the sink's drops)."""
        if cfg in ("xdp_flow", "xdp_flow_tc"):
            d = "fd_" + SHORT[cfg]
            return "rule counters: %s packets, %s of them in %s (hardware)" % (
                rule_packets(d, 1), rule_packets(d, 1, hw=True),
                "XDP" if cfg == "xdp_flow" else "the TC hook")
        if cfg == "tc_flower":
            return "rule counter: %s packets, in software" % (
                rule_packets("fd_tc", 1))
        if cfg == "ovs":
            flows = Ovs.dp_flows()
            return "%d datapath flow(s): packets %s" % (
                len(flows), " ".join(str(f["packets"]) for f in flows))
        if cfg == "xdp_floor":
            return "%d frames redirected by XDP on fd_flr" % (
                ethtool_stat("fd_flr", "xdp_redirect"))
        return "%d frames dropped by the sink on fd_nul" % (
            ethtool_stat("fd_nul", "xdp_drops"))

    def run_gen(self, gen):
        sec = "forward" if gen == "xdp_gen" else "forward_" + gen
        if gen == "xdp_gen" and not os.access(self.k.xdp_gen, os.X_OK):
            self.out.note(sec, "no %s (make -C bench on the host)"
                          % self.k.xdp_gen)
            return
        if gen == "pktgen" and not (ok("modprobe", "pktgen") and
                                    os.path.isdir("/proc/net/pktgen")):
            self.out.note(sec, "cannot load pktgen")
            return
        runs = {c: [] for c in self.ready}
        offered = {c: [] for c in self.ready}
        checks = {}
        for r in range(1, self.k.reps + 1):
            for cfg in self.ready:
                try:
                    pps, off = self.measure(gen, cfg)
                except Failed as e:
                    self.out.note(sec, "%s run %d: the measurement failed: %s"
                                  % (cfg, r, e))
                else:
                    self.out.log("%s %s run %d: %.0f pps (offered %s pps)" % (
                        sec, cfg, r, pps, "%.0f" % off if off else "?"))
                    runs[cfg].append(pps)
                    if off:
                        offered[cfg].append(off)
                    self.out.csv(sec, cfg, "pps_run%d" % r, pps, "pps")
                # while OVS still has its datapath flow (idle 10 s)
                if r == self.k.reps:
                    checks[cfg] = self.check(cfg)
                    self.out.log("%s %s: %s" % (sec, cfg, checks[cfg]))
        self.report(sec, gen, runs, offered, checks)

    def report(self, sec, gen, runs, offered, checks):
        csv, sm = self.out.csv, self.out.sum
        med = {c: median(v) for c, v in runs.items() if v}
        top = {c: best(v) for c, v in runs.items() if v}
        for c in med:
            csv(sec, c, "pps", med[c], "pps")
            csv(sec, c, "pps_best", top[c], "pps")
            csv(sec, c, "offered_pps", median(offered[c]), "pps")
        # with all on one CPU the time a packet costs adds up: less what
        # generating and receiving alone cost, forwarding remains
        cost = {}
        if not self.split and top.get("gen_only"):
            for c in top:
                if c != "gen_only" and top[c] > 0:
                    cost[c] = 1e6 / top[c] - 1e6 / top["gen_only"]
                    csv(sec, c, "fwd_cost_us", cost[c], "us/pkt")
        where = ("generator %s on CPU 0, D's NAPI thread (all forwarding) "
                 "on CPU 1" % gen if self.split else
                 "generator %s and all forwarding on CPU 0" % gen)
        sm()
        sm("%s: one UDP flow, 64-byte frames, %s;" % (sec, where))
        sm("  pps: packets a second reaching P (the XDP sink), median of "
           "%d x %gs; ratio: to xdp_flow;" % (self.k.reps, self.k.secs))
        sm("  offered: what the generator sent a second")
        sm("  best: the fastest run (a busy host only ever slows a run "
           "down)")
        if not self.split:
            sm("  us/pkt: forwarding cost from the best runs, 1/best - "
               "1/best(gen_only), in emulated")
            sm("  microseconds a packet; ratio: to xdp_flow's")
        sm("  %-11s %9s %6s %9s %9s %6s %8s %6s  %s" % (
            "config", "pps", "ratio", "offered", "best", "ratio", "us/pkt",
            "ratio", "runs (pps)"))
        for c in med:
            r = ratio(med[c], med.get("xdp_flow"))
            rb = ratio(top[c], top.get("xdp_flow"))
            cr = ratio(cost.get(c), cost.get("xdp_flow"))
            csv(sec, c, "ratio_to_xdp_flow", r, "ratio")
            csv(sec, c, "best_ratio_to_xdp_flow", rb, "ratio")
            csv(sec, c, "fwd_cost_ratio_to_xdp_flow", cr, "ratio")
            sm("  %-11s %9.0f %6s %9s %9.0f %6s %8s %6s  %s" % (
                c, med[c], _f2(r), _f0(median(offered[c])), top[c], _f2(rb),
                _f2(cost.get(c)), _f2(cr),
                " ".join("%.0f" % v for v in runs[c])))
        if "xdp_flow" not in med:
            sm("  (no xdp_flow figure: no ratios)")
        for c in self.ready:
            if c in checks:
                sm("  check %s: %s" % (c, checks[c]))


def _comm(pid):
    try:
        with open("/proc/%s/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return ""


def _f2(v):
    return "-" if v is None else "%.2f" % v


def _f0(v):
    return "-" if v is None else "%.0f" % v


def run_section(ctx):
    """The forward section; see the module's docstring."""
    k = ctx.knobs
    ctx.out.log("== forward: one UDP flow, 64-byte frames, D -> V -> XDP "
                "sink; %d x %gs per configuration" % (k.reps, k.secs))
    if not ctx.sink_ok:
        raise Failed("no usable sink %s (make -C bench on the host)"
                     % k.sink_obj)
    fw = Forward(ctx)
    try:
        fw.setup()
        if not fw.ready:
            raise Failed("no configuration could be set up")
        ctx.out.log("configurations ready: %s; NAPI threads on CPU 1: %d"
                    % (" ".join(fw.ready), fw.split))
        ctx.out.csv("meta", "forward", "napi_thread_cpu1", int(fw.split),
                    "flag")
        gens = ("xdp_gen", "pktgen") if k.gens == "both" else (k.gens,)
        for gen in gens:
            fw.run_gen(gen)
    finally:
        fw.cleanup()
