#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Differential test: the same flower rules and the same frames, offload on
against offload off, side by side in one kernel.

Each lane is a pair of devices in the root namespace that the rules go on:
A (xdp_flow enabled on it) and B (not enabled: TC alone). Both have the same
redirect targets (two veths each into a sink namespace) and are fed from a
generator namespace. A case is one lane's rule set: rules drawn from the
flower vocabulary, frames aimed at them and around them, sent in two rounds
with rule deletes and additions in between. For every frame the test
records where it went on A and on B (out of which target with which bytes,
up to the stack, or nowhere) and after each round's plain frames and
again after its odd ones (cut short, tunnels, IPv6 extension headers: frames
XDP may rightly leave to TC) every rule's counters; any difference is
printed with the seed and a reproduction (the tc commands and the frame in
hex).

Equal outcomes would also pass a datapath that does nothing, since TC runs
in software whatever XDP leaves to it. So the run reads the hardware share
of the counters too: a drop or lone redirect rule that is in_hw and that no
rule still in software can shadow must not count a plain frame in software
(a "software hit", failing like a difference), and the run fails when the
share of final rules in_hw or of rule hits counted by XDP is below the
floors given (--min-rules-hw, --min-xdp-packets). XF_DIFF_DEBUG=1 lists the
plain frames of a round that had a software hit.

Usage (root, in a guest or any throwaway kernel):
  difftest.py setup  [--lanes N]
  difftest.py run    --seed S --cases N [--lanes N] [--enable CMD]
  difftest.py cleanup [--lanes N]
The setup makes the devices; `run` expects the A devices already enabled
(pass --enable 'xdp-flow enable dev {dev}' to have it done) and prints
`cases N, differences D, rules in_hw ...` last; it exits 1 when D > 0, a
floor is not met or no case ran (--stop: after the first batch with a
difference).
"""

import argparse
import ipaddress
import os
import random
import re
import select
import socket
import struct
import sys
import time

# the harness shared with the benchmark: selftests/xfpy
sys.path.append(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from xfpy import proc, tc  # noqa: E402
from xfpy.net import (devs_del, ip_batch, netns_del, setns,  # noqa: E402
                      v6_off)
from xfpy.xdpflow import settle_rules  # noqa: E402

NS_GEN = "xfdg"
NS_SINK = "xfds"
# the group of the lanes' devices in the root namespace (ip link ... group)
LANE_GROUP = 7301
MAGIC = b"\xd1\xff\x10\x3c"
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SOL_PACKET = 263
PACKET_AUXDATA = 8
AUXDATA_LEN = 20        # struct tpacket_auxdata
TP_STATUS_VLAN_VALID = 1 << 4
TP_STATUS_VLAN_TPID_VALID = 1 << 6

# The ethertypes of frames this test sends; the stack side of a device is
# watched with one socket per type (bound to a protocol, a packet socket
# sees frames after TC ingress, where ETH_P_ALL taps see them before).
ETH_TYPES = (0x0800, 0x86DD, 0x0806, 0x8100, 0x88A8, 0x88B5)

# ---------------------------------------------------------------- topology

class Lane:
    def __init__(self, i):
        self.i = i
        # per side: rule device (root ns), its feeder (gen ns), two
        # redirect targets (root ns) and their sinks (sink ns)
        self.dev = {s: "xd%s%d" % (s.lower(), i) for s in "AB"}
        self.gen = {s: "xg%s%d" % (s.lower(), i) for s in "AB"}
        self.out = {s: ["xo%s%d%d" % (s.lower(), i, j) for j in (1, 2)]
                    for s in "AB"}
        self.sink = {s: ["xs%s%d%d" % (s.lower(), i, j) for j in (1, 2)]
                     for s in "AB"}


def lanes_of(n):
    return [Lane(i) for i in range(n)]


def setup(nlanes):
    """The lanes' devices, with a handful of processes: devices are
    created and set up in batches (one process per device took minutes in
    an emulated guest)."""
    cleanup(nlanes)
    for ns in (NS_GEN, NS_SINK):
        proc.must("ip", "netns", "add", ns)
        proc.must("ip", "link", "set", "lo", "up", ns=ns)
    lanes = lanes_of(nlanes)
    cmds = []
    for ln in lanes:
        for s in "AB":
            cmds.append("link add %s type veth peer name %s netns %s" %
                        (ln.dev[s], ln.gen[s], NS_GEN))
            # Sinks take addresses frames carry: on the tc hook, a
            # redirect of a frame to its sink's address enters the sink
            # with bpf_redirect_peer() (net/xdp_flow/peer.c).
            for o, k, mac in zip(ln.out[s], ln.sink[s], MACS):
                cmds.append("link add %s type veth peer name %s address %s "
                            "netns %s" % (o, k, mac, NS_SINK))
    ip_batch(cmds, force=True, check=True)
    root = [d for ln in lanes for s in "AB" for d in [ln.dev[s]] + ln.out[s]]
    gen = [ln.gen[s] for ln in lanes for s in "AB"]
    sink = [k for ln in lanes for s in "AB" for k in ln.sink[s]]
    for devs, ns in ((root, None), (gen, NS_GEN), (sink, NS_SINK)):
        v6_off(*devs, ns=ns)
        # the root ends in one group: cleanup() deletes them in one go
        grp = " group %d" % LANE_GROUP if ns is None else ""
        ip_batch(["link set %s up%s" % (d, grp) for d in devs], ns,
                 force=True, check=True)
    # NAPI on the sink side, so that the target takes XDP frames
    proc.must("sh", "-c", "; ".join("ethtool -K %s gro on" % k
                                    for k in sink), ns=NS_SINK)
    p = tc.batch(["qdisc add dev %s clsact" % ln.dev[s]
                  for ln in lanes for s in "AB"])
    if p.returncode:
        raise proc.Failed("tc -batch: " + p.stderr)


def cleanup(nlanes):
    # One request for all the root ends (and so their peers): the kernel
    # unregisters them as one batch (rtnl_group_dellink()), where a request
    # per device waits for RCU grace periods each (seconds in an emulated
    # guest). The namespaces are then almost empty.
    proc.run("ip", "link", "del", "group", LANE_GROUP)
    netns_del(NS_GEN, NS_SINK)
    # A device that left the group, or was made by hand: whatever is still
    # here goes now.
    left = set(os.listdir("/sys/class/net"))
    devs_del(*(d for ln in lanes_of(nlanes) for s in "AB"
               for d in [ln.dev[s]] + ln.out[s] if d in left))


# ------------------------------------------------------------------ frames

def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def mac_bytes(m):
    return bytes(int(x, 16) for x in m.split(":"))


class Frame:
    """A frame as fields; build() makes the bytes."""

    def __init__(self, rnd):
        self.dst = rnd_mac(rnd)
        self.src = rnd_mac(rnd)
        self.tags = []          # [(tpid, tci)], outer first
        self.etype = 0x0800
        self.tos = 0
        self.ttl = 64
        self.frag = 0           # IPv4 frag_off field (flags and offset)
        self.ip_opts = b""
        self.ip6_ext = False
        self.proto = 17
        self.sip = "10.1.0.1"
        self.dip = "10.2.0.1"
        self.sport = 1000
        self.dport = 2000
        self.tcp_flags = 0x18
        self.icmp = (8, 0)
        self.arp = [1, self.src, "10.1.0.1", "00:00:00:00:00:00",
                    "10.2.0.1"]    # op, sha, sip, tha, tip
        self.payload = b""
        self.l4csum = False     # TCP/UDP/ICMPv6 checksums (else zero)
        self.cut = None         # truncate the frame (keeping the marker)
        self.raw_l3 = None      # bytes after the Ethernet/VLAN headers
        # Drawn from the case's generator too: a seed gives the same bytes.
        self.ip_id = rnd.getrandbits(16)
        self.tcp_seq = rnd.getrandbits(32)
        # A frame XDP may rightly leave to TC (it cannot parse it exactly):
        # sent after the others, see run().
        self.odd = False

    def l4(self, v6):
        p = self.proto
        pl = self.payload
        if p == 6:
            h = struct.pack("!HHIIBBHHH", self.sport, self.dport,
                            self.tcp_seq, 0, 5 << 4,
                            self.tcp_flags & 0xff, 8192, 0, 0)
            h = h[:12] + struct.pack("!H", (5 << 12) |
                                     (self.tcp_flags & 0xfff)) + h[14:]
            return h + pl
        if p == 17:
            return struct.pack("!HHHH", self.sport, self.dport,
                               8 + len(pl), 0) + pl
        if p == 132:
            return struct.pack("!HHII", self.sport, self.dport, 0, 0) + pl
        if p in (1, 58):
            h = struct.pack("!BBHI", self.icmp[0], self.icmp[1], 0, 0) + pl
            if p == 1:
                h = h[:2] + struct.pack("!H", csum(h)) + h[4:]
            return h
        return pl

    def l4_csum(self, l4, v6):
        """Fills in the TCP, UDP or ICMPv6 checksum when l4csum is set."""
        at = {6: 16, 17: 6, 58: 2}.get(self.proto)
        if not self.l4csum or at is None or len(l4) < at + 2 or \
                (self.proto == 58 and not v6):
            return l4
        if v6:
            ph = (ipaddress.IPv6Address(self.sip).packed +
                  ipaddress.IPv6Address(self.dip).packed +
                  struct.pack("!IxxxB", len(l4), self.proto))
        else:
            ph = (ipaddress.IPv4Address(self.sip).packed +
                  ipaddress.IPv4Address(self.dip).packed +
                  struct.pack("!xBH", self.proto, len(l4)))
        l4 = l4[:at] + b"\0\0" + l4[at + 2:]
        c = csum(ph + l4)
        if self.proto == 17 and c == 0:
            c = 0xffff
        return l4[:at] + struct.pack("!H", c) + l4[at + 2:]

    def build(self, marker):
        self.payload = self.payload + marker
        try:
            l2 = mac_bytes(self.dst) + mac_bytes(self.src)
            et = self.etype
            for tpid, tci in self.tags:
                l2 += struct.pack("!HH", tpid, tci)
            l2 += struct.pack("!H", et)
            if self.raw_l3 is not None:
                l3 = self.raw_l3 + self.payload
            elif et == 0x0800:
                l4 = self.l4_csum(self.l4(False), False)
                ihl = 5 + len(self.ip_opts) // 4
                h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, self.tos,
                                ihl * 4 + len(l4), self.ip_id,
                                self.frag, self.ttl, self.proto, 0,
                                ipaddress.IPv4Address(self.sip).packed,
                                ipaddress.IPv4Address(self.dip).packed)
                h += self.ip_opts
                h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
                l3 = h + l4
            elif et == 0x86DD:
                l4 = self.l4_csum(self.l4(True), True)
                nh = self.proto
                if self.ip6_ext:
                    l4 = struct.pack("!BB6s", nh, 0, b"\x01\x04\0\0\0\0") + l4
                    nh = 0
                l3 = struct.pack("!IHBB16s16s",
                                 (6 << 28) | (self.tos << 20) | 0x12345,
                                 len(l4), nh, self.ttl,
                                 ipaddress.IPv6Address(self.sip).packed,
                                 ipaddress.IPv6Address(self.dip).packed) + l4
            elif et == 0x0806:
                op, sha, sip, tha, tip = self.arp
                l3 = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op,
                                 mac_bytes(sha),
                                 ipaddress.IPv4Address(sip).packed,
                                 mac_bytes(tha),
                                 ipaddress.IPv4Address(tip).packed)
                l3 += self.payload
            else:
                l3 = self.payload
            b = l2 + l3
        finally:
            self.payload = self.payload[:-len(marker)]
        if self.cut is not None and self.cut + len(marker) < len(b):
            b = b[:self.cut] + marker
        return b


def rnd_mac(rnd):
    return "02:%02x:%02x:%02x:%02x:%02x" % tuple(rnd.getrandbits(8)
                                                 for _ in range(5))


# ------------------------------------------------------------------- rules

# A small alphabet of values, so that rules overlap and frames hit them.
MACS = ["02:00:00:00:00:%02x" % i for i in (1, 2, 3)] + ["0a:00:00:00:01:01"]
V4 = ["10.1.0.1", "10.1.0.2", "10.1.1.1", "10.2.0.1", "10.2.3.4",
      "192.168.7.9"]
V6 = ["2001:db8::1", "2001:db8::2", "2001:db8:1::1", "fd00::7"]
PORTS = [53, 80, 443, 1000, 2000, 8080]
PROTO_NAMES = {6: "tcp", 17: "udp", 132: "sctp", 1: "icmp", 58: "icmpv6"}


class Rule:
    def __init__(self, prio, proto, matches, actions, chain=0):
        self.prio = prio
        self.proto = proto          # tc protocol word
        self.matches = matches      # list of (word, value)
        self.actions = actions      # list of action strings with {o1},{o2}
        self.chain = chain
        self.handle = None

    def tc(self, dev, outs):
        m = " ".join("%s %s" % mv for mv in self.matches)
        a = " ".join("action " + x.format(o1=outs[0], o2=outs[1])
                     for x in self.actions)
        ch = " chain %d" % self.chain if self.chain else ""
        return ("filter add dev %s ingress%s pref %d handle %d protocol %s "
                "flower %s %s" % (dev, ch, self.prio, self.handle, self.proto,
                                  m, a))

    def tc_del(self, dev):
        ch = " chain %d" % self.chain if self.chain else ""
        return ("filter del dev %s ingress%s pref %d handle %d protocol %s "
                "flower" % (dev, ch, self.prio, self.handle, self.proto))


def rnd_prefix(rnd, addr, v6):
    bits = 128 if v6 else 32
    plen = rnd.choice([bits, bits, bits - 8, bits // 2, bits - 1])
    net = ipaddress.ip_network("%s/%d" % (addr, plen), strict=False)
    return str(net)


def gen_port(rnd, vocab):
    """A port, or with "range" in the vocabulary sometimes MIN-MAX around
    one of PORTS (aligned and not, narrow and wide)."""
    p = rnd.choice(PORTS)
    if "range" not in vocab or rnd.random() < 0.5:
        return str(p)
    lo = max(0, p - rnd.choice([0, 1, 7, 100, 512]))
    hi = min(65535, p + rnd.choice([1, 3, 60, 1000, 30000]))
    return "%d-%d" % (lo, hi)


def aim_port(rnd, v):
    """A port that meets the match `v` (a port or MIN-MAX): often an edge."""
    if "-" not in v:
        return int(v)
    lo, hi = (int(x) for x in v.split("-"))
    return rnd.choice([lo, hi, rnd.randint(lo, hi)])


def gen_matches(rnd, proto, vocab):
    """Matches for one rule of tc protocol `proto`; the frame template that
    meets them is made from the same choices (see aim())."""
    ms = []
    if rnd.random() < 0.25:
        ms.append(("dst_mac", rnd.choice(MACS)))
    if rnd.random() < 0.15:
        ms.append(("src_mac", rnd.choice(MACS) +
                   rnd.choice(["", "/ff:ff:ff:00:00:00"])))
    if proto in ("ip", "ipv6"):
        v6 = proto == "ipv6"
        addrs = V6 if v6 else V4
        if rnd.random() < 0.6:
            ms.append(("dst_ip", rnd_prefix(rnd, rnd.choice(addrs), v6)))
        if rnd.random() < 0.3:
            ms.append(("src_ip", rnd_prefix(rnd, rnd.choice(addrs), v6)))
        r = rnd.random()
        if r < 0.55:
            ip_proto = rnd.choice([6, 17, 132, 58 if v6 else 1])
            ms.append(("ip_proto", PROTO_NAMES[ip_proto]))
            if ip_proto in (6, 17, 132) and rnd.random() < 0.6:
                if "range" in vocab:
                    ws = rnd.choice([["dst_port"], ["src_port"],
                                     ["src_port", "dst_port"]])
                else:
                    ws = [rnd.choice(["dst_port", "src_port"])]
                for w in ws:
                    ms.append((w, gen_port(rnd, vocab)))
            if "tcp_flags" in vocab and ip_proto == 6 and rnd.random() < 0.3:
                ms.append(("tcp_flags", rnd.choice(["0x02/0x02", "0x10/0x12",
                                                    "0x18", "0x4/0x7"])))
            if "icmp" in vocab and ip_proto in (1, 58) and rnd.random() < 0.6:
                ms.append(("type", str(rnd.choice([0, 8, 3, 128, 129]))))
                if rnd.random() < 0.4:
                    ms.append(("code", str(rnd.choice([0, 1]))))
        elif r < 0.6:
            ms.append(("ip_proto", str(rnd.choice([47, 4, 99]))))
        if "ip_tos" in vocab and rnd.random() < 0.15:
            ms.append(("ip_tos", rnd.choice(["0x10", "0x20/0xf0", "0/0xfc"])))
        if "ip_ttl" in vocab and rnd.random() < 0.1:
            ms.append(("ip_ttl", rnd.choice(["64", "1", "0x40/0xc0"])))
        if "ip_flags" in vocab and rnd.random() < 0.15:
            ms.append(("ip_flags", rnd.choice(["frag", "nofrag", "firstfrag",
                                               "frag/nofirstfrag"])))
    elif proto == "arp" and "arp" in vocab:
        if rnd.random() < 0.5:
            ms.append(("arp_op", rnd.choice(["request", "reply"])))
        if rnd.random() < 0.5:
            ms.append(("arp_tip", rnd_prefix(rnd, rnd.choice(V4), False)))
        if rnd.random() < 0.3:
            ms.append(("arp_sip", rnd.choice(V4)))
        if rnd.random() < 0.2:
            ms.append(("arp_sha", rnd.choice(MACS)))
    elif proto == "802.1q":
        if rnd.random() < 0.7:
            ms.append(("vlan_id", str(rnd.choice([5, 10]))))
        if rnd.random() < 0.3:
            ms.append(("vlan_prio", str(rnd.choice([0, 3]))))
        if "qinq" in vocab and rnd.random() < 0.35:
            # An inner tag (QinQ); flower names its protocol vlan_ethtype.
            ms.append(("vlan_ethtype", "802.1q"))
            if rnd.random() < 0.7:
                ms.append(("cvlan_id", str(rnd.choice([20, 21]))))
            if rnd.random() < 0.3:
                ms.append(("cvlan_prio", str(rnd.choice([0, 5]))))
            if rnd.random() < 0.5:
                ms.append(("cvlan_ethtype", "ip"))
                if rnd.random() < 0.5:
                    ms.append(("dst_ip", rnd.choice(V4)))
        elif rnd.random() < 0.5:
            ms.append(("vlan_ethtype", "ip"))
            if rnd.random() < 0.5:
                ms.append(("dst_ip", rnd.choice(V4)))
    return ms


PEDITS = [
    "pedit ex munge eth dst set 02:00:00:00:00:99 pipe",
    "pedit ex munge eth src set 0a:00:00:00:01:01 munge eth dst set "
    "02:00:00:00:00:01 pipe",
    "pedit ex munge ip dst set 10.2.3.4 pipe",
    "pedit ex munge ip src set 192.168.7.9 munge ip ttl decrement pipe",
    "pedit ex munge ip tos set 0x10 pipe",
    "pedit ex munge ip6 hoplimit set 7 pipe",
    "pedit ex munge ip6 src set 2001:db8::9 munge ip6 traffic_class set 0x20 "
    "pipe",
    "pedit ex munge tcp dport set 8080 pipe",
    "pedit ex munge udp sport set 53 munge udp dport set 1000 pipe",
]
CSUMS = ["csum ip and tcp and udp pipe", "csum ip and icmp pipe",
         "csum udp pipe", "csum tcp and icmp pipe"]
VLANS = ["vlan push id 42 pipe", "vlan push protocol 802.1ad id 3 priority 2 "
         "pipe", "vlan pop pipe", "vlan modify id 11 priority 4 pipe"]
# Rewrites XDP must refuse (TC does them, the rule stays in software)
REFUSED_REWRITES = ["pedit ex munge ip protocol set 17 pipe",
                    "csum sctp pipe", "vlan modify id 5 pipe"]


def gen_rewrites(rnd):
    """Header rewrites to go before a redirect, in the order TC runs them."""
    acts = []
    for _ in range(rnd.choice([0, 1, 1, 2])):
        acts.append(rnd.choice(PEDITS))
    if rnd.random() < 0.6:
        acts.append(rnd.choice(CSUMS))
    if rnd.random() < 0.4:
        acts.append(rnd.choice(VLANS))
    r = rnd.random()
    if r < 0.1:
        acts.insert(rnd.randint(0, len(acts)), rnd.choice(REFUSED_REWRITES))
    elif r < 0.2 and len(acts) > 1:
        rnd.shuffle(acts)       # a vlan action before pedit: refused
    return acts or [rnd.choice(PEDITS)]


def gen_outputs(rnd):
    """Several outputs, as Open vSwitch writes floods and mirror ports:
    copies (mirred egress mirror), VLAN pushes and pops between them, and
    a final redirect, drop, pass or none (TC then passes the frame on).
    The tc hook runs them; the XDP hook leaves them in software, where
    they shield the rules after them."""
    outs = ["{o1}", "{o2}"]
    acts = []
    for _ in range(rnd.choice([1, 1, 2])):
        if rnd.random() < 0.4:
            acts.append(rnd.choice(VLANS[:3]))
        acts.append("mirred egress mirror dev " + rnd.choice(outs))
    r = rnd.random()
    if r < 0.6:
        if rnd.random() < 0.3:
            acts.append("vlan pop pipe")
        acts.append("mirred egress redirect dev " + rnd.choice(outs))
    elif r < 0.75:
        acts.append("drop")
    elif r < 0.9:
        acts.append("pass")
    return acts


def gen_actions(rnd, vocab):
    r = rnd.random()
    if r < 0.35:
        return ["drop"]
    if r < 0.50:
        return ["pass"]
    if r < 0.85:
        out = "{o1}" if r < 0.75 else "{o2}"
        acts = ["mirred egress redirect dev " + out]
        if "rewrite" in vocab and rnd.random() < 0.45:
            acts = gen_rewrites(rnd) + acts
            if rnd.random() < 0.08:
                # rewrites ending in pass or drop: refused
                acts[-1] = rnd.choice(["pass", "drop"])
        return acts
    if r < 0.92:
        if "mirror" in vocab:
            return gen_outputs(rnd)
        return ["mirred egress mirror dev {o2}", "drop"]
    if "continue" in vocab:
        # TC never offers such a rule to drivers (no flow_action for it)
        return ["gact continue"]
    return ["drop"]


PROTOS = ["ip", "ip", "ip", "ipv6", "ipv6", "arp", "all", "802.1q"]


def gen_rule(rnd, prio_proto, vocab):
    prio = rnd.randint(1, 8)
    proto = prio_proto.get(prio)
    if proto is None:
        proto = rnd.choice(PROTOS)
        prio_proto[prio] = proto
    chain = 0
    if "goto" in vocab and rnd.random() < 0.3:
        chain = rnd.choice([1, 2])
    actions = gen_actions(rnd, vocab)
    if "goto" in vocab and chain < 2 and rnd.random() < 0.2:
        actions = ["goto chain %d" % rnd.choice([c for c in (1, 2)
                                                  if c > chain])]
    return Rule(prio, proto, gen_matches(rnd, proto, vocab), actions,
                chain=chain)


def gen_sibling(rnd, r, vocab):
    """A rule of r's prio, chain and flower mask whose port ranges overlap
    r's (flower then picks the one added first), with its own actions; None
    when r has no range."""
    ms = []
    for w, v in r.matches:
        if w.endswith("_port") and "-" in v:
            lo, hi = (int(x) for x in v.split("-"))
            d = rnd.randint(-(hi - lo), hi - lo)
            lo, hi = max(0, lo + d), min(65535, hi + d)
            if lo >= hi:
                lo, hi = (lo - 1, hi) if lo else (lo, hi + 1)
            v = "%d-%d" % (lo, hi)
        ms.append((w, v))
    if ms == r.matches or not any("-" in v for _, v in ms):
        return None
    return Rule(r.prio, r.proto, ms, gen_actions(rnd, vocab), chain=r.chain)


# --------------------------------------------------------- frames for rules

def aim(rnd, rule):
    """A frame that meets rule's matches (most of the time exactly)."""
    f = Frame(rnd)
    f.l4csum = rnd.random() < 0.5
    proto = rule.proto if rule else rnd.choice(PROTOS)
    if proto in ("all",):
        proto = rnd.choice(["ip", "ipv6", "arp", "other"])
    if proto == "802.1q":
        f.tags = [(0x8100, rnd.choice([5, 10, 7]) | (rnd.choice([0, 3]) << 13))]
        proto = "ip"
    v6 = proto == "ipv6"
    if proto == "ip":
        f.etype = 0x0800
        f.sip, f.dip = rnd.choice(V4), rnd.choice(V4)
        f.proto = rnd.choice([6, 17, 1, 132, 47])
    elif proto == "ipv6":
        f.etype = 0x86DD
        f.sip, f.dip = rnd.choice(V6), rnd.choice(V6)
        f.proto = rnd.choice([6, 17, 58, 132])
    elif proto == "arp":
        f.etype = 0x0806
        f.arp = [rnd.choice([1, 2]), rnd.choice(MACS), rnd.choice(V4),
                 rnd.choice(MACS), rnd.choice(V4)]
    else:
        f.etype = 0x88B5
    f.sport, f.dport = rnd.choice(PORTS), rnd.choice(PORTS)
    f.icmp = (rnd.choice([0, 8, 3, 128, 129]), rnd.choice([0, 1]))
    f.tcp_flags = rnd.choice([0x02, 0x10, 0x12, 0x18, 0x11, 0x04])
    f.payload = bytes(rnd.getrandbits(8) for _ in range(rnd.choice([0, 4, 20,
                                                                  100])))
    for w, v in (rule.matches if rule else []):
        v0 = v.split("/")[0]
        if w == "dst_mac":
            f.dst = v0
        elif w == "src_mac":
            f.src = v0
        elif w in ("dst_ip", "src_ip") and proto in ("ip", "ipv6"):
            net = ipaddress.ip_network(v, strict=False)
            host = net.network_address + rnd.randrange(
                min(net.num_addresses, 1 << 16))
            if w == "dst_ip":
                f.dip = str(host)
            else:
                f.sip = str(host)
        elif w == "ip_proto":
            f.proto = {"tcp": 6, "udp": 17, "sctp": 132, "icmp": 1,
                       "icmpv6": 58}.get(v, None) or int(v)
        elif w == "dst_port":
            f.dport = aim_port(rnd, v)
        elif w == "src_port":
            f.sport = aim_port(rnd, v)
        elif w == "tcp_flags":
            f.tcp_flags = int(v0, 16)
        elif w == "type":
            f.icmp = (int(v), f.icmp[1])
        elif w == "code":
            f.icmp = (f.icmp[0], int(v))
        elif w == "ip_tos":
            f.tos = int(v0, 16)
        elif w == "ip_ttl":
            f.ttl = int(v0, 0)
        elif w == "ip_flags":
            f.frag = {"frag": 0x2000, "nofrag": 0, "firstfrag": 0x2000,
                      "frag/nofirstfrag": 0x2010}[v]
        elif w == "arp_op" and f.arp:
            f.arp[0] = 1 if v == "request" else 2
        elif w == "arp_tip" and f.arp:
            f.arp[4] = str(ipaddress.ip_network(v, strict=False)
                           .network_address)
        elif w == "arp_sip" and f.arp:
            f.arp[2] = v
        elif w == "arp_sha" and f.arp:
            f.arp[1] = v
        elif w == "vlan_id" and f.tags:
            f.tags[0] = (0x8100, (f.tags[0][1] & ~0xfff) | int(v))
        elif w == "vlan_prio" and f.tags:
            f.tags[0] = (0x8100, (f.tags[0][1] & 0x1fff) | (int(v) << 13))
        elif w == "dst_ip" and f.tags:
            f.dip = v
        elif w == "vlan_ethtype" and v == "802.1q" and len(f.tags) < 2:
            f.tags.append((0x8100, rnd.choice([20, 21, 7]) |
                           (rnd.choice([0, 5]) << 13)))
        elif w == "cvlan_id" and len(f.tags) > 1:
            f.tags[1] = (0x8100, (f.tags[1][1] & ~0xfff) | int(v))
        elif w == "cvlan_prio" and len(f.tags) > 1:
            f.tags[1] = (0x8100, (f.tags[1][1] & 0x1fff) | (int(v) << 13))
    if v6 and f.proto == 1:
        f.proto = 58
    if not v6 and f.proto == 58:
        f.proto = 1
    return f


def perturb(rnd, f):
    """Nudges a frame around its rule, or makes it odd."""
    r = rnd.random()
    if r < 0.12:
        f.dst = rnd_mac(rnd)
    elif r < 0.24:
        if f.etype == 0x0800:
            a = ipaddress.IPv4Address(f.dip)
            f.dip = str(ipaddress.IPv4Address(int(a) ^ (1 << rnd.randrange(32))))
        elif f.etype == 0x86DD:
            a = ipaddress.IPv6Address(f.dip)
            f.dip = str(ipaddress.IPv6Address(int(a) ^ (1 << rnd.randrange(128))))
    elif r < 0.32:
        # Bit 0 or 1 moves a port just across a range's edge.
        f.dport ^= 1 << rnd.randrange(16)
    elif r < 0.40:
        f.frag = rnd.choice([0x2000, 0x0010, 0x2010, 0x4000])
    elif r < 0.46:
        f.tags = [(0x8100, rnd.choice([5, 10, 0]))] + \
            ([(0x8100, 7)] if rnd.random() < 0.3 else [])
    elif r < 0.52:
        f.cut = rnd.randrange(14, 60)
        f.odd = True
    elif r < 0.57:
        f.ip_opts = b"\x01\x01\x01\x00"
    elif r < 0.61:
        f.ip6_ext = True
        f.odd = True
    elif r < 0.65:
        f.etype = rnd.choice([0x88B5, 0x0806, 0x86DD, 0x0800])
        if f.etype == 0x0800 and ":" in f.sip:
            f.sip, f.dip = rnd.choice(V4), rnd.choice(V4)
            f.proto = 1 if f.proto == 58 else f.proto
        if f.etype == 0x86DD and "." in f.sip:
            f.sip, f.dip = rnd.choice(V6), rnd.choice(V6)
            f.proto = 58 if f.proto == 1 else f.proto
    elif r < 0.70:
        f.tos = rnd.getrandbits(8)
        f.ttl = rnd.choice([1, 64, 255])
    return f


def describe(f):
    return "et %04x tags %s proto %s %s>%s frag %x opts %s cut %s tos %x ttl %d "\
        "ports %d>%d flags %x icmp %s arp %s" % (
            f.etype, [(hex(a), b) for a, b in f.tags], f.proto, f.sip, f.dip,
            f.frag, f.ip_opts.hex(), f.cut, f.tos, f.ttl, f.sport, f.dport,
            f.tcp_flags, f.icmp, f.arp if f.etype == 0x0806 else "")


# IP protocols whose inner headers flower's dissector keys instead of the
# outer ones (IPIP, IPv6 in IP, GRE, MPLS in IP): left to TC.
TUNNELS = (4, 41, 47, 137)


def is_odd(f):
    """Frames the datapath may rightly leave to TC: cut short, IPv6
    extension headers, tunnels, EtherTypes it does not parse, a third
    tag."""
    return f.odd or f.ip6_ext or len(f.tags) > 2 or \
        f.etype not in (0x0800, 0x86DD, 0x0806) or \
        (f.etype != 0x0806 and f.proto in TUNNELS)


# ---------------------------------------------------------------- the run

def with_tag(data, anc):
    """The frame as it was on the wire: a packet socket gets a VLAN tag
    the stack or the device took off in PACKET_AUXDATA, not in the data.
    """
    for level, typ, val in anc:
        if level != SOL_PACKET or typ != PACKET_AUXDATA or \
                len(val) < AUXDATA_LEN:
            continue
        status, _, _, _, _, tci, tpid = struct.unpack("=IIIHHHH",
                                                      val[:AUXDATA_LEN])
        if status & TP_STATUS_VLAN_VALID and len(data) >= 12:
            if not status & TP_STATUS_VLAN_TPID_VALID:
                tpid = 0x8100
            return data[:12] + struct.pack("!HH", tpid, tci) + data[12:]
    return data


class Sockets:
    """Packet sockets: senders on the feeders, taps on the sinks, and the
    stack side of every rule device."""

    def __init__(self, lanes):
        self.send = {}
        self.rx = []            # (sock, lane index, side, where)
        setns(NS_GEN)
        for ln in lanes:
            for s in "AB":
                sk = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
                sk.bind((ln.gen[s], 0))
                self.send[(ln.i, s)] = sk
        setns(NS_SINK)
        for ln in lanes:
            for s in "AB":
                for j, k in enumerate(ln.sink[s]):
                    self._rx(k, ETH_P_ALL, ln.i, s, "o%d" % (j + 1))
        setns(None)
        for ln in lanes:
            for s in "AB":
                for et in ETH_TYPES:
                    self._rx(ln.dev[s], et, ln.i, s, "stack")
        self.poll = select.poll()
        self.by_fd = {}
        for t in self.rx:
            self.poll.register(t[0].fileno(), select.POLLIN)
            self.by_fd[t[0].fileno()] = t

    def _rx(self, dev, proto, lane, side, where):
        sk = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                           socket.htons(proto))
        sk.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        sk.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
        sk.bind((dev, proto))
        sk.setblocking(False)
        self.rx.append((sk, lane, side, where))

    def drain(self, quiet_ms, cap_s, seen):
        """Collects frames until none came for quiet_ms."""
        end = time.monotonic() + cap_s
        while time.monotonic() < end:
            ev = self.poll.poll(quiet_ms)
            if not ev:
                return True
            for fd, _ in ev:
                sk, lane, side, where = self.by_fd[fd]
                while True:
                    try:
                        data, anc, _, addr = sk.recvmsg(
                            65536, socket.CMSG_SPACE(AUXDATA_LEN))
                    except BlockingIOError:
                        break
                    if addr[2] == PACKET_OUTGOING:
                        continue
                    data = with_tag(data, anc)
                    if len(data) < 8 or data[-8:-4] != MAGIC:
                        continue
                    fid = struct.unpack("!I", data[-4:])[0]
                    seen.setdefault((fid, side), []).append((where, data))
        return False


def read_stats(lanes):
    """{(lane, side): {(chain, pref, handle): tc.RuleStats}}"""
    sides = [(ln, s) for ln in lanes for s in "AB"]
    devs = [ln.dev[s] for ln, s in sides]
    res = {}
    for (ln, s), rules in zip(sides, tc.filters_of(devs)):
        res[(ln.i, s)] = {(f.get("chain", 0), f["pref"],
                           f["options"].get("handle")): tc.RuleStats(f)
                          for f in rules}
    return res


# --full-tables: the XDP tables are too small for the rules (module
# parameters max_masks, max_flows), and a rule they have no room for sends
# every frame of its device to the stack from its prio on, whatever chain.
FULL_TABLES = False


def checked_in_sw(rule, key, stats):
    """Whether XDP must have handled every plain frame that rule `rule`
    (at `key`, in_hw) counted: a drop or a lone redirect (a redirect after
    rewrites may meet a frame the datapath cannot rewrite exactly, and the
    TC hook leaves pedit and csum to TC), that no rule still in software
    can shadow: none before it in its chain, and for a rule reached by
    goto none at all on the device (with FULL_TABLES: none before it in
    any chain)."""
    if rule is None or len(rule.actions) != 1:
        return False
    act = rule.actions[0]
    if act != "drop" and not act.startswith("mirred egress redirect"):
        return False
    for k, rs in stats.items():
        if rs.in_hw or k == key:
            continue
        if key[0] != 0 or ((k[0] == 0 or FULL_TABLES) and k[1] <= key[1]):
            return False
    return True


class Case:
    def __init__(self, seed, n, lane, vocab):
        self.seed = seed
        self.n = n
        self.lane = lane
        self.rnd = random.Random("%d/%d" % (seed, n))
        rnd = self.rnd
        prio_proto = {}
        self.rules = []
        handles = {}
        for _ in range(rnd.randint(1, 7)):
            r = gen_rule(rnd, prio_proto, vocab)
            rs = [r]
            if "range" in vocab and rnd.random() < 0.4:
                rs += [x for x in [gen_sibling(rnd, r, vocab)] if x]
            for r in rs:
                handles[r.prio] = handles.get(r.prio, 0) + 1
                r.handle = handles[r.prio]
                self.rules.append(r)
        # round 2: some rules go, some come
        self.dels = [r for r in self.rules if rnd.random() < 0.3]
        self.adds = []
        for _ in range(rnd.randint(0, 2)):
            r = gen_rule(rnd, prio_proto, vocab)
            handles[r.prio] = handles.get(r.prio, 0) + 1
            r.handle = handles[r.prio]
            self.adds.append(r)
        self.frames = [[], []]
        for rnd_i in (0, 1):
            pool = self.rules + self.adds
            for _ in range(rnd.randint(6, 14)):
                rule = rnd.choice(pool) if rnd.random() < 0.85 else None
                f = aim(rnd, rule)
                if rnd.random() < 0.45:
                    perturb(rnd, f)
                self.frames[rnd_i].append(f)
        self.frame_bytes = {}
        self.tc_ok = {}

    def repro(self, side_dev, outs):
        lines = ["tc qdisc add dev %s clsact" % side_dev]
        lines += ["tc " + r.tc(side_dev, outs) for r in self.rules]
        lines += ["# then"]
        lines += ["tc " + r.tc_del(side_dev) for r in self.dels]
        lines += ["tc " + r.tc(side_dev, outs) for r in self.adds]
        return lines


class Totals:
    """What the run proves beyond equal outcomes: that XDP did the work."""

    def __init__(self):
        self.rules = 0          # rules on A after round 2
        self.rules_hw = 0       # of which in_hw
        self.packets = 0        # packets A's rules counted (terminal action)
        self.hw_packets = 0     # of which counted by the datapath
        self.sw_hits = 0        # plain frames in software on checked rules

    @staticmethod
    def pct(a, b):
        return 100.0 * a / b if b else 0.0

    def line(self):
        return ("rules in_hw %.1f%% (%d/%d), packets by XDP %.1f%% (%d/%d), "
                "software hits on in_hw rules %d" %
                (self.pct(self.rules_hw, self.rules), self.rules_hw,
                 self.rules, self.pct(self.hw_packets, self.packets),
                 self.hw_packets, self.packets, self.sw_hits))


def send_frames(socks, batch, rnd_i, pick, fid, frame_case, seen):
    """Sends the frames of round rnd_i that pick() selects, to A and B
    alike, interleaved across lanes. Returns (the last frame id, sent)."""
    sent = 0
    for c in batch:
        for f in c.frames[rnd_i]:
            if not pick(f):
                continue
            fid += 1
            sent += 1
            b = f.build(MAGIC + struct.pack("!I", fid))
            frame_case[fid] = (c, rnd_i, b)
            for s in "AB":
                try:
                    socks.send[(c.lane.i, s)].send(b)
                except OSError as e:
                    seen.setdefault((fid, s), []).append(
                        ("send-error", str(e.errno).encode()))
    return fid, sent


def compare_stats(c, stats, when, plain, prev_sw, last, diffs, tot):
    """Counters of A and B after a phase, and (after the plain frames)
    whether a rule XDP had to handle counted any in software."""
    sa, sb = stats[(c.lane.i, "A")], stats[(c.lane.i, "B")]
    for key in sorted(set(sa) | set(sb), key=str):
        ca = sa[key].acts if key in sa else None
        cb = sb[key].acts if key in sb else None
        if ca != cb:
            diffs.append("%s: counters of chain %s pref %s handle %s: "
                         "A %s (in_hw %s), B %s" %
                         (when, key[0], key[1], key[2], ca,
                          sa[key].in_hw if key in sa else None, cb))
    rules = {(r.chain, r.prio, r.handle): r for r in c.rules + c.adds}
    for key, rs in sa.items():
        sw = rs.packets - rs.hw_packets
        if plain and rs.in_hw and sw > prev_sw.get(key, 0) and \
                checked_in_sw(rules.get(key), key, sa):
            n = sw - prev_sw.get(key, 0)
            tot.sw_hits += n
            diffs.append("%s: chain %s pref %s handle %s (in_hw, %s) counted "
                         "%d frame(s) in software that XDP had to handle" %
                         (when, key[0], key[1], key[2],
                          rules[key].actions[0], n))
            if os.environ.get("XF_DIFF_DEBUG"):
                for f in c.frames[int(when.split()[1][0]) - 1]:
                    if not is_odd(f):
                        diffs.append("  frame %s" % describe(f))
        prev_sw[key] = sw
        last[key] = rs


class Phases:
    """Wall time spent in each phase of a run, for the closing diagnostic
    line: where an emulated guest's minutes go."""

    def __init__(self):
        self.t = {}
        self.last = time.monotonic()

    def done(self, name):
        now = time.monotonic()
        self.t[name] = self.t.get(name, 0.0) + now - self.last
        self.last = now

    def line(self):
        return ", ".join("%s %.0f s" % kv for kv in
                         sorted(self.t.items(), key=lambda kv: -kv[1]))


def run(args):
    lanes = lanes_of(args.lanes)
    vocab = set(args.vocab.split(",")) if args.vocab else set()
    if args.enable:
        for ln in lanes:
            proc.must(*args.enable.format(dev=ln.dev["A"]).split())
    socks = Sockets(lanes)
    ncases = ndiff = 0
    fid = 0
    t0 = time.monotonic()
    shown = 0
    it = 0
    fates = {}
    to_own = 0
    tot = Totals()
    ph = Phases()
    while ncases < args.cases:
        batch = []
        for ln in lanes:
            if ncases + len(batch) >= args.cases:
                break
            batch.append(Case(args.seed, args.first + ncases + len(batch),
                              ln, vocab))
        # fresh rules: a new clsact on every device of the batch
        lines = []
        for c in batch:
            for s in "AB":
                d = c.lane.dev[s]
                lines += ["qdisc del dev %s clsact" % d,
                          "qdisc add dev %s clsact" % d]
        ph.done("draw and compare")
        p = tc.batch(lines)
        if p.returncode:
            raise proc.Failed("resetting clsact: " + p.stderr)
        ph.done("new clsact")
        seen = {}
        frame_case = {}
        tc_err = {}
        diffs = {c.n: [] for c in batch}
        prev_sw = {c.n: {} for c in batch}
        last = {c.n: {} for c in batch}
        final = {}
        for rnd_i in (0, 1):
            cmds, owner = [], []
            for c in batch:
                for s in "AB":
                    d, outs = c.lane.dev[s], c.lane.out[s]
                    if rnd_i == 1:
                        mine = [r.tc_del(d) for r in c.dels]
                        mine += [r.tc(d, outs) for r in c.adds]
                    else:
                        mine = [r.tc(d, outs) for r in c.rules]
                    cmds += mine
                    owner += [(c.n, s)] * len(mine)
                    tc_err[(c.n, rnd_i, s)] = []
            # which commands tc refused must be the same on both sides
            failed = set()
            if cmds:
                err = tc.batch(cmds).stderr
                for m in re.finditer(r"Command failed -:(\d+)", err):
                    failed.add(int(m.group(1)) - 1)
                settle_rules()
            ph.done("rules")
            for i, (n, s) in enumerate(owner):
                tc_err[(n, rnd_i, s)].append(i not in failed)
            # Plain frames first, then the odd ones: after the plain ones
            # no rule XDP must handle may have counted in software.
            for plain, pick in ((True, lambda f: not is_odd(f)),
                                (False, is_odd)):
                fid, sent = send_frames(socks, batch, rnd_i, pick, fid,
                                        frame_case, seen)
                if not sent and not plain:
                    continue
                ph.done("send")
                if not socks.drain(args.quiet_ms, 20, seen):
                    print("# frames still arriving after 20 s", flush=True)
                ph.done("receive")
                stats = read_stats([c.lane for c in batch])
                ph.done("counters")
                when = "round %d, %s frames" % (rnd_i + 1,
                                                "plain" if plain else "odd")
                for c in batch:
                    compare_stats(c, stats, when, plain, prev_sw[c.n],
                                  last[c.n], diffs[c.n], tot)
                    final[c.n] = stats[(c.lane.i, "A")]
        # compare
        for c in batch:
            for rnd_i in (0, 1):
                if tc_err[(c.n, rnd_i, "A")] != tc_err[(c.n, rnd_i, "B")]:
                    diffs[c.n].append(
                        "round %d: tc accepted %s on A, %s on B" %
                        (rnd_i + 1, tc_err[(c.n, rnd_i, "A")],
                         tc_err[(c.n, rnd_i, "B")]))
            for f_id, (fc, rnd_i, b) in frame_case.items():
                if fc is not c:
                    continue
                a = sorted(seen.get((f_id, "A"), []))
                bb = sorted(seen.get((f_id, "B"), []))
                if a != bb:
                    diffs[c.n].append("round %d frame %s: A %s, B %s" % (
                        rnd_i + 1, b.hex(), fmt_seen(a), fmt_seen(bb)))
                    diffs[c.n].extend(fmt_bytes(a, bb))
                where = seen.get((f_id, "A"), [])
                for w in set(x[0] for x in where) or ["nowhere"]:
                    fates[w] = fates.get(w, 0) + 1
                if own_sink(bb):
                    to_own += 1
            tot.rules += len(final[c.n])
            tot.rules_hw += sum(1 for rs in final[c.n].values() if rs.in_hw)
            for rs in last[c.n].values():
                tot.packets += rs.packets
                tot.hw_packets += rs.hw_packets
            ncases += 1
            if diffs[c.n]:
                ndiff += 1
                if shown < args.show:
                    shown += 1
                    print("# DIFFERENCE in case %d (seed %d): reproduce "
                          "with: difftest.py run --seed %d --first %d "
                          "--cases 1" % (c.n, args.seed, args.seed, c.n))
                    for line in c.repro("DEV", ["OUT1", "OUT2"]):
                        print("#   " + line)
                    for d in diffs[c.n][:40]:
                        print("#   " + d)
                    sys.stdout.flush()
        it += 1
        if args.progress and it % args.progress == 0:
            print("# %d cases, %d with differences, %.0f s" %
                  (ncases, ndiff, time.monotonic() - t0), flush=True)
        if args.stop and ndiff:
            break
    ph.done("draw and compare")
    print("# time by phase: " + ph.line())
    print("# frames on A by fate: " + ", ".join(
        "%s %d" % kv for kv in sorted(fates.items())))
    print("# frames B delivered to one sink, of that sink's address: %d" %
          to_own)
    low = []
    if tot.pct(tot.rules_hw, tot.rules) < args.min_rules_hw:
        low.append("rules in_hw below %g%%" % args.min_rules_hw)
    if tot.pct(tot.hw_packets, tot.packets) < args.min_xdp_packets:
        low.append("packets by XDP below %g%%" % args.min_xdp_packets)
    for x in low:
        print("# FLOOR: " + x)
    print("cases %d, differences %d, %s (seed %d, %.0f s)" %
          (ncases, ndiff, tot.line(), args.seed, time.monotonic() - t0))
    return 1 if ndiff or low or not ncases else 0


def own_sink(seen_b):
    """Whether B delivered a frame to one sink and nowhere else, with the
    sink's own address as destination: what a redirect to its target
    makes, and on the tc hook xdp_flow sends that frame into the sink with
    bpf_redirect_peer(), past the target's transmit counter."""
    if len(seen_b) != 1 or seen_b[0][0] not in ("o1", "o2"):
        return False
    j = int(seen_b[0][0][1]) - 1
    return seen_b[0][1][:6] == mac_bytes(MACS[j])


def fmt_seen(lst):
    if not lst:
        return "nowhere"
    return ", ".join("%s(%d bytes)" % (w, len(d)) for w, d in lst)


def fmt_bytes(a, b):
    """Where frames that went to the same places differ: the bytes."""
    if [w for w, _ in a] != [w for w, _ in b]:
        return []
    out = []
    for (w, da), (_, db) in zip(a, b):
        if da == db:
            continue
        off = next((i for i in range(min(len(da), len(db)))
                    if da[i] != db[i]), min(len(da), len(db)))
        out.append("  %s: A and B differ from byte %d: A %s, B %s" %
                   (w, off, da.hex(), db.hex()))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["setup", "run", "cleanup"])
    ap.add_argument("--lanes", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--first", type=int, default=0,
                    help="number of the first case (to reproduce one)")
    ap.add_argument("--enable", default="")
    ap.add_argument("--vocab",
                    default="tcp_flags,icmp,ip_tos,ip_ttl,ip_flags,arp,"
                    "rewrite,goto,range,qinq,mirror",
                    help="comma list of extra match kinds to generate")
    ap.add_argument("--quiet-ms", type=int, default=100)
    ap.add_argument("--show", type=int, default=5,
                    help="print this many differing cases")
    ap.add_argument("--progress", type=int, default=0)
    ap.add_argument("--stop", action="store_true",
                    help="stop after the first batch with a difference")
    ap.add_argument("--min-rules-hw", type=float, default=0,
                    help="fail below this share (%%) of final rules in_hw")
    ap.add_argument("--min-xdp-packets", type=float, default=0,
                    help="fail below this share (%%) of rule hits counted "
                    "by XDP")
    ap.add_argument("--full-tables", action="store_true",
                    help="the XDP tables are too small for the rules: a "
                    "rule in software shadows later prios in every chain")
    args = ap.parse_args()
    global FULL_TABLES
    FULL_TABLES = args.full_tables
    if args.what == "setup":
        setup(args.lanes)
        return 0
    if args.what == "cleanup":
        cleanup(args.lanes)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
