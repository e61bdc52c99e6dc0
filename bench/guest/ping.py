# SPDX-License-Identifier: GPL-2.0
"""Section ping: a flow's first packet through Open vSwitch.

Two namespaces on an OVS bridge (kernel datapath): the round trip of a
first ping (the datapath's flows purged before it: upcall, flow set-up)
and of the ping after it, XF_BENCH_PING_REPS times, then an iperf3 TCP
stream between the namespaces through the bridge (XF_BENCH_REPS x
XF_BENCH_SECS), with hw-offload

  off     software OVS
  on_sw   on without xdp_flow (the flows become TC flower rules in
          software)
  on      on, xdp_flow enabled on the ports with its default hook (auto:
          tc on these veths where the kernel has tcx)
  on_xdp  on, xdp_flow with hook xdp.
"""

import os
import re

from benchstats import median, ratio
from xfpy.net import devs_del, ip_batch, netns_del, v6_off
from xfpy.ovs import Ovs
from xfpy.proc import Failed, must, ok, run
from xfpy.traffic import Iperf3Server, tcp_gbps

MODES = ("off", "on_sw", "on", "on_xdp")
NS = ("xfbo1", "xfbo2")
PORTS = ("op1", "op2")
MACS = ("02:0f:00:20:00:01", "02:0f:00:20:00:02")
ADDRS = ("10.20.0.1", "10.20.0.2")
IPERF_PORT = 5201


def cleanup(ctx):
    if ctx.ovs.running:
        ctx.ovs.stop()
    if ctx.xf:
        ctx.xf.disable(*PORTS)
    netns_del(*NS)
    devs_del(*PORTS)


def topology():
    """op1/op2 in the root namespace, eth0 10.20.0.1 and .2 in two
    namespaces; static neighbours (no ARP in the measured pings), GRO on
    the namespace ends (XDP redirects into them need it)."""
    for i in (0, 1):
        must("ip", "netns", "add", NS[i])
        must("ip", "link", "add", PORTS[i], "type", "veth", "peer", "name",
             "eth0", "netns", NS[i])
        v6_off(PORTS[i])
        must("ip", "link", "set", "dev", PORTS[i], "up")
        v6_off("eth0", ns=NS[i])
        must("ethtool", "-K", "eth0", "gro", "on", ns=NS[i])
        p = ip_batch(["link set dev eth0 address " + MACS[i],
                      "link set dev lo up",
                      "addr add %s/24 dev eth0" % ADDRS[i],
                      "link set dev eth0 up",
                      "neigh replace %s lladdr %s dev eth0 nud permanent"
                      % (ADDRS[1 - i], MACS[1 - i])], ns=NS[i])
        if p.returncode:
            raise Failed("cannot configure %s: %s" % (NS[i], p.stderr))


def ping_rtts():
    """Two pings from xfbo1 to xfbo2, the first after the datapath's flows
    were purged: (first ms, second ms, datapath flows after them)."""
    # purge, not dpctl/del-flows: that leaves the revalidators' keys of
    # the flows, and upcalls of packets of a still-known flow are then
    # answered without setting the flow up again
    must("ovs-appctl", "revalidator/purge")
    p = run("ping", "-c", 2, "-i", 0.5, "-W", 5, ADDRS[1], ns=NS[0])
    # ping has no JSON output: its reply lines end in "time=<ms> ms"
    rtts = [float(t) for t in re.findall(r"time=([\d.]+) ms", p.stdout)]
    if len(rtts) < 2:
        raise Failed("ping failed: " + " ".join(p.stdout.split()[-12:]))
    return rtts[0], rtts[1], len(Ovs.dp_flows())


def mode_up(ctx, mode):
    """OVS (and for on/on_xdp, xdp_flow on the ports, enabled before OVS
    adds them and their clsact) with the bridge, its MACs learnt."""
    ctx.ovs.stop()
    if ctx.xf:
        ctx.xf.disable(*PORTS)
    if mode in ("on", "on_xdp"):
        xf = ctx.need_xf()
        hook = "xdp" if mode == "on_xdp" else "auto"
        for p in PORTS:
            xf.enable(p, hook, clsact=False)
    ctx.ovs.start(offload=mode != "off")
    must("ovs-vsctl", "--", "add-br", "xfbr", "--", "add-port", "xfbr",
         PORTS[0], "--", "add-port", "xfbr", PORTS[1])
    # learn both MACs (NORMAL then outputs to one port: offloadable)
    run("ping", "-c", 2, "-i", 0.3, "-W", 5, ADDRS[1], ns=NS[0])
    if not ok("ping", "-c", 1, "-W", 5, ADDRS[1], ns=NS[0]):
        raise Failed("no ping through the bridge")


def measure(ctx, mode, res):
    out, k = ctx.out, ctx.knobs
    for r in range(1, k.ping_reps + 1):
        try:
            first, second, flows = ping_rtts()
        except Failed as e:
            out.note("ping", "hw-offload %s rep %d: %s" % (mode, r, e))
            continue
        res["first"].append(first)
        res["second"].append(second)
        out.log("ping hw-offload %s rep %d: first %.3f ms, second %.3f ms; "
                "%d datapath flows" % (mode, r, first, second, flows))
        if not flows:
            out.note("ping", "hw-offload %s rep %d: the pings set up no "
                     "datapath flow" % (mode, r))
    # a TCP stream between the namespaces, through the bridge
    srv = Iperf3Server(NS[1], ADDRS[1], IPERF_PORT)
    try:
        for r in range(1, k.reps + 1):
            try:
                g = tcp_gbps(NS[0], ADDRS[1], IPERF_PORT, k.secs)
            except Failed as e:
                out.note("ping", "hw-offload %s: iperf3 run %d failed: %s"
                         % (mode, r, e))
                continue
            res["tcp"].append(g)
            out.log("tcp hw-offload %s run %d: %.3f Gbit/s" % (mode, r, g))
    finally:
        srv.stop()
    res["oflows"] = len(Ovs.dp_flows("offloaded"))
    if mode == "on" and not res["oflows"]:
        log = os.path.join(out.outdir, "ovs-ping.log")
        out.note("ping", "hw-offload on: no flow was offloaded (OVS log in "
                 "%s)" % log)
        with open(log, "w") as f:
            for cmd in (("ovs-vsctl", "get", "Open_vSwitch", ".",
                         "other_config"),
                        ("ovs-appctl", "dpctl/dump-flows", "-m"),
                        ("tc", "-s", "filter", "show", "dev", PORTS[0],
                         "ingress"),
                        (ctx.xf.cli, "show"),
                        ("cat", Ovs.DIR + "/ovs-vswitchd.log")):
                p = run(*cmd)
                f.write(p.stdout + p.stderr)


def run_section(ctx):
    """The ping section; see the module's docstring."""
    out, k = ctx.out, ctx.knobs
    out.log("== ping: first ping through OVS, hw-offload off and on; %d "
            "times each; then a TCP stream" % k.ping_reps)
    why = ctx.ovs.unavailable()
    if why:
        raise Failed(why)
    res = {m: {"first": [], "second": [], "tcp": []} for m in MODES}
    try:
        cleanup(ctx)
        topology()
        for mode in MODES:
            try:
                mode_up(ctx, mode)
                measure(ctx, mode, res[mode])
            except Failed as e:
                out.note("ping", "hw-offload %s: %s" % (mode, e))
    finally:
        cleanup(ctx)
    report(out, k, res)


def report(out, k, res):
    sm, csv = out.sum, out.csv
    med = {m: {w: median(res[m][w]) for w in ("first", "second", "tcp")}
           for m in MODES}
    sm()
    sm("ping: two namespaces on an OVS bridge; the first ping after "
       "revalidator/purge (upcall, flows set up) and the next; median ms "
       "of %d" % k.ping_reps)
    sm("  %-14s %10s %10s %10s %s" % ("hw-offload", "first", "second",
                                      "ratio", "flows offloaded after"))
    for m in MODES:
        f = med[m]["first"]
        if f is None:
            continue
        cfg = "hw_offload_" + m
        csv("ping", cfg, "first_rtt_ms", f, "ms")
        csv("ping", cfg, "second_rtt_ms", med[m]["second"], "ms")
        csv("ping", cfg, "flows_offloaded", res[m].get("oflows", 0), "count")
        r = ratio(f, med["off"]["first"])
        csv("ping", cfg, "first_ratio_to_off", r, "ratio")
        if m != "off":
            csv("ping", cfg, "first_ratio_to_on_sw",
                ratio(f, med["on_sw"]["first"]), "ratio")
        sm("  %-14s %10.3f %10.3f %10s %s" % (
            m, f, med[m]["second"], "-" if r is None else "%.2f" % r,
            res[m].get("oflows", 0)))
    sm()
    sm("tcp: an iperf3 TCP stream between the namespaces through the "
       "bridge, median of %d x %gs" % (k.reps, k.secs))
    sm("  %-14s %10s %10s" % ("hw-offload", "Gbit/s", "ratio"))
    for m in MODES:
        g = med[m]["tcp"]
        if g is None:
            continue
        r = ratio(g, med["off"]["tcp"])
        csv("ping", "hw_offload_" + m, "tcp_gbps", g, "Gbit/s")
        csv("ping", "hw_offload_" + m, "tcp_ratio_to_off", r, "ratio")
        sm("  %-14s %10.2f %10s" % (m, g, "-" if r is None else "%.2f" % r))
