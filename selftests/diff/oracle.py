# SPDX-License-Identifier: GPL-2.0
"""The frame a flower rule's rewrites make of a frame, computed by scapy.

targeted.py builds the frames it sends with difftest.Frame.build(). Were the
frame it expects out of the redirect target built the same way, a bug in
that builder (a checksum, the layout of a VLAN tag) would be in the frame
sent and in the one expected alike, and go unseen. So the expected frame is
computed here, independently: the bytes sent, parsed by scapy, with the
rule's actions applied as scapy operations, and built again by scapy.

The rewrites are given as a list of operations, applied in order:

  (FIELD, value)           pedit: set FIELD (see FIELDS) to value, a MAC or
                           IP address as a string or an integer
  (FIELD, "decrement")     pedit: ip_ttl or ip6_hoplimit less one (mod 256)
  ("push", tpid, prio, id) vlan push: a tag (TPID 0x8100 or 0x88a8, PCP,
                           VID; DEI 0) pushed as the outermost
  ("pop",)                 vlan pop: the outermost tag goes
  ("modify", tpid, prio, id)  vlan modify: the outermost tag's VID, PCP
                           and TPID (act_vlan's push protocol, 802.1Q by
                           default) replaced, its DEI kept

After them, the checksums the rule's `csum` action names are recomputed
(scapy recomputes a checksum field that was deleted), and only those: as
TC does, pedit alone leaves every checksum as it was, stale or not.
act_csum's words are modelled as the kernel's tcf_csum_ipv4/ipv6() use
them: ip is the IPv4 header checksum (IPv6 has none), tcp and udp the
TCP or UDP checksum over either, icmp the ICMP checksum over IPv4 and the
ICMPv6 one over IPv6, under VLAN tags too (act_csum skips them); a layer
the frame lacks is left alone (as are L4 checksums after an IPv6 fragment
header or in an IPv4 fragment other than the first, which scapy does not
parse), and a UDP checksum of 0 over IPv4 (no checksum) stays 0.
"""

import logging
import types

# pedit fields: (the layer they are in, the scapy field)
FIELDS = {
    "eth_dst": ("eth", "dst"),
    "eth_src": ("eth", "src"),
    "ip_src": ("ip", "src"),
    "ip_dst": ("ip", "dst"),
    "ip_tos": ("ip", "tos"),
    "ip_ttl": ("ip", "ttl"),
    "ip6_src": ("ip6", "src"),
    "ip6_dst": ("ip6", "dst"),
    "ip6_traffic_class": ("ip6", "tc"),
    "ip6_hoplimit": ("ip6", "hlim"),
    "tcp_sport": ("tcp", "sport"),
    "tcp_dport": ("tcp", "dport"),
    "udp_sport": ("udp", "sport"),
    "udp_dport": ("udp", "dport"),
}

VLAN_TPIDS = (0x8100, 0x88A8)


class OracleError(ValueError):
    """A case the oracle cannot compute: an unknown operation, a field the
    frame lacks, an action it does not model."""


_SCAPY = None


def scapy():
    """scapy's classes, imported on first use: the import takes a while
    (seconds in an emulated guest) and only the rewrite cases need it.
    Raises ImportError without scapy (Debian: python3-scapy)."""
    global _SCAPY
    if _SCAPY is None:
        # No start-up warnings (routes, interfaces) among the TAP lines.
        logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
        from scapy.compat import raw
        from scapy.layers.inet import ICMP, IP, TCP, UDP
        from scapy.layers.inet6 import (IPv6, IPv6ExtHdrDestOpt,
                                        IPv6ExtHdrHopByHop,
                                        IPv6ExtHdrRouting, _ICMPv6)
        from scapy.layers.l2 import Dot1AD, Dot1Q, Ether
        _SCAPY = types.SimpleNamespace(
            raw=raw, Ether=Ether, Dot1Q=Dot1Q, Dot1AD=Dot1AD, IP=IP,
            IPv6=IPv6, TCP=TCP, UDP=UDP, ICMP=ICMP, ICMPv6=_ICMPv6,
            ext6=(IPv6ExtHdrHopByHop, IPv6ExtHdrRouting, IPv6ExtHdrDestOpt))
    return _SCAPY


def csum_words(actions):
    """The layers the `csum` action of a tc action list names, e.g.
    ["ip", "udp"] for "pedit ... pipe action csum ip and udp pipe action
    mirred ...". A pedit after the csum is refused: the oracle recomputes
    checksums after all rewrites."""
    words, seen_csum = [], False
    for act in actions.split(" action "):
        w = act.split()
        if not w:
            continue
        if w[0] == "csum":
            seen_csum = True
            for x in w[1:]:
                if x in ("pipe", "ok", "pass", "continue", "drop",
                         "reclassify"):
                    break
                if x != "and":
                    words.append(x)
        elif w[0] == "pedit" and seen_csum:
            raise OracleError("a pedit after the csum action is not "
                              "modelled")
    return words


class Layers:
    """The layers of a parsed frame the rewrites address: Ethernet, the
    VLAN tags, L3 (IPv4 or IPv6, or None) and L4 (after any IPv6 extension
    headers; None without L3)."""

    def __init__(self, eth):
        s = scapy()
        self.eth = eth
        x = eth.payload
        while isinstance(x, s.Dot1Q):      # Dot1AD included
            x = x.payload
        self.l3 = x if isinstance(x, (s.IP, s.IPv6)) else None
        self.l4 = None
        if self.l3 is not None:
            x = self.l3.payload
            while isinstance(x, s.ext6):
                x = x.payload
            self.l4 = x

    def get(self, kind):
        """The layer of that kind (eth, ip, ip6, tcp, udp), or
        OracleError."""
        s = scapy()
        want = {"eth": s.Ether, "ip": s.IP, "ip6": s.IPv6, "tcp": s.TCP,
                "udp": s.UDP}[kind]
        for x in (self.eth, self.l3, self.l4):
            if type(x) is want:
                return x
        raise OracleError("the frame has no %s header" % kind)


def vlan_push(eth, tpid, prio, vid):
    """act_vlan push: the new tag outermost, DEI 0."""
    s = scapy()
    if tpid not in VLAN_TPIDS:
        raise OracleError("vlan push of TPID %#x" % tpid)
    cls = s.Dot1AD if tpid == 0x88A8 else s.Dot1Q
    inner = eth.payload
    eth.remove_payload()
    tag = cls(prio=prio, id=0, vlan=vid, type=eth.type)
    tag.add_payload(inner)
    eth.type = tpid
    eth.add_payload(tag)


def vlan_pop(eth):
    """act_vlan pop: the outermost tag goes, its EtherType becomes the
    frame's."""
    s = scapy()
    tag = eth.payload
    if not isinstance(tag, s.Dot1Q):
        raise OracleError("vlan pop of an untagged frame")
    inner = tag.payload
    tag.remove_payload()
    eth.remove_payload()
    eth.type = tag.type
    eth.add_payload(inner)


def vlan_modify(eth, tpid, prio, vid):
    """act_vlan modify: VID and PCP of the outermost tag replaced, its DEI
    kept; the tag gets the action's TPID."""
    s = scapy()
    tag = eth.payload
    if not isinstance(tag, s.Dot1Q):
        raise OracleError("vlan modify of an untagged frame")
    if tpid not in VLAN_TPIDS:
        raise OracleError("vlan modify to TPID %#x" % tpid)
    tag.vlan = vid
    if prio is not None:
        tag.prio = prio
    eth.type = tpid


def rewrite(eth, op):
    """Applies one operation (see the module's docstring) to the parsed
    frame eth."""
    name = op[0]
    if name == "push":
        vlan_push(eth, *op[1:])
    elif name == "pop":
        vlan_pop(eth)
    elif name == "modify":
        vlan_modify(eth, *op[1:])
    elif name in FIELDS:
        kind, field = FIELDS[name]
        x = Layers(eth).get(kind)
        v = op[1]
        if v == "decrement":
            if field not in ("ttl", "hlim"):
                raise OracleError("decrement of %s" % name)
            v = (getattr(x, field) - 1) & 0xff
        setattr(x, field, v)
    else:
        raise OracleError("unknown operation %r" % (op,))


def recompute(eth, words):
    """Deletes the checksum fields the csum words name, for scapy to
    recompute them when the frame is built; see the module's docstring."""
    s = scapy()
    ly = Layers(eth)
    l3, l4 = ly.l3, ly.l4
    v4 = isinstance(l3, s.IP)
    for w in words:
        if w == "ip":
            if v4:
                del l3.chksum
        elif w == "tcp":
            if isinstance(l4, s.TCP):
                del l4.chksum
        elif w == "udp":
            # tcf_csum_ipv4_udp(): a zero checksum over IPv4 is "none"
            if isinstance(l4, s.UDP) and not (v4 and l4.chksum == 0):
                del l4.chksum
        elif w == "icmp":
            if v4 and isinstance(l4, s.ICMP):
                del l4.chksum
            elif not v4 and isinstance(l4, s.ICMPv6):
                del l4.cksum
        else:
            raise OracleError("csum %s is not modelled" % w)


def expected(sent, ops, actions):
    """The bytes a rule with tc actions `actions`, whose rewrites are
    `ops`, makes of the frame `sent`. Raises OracleError for a case it
    cannot compute, ImportError without scapy."""
    s = scapy()
    eth = s.Ether(sent)
    if s.raw(eth) != sent:
        raise OracleError("scapy does not build the sent frame back as it "
                          "was")
    for op in ops:
        rewrite(eth, op)
    recompute(eth, csum_words(actions))
    return s.raw(eth)
