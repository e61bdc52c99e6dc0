#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Targeted tests: one flower match or action at a time, a known frame in,
the expected frame out.

For each match: a rule with only that match (beside what flower requires)
and `action mirred egress redirect`, on lane 0's A device (xdp_flow enabled,
see difftest.py setup); the rule must be in_hw; a frame that meets the match
must leave by the redirect target with its bytes unchanged, counted as one
hardware packet; the same frame with the matched field changed must go up
the stack untouched by the rule. For each action (ACTION_CASES): the rule
is in_hw and the frame leaves the target exactly as expected, or, for a
rule XDP cannot execute exactly, the rule is not in_hw and the frame comes
out as TC alone (lane 0's B device) has it. The expected frame is not built
by the code that built the frame sent (a bug there would be in both): scapy
computes it from the bytes sent and the case's rewrites (oracle.py). Prints
one `ok - ` or `not ok - ` line per case (TAP style); exits 1 if any
failed.
"""

import json
import os
import random
import re
import struct
import sys

# difftest puts selftests/ on sys.path, for xfpy
import difftest as dt
import oracle
import xfpy.tc
from xfpy import xdpflow
from xfpy.proc import run
from xfpy.tap import Tap


def base(kind):
    f = dt.Frame(random.Random(1))
    f.dst, f.src = "02:00:00:00:00:01", "02:00:00:00:00:02"
    f.payload = b"targeted"
    if kind == "ip6":
        f.etype, f.sip, f.dip, f.proto = 0x86DD, "2001:db8::1", "2001:db8::2", 17
    elif kind == "arp":
        f.etype = 0x0806
        f.arp = [1, "02:00:00:00:00:02", "10.1.0.1", "00:00:00:00:00:00",
                 "10.2.0.1"]
    return f


def setf(**kw):
    def apply(f):
        for k, v in kw.items():
            setattr(f, k, v)
    return apply


def arpf(i, v):
    def apply(f):
        f.arp[i] = v
    return apply


def tagged(*tags):
    def apply(f):
        f.tags = list(tags)
    return apply


# name, frame kind, tc protocol, flower matches, change for a hit, for a miss
CASES = [
    ("dst_mac", "ip", "ip", "dst_mac 02:00:00:00:00:01",
     setf(), setf(dst="02:00:00:00:00:09")),
    ("src_mac with a mask", "ip", "ip", "src_mac 02:00:00:00:00:00/ff:ff:ff:00:00:00",
     setf(src="02:00:00:12:34:56"), setf(src="06:00:00:12:34:56")),
    ("eth_type (protocol arp)", "arp", "arp", "",
     setf(), setf(etype=0x88B5)),
    ("IPv4 dst_ip /24", "ip", "ip", "dst_ip 10.2.0.0/24",
     setf(dip="10.2.0.77"), setf(dip="10.2.1.77")),
    ("IPv4 src_ip /32", "ip", "ip", "src_ip 10.1.0.1",
     setf(), setf(sip="10.1.0.3")),
    ("IPv6 dst_ip /64", "ip6", "ipv6", "dst_ip 2001:db8::/64",
     setf(dip="2001:db8::99"), setf(dip="2001:db8:0:1::99")),
    ("IPv6 src_ip /128", "ip6", "ipv6", "src_ip 2001:db8::1",
     setf(), setf(sip="2001:db8::3")),
    ("ip_proto udp", "ip", "ip", "ip_proto udp",
     setf(), setf(proto=6)),
    ("UDP dst_port", "ip", "ip", "ip_proto udp dst_port 2000",
     setf(), setf(dport=2001)),
    ("TCP src_port", "ip", "ip", "ip_proto tcp src_port 1000",
     setf(proto=6), setf(proto=6, sport=1002)),
    ("SCTP dst_port", "ip", "ip", "ip_proto sctp dst_port 2000",
     setf(proto=132), setf(proto=132, dport=3000)),
    ("UDP dst_port range, top edge", "ip", "ip", "ip_proto udp dst_port 1000-2000",
     setf(dport=2000), setf(dport=2001)),
    ("UDP dst_port range, bottom edge", "ip", "ip", "ip_proto udp dst_port 1000-2000",
     setf(dport=1000), setf(dport=999)),
    ("TCP src_port range", "ip", "ip", "ip_proto tcp src_port 1024-1535",
     setf(proto=6, sport=1535), setf(proto=6, sport=1536)),
    ("IPv6 UDP ranges on both ports", "ip6", "ipv6",
     "ip_proto udp src_port 1024-2047 dst_port 2000-2100",
     setf(sport=2047, dport=2050), setf(sport=2048, dport=2050)),
    ("ip_tos with a mask", "ip", "ip", "ip_tos 0x20/0xf0",
     setf(tos=0x2c), setf(tos=0x30)),
    ("ip_ttl", "ip", "ip", "ip_ttl 7",
     setf(ttl=7), setf(ttl=8)),
    ("IPv6 traffic class (ip_tos)", "ip6", "ipv6", "ip_tos 0xb8",
     setf(tos=0xb8), setf(tos=0xb0)),
    ("IPv6 hop limit (ip_ttl)", "ip6", "ipv6", "ip_ttl 1",
     setf(ttl=1), setf(ttl=2)),
    ("ip_flags frag", "ip", "ip", "ip_flags frag",
     setf(frag=0x0020), setf(frag=0)),
    ("ip_flags firstfrag", "ip", "ip", "ip_flags firstfrag",
     setf(frag=0x2000), setf(frag=0x2020)),
    ("tcp_flags with a mask", "ip", "ip", "ip_proto tcp tcp_flags 0x02/0x12",
     setf(proto=6, tcp_flags=0x02), setf(proto=6, tcp_flags=0x12)),
    ("ICMP type and code", "ip", "ip", "ip_proto icmp type 3 code 1",
     setf(proto=1, icmp=(3, 1)), setf(proto=1, icmp=(3, 0))),
    ("ICMPv6 type", "ip6", "ipv6", "ip_proto icmpv6 type 128",
     setf(proto=58, icmp=(128, 0)), setf(proto=58, icmp=(129, 0))),
    ("vlan_id", "ip", "802.1q", "vlan_id 10",
     tagged((0x8100, 10)), tagged((0x8100, 11))),
    ("vlan_prio", "ip", "802.1q", "vlan_prio 3",
     tagged((0x8100, 10 | 3 << 13)), tagged((0x8100, 10 | 2 << 13))),
    ("protocol 802.1q: an untagged frame misses", "ip", "802.1q", "vlan_id 10",
     tagged((0x8100, 10)), tagged()),
    ("vlan_ethtype ip: a second tag misses", "ip", "802.1q",
     "vlan_id 10 vlan_ethtype ip dst_ip 10.2.0.1",
     tagged((0x8100, 10)), tagged((0x8100, 10), (0x8100, 20))),
    ("QinQ cvlan_id", "ip", "802.1ad",
     "vlan_id 10 vlan_ethtype 802.1q cvlan_id 20",
     tagged((0x88A8, 10), (0x8100, 20)), tagged((0x88A8, 10), (0x8100, 21))),
    ("QinQ cvlan_prio, cvlan_ethtype", "ip", "802.1ad",
     "vlan_ethtype 802.1q cvlan_prio 5 cvlan_ethtype ip dst_ip 10.2.0.1",
     tagged((0x88A8, 10), (0x8100, 20 | 5 << 13)),
     tagged((0x88A8, 10), (0x8100, 20 | 4 << 13))),
    ("arp_op", "arp", "arp", "arp_op reply",
     arpf(0, 2), arpf(0, 1)),
    ("arp_sip", "arp", "arp", "arp_sip 10.1.0.0/16",
     arpf(2, "10.1.7.7"), arpf(2, "10.3.7.7")),
    ("arp_tip", "arp", "arp", "arp_tip 10.2.0.1",
     setf(), arpf(4, "10.2.0.2")),
    ("arp_sha", "arp", "arp", "arp_sha 02:00:00:00:00:02",
     setf(), arpf(1, "02:00:00:00:00:03")),
    ("arp_tha", "arp", "arp", "arp_tha 02:aa:00:00:00:00/ff:ff:00:00:00:00",
     arpf(3, "02:aa:01:02:03:04"), arpf(3, "02:ab:01:02:03:04")),
]


CSUM = setf(l4csum=True)
TCP = setf(proto=6, l4csum=True)
ICMP6 = setf(proto=58, icmp=(128, 0), l4csum=True)
RD = "mirred egress redirect dev {o}"

# Actions, each with a known frame in and the expected frame out: name,
# frame kind, tc protocol, flower matches, the actions (all end in a
# redirect; {o} is the target), change to the base frame for the one sent,
# and the rewrites the rule makes of it, as oracle.py's operations (see
# there): (pedit field, value or "decrement"), ("push", tpid, priority, id),
# ("pop",), ("modify", tpid, priority, id). The expected frame is the one
# sent with those rewrites, then the checksums the rule's csum action names
# recomputed, computed by scapy. A case whose rewrites are None must be
# refused (not in_hw) and the frame still handled as TC does it: compared
# with what the same rule does in software on lane 0's B device. The VLAN
# cases use protocol all: the rig's devices are veths, where a VLAN match
# (protocol 802.1q included) stays in software because XDP may not see the
# outer tag there.
ACTION_CASES = [
    ("pedit eth dst", "ip", "ip", "",
     "pedit ex munge eth dst set 02:00:00:00:00:99 pipe action " + RD,
     setf(), [("eth_dst", "02:00:00:00:00:99")]),
    ("pedit eth src", "ip", "ip", "ip_proto udp",
     "pedit ex munge eth src set 0a:0b:0c:0d:0e:0f pipe action " + RD,
     setf(), [("eth_src", "0a:0b:0c:0d:0e:0f")]),
    ("pedit ip dst, csum ip and udp", "ip", "ip", "ip_proto udp",
     "pedit ex munge ip dst set 10.9.9.9 pipe action csum ip and udp "
     "pipe action " + RD,
     CSUM, [("ip_dst", "10.9.9.9")]),
    ("pedit ip src, ttl decrement, csum ip and tcp", "ip", "ip", "ip_proto tcp",
     "pedit ex munge ip src set 192.168.1.1 munge ip ttl decrement pipe "
     "action csum ip and tcp pipe action " + RD,
     TCP, [("ip_src", "192.168.1.1"), ("ip_ttl", "decrement")]),
    ("pedit ip tos, csum ip", "ip", "ip", "",
     "pedit ex munge ip tos set 0x28 pipe action csum ip pipe action " + RD,
     setf(), [("ip_tos", 0x28)]),
    ("pedit tcp dport, csum tcp", "ip", "ip", "ip_proto tcp",
     "pedit ex munge tcp dport set 8080 pipe action csum tcp pipe action " + RD,
     TCP, [("tcp_dport", 8080)]),
    ("pedit udp sport, csum udp", "ip", "ip", "ip_proto udp",
     "pedit ex munge udp sport set 4242 pipe action csum udp pipe action " + RD,
     CSUM, [("udp_sport", 4242)]),
    ("csum udp keeps a zero UDP checksum", "ip", "ip", "ip_proto udp",
     "pedit ex munge udp dport set 53 pipe action csum udp pipe action " + RD,
     setf(), [("udp_dport", 53)]),
    ("pedit ip6 dst, csum tcp", "ip6", "ipv6", "ip_proto tcp",
     "pedit ex munge ip6 dst set 2001:db8::77 pipe action csum tcp pipe "
     "action " + RD,
     TCP, [("ip6_dst", "2001:db8::77")]),
    ("pedit ip6 hoplimit, traffic_class", "ip6", "ipv6", "",
     "pedit ex munge ip6 hoplimit set 9 munge ip6 traffic_class set 0x40 "
     "pipe action " + RD,
     setf(), [("ip6_hoplimit", 9), ("ip6_traffic_class", 0x40)]),
    ("pedit ip6 src, csum icmp (ICMPv6)", "ip6", "ipv6", "ip_proto icmpv6",
     "pedit ex munge ip6 src set 2001:db8::55 pipe action csum icmp pipe "
     "action " + RD,
     ICMP6, [("ip6_src", "2001:db8::55")]),
    ("vlan push id 5 priority 3", "ip", "ip", "",
     "vlan push id 5 priority 3 pipe action " + RD,
     setf(), [("push", 0x8100, 3, 5)]),
    ("vlan push 802.1ad onto a tagged frame", "ip", "all", "",
     "vlan push protocol 802.1ad id 7 pipe action " + RD,
     tagged((0x8100, 10)), [("push", 0x88A8, 0, 7)]),
    ("vlan pop", "ip", "all", "",
     "vlan pop pipe action " + RD,
     tagged((0x8100, (2 << 13) | 10)), [("pop",)]),
    ("vlan modify id and priority", "ip", "all", "",
     "vlan modify id 9 priority 1 pipe action " + RD,
     tagged((0x8100, (6 << 13) | 10)), [("modify", 0x8100, 1, 9)]),
    ("pedit, csum, then vlan push", "ip", "ip", "ip_proto udp",
     "pedit ex munge ip dst set 10.7.7.7 munge udp dport set 99 pipe action "
     "csum ip and udp pipe action vlan push id 100 pipe action " + RD,
     CSUM, [("ip_dst", "10.7.7.7"), ("udp_dport", 99),
            ("push", 0x8100, 0, 100)]),
    ("refused: pedit that ends in pass", "ip", "ip", "",
     "pedit ex munge eth dst set 02:00:00:00:00:99 pipe", setf(), None),
    ("refused: pedit of the IPv4 protocol", "ip", "ip", "",
     "pedit ex munge ip protocol set 6 pipe action " + RD, setf(), None),
    ("refused: csum sctp", "ip", "ip", "ip_proto sctp",
     "csum sctp pipe action " + RD, setf(proto=132), None),
    ("refused: vlan modify without a priority", "ip", "all", "",
     "vlan modify id 9 pipe action " + RD, tagged((0x8100, 10)), None),
    ("refused: port ranges needing 900 masked entries", "ip", "ip",
     "ip_proto udp src_port 1-65534 dst_port 1-65534", RD,
     setf(sport=5, dport=7), None),
]


def tc(*args):
    return run("tc", *args)


def rule_states(dev, key):
    """{key(filter, options): (in_hw, packets, hw_packets)} of the rules on
    dev, in tc's order; packets and hw_packets of the last action."""
    res = {}
    for f in xfpy.tc.filters(dev):
        rs = xfpy.tc.RuleStats(f)
        res[key(f, f["options"])] = (rs.in_hw, rs.packets, rs.hw_packets)
    return res


def rule_state(dev):
    """(in_hw, packets, hw_packets) of the first rule on dev, or None."""
    return next(iter(rule_states(dev, lambda f, o: id(o)).values()), None)


def chain_state(dev):
    """{chain: (in_hw, packets, hw_packets)} of the rules on dev."""
    return rule_states(dev, lambda f, o: f.get("chain", 0))


def filters(dev):
    """{handle: (in_hw, packets, hw_packets)} of the rules on dev."""
    def handle(f, o):
        h = o.get("handle", 0)
        return int(h, 0) if isinstance(h, str) else h
    return rule_states(dev, handle)


class Rig:
    def __init__(self):
        self.ln = dt.lanes_of(1)[0]
        self.socks = dt.Sockets([self.ln])
        self.fid = 0x7f000000
        self.tap = Tap()

    def reset(self, side="A"):
        dev = self.ln.dev[side]
        tc("qdisc", "del", "dev", dev, "clsact")
        tc("qdisc", "add", "dev", dev, "clsact")

    def add(self, side, proto, matches, actions, chain=0):
        """Adds the rule on one side; returns an error or None."""
        dev = self.ln.dev[side]
        outs = self.ln.out[side]
        cmd = ("filter add dev %s ingress chain %d pref 1 protocol %s flower "
               "%s action %s" % (dev, chain, proto, matches,
                                 actions.format(o=outs[0], o2=outs[-1]))
               ).split()
        p = tc(*cmd)
        if p.returncode:
            return "tc %s: %s" % (" ".join(cmd), p.stderr.strip())
        return None

    def frame(self, kind, *changes):
        """A frame id and its bytes: the base frame with the changes."""
        self.fid += 1
        f = base(kind)
        for c in changes:
            c(f)
        return self.fid, f.build(dt.MAGIC + struct.pack("!I", self.fid))

    def send(self, side, frames):
        seen = {}
        xdpflow.settle_rules()
        for _, b in frames:
            self.socks.send[(0, side)].send(b)
        self.socks.drain(100, 10, seen)
        return seen


def check_out(seen, fid, side, want, want_bytes, sent):
    got = seen.get((fid, side), [])
    if [w for w, _ in got] != [want]:
        return "frame %s went to %s, not %s" % (sent.hex(), dt.fmt_seen(got),
                                                 want)
    if got[0][1] != want_bytes:
        return "frame %s left as %s, not %s" % (
            sent.hex(), got[0][1].hex(), want_bytes.hex())
    return None


def hw_counted(dev):
    st = rule_state(dev)
    if not st or st[1] != 1 or st[2] != 1:
        return "counters (in_hw, packets, hw_packets) %s, not (True, 1, 1)" \
               % (st,)
    return None


def shown_ranges(dev, matches):
    """`xdp-flow show` prints the port ranges of `matches` as tc does."""
    w = matches.split()
    want = ["%s %s" % (k, v) for k, v in zip(w, w[1:])
            if k.endswith("_port") and "-" in v]
    if not want:
        return None
    p = run(XDP_FLOW, "show", "dev", dev)
    lines = [ln.strip() for ln in p.stdout.splitlines()]
    missing = [x for x in want if x not in lines]
    return "xdp-flow show lacks %s: %r" % (missing, p.stdout) if missing \
        else None


def as_stack(b):
    """A frame as the stack side's taps get it: a packet socket bound to
    one protocol sees a frame after the stack popped its outer VLAN tag and,
    without a VLAN device for it, dropped the tag."""
    if len(b) >= 18 and struct.unpack("!H", b[12:14])[0] in (0x8100, 0x88A8):
        return b[:12] + b[16:]
    return b


def match_case(rig, name, kind, proto, matches, hit, miss):
    dev = rig.ln.dev["A"]
    rig.reset()
    why = rig.add("A", proto, matches, RD)
    st = rule_state(dev) if not why else None
    if not why and (not st or not st[0]):
        why = "the rule is not in_hw: %s" % (st,)
    frames = [rig.frame(kind, hit), rig.frame(kind, miss)]
    if not why:
        seen = rig.send("A", frames)
        for (fid, b), want in zip(frames, ("o1", "stack")):
            why = why or check_out(seen, fid, "A", want,
                                   b if want == "o1" else as_stack(b), b)
    why = why or hw_counted(dev)
    why = why or shown_ranges(dev, matches)
    rig.tap.line("%s: %s" % (name, matches), why,
                 "'%s' redirects the matching frame in XDP, the other goes "
                 "up the stack" % matches)


XDP_FLOW = xdpflow.cli()


def squash(kinds):
    """Consecutive pedit keys as one (a key is one 32-bit word, so the
    number per field depends on its width)."""
    return [k for i, k in enumerate(kinds)
            if not (k == "pedit" and i and kinds[i - 1] == "pedit")]


def shown_kinds(dev):
    """The action kinds `xdp-flow show` prints for the rule on dev."""
    p = run(XDP_FLOW, "-j", "show", "dev", dev)
    try:
        rules = json.loads(p.stdout)
    except ValueError:
        return "xdp-flow show: %r %r" % (p.stdout, p.stderr)
    return [squash([a.get("kind") for a in r.get("actions", [])])
            for r in rules]


def tc_kinds(actions):
    """What xdp-flow should show for these tc actions, squashed."""
    return squash([{"mirred": "redirect"}.get(a.split()[0], a.split()[0])
                   for a in actions.split(" action ")])


# The hook the rig's devices got: xdp or tc (XF_DEV_HOOK, from xdp-flow
# status; XF_HOOK may say auto).
HOOK = os.environ.get("XF_DEV_HOOK") or os.environ.get("XF_HOOK", "xdp")


def expected_frame(sent, ops, actions):
    """(the frame expected out of the target, None) or (None, why): scapy's
    (oracle.py) rewrites `ops` and the csum action of `actions` applied to
    the bytes sent, not difftest's builder."""
    try:
        return oracle.expected(sent, ops, actions), None
    except oracle.OracleError as e:
        return None, "no expected frame: %s" % e


def action_case(rig, name, kind, proto, matches, actions, change, ops):
    dev = rig.ln.dev["A"]
    if HOOK == "tc" and ops is not None and ("pedit " in actions or
                                             "csum " in actions):
        # The TC hook leaves pedit and csum to TC.
        ops = None
        name += " (tc hook: in software)"
    rig.reset()
    why = rig.add("A", proto, matches, actions)
    st = rule_state(dev) if not why else None
    fid, b = rig.frame(kind, change)
    if ops is None:
        # Refused: in software on A, and the frame as TC alone has it on B.
        rig.reset("B")
        why = why or rig.add("B", proto, matches, actions)
        if not why and (not st or st[0]):
            why = "the rule is in_hw: %s" % (st,)
        if not why:
            seen_b = rig.send("B", [(fid, b)])
            seen_a = rig.send("A", [(fid, b)])
            want = seen_b.get((fid, "B"), [])
            if len(want) != 1:
                why = "TC alone sent the frame to %s" % dt.fmt_seen(want)
            else:
                why = check_out(seen_a, fid, "A", want[0][0], want[0][1], b)
        rig.reset("B")
        rig.tap.line(name, why, "not offloaded, the frame handled as by TC "
                     "(%s)" % (want[0][0] if not why else ""))
        return
    try:
        out, why_out = expected_frame(b, ops, actions)
    except ImportError as e:
        rig.tap.skip(name, "python3-scapy, which computes the expected "
                     "frame, cannot be imported: %s" % e)
        return
    why = why or why_out
    if not why and (not st or not st[0]):
        why = "the rule is not in_hw: %s" % (st,)
    if not why and shown_kinds(dev) != [tc_kinds(actions)]:
        why = "xdp-flow show has actions %s, not %s" % (shown_kinds(dev),
                                                      [tc_kinds(actions)])
    if not why:
        seen = rig.send("A", [(fid, b)])
        why = check_out(seen, fid, "A", "o1", out, b)
    why = why or hw_counted(dev)
    rig.tap.line(name, why, "offloaded, the expected frame out of the target, "
                 "1 hardware packet")


def goto_case(rig):
    """goto chain: chain 0 sends UDP to chain 1, which redirects one
    address. A frame to it leaves the target, counted in XDP by both rules;
    a frame to another goes up the stack, counted by TC in chain 0 only."""
    dev = rig.ln.dev["A"]
    rig.reset()
    why = (rig.add("A", "ip", "ip_proto udp", "goto chain 1") or
           rig.add("A", "ip", "dst_ip 10.2.0.1", RD, chain=1))
    st = chain_state(dev) if not why else {}
    if not why and not all(st.get(c, (False,))[0] for c in (0, 1)):
        why = "rules not in_hw: %s" % (st,)
    hit = rig.frame("ip", setf())
    miss = rig.frame("ip", setf(dip="10.2.0.2"))
    if not why:
        seen = rig.send("A", [hit, miss])
        why = (check_out(seen, hit[0], "A", "o1", hit[1], hit[1]) or
               check_out(seen, miss[0], "A", "stack", miss[1], miss[1]))
    if not why:
        st = chain_state(dev)
        want = {0: (True, 2, 1), 1: (True, 1, 1)}
        if st != want:
            why = "counters by chain (in_hw, packets, hw_packets) %s, not " \
                  "%s" % (st, want)
    if not why and sorted(shown_kinds(dev)) != [["goto"], ["redirect"]]:
        why = "xdp-flow show has actions %s" % (shown_kinds(dev),)
    rig.tap.line("goto chain", why, "chain 0 to chain 1 in XDP, both rules "
                 "counted; a miss in chain 1 goes to TC")


def range_overlap_case(rig):
    """Two rules of one prio and one flower mask whose port ranges
    overlap: flower picks the one added first, which XDP cannot know. The
    second stays in software; a frame in both ranges goes to TC, which
    redirects it by the first; a frame only in the first's range is
    redirected in XDP."""
    dev = rig.ln.dev["A"]
    rig.reset()
    why = None
    for handle, rng, act in ((1, "1000-2000", RD), (2, "1500-2500", "drop")):
        cmd = ("filter add dev %s ingress pref 1 handle %d protocol ip flower "
               "ip_proto udp dst_port %s action %s" %
               (dev, handle, rng, act.format(o=rig.ln.out["A"][0]))).split()
        p = tc(*cmd)
        if p.returncode:
            why = why or "tc %s: %s" % (" ".join(cmd), p.stderr.strip())
    st = filters(dev) if not why else {}
    if not why and (not st.get(1, (0,))[0] or st.get(2, (1,))[0]):
        why = "in_hw should be 1: yes, 2: no; (in_hw, packets, hw) %s" % (st,)
    only1 = rig.frame("ip", setf(dport=1200))
    both = rig.frame("ip", setf(dport=1700))
    only2 = rig.frame("ip", setf(dport=2200))
    if not why:
        seen = rig.send("A", [only1, both, only2])
        why = (check_out(seen, only1[0], "A", "o1", only1[1], only1[1]) or
               check_out(seen, both[0], "A", "o1", both[1], both[1]))
        if not why and seen.get((only2[0], "A")):
            why = "the frame to 2200 went to %s, not dropped" % \
                dt.fmt_seen(seen[(only2[0], "A")])
    if not why:
        st = filters(dev)
        if st.get(1) != (True, 2, 1) or (st.get(2) or (0, 0))[1] != 1:
            why = "counters (in_hw, packets, hw_packets) %s, not 1: (True, " \
                  "2, 1), 2: 1 packet" % (st,)
    rig.tap.line("overlapping port ranges in one prio", why,
                 "the later rule stays in software, the overlap goes to TC "
                 "and takes the first rule")


# Mirrors: (name, actions, what xdp-flow show lists on the tc hook, None
# for a rule refused there too). A rule whose actions end in a mirror gets
# a pass: TC hands its frame to the stack. A drop after a mirror is
# refused: offloaded counters would give the mirror the drop's drops.
MIRROR_CASES = [
    ("mirror, redirect",
     "mirred egress mirror dev {o2} pipe action mirred egress redirect dev {o}",
     ["mirror", "redirect"]),
    ("mirror, drop", "mirred egress mirror dev {o2} pipe action drop", None),
    ("mirror alone: the frame goes on to the stack",
     "mirred egress mirror dev {o2}", ["mirror", "pass"]),
    ("vlan push, mirror, vlan pop, redirect",
     "vlan push id 5 pipe action mirred egress mirror dev {o2} pipe "
     "action vlan pop pipe action mirred egress redirect dev {o}",
     ["vlan", "mirror", "vlan", "redirect"]),
]


def mirror_case(rig, name, actions, kinds):
    """mirred egress mirror: offloaded on the tc hook (in_hw, xdp-flow
    show lists it, 1 hardware packet), refused on the XDP hook (not in_hw).
    On either, the copy and the frame leave as TC alone sends them on B,
    byte for byte."""
    dev = rig.ln.dev["A"]
    tc_runs = HOOK == "tc" and kinds is not None
    rig.reset()
    rig.reset("B")
    why = (rig.add("A", "ip", "ip_proto udp", actions) or
           rig.add("B", "ip", "ip_proto udp", actions))
    st = rule_state(dev) if not why else None
    fid, b = rig.frame("ip", setf())
    if not why and tc_runs and (not st or not st[0]):
        why = "the rule is not in_hw: %s" % (st,)
    if not why and not tc_runs and (not st or st[0]):
        why = "the rule is in_hw: %s" % (st,)
    if not why and tc_runs and shown_kinds(dev) != [kinds]:
        why = "xdp-flow show has actions %s, not %s" % (shown_kinds(dev),
                                                      [kinds])
    if not why:
        want = sorted(rig.send("B", [(fid, b)]).get((fid, "B"), []))
        got = sorted(rig.send("A", [(fid, b)]).get((fid, "A"), []))
        if "o2" not in [w for w, _ in want]:
            why = "TC alone sent no copy to o2: %s" % dt.fmt_seen(want)
        elif got != want:
            why = "offloaded, the frame went to %s; TC alone: %s" % (
                dt.fmt_seen(got), dt.fmt_seen(want))
    if not why and tc_runs:
        why = hw_counted(dev)
    rig.reset("B")
    rig.tap.line(name, why, "%s, copy and frame as TC alone sends them" %
                 ("offloaded" if tc_runs else "not offloaded (%s hook)" % HOOK))


# Refused: the actions and matches XDP cannot do exactly, each with the
# phrase TC prints from xdp_flow's extack (with `flower verbose`).
REFUSED = [
    ("ip", "", "police rate 1mbit burst 100k conform-exceed drop/ok",
     "action police"),
    # to a veth: only VXLAN and Geneve devices take the metadata as TC
    # gives it (at the tc hook); the XDP hook does no tunnel_key at all
    ("ip", "", "tunnel_key set src_ip 10.9.0.1 dst_ip 10.9.0.2 id 7 "
     "dst_port 4789 pipe action mirred egress redirect dev {o}",
     re.compile(r"xdp_flow: (the XDP hook does not offload tunnel_key set|"
                r"tunnel_key set to another device)")),
    ("ip", "", "skbedit mark 5 pipe action mirred egress redirect dev {o}",
     "action skbedit mark"),
    ("ip", "", "ct pipe action mirred egress redirect dev {o}", "action ct"),
    ("mpls_uc", "mpls_label 5", "drop", "MPLS matches"),
    # the tc hook offloads the tunnel metadata's key, addresses, TOS and
    # TTL, and its destination port and Geneve options on a tunnel device
    # only (where the device's own port is every frame's, and Geneve's
    # options the only kind); the XDP hook none
    ("ip", "enc_key_id 7 enc_dst_port 4789", "drop",
     re.compile(r"xdp_flow: (the XDP hook does not offload tunnel \(enc_\*\) "
                r"matches|enc_dst_port matches only on a VXLAN or Geneve "
                r"device)")),
    ("ip", "geneve_opts 0102:80:00000001/ffff:ff:ffffffff", "drop",
     re.compile(r"xdp_flow: (the XDP hook does not offload tunnel \(enc_\*\) "
                r"matches|enc_opts matches are offloaded on Geneve devices "
                r"only)")),
    ("ip", "ip_proto udp dst_port 1-65534 src_port 1-65534", "drop", None),
]


def refused_case(rig, proto, matches, actions, phrase):
    """A rule xdp_flow refuses: not in_hw, and `flower verbose` prints
    xdp_flow's reason naming what it cannot offload."""
    dev = rig.ln.dev["A"]
    rig.reset()
    cmd = ("filter add dev %s ingress pref 1 protocol %s flower verbose %s "
           "action %s" % (dev, proto, matches,
                          actions.format(o=rig.ln.out["A"][0]))).split()
    p = tc(*cmd)
    name = "refused: %s%s" % (matches + " " if matches else "",
                               actions.split(" pipe")[0].format(o="DEV"))
    if p.returncode:
        rig.tap.skip(name, "tc cannot add it here: %s" %
                     (p.stderr.strip().splitlines()[-1:],))
        return
    st = rule_state(dev)
    why = None
    if not st or st[0]:
        why = "the rule is in_hw: %s" % (st,)
    # the phrase after "cannot offload", or a pattern of the whole reason
    elif phrase and not (phrase.search(p.stderr) if hasattr(phrase, "search")
                         else "xdp_flow: cannot offload " + phrase in p.stderr):
        why = "tc printed %r, not xdp_flow's reason (%s)" % (
            p.stderr, getattr(phrase, "pattern", phrase))
    said = p.stderr.strip().splitlines()[-1:] or [""]
    rig.tap.line(name, why, "not offloaded%s" %
                 (", tc says '%s'" % said[0].split("Warning: ")[-1].rstrip(".")
                  if phrase else ""))


def pass_case(rig):
    """gact ok: in_hw; XDP hands the frame to the stack and TC counts it
    (no hardware packet); a redirect of a later prio does not take it."""
    dev = rig.ln.dev["A"]
    rig.reset()
    why = rig.add("A", "ip", "dst_ip 10.2.0.1", "pass")
    st = rule_state(dev) if not why else None
    if not why and (not st or not st[0]):
        why = "the rule is not in_hw: %s" % (st,)
    if not why:
        cmd = ("filter add dev %s ingress pref 2 handle 2 protocol ip flower "
               "dst_ip 10.2.0.1 action %s" % (dev,
                                              RD.format(o=rig.ln.out["A"][0]))
               ).split()
        p = tc(*cmd)
        why = "tc %s: %s" % (" ".join(cmd), p.stderr) if p.returncode else None
    fid, b = rig.frame("ip", setf())
    if not why:
        seen = rig.send("A", [(fid, b)])
        why = check_out(seen, fid, "A", "stack", b, b)
    if not why:
        st = filters(dev)
        want = {1: (True, 1, 0), 2: (True, 0, 0)}
        if st != want:
            why = "counters (in_hw, packets, hw_packets) %s, not %s" % (st,
                                                                       want)
    rig.tap.line("action pass (gact ok)", why, "in_hw; the frame goes up the "
                 "stack, counted by TC, ahead of a later redirect")


def main():
    rig = Rig()
    for name, kind, proto, matches, hit, miss in CASES:
        match_case(rig, name, kind, proto, matches, hit, miss)
    for case in ACTION_CASES:
        action_case(rig, *case)
    goto_case(rig)
    range_overlap_case(rig)
    pass_case(rig)
    for case in MIRROR_CASES:
        mirror_case(rig, *case)
    for case in REFUSED:
        refused_case(rig, *case)
    rig.reset()
    return 1 if rig.tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
