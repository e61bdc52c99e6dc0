# SPDX-License-Identifier: GPL-2.0
"""Section flowtable: a router's forwarding, TCP and 64-byte UDP.

The root namespace routes between client namespace xfbf_a (fa1,
10.0.7.1/24, behind the router's fta0, 10.0.7.254) and server namespace
xfbf_b (fb1, 10.0.8.1/24, behind ftb0, 10.0.8.254) and masquerades what
leaves through ftb0 (nftables, table inet xfbf); static neighbours, GRO on
the namespace ends (NAPI, so that veth takes frames XDP redirects to
them). iperf3 client in xfbf_a on CPU 0, server in xfbf_b on CPU 1: a TCP
stream (Gbit/s received) and UDP datagrams of 18 bytes (64-byte frames),
-b 0, counted at xfbf_b's UDP layer, XF_BENCH_FT_SECS each, round robin
over XF_BENCH_FT_REPS, each configuration set up just before its runs:

  forward       conntrack and masquerade, no flowtable: the forwarding
                path every packet takes without one
  flowtable     a flowtable on fta0 and ftb0 (`flow add @f` in the forward
                chain): established connections take the flowtable's
                software path at ingress
  xdp_flow_xdp  the flowtable with flags offload, `xdp-flow enable` on
                fta0 and ftb0 with the XDP hook: the kernel offers each
                connection to xdp_flow, which forwards it in XDP
  xdp_flow_tc   the same with xdp_flow's TC hook
  kfunc         the software flowtable and bench/xdp_ft_lookup.bpf.o on
                fta0 and ftb0: XDP forwarding through the flowtable with
                bpf_xdp_flow_lookup() (Linux 6.11 on), the path xdp-tools'
                xdp-forward takes; not measured where the kernel lacks it.
                The namespaces' ends compute their checksums (transmit
                checksum offload off, as xdp_flow turns it off on a veth
                peer for its XDP hook: a redirected frame keeps no partial
                checksum)

Checks, after each configuration's runs: the xdp_flow configurations
counted UDP in XDP (`xdp-flow show`, the flowtable's rules on fta0:
datagrams the client sent that XDP forwarded), and the kfunc program
redirected frames (its ft_stats counters: redirected, not in the
flowtable, left to the stack).
"""

import os

from guest.common import PIN, iperf3_rounds, rate_table, tcp_udp_run
from xfpy.net import (devs_del, ip_batch, netns_del, netns_fresh, udp_layer,
                      v6_off)
from xfpy.proc import Failed, must, run, run_json

A, B = "xfbf_a", "xfbf_b"
RA, RB, CA, CB = "fta0", "ftb0", "fa1", "fb1"
A_IP, B_IP, RA_IP, RB_IP = "10.0.7.1", "10.0.8.1", "10.0.7.254", "10.0.8.254"
MACS = {RA: "02:0f:00:70:00:fe", CA: "02:0f:00:70:00:01",
        RB: "02:0f:00:80:00:fe", CB: "02:0f:00:80:00:01"}
TABLE = "xfbf"
PORT = 5297
UDP_LEN = 18		# + 8 UDP + 20 IP + 14 Ethernet + 4 FCS: 64 bytes
CONFIGS = ("forward", "flowtable", "xdp_flow_xdp", "xdp_flow_tc", "kfunc")
KFUNC_PIN = PIN + "/ft_lookup"
STATS = ("redirect", "no_flow", "stack", "other")


def table(flowtable, offload=False):
    """The nft table of a configuration."""
    lines = ["table inet %s {" % TABLE]
    if flowtable:
        lines += ["  flowtable f {",
                  "    hook ingress priority 0; devices = { %s, %s };%s"
                  % (RA, RB, " flags offload;" if offload else ""),
                  "  }",
                  "  chain forwarding {",
                  "    type filter hook forward priority 0; policy accept;",
                  "    meta l4proto { tcp, udp } flow add @f",
                  "  }"]
    lines += ["  chain masq {",
              "    type nat hook postrouting priority 100; policy accept;",
              "    oifname \"%s\" masquerade" % RB,
              "  }",
              "}"]
    return "\n".join(lines) + "\n"


def topology():
    netns_fresh(A)
    netns_fresh(B)
    devs_del(RA, RB)
    p = ip_batch(["link add %s address %s type veth peer name %s address "
                  "%s netns %s" % (r, MACS[r], c, MACS[c], ns)
                  for r, c, ns in ((RA, CA, A), (RB, CB, B))])
    if p.returncode:
        raise Failed("cannot create the veth pairs: " + p.stderr)
    for dev, ns in ((RA, None), (RB, None), (CA, A), (CB, B)):
        v6_off(dev, ns=ns)
    for ns, lines in (
            (None, ["addr add %s/24 dev %s" % (RA_IP, RA),
                    "addr add %s/24 dev %s" % (RB_IP, RB),
                    "link set dev %s up" % RA, "link set dev %s up" % RB,
                    "neigh replace %s lladdr %s dev %s nud permanent"
                    % (A_IP, MACS[CA], RA),
                    "neigh replace %s lladdr %s dev %s nud permanent"
                    % (B_IP, MACS[CB], RB)]),
            (A, ["addr add %s/24 dev %s" % (A_IP, CA),
                 "link set dev %s up" % CA,
                 "route add default via %s" % RA_IP,
                 "neigh replace %s lladdr %s dev %s nud permanent"
                 % (RA_IP, MACS[RA], CA)]),
            (B, ["addr add %s/24 dev %s" % (B_IP, CB),
                 "link set dev %s up" % CB,
                 "route add default via %s" % RB_IP,
                 "neigh replace %s lladdr %s dev %s nud permanent"
                 % (RB_IP, MACS[RB], CB)])):
        p = ip_batch(lines, ns=ns)
        if p.returncode:
            raise Failed("cannot configure %s: %s" % (ns or "the router",
                                                      p.stderr))
    must("ethtool", "-K", CA, "gro", "on", ns=A)
    must("ethtool", "-K", CB, "gro", "on", ns=B)


def cleanup(ctx):
    down(ctx)
    netns_del(A, B)
    devs_del(RA, RB)


def kfunc_why(ctx):
    """Why the kfunc configuration cannot run here, or None."""
    obj = os.path.join(ctx.knobs.obj, "xdp_ft_lookup.bpf.o")
    if not os.path.exists(obj):
        return "no %s (make -C bench on the host)" % obj
    run("modprobe", "nf_flow_table")
    p = run("bpftool", "btf", "dump", "file", "/sys/kernel/btf/nf_flow_table")
    if "bpf_xdp_flow_lookup" not in p.stdout:
        return "the kernel has no bpf_xdp_flow_lookup (Linux 6.11 on)"
    return None


def up(ctx, cfg):
    """The configuration's table, hooks and programs."""
    if cfg in ("xdp_flow_xdp", "xdp_flow_tc"):
        hook = "xdp" if cfg == "xdp_flow_xdp" else "tc"
        for d in (RA, RB):
            ctx.xf.enable(d, hook, clsact=False)
    must("nft", "-f", "-", input=table(cfg != "forward",
                                       cfg.startswith("xdp_flow")),
         what="nft (%s)" % cfg)
    if cfg == "kfunc":
        # An XDP redirect sends a frame on with the checksum the sender
        # left partial, and its receiver drops it: the namespaces' ends
        # write theirs (xdp_flow does the same for its XDP hook on veth)
        for dev, ns in ((CA, A), (CB, B)):
            must("ethtool", "-K", dev, "tx", "off", ns=ns)
        run("rm", "-rf", KFUNC_PIN, KFUNC_PIN + "_maps")
        must("bpftool", "prog", "load",
             os.path.join(ctx.knobs.obj, "xdp_ft_lookup.bpf.o"), KFUNC_PIN,
             "type", "xdp", "pinmaps", KFUNC_PIN + "_maps")
        for d in (RA, RB):
            must("ip", "link", "set", "dev", d, "xdpdrv", "pinned",
                 KFUNC_PIN)


def down(ctx):
    run("nft", "delete", "table", "inet", TABLE)
    if ctx.xf:
        ctx.xf.disable(RA, RB)
    for d in (RA, RB):
        run("ip", "link", "set", "dev", d, "xdpdrv", "off")
    for dev, ns in ((CA, A), (CB, B)):
        run("ethtool", "-K", dev, "tx", "on", ns=ns)
    run("rm", "-rf", KFUNC_PIN, KFUNC_PIN + "_maps")
    run("conntrack", "-F")


def xdp_flow_udp(ctx):
    """UDP packets xdp_flow's flowtable rules on fta0 counted."""
    js = run_json(ctx.xf.cli, "-j", "show", "dev", RA) or []
    return sum(r.get("stats", {}).get("packets", 0) for r in js
               if r.get("source") == "flowtable" and
               not r.get("software") and
               r.get("key", {}).get("ip_proto") == "udp")


def kfunc_stats():
    """The kfunc program's counters: ft_stats, the whole of its .bss
    (four u64, host order), from the raw bytes bpftool dumps."""
    js = run_json("bpftool", "-j", "map", "dump", "pinned",
                  KFUNC_PIN + "_maps/xdp_ft_l_bss") or []
    try:
        raw = bytes(int(b, 16) for b in js[0]["value"])
    except (IndexError, KeyError, TypeError, ValueError):
        return None
    if len(raw) < 8 * len(STATS):
        return None
    return {w: int.from_bytes(raw[8 * i:8 * i + 8], "little")
            for i, w in enumerate(STATS)}


def one_run(ctx, cfg, r, srv, res):
    out, k = ctx.out, ctx.knobs

    def layer():
        received, delivered = udp_layer(srv.pid)
        return {"in": received, "dlv": delivered}

    line = tcp_udp_run(out, "flowtable", cfg, r, A, B_IP, PORT, k.ft_secs,
                       UDP_LEN, layer, res, {"in": "at the UDP layer",
                                             "sent": "sent"})
    if cfg.startswith("xdp_flow"):
        n = xdp_flow_udp(ctx)
        res["xdp"] += n
        line += "; UDP in XDP on %s: %d" % (RA, n)
    elif cfg == "kfunc":
        st = kfunc_stats()
        if st:
            for w in STATS:
                res.setdefault(w, 0)
                res[w] += st[w]
            line += "; program: " + ", ".join("%s %d" % (w, st[w])
                                              for w in STATS)
    out.log(line)


def configs(ctx):
    cfgs, why = [], {}
    for c in CONFIGS:
        if c.startswith("xdp_flow") and ctx.xf is None:
            why[c] = "the xdp_flow module or its helper is not running"
        elif c == "kfunc":
            w = kfunc_why(ctx)
            if w:
                why[c] = w
        if c not in why:
            cfgs.append(c)
    return cfgs, why


def run_section(ctx):
    """The flowtable section; see the module's docstring."""
    out, k = ctx.out, ctx.knobs
    out.log("== flowtable: tcp and 64-byte udp through a router with "
            "masquerade; %d x %gs per configuration"
            % (k.ft_reps, k.ft_secs))
    cfgs, why = configs(ctx)
    for c, w in why.items():
        out.note("flowtable", "%s: not measured: %s" % (c, w))
    res = {c: {"tcp": [], "in": [], "sent": [], "xdp": 0} for c in cfgs}
    iperf3_rounds(ctx, "flowtable", cfgs, k.ft_reps, why, (B, B_IP, PORT),
                  topology, cleanup, up, one_run, down, res)
    report(ctx, cfgs, res, why)


def report(ctx, cfgs, res, why):
    out, k = ctx.out, ctx.knobs
    out.sum()
    out.sum("flowtable: iperf3 tcp and %d-byte udp (64-byte frames) from "
            "%s through a router (masquerade) to %s;" % (UDP_LEN, A, B))
    out.sum("  median of %d x %gs; ratio: to forward (conntrack and NAT, "
            "no flowtable)" % (k.ft_reps, k.ft_secs))
    rate_table(out, "flowtable", CONFIGS, res, why, "forward",
               [("check", -5, lambda c: check(out, c, res[c]))])


def check(out, cfg, c):
    """What says the configuration ran where it claims to."""
    if cfg.startswith("xdp_flow"):
        csv_v = c["xdp"]
        out.csv("flowtable", cfg, "udp_in_xdp", csv_v, "count")
        if not csv_v:
            out.note("flowtable", "%s: XDP counted no UDP packet on %s"
                     % (cfg, RA))
        return "UDP packets in XDP on %s: %d" % (RA, csv_v)
    if cfg == "kfunc":
        for w in STATS:
            out.csv("flowtable", cfg, "prog_" + w, c.get(w, 0), "count")
        if not c.get("redirect"):
            out.note("flowtable", "kfunc: the program redirected nothing")
        return "program: " + ", ".join("%s %d" % (w, c.get(w, 0))
                                       for w in STATS)
    return ""
