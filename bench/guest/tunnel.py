# SPDX-License-Identifier: GPL-2.0
"""Section tunnel: TCP and 64-byte UDP from a remote hypervisor to a VM
over VXLAN.

Namespace xfbt_rh is the remote hypervisor: its VXLAN device R (btr0,
VNI 42, S's address 10.0.8.1/24) reaches the host over the underlay veth
pair (btu1 10.0.7.2 in xfbt_rh, btu0 10.0.7.1 in the root namespace).
Namespace xfbt_vm is the VM: veth end P (btp0, 10.0.8.2/24), whose other
end X (btx0) is in the root namespace. S sends to P's MAC (a static
neighbour on R); P answers to R's MAC. iperf3 client in xfbt_rh, server
in xfbt_vm: a TCP stream (Gbit/s received, its ACKs going back through
the tunnel) and UDP datagrams of 18 bytes (64-byte inner frames), -b 0,
counted at xfbt_vm's UDP layer, XF_BENCH_TUNNEL_SECS each, round robin
over XF_BENCH_TUNNEL_REPS, each configuration set up just before its
runs:

  tc_flower  a VXLAN device in external mode V (btv0, port 4789, as Open
             vSwitch's vxlan_sys_4789) on the host, and the rules Open
             vSwitch writes: on V's ingress, flower enc_src_ip, enc_dst_ip,
             enc_key_id, enc_dst_port and dst_ip P, tunnel_key unset, a
             redirect to X (decapsulation); on X's ingress (an ingress
             qdisc: nothing on X's transmit path), flower dst_ip S,
             tunnel_key set, a redirect to V (encapsulation); offload not
             enabled: TC in software
  tc_hook    the same rules with `xdp-flow enable` on V and X (hook tc,
             in_hw): the tc hook runs both directions
  ovs        no rules: Open vSwitch (hw-offload=false, the kernel
             datapath) with a bridge of X and a VXLAN port to R

For each configuration, checks: the decapsulating rule is in_hw (but
tc_flower's) and its counter moved (the hardware counter with the tc
hook).
"""

from guest.common import iperf3_rounds, rate_table, tcp_udp_run
from xfpy.net import devs_del, ip_batch, netns_del, netns_fresh, udp_layer, v6_off
from xfpy.proc import Failed, must, run
from xfpy.tc import rule_in_hw, rule_packets

VM, RH = "xfbt_vm", "xfbt_rh"
U0, U1, R, V, X, P = "btu0", "btu1", "btr0", "btv0", "btx0", "btp0"
U0_IP, U1_IP = "10.0.7.1", "10.0.7.2"
S_IP, P_IP = "10.0.8.1", "10.0.8.2"
R_MAC, P_MAC = "02:0f:00:80:00:01", "02:0f:00:80:00:02"
U0_MAC, U1_MAC = "02:0f:00:70:00:01", "02:0f:00:70:00:02"
VNI = 42
PORT = 5299
UDP_LEN = 18		# + 8 UDP + 20 IP + 14 Ethernet + 4 FCS: 64 bytes
BRIDGE = "xfbt"


def cleanup(ctx):
    if ctx.ovs.running:
        ctx.ovs.stop()
    if ctx.xf:
        ctx.xf.disable(V, X)
    netns_del(VM, RH)
    devs_del(V, X, U0, "vxlan_sys_4789")


def topology():
    """The two namespaces, the underlay and the VM's veth pair, R at the
    far end: static neighbours everywhere (no ARP)."""
    netns_fresh(VM)
    netns_fresh(RH)
    must("ip", "link", "add", U0, "address", U0_MAC, "type", "veth", "peer",
         "name", U1, "address", U1_MAC, "netns", RH)
    must("ip", "link", "add", X, "type", "veth", "peer", "name", P,
         "address", P_MAC, "netns", VM)
    for dev, ns in ((U0, None), (X, None), (U1, RH), (P, VM)):
        v6_off(dev, ns=ns)
    for ns, lines in (
            (None, ["addr add %s/24 dev %s" % (U0_IP, U0),
                    "link set dev %s up" % U0, "link set dev %s up" % X,
                    "neigh replace %s lladdr %s dev %s nud permanent"
                    % (U1_IP, U1_MAC, U0)]),
            (RH, ["addr add %s/24 dev %s" % (U1_IP, U1),
                  "link set dev %s up" % U1,
                  "neigh replace %s lladdr %s dev %s nud permanent"
                  % (U0_IP, U0_MAC, U1),
                  "link add %s address %s type vxlan id %d local %s "
                  "remote %s dstport 4789 dev %s"
                  % (R, R_MAC, VNI, U1_IP, U0_IP, U1),
                  "addr add %s/24 dev %s" % (S_IP, R),
                  "link set dev %s up" % R,
                  "neigh replace %s lladdr %s dev %s nud permanent"
                  % (P_IP, P_MAC, R)]),
            (VM, ["addr add %s/24 dev %s" % (P_IP, P),
                  "link set dev %s up" % P,
                  "neigh replace %s lladdr %s dev %s nud permanent"
                  % (S_IP, R_MAC, P)])):
        p = ip_batch(lines, ns=ns)
        if p.returncode:
            raise Failed("cannot configure %s: %s" % (ns or "the root "
                                                      "namespace", p.stderr))
    v6_off(R, ns=RH)


def configs(ctx):
    """The configurations this section can give, with a note for those
    it cannot."""
    cfgs = ["tc_flower"]
    if ctx.xf is None:
        ctx.out.note("tunnel", "the xdp_flow module or its helper is not "
                     "running: tc_hook not measured")
    else:
        cfgs.append("tc_hook")
    why = ctx.ovs.unavailable()
    if why:
        ctx.out.note("tunnel", "ovs not measured: %s" % why)
    else:
        cfgs.append("ovs")
    return cfgs


def up(ctx, cfg):
    """The configuration: OVS's bridge, or V and the two rules."""
    if cfg == "ovs":
        ctx.ovs.start(offload=False)
        must("ovs-vsctl", "--", "add-br", BRIDGE, "--", "add-port", BRIDGE,
             X, "--", "add-port", BRIDGE, "btvx", "--", "set", "interface",
             "btvx", "type=vxlan", "options:remote_ip=%s" % U1_IP,
             "options:key=%d" % VNI)
        must("ovs-vsctl", "--timeout=20", "wait-until", "Interface", "btvx",
             "ofport!=-1")
        # NORMAL learns both MACs from a first exchange
        run("ping", "-c", 2, "-i", 0.3, "-W", 5, P_IP, ns=RH)
        return
    p = ip_batch(["link add %s type vxlan external dstport 4789" % V,
                  "link set dev %s up" % V])
    if p.returncode:
        raise Failed("cannot make %s: %s" % (V, p.stderr))
    v6_off(V)
    if cfg == "tc_hook":
        ctx.xf.enable(V, "tc", clsact=False)
        ctx.xf.enable(X, "tc", clsact=False)
    must("tc", "qdisc", "add", "dev", V, "clsact")
    # an ingress qdisc: clsact would hook X's transmit path too
    must("tc", "qdisc", "add", "dev", X, "ingress")
    must("tc", "filter", "add", "dev", V, "ingress", "pref", 1, "protocol",
         "ip", "flower", "enc_src_ip", U1_IP, "enc_dst_ip", U0_IP,
         "enc_key_id", VNI, "enc_dst_port", 4789, "dst_ip", P_IP,
         "action", "tunnel_key", "unset", "action", "mirred", "egress",
         "redirect", "dev", X, what="tc filter add (decapsulation)")
    must("tc", "filter", "add", "dev", X, "ingress", "pref", 1, "protocol",
         "ip", "flower", "dst_ip", S_IP, "action", "tunnel_key", "set",
         "src_ip", U0_IP, "dst_ip", U1_IP, "id", VNI, "dst_port", 4789,
         "action", "mirred", "egress", "redirect", "dev", V,
         what="tc filter add (encapsulation)")
    for dev in (V, X):
        hw = rule_in_hw(dev, 1)
        if hw != (cfg == "tc_hook"):
            raise Failed("the rule on %s is %s" % (
                dev, "in_hw (should run in TC)" if hw else "not in_hw"))
        if hw:
            ctx.xf.wait_datapath(dev)


def down(ctx):
    if ctx.ovs.running:
        ctx.ovs.stop()
    run("ovs-vsctl", "--if-exists", "del-br", BRIDGE)
    run("tc", "qdisc", "del", "dev", X, "ingress")
    if ctx.xf:
        ctx.xf.disable(V, X)
    devs_del(V, "vxlan_sys_4789")


def one_run(ctx, cfg, r, srv, res):
    """TCP, then UDP, on the configuration set up; then its counter."""
    out, k = ctx.out, ctx.knobs

    def layer():
        received, delivered = udp_layer(srv.pid)
        return {"in": received, "dlv": delivered}

    line = tcp_udp_run(out, "tunnel", cfg, r, RH, P_IP, PORT,
                       k.tunnel_secs, UDP_LEN, layer, res,
                       {"in": "at the UDP layer", "dlv": "delivered",
                        "sent": "sent"})
    pkts = 0
    if cfg != "ovs":
        # the redirect's: tunnel_key takes no hardware counts
        pkts = rule_packets(V, 1, hw=cfg == "tc_hook", action=-1) or 0
        res["rule"] += pkts
    out.log("%s; decapsulating rule counter %d%s" % (
        line, pkts, " (hardware)" if cfg == "tc_hook" else ""))


def run_section(ctx):
    """The tunnel section; see the module's docstring."""
    out, k = ctx.out, ctx.knobs
    out.log("== tunnel: tcp and 64-byte udp from a remote hypervisor to a "
            "VM over VXLAN; %d x %gs per configuration"
            % (k.tunnel_reps, k.tunnel_secs))
    cfgs = configs(ctx)
    res = {c: {"tcp": [], "in": [], "dlv": [], "sent": [], "rule": 0}
           for c in cfgs}
    why = {}
    cleanup(ctx)
    iperf3_rounds(ctx, "tunnel", cfgs, k.tunnel_reps, why, (VM, P_IP, PORT),
                  topology, cleanup, up, one_run, down, res)
    report(ctx, cfgs, res, why)


def report(ctx, cfgs, res, why):
    out, k = ctx.out, ctx.knobs
    out.sum()
    out.sum("tunnel: iperf3 tcp and %d-byte udp (64-byte inner frames) "
            "from xfbt_rh over VXLAN to P in xfbt_vm," % UDP_LEN)
    out.sum("  decapsulated on the host; median of %d x %gs; ratio: to "
            "tc_flower" % (k.tunnel_reps, k.tunnel_secs))

    def rule(c):
        out.csv("tunnel", c, "rule_pkts", res[c]["rule"], "count")
        if c != "ovs" and not res[c]["rule"]:
            out.note("tunnel", "%s: the decapsulating rule's %s counter "
                     "did not move" % (c, "software" if c == "tc_flower"
                                       else "hardware"))
        return "-" if c == "ovs" else str(res[c]["rule"])
    rate_table(out, "tunnel", cfgs, res, why, "tc_flower",
               [("rule pkts", 10, rule)])
