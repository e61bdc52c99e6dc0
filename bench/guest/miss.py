# SPDX-License-Identifier: GPL-2.0
"""Section miss: what xdp_flow costs the traffic none of its rules match.

From namespace xfbm (ms0) to mr0 in the root namespace: an iperf3 TCP
stream (end.sum_received) and 64-byte iperf3 UDP datagrams at full speed
(-b 0; datagrams a second that reached the UDP layer: Udp InDatagrams +
InErrors; veth receives in the sender's context, so that is what the
receive path allows), client on CPU 0, server on CPU 1,
XF_BENCH_MISS_SECS each, round robin over XF_BENCH_MISS_REPS, each
configuration set up just before its runs:

  disabled      nothing on mr0
  xdp|tc|auto   `xdp-flow enable dev mr0 hook <hook>`, clsact and one
                flower rule that matches none of the traffic (dst_ip
                192.0.2.99 action drop, in_hw), so that the datapath is
                attached; the first time, a probe rule checks that the
                datapath counts mr0's packets.
"""

import json
import sys
import time

from benchstats import best, median, ratio
from guest.common import tcp_udp_run
from xfpy.net import (devs_del, ip_batch, netns_del, netns_fresh, rx_packets,
                      udp_layer, v6_off, xdp_prog_id)
from xfpy.proc import Failed, must, run
from xfpy.tc import rule_in_hw, rule_packets
from xfpy.traffic import Iperf3Server

CONFIGS = ("disabled", "xdp", "tc", "auto")
DEV, PEER, NS = "mr0", "ms0", "xfbm"
IP, SIP = "10.30.0.1", "10.30.0.2"
MAC, SMAC = "02:0f:00:30:00:01", "02:0f:00:30:00:02"
PORT = 5299


def cleanup(ctx):
    run("tc", "qdisc", "del", "dev", DEV, "clsact")
    if ctx.xf:
        ctx.xf.disable(DEV)
    netns_del(NS)
    devs_del(DEV)


def topology():
    netns_fresh(NS)
    must("ip", "link", "add", DEV, "address", MAC, "type", "veth", "peer",
         "name", PEER, "address", SMAC, "netns", NS)
    v6_off(DEV)
    v6_off("all", ns=NS)
    for ns, lines in ((None, ["addr add %s/24 dev %s" % (IP, DEV),
                              "link set dev %s up" % DEV,
                              "neigh replace %s lladdr %s dev %s nud "
                              "permanent" % (SIP, SMAC, DEV)]),
                      (NS, ["addr add %s/24 dev %s" % (SIP, PEER),
                            "link set dev %s up" % PEER,
                            "neigh replace %s lladdr %s dev %s nud "
                            "permanent" % (IP, MAC, PEER)])):
        p = ip_batch(lines, ns=ns)
        if p.returncode:
            raise Failed("cannot configure %s: %s" % (ns or "mr0",
                                                      p.stderr))


def send_udp(ns, addr, port, n):
    """n small UDP datagrams from namespace ns to addr:port."""
    run(sys.executable, "-c",
        "import socket; s = socket.socket(socket.AF_INET, "
        "socket.SOCK_DGRAM)\nfor _ in range(%d): s.sendto(b'probe', "
        "(%r, %d))" % (n, addr, port), ns=ns)


def probe():
    """A rule matching 5 UDP datagrams to mr0 counts them in the datapath
    (its hardware counter); deleted again."""
    must("tc", "filter", "add", "dev", DEV, "ingress", "pref", 1,
         "protocol", "ip", "flower", "dst_ip", IP, "ip_proto", "udp",
         "dst_port", 9, "action", "drop", what="probe rule: tc filter add")
    send_udp(NS, IP, 9, 5)
    n = 0
    for _ in range(50):
        n = rule_packets(DEV, 1, hw=True) or 0
        if n >= 5:
            break
        time.sleep(0.2)
    run("tc", "filter", "del", "dev", DEV, "ingress", "pref", 1)
    if n < 5:
        raise Failed("the probe rule counted %d of 5 datagrams in the "
                     "datapath" % n)


def up(ctx, cfg, check):
    """xdp_flow on mr0 with the configuration's hook and one non-matching
    rule (with check, also the probe); the hook the device got."""
    if cfg == "disabled":
        return None
    xf = ctx.need_xf()
    must(xf.cli, "enable", "dev", DEV, "hook", cfg,
         what="xdp-flow enable dev %s hook %s" % (DEV, cfg))
    must("tc", "qdisc", "add", "dev", DEV, "clsact")
    must("tc", "filter", "add", "dev", DEV, "ingress", "pref", 10,
         "protocol", "ip", "flower", "dst_ip", "192.0.2.99", "action",
         "drop")
    if not rule_in_hw(DEV, 10):
        raise Failed("the non-matching rule is not in_hw")
    xf.wait_datapath(DEV)
    hook = "xdp" if xdp_prog_id(DEV) else "tc"
    if cfg in ("xdp", "tc") and hook != cfg:
        raise Failed("hook %s, but mr0 %s an XDP program" % (
            cfg, "has" if hook == "xdp" else "has no"))
    if check:
        d = xf.dev(DEV) or {}
        ctx.out.log("miss %s: on the %s hook; xdp-flow status: %s"
                    % (cfg, hook, json.dumps(d)))
        if d.get("hook") and d["hook"] != hook:
            ctx.out.note("miss", "%s: xdp-flow status says hook %s, but mr0 "
                         "looks like %s" % (cfg, d["hook"], hook))
        if cfg == "auto":
            ctx.out.note("miss", "auto: picked %s (%s)" % (
                hook, d.get("hook_why", "no reason given")))
        probe()
    return hook


def down(ctx, cfg):
    if cfg == "disabled":
        return
    run("tc", "qdisc", "del", "dev", DEV, "clsact")
    if ctx.xf:
        ctx.xf.disable(DEV)
    if xdp_prog_id(DEV):
        ctx.out.note("miss", "%s: an XDP program stays on mr0 after "
                     "disable" % cfg)


def counters():
    """The root namespace's UDP layer and mr0's frames."""
    layer, delivered = udp_layer()
    return {"in": layer, "dlv": delivered, "dev": rx_packets(DEV)}


def run_section(ctx):
    """The miss section; see the module's docstring."""
    out, k = ctx.out, ctx.knobs
    out.log("== miss: traffic matching no rule, xfbm -> mr0; tcp and "
            "64-byte udp; %d x %gs per configuration" % (k.miss_reps,
                                                         k.miss_secs))
    res = {c: {"tcp": [], "in": [], "dlv": [], "dev": [], "sent": []}
           for c in CONFIGS}
    hooks, why = {}, {}
    srv = None
    try:
        cleanup(ctx)
        topology()
        srv = Iperf3Server(None, IP, PORT)
        n = len(CONFIGS)
        for r in range(1, k.miss_reps + 1):
            for i in range(n):
                cfg = CONFIGS[(i + r - 1) % n]
                if cfg in why:
                    continue
                try:
                    hooks[cfg] = up(ctx, cfg, cfg not in hooks) or "-"
                except Failed as e:
                    why[cfg] = str(e)
                    out.note("miss", "%s: not measured: %s" % (cfg, e))
                    down(ctx, cfg)
                    continue
                one_run(ctx, cfg, r, res[cfg])
                down(ctx, cfg)
    finally:
        if srv:
            srv.stop()
        cleanup(ctx)
    report(out, k, res, hooks, why)


def one_run(ctx, cfg, r, res):
    out, k = ctx.out, ctx.knobs
    out.log(tcp_udp_run(out, "miss", cfg, r, NS, IP, PORT, k.miss_secs, 64,
                        counters, res, {"in": "at the UDP layer",
                                        "dlv": "delivered", "dev": "at mr0",
                                        "sent": "sent"}))


def report(out, k, res, hooks, why):
    sm, csv = out.sum, out.csv
    sm()
    sm("miss: traffic matching no rule (xdp_flow enabled on mr0 with one "
       "non-matching flower rule,")
    sm("  hook xdp|tc|auto, against nothing on mr0): iperf3 tcp, and "
       "64-byte udp (datagrams that")
    sm("  reached the UDP layer; delivered: read by iperf3); median of %d "
       "x %gs; ratio: to disabled" % (k.miss_reps, k.miss_secs))
    sm("  %-10s %-5s %9s %6s %10s %6s %10s %10s %10s" % (
        "config", "hook", "tcp Gb/s", "ratio", "udp pps", "ratio",
        "delivered", "at mr0", "sent"))
    med = {c: {w: median(v) for w, v in res[c].items()} for c in CONFIGS}
    top = {c: {w: best(res[c][w]) for w in ("tcp", "in")} for c in CONFIGS}
    for c in CONFIGS:
        m = med[c]
        if m["tcp"] is None and m["in"] is None:
            csv("miss", c, "measured", 0, "flag")
            sm("  %-10s not measured: %s"
               % (c, why.get(c, "every run failed")))
            continue
        csv("miss", c, "measured", 1, "flag")
        if c == "auto":
            csv("miss", c, "hook_is_tc", int(hooks.get(c) == "tc"), "flag")
        csv("miss", c, "tcp_gbps", m["tcp"], "Gbit/s")
        csv("miss", c, "udp_pps", m["in"], "pps")
        csv("miss", c, "udp_delivered_pps", m["dlv"], "pps")
        csv("miss", c, "udp_dev_pps", m["dev"], "pps")
        csv("miss", c, "udp_sent_pps", m["sent"], "pps")
        rt = ratio(m["tcp"], med["disabled"]["tcp"])
        ru = ratio(m["in"], med["disabled"]["in"])
        csv("miss", c, "tcp_ratio_to_disabled", rt, "ratio")
        csv("miss", c, "udp_ratio_to_disabled", ru, "ratio")
        csv("miss", c, "tcp_best_ratio_to_disabled",
            ratio(top[c]["tcp"], top["disabled"]["tcp"]), "ratio")
        csv("miss", c, "udp_best_ratio_to_disabled",
            ratio(top[c]["in"], top["disabled"]["in"]), "ratio")
        sm("  %-10s %-5s %9.3f %6s %10.0f %6s %10.0f %10.0f %10.0f" % (
            c, hooks.get(c, "-"), m["tcp"] or 0,
            "-" if rt is None else "%.3f" % rt, m["in"] or 0,
            "-" if ru is None else "%.3f" % ru, m["dlv"] or 0,
            m["dev"] or 0, m["sent"] or 0))
    sm("  targets (issue 6, hook auto): tcp >= 0.9, udp >= 0.95 of disabled")
