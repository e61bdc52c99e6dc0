#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Targeted match tests: one flower match at a time, a known frame in, the
expected frame out.

For each match: a rule with only that match (beside what flower requires)
and `action mirred egress redirect`, on lane 0's A device (xdp_flow enabled,
see difftest.py setup); the rule must be in_hw; a frame that meets the match
must leave by the redirect target with its bytes unchanged, counted as one
hardware packet; the same frame with the matched field changed must go up
the stack untouched by the rule. Prints one `ok - ` or `not ok - ` line per
match (TAP style); exits 1 if any failed.
"""

import json
import random
import subprocess
import struct
import sys

import difftest as dt


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


def tc(*args):
    return subprocess.run(["tc"] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


def rule_state(dev):
    p = tc("-s", "-j", "filter", "show", "dev", dev, "ingress")
    for f in json.loads(p.stdout or "[]"):
        opt = f.get("options")
        if opt:
            st = opt["actions"][0].get("stats", {})
            return (opt.get("in_hw", False), st.get("packets"),
                    st.get("hw_packets", 0))
    return None


def main():
    ln = dt.lanes_of(1)[0]
    dev, out = ln.dev["A"], ln.out["A"][0]
    socks = dt.Sockets([ln])
    send = socks.send[(0, "A")]
    failed = 0
    fid = 0x7f000000
    for name, kind, proto, matches, hit, miss in CASES:
        why = None
        tc("qdisc", "del", "dev", dev, "clsact")
        tc("qdisc", "add", "dev", dev, "clsact")
        cmd = ("filter add dev %s ingress pref 1 protocol %s flower %s "
               "action mirred egress redirect dev %s" %
               (dev, proto, matches, out)).split()
        p = tc(*cmd)
        if p.returncode:
            why = "tc %s: %s" % (" ".join(cmd), p.stderr.strip())
        st = rule_state(dev) if not why else None
        if not why and (not st or not st[0]):
            why = "the rule is not in_hw: %s" % (st,)
        frames = []
        for change, want in ((hit, "o1"), (miss, "stack")):
            f = base(kind)
            change(f)
            fid += 1
            b = f.build(dt.MAGIC + struct.pack("!I", fid))
            frames.append((fid, b, want))
        seen = {}
        if not why:
            for _, b, _ in frames:
                send.send(b)
            socks.drain(100, 10, seen)
            for i, b, want in frames:
                got = seen.get((i, "A"), [])
                if [w for w, _ in got] != [want]:
                    why = "frame %s went to %s, not %s" % (
                        b.hex(), dt.fmt_seen(got), want)
                    break
                if got[0][1] != b:
                    why = "frame %s left as %s" % (b.hex(), got[0][1].hex())
                    break
        if not why:
            st = rule_state(dev)
            if not st or st[1] != 1 or st[2] != 1:
                why = "counters (in_hw, packets, hw_packets) %s, not " \
                      "(True, 1, 1)" % (st,)
        if why:
            failed += 1
            print("not ok - %s: %s # %s" % (name, matches, why))
        else:
            print("ok - %s: '%s' redirects the matching frame in XDP, "
                  "the other goes up the stack" % (name, matches))
        sys.stdout.flush()
    tc("qdisc", "del", "dev", dev, "clsact")
    tc("qdisc", "add", "dev", dev, "clsact")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
