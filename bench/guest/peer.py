# SPDX-License-Identifier: GPL-2.0
"""Section peer: TCP and 64-byte UDP into a container-style veth.

Namespace xfbp_ct holds veth end P (bpp0, 10.0.5.2/24), its other end X
(bpx0) is in the root namespace. Traffic enters the root namespace on
veth D (bpd0), whose peer S (bps0, 10.0.6.1/24) is in the sender's
namespace xfbp_tx; S sends to P's MAC (a route to P's address on S and a
permanent neighbour entry with P's MAC), so that TC's `mirred egress
redirect dev X` on D's ingress delivers the frames to P unchanged. P's
answers (TCP's ACKs) are routed back by the root namespace (X 10.0.5.1,
D 10.0.6.254, ip_forward on for the section), as a container's are: no
qdisc or hook on X, whose transmit path must stay bare for
bpf_redirect_peer (net/xdp_flow/peer.c). iperf3 client in xfbp_tx on
CPU 0, server in xfbp_ct on CPU 1: a TCP stream (Gbit/s received) and
UDP datagrams of 18 bytes (64-byte frames), -b 0, counted at xfbp_ct's
UDP layer (InDatagrams + InErrors a second), XF_BENCH_PEER_SECS each,
round robin over XF_BENCH_PEER_REPS, each configuration set up just
before its runs:

  tc_flower         clsact on D, flower rule dst_ip <P> action mirred
                    egress redirect dev X; D not enabled: software TC
  tc_hook_redirect  `xdp-flow enable dev D hook tc`, the same rule
                    (in_hw), module parameter redirect_peer=0
  tc_hook_peer      the same with redirect_peer=1: bpf_redirect_peer
                    into P, past X's transmit
  tc_hook           without the parameter (a module that does not have
                    it): the TC hook as it is, tc_hook_peer not measured

For each configuration, checks: the rule is in_hw (but tc_flower's) and
its counter moved (the hardware counter with the TC hook); X's
tx_packets against P's rx_packets over the runs (`ip -j -s link`): veth
counts a transmit on X only when X transmits, so with
bpf_redirect_peer X's count stays (nearly) still while P receives, and
with a plain redirect it moves with P's.
"""

from benchstats import ratio
from guest.common import iperf3_rounds, rate_table, tcp_udp_run
from xfpy.net import (devs_del, ip_batch, link_stats, netns_del, netns_fresh,
                      udp_layer, v6_off)
from xfpy.proc import Failed, must, run
from xfpy.tc import rule_in_hw, rule_packets
from xfpy.xdpflow import XdpFlow

CT, TX = "xfbp_ct", "xfbp_tx"
D, S, X, P = "bpd0", "bps0", "bpx0", "bpp0"
P_IP, S_IP = "10.0.5.2", "10.0.6.1"
X_IP, D_IP = "10.0.5.1", "10.0.6.254"
P_MAC, S_MAC = "02:0f:00:50:00:02", "02:0f:00:60:00:01"
X_MAC = "02:0f:00:50:00:01"
PORT = 5298
UDP_LEN = 18		# + 8 UDP + 20 IP + 14 Ethernet + 4 FCS: 64 bytes
PARAM = "redirect_peer"
# X's transmits per frame P received: at most this with bpf_redirect_peer,
# at least REDIRECT_MIN with a plain redirect
PEER_MAX, REDIRECT_MIN = 0.1, 0.5


def cleanup(ctx):
    if ctx.xf:
        ctx.xf.disable(D)
    netns_del(CT, TX)
    devs_del(D, X)


def topology():
    """The two namespaces, the two veth pairs, addresses, routes and
    static neighbours: S sends to P's MAC, P answers through X, routed."""
    netns_fresh(CT)
    netns_fresh(TX)
    must("ip", "link", "add", X, "address", X_MAC, "type", "veth", "peer",
         "name", P, "address", P_MAC, "netns", CT)
    must("ip", "link", "add", D, "type", "veth", "peer", "name", S,
         "address", S_MAC, "netns", TX)
    for dev, ns in ((X, None), (D, None), (P, CT), (S, TX)):
        v6_off(dev, ns=ns)
    for ns, lines in (
            (None, ["addr add %s/24 dev %s" % (X_IP, X),
                    "addr add %s/24 dev %s" % (D_IP, D),
                    "link set dev %s up" % X, "link set dev %s up" % D,
                    "neigh replace %s lladdr %s dev %s nud permanent"
                    % (S_IP, S_MAC, D)]),
            (CT, ["addr add %s/24 dev %s" % (P_IP, P),
                  "link set dev %s up" % P,
                  "route add %s/32 via %s dev %s" % (S_IP, X_IP, P),
                  "neigh replace %s lladdr %s dev %s nud permanent"
                  % (X_IP, X_MAC, P)]),
            (TX, ["addr add %s/24 dev %s" % (S_IP, S),
                  "link set dev %s up" % S,
                  "route add %s/32 dev %s" % (P_IP, S),
                  "neigh replace %s lladdr %s dev %s nud permanent"
                  % (P_IP, P_MAC, S)])):
        p = ip_batch(lines, ns=ns)
        if p.returncode:
            raise Failed("cannot configure %s: %s" % (ns or "the root "
                                                      "namespace", p.stderr))


def configs(ctx):
    """The configurations this module can give, with a note for the one
    it cannot."""
    if ctx.xf is None:
        ctx.out.note("peer", "the xdp_flow module or its helper is not "
                     "running: only tc_flower measured")
        return ["tc_flower"]
    if XdpFlow.param(PARAM) is None:
        ctx.out.note("peer", "%s parameter absent: tc_hook_peer not "
                     "measured" % PARAM)
        return ["tc_flower", "tc_hook"]
    return ["tc_flower", "tc_hook_redirect", "tc_hook_peer"]


def up(ctx, cfg):
    """The configuration's rule on D."""
    if cfg != "tc_flower":
        if cfg != "tc_hook":
            XdpFlow.set_param(PARAM, int(cfg == "tc_hook_peer"))
        ctx.xf.enable(D, "tc")
    else:
        must("tc", "qdisc", "add", "dev", D, "clsact")
    must("tc", "filter", "add", "dev", D, "ingress", "pref", 1, "protocol",
         "ip", "flower", "dst_ip", P_IP, "action", "mirred", "egress",
         "redirect", "dev", X, what="tc filter add (redirect to %s)" % X)
    hw = rule_in_hw(D, 1)
    if hw != (cfg != "tc_flower"):
        raise Failed("the rule on %s is %s" % (D, "in_hw (should run in TC)"
                                               if hw else "not in_hw"))
    if hw:
        ctx.xf.wait_datapath(D)


def down(ctx):
    run("tc", "qdisc", "del", "dev", D, "clsact")
    if ctx.xf:
        ctx.xf.disable(D)


def counts():
    """(X's tx_packets, P's rx_packets)."""
    return (link_stats(X)["tx"]["packets"],
            link_stats(P, ns=CT)["rx"]["packets"])


def one_run(ctx, cfg, r, srv, res):
    """TCP, then UDP, on the configuration set up; then its checks."""
    out, k = ctx.out, ctx.knobs
    x0, p0 = counts()

    def layer():
        received, delivered = udp_layer(srv.pid)
        return {"in": received, "dlv": delivered}

    line = tcp_udp_run(out, "peer", cfg, r, TX, P_IP, PORT, k.peer_secs,
                       UDP_LEN, layer, res, {"in": "at the UDP layer",
                                             "dlv": "delivered",
                                             "sent": "sent"})
    x1, p1 = counts()
    pkts = rule_packets(D, 1, hw=cfg != "tc_flower") or 0
    res["rule"] += pkts
    res["x_tx"] += x1 - x0
    res["p_rx"] += p1 - p0
    out.log("%s; rule counter %d%s; X tx %d, P rx %d" % (
        line, pkts, "" if cfg == "tc_flower" else " (hardware)", x1 - x0,
        p1 - p0))


def run_section(ctx):
    """The peer section; see the module's docstring."""
    out, k = ctx.out, ctx.knobs
    out.log("== peer: tcp and 64-byte udp into a container's veth through "
            "TC's redirect; %d x %gs per configuration"
            % (k.peer_reps, k.peer_secs))
    cfgs = configs(ctx)
    res = {c: {"tcp": [], "in": [], "dlv": [], "sent": [], "rule": 0,
               "x_tx": 0, "p_rx": 0} for c in cfgs}
    why = {}
    saved = XdpFlow.param(PARAM) if ctx.xf else None
    try:
        cleanup(ctx)
        iperf3_rounds(ctx, "peer", cfgs, k.peer_reps, why,
                      (CT, P_IP, PORT), topology, cleanup, up, one_run,
                      down, res)
    finally:
        if saved is not None:
            try:
                XdpFlow.set_param(PARAM, saved)
            except Failed as e:
                out.note("peer", str(e))
    report(ctx, cfgs, res, why)


def check(out, cfg, c):
    """The rule counted, and X's transmits say which redirect ran."""
    if not c["rule"]:
        out.note("peer", "%s: the rule's %s counter did not move" % (
            cfg, "software" if cfg == "tc_flower" else "hardware"))
    per = ratio(c["x_tx"], c["p_rx"])
    out.csv("peer", cfg, "x_tx_per_p_rx", per, "ratio")
    if per is None:
        out.note("peer", "%s: P received nothing" % cfg)
        return "-"
    if cfg == "tc_hook_peer" and per > PEER_MAX:
        out.note("peer", "tc_hook_peer: X transmitted %.2f frames per frame "
                 "P received: bpf_redirect_peer did not run" % per)
    elif cfg == "tc_hook_redirect" and per < REDIRECT_MIN:
        out.note("peer", "tc_hook_redirect: X transmitted only %.2f frames "
                 "per frame P received (a plain redirect transmits on X)"
                 % per)
    return "%.2f" % per


def report(ctx, cfgs, res, why):
    out, k = ctx.out, ctx.knobs
    out.sum()
    out.sum("peer: iperf3 tcp and %d-byte udp (64-byte frames) from "
            "xfbp_tx through D, redirected by TC to X," % UDP_LEN)
    out.sum("  delivered to P in xfbp_ct; median of %d x %gs; ratio: to "
            "tc_flower; X tx/P rx: X's transmits a frame P received"
            % (k.peer_reps, k.peer_secs))

    def rule(c):
        out.csv("peer", c, "rule_pkts", res[c]["rule"], "count")
        return str(res[c]["rule"])
    rate_table(out, "peer", cfgs, res, why, "tc_flower",
               [("rule pkts", 10, rule),
                ("X tx/P rx", 8, lambda c: check(out, c, res[c]))])
