#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The two ways of computing a rewrite's expected frame, checked against
each other on the host (no guest, no root).

selftests/diff/targeted.py expects the frame out of a rewrite rule's
redirect target as scapy computes it from the bytes sent
(selftests/diff/oracle.py). Before that, it built the expected frame with
the builder that built the frame sent (difftest.Frame.build), the rewrites
expressed as changes of the frame's fields. For every action case that is
not refused this builds the frame sent, computes the expected frame both
ways and checks that they agree byte for byte: a disagreement means one of
them is wrong (a checksum, a VLAN tag's layout, a rewrite misstated). The
builder's way cannot express a stale checksum (it always builds valid
ones): a case whose rule rewrites what a checksum covers without the csum
action to fix it would disagree, rightly, and need its expectation from the
oracle alone.

Then negative self-checks: the comparison must fail for an expectation
known to be wrong (a UDP checksum left stale, a zero UDP checksum
recomputed, a builder with a broken IPv4 header checksum or with 802.1Q and
802.1ad swapped).

Prints one `ok - ` or `not ok - ` line per check; exits 1 if any failed, 4
(skipped) without scapy (Debian: python3-scapy).
"""

import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "diff"))

# difftest puts selftests/ on sys.path, for xfpy
import difftest as dt  # noqa: E402
import oracle  # noqa: E402
import targeted as tg  # noqa: E402
from xfpy.tap import Tap  # noqa: E402

# oracle.py's pedit fields as difftest.Frame's attributes
BUILDER_FIELDS = {
    "eth_dst": "dst",
    "eth_src": "src",
    "ip_src": "sip",
    "ip_dst": "dip",
    "ip_tos": "tos",
    "ip_ttl": "ttl",
    "ip6_src": "sip",
    "ip6_dst": "dip",
    "ip6_traffic_class": "tos",
    "ip6_hoplimit": "ttl",
    "tcp_sport": "sport",
    "tcp_dport": "dport",
    "udp_sport": "sport",
    "udp_dport": "dport",
}


def builder_change(ops):
    """The rewrites as a change of a difftest.Frame's fields, the way
    targeted.py expressed the expected frame before the oracle. Checksums
    are whatever the builder makes of the frame's l4csum, as sent."""
    def apply(f):
        for op in ops:
            name = op[0]
            if name in BUILDER_FIELDS:
                attr = BUILDER_FIELDS[name]
                v = op[1]
                if v == "decrement":
                    v = (getattr(f, attr) - 1) & 0xff
                setattr(f, attr, v)
            elif name == "push":
                _, tpid, prio, vid = op
                f.tags = [(tpid, prio << 13 | vid)] + list(f.tags)
            elif name == "pop":
                f.tags = list(f.tags[1:])
            elif name == "modify":
                _, tpid, prio, vid = op
                tci = f.tags[0][1] & 0x1000     # the DEI stays
                f.tags = [(tpid, tci | prio << 13 | vid)] + list(f.tags[1:])
            else:
                raise ValueError("no builder change for %r" % (op,))
    return apply


def build(kind, fid, *changes, frame_class=dt.Frame):
    """The bytes of targeted.py's base frame of that kind with the changes,
    marked with fid as targeted.py marks the frames it sends."""
    f = tg.base(kind)
    if frame_class is not dt.Frame:
        f.__class__ = frame_class
    for c in changes:
        c(f)
    return f.build(dt.MAGIC + struct.pack("!I", fid))


def disagreement(got, want):
    """None if the two frames are the same, else where they differ."""
    if got == want:
        return None
    at = next((i for i, (x, y) in enumerate(zip(got, want)) if x != y),
              min(len(got), len(want)))
    return ("oracle %s, builder %s: %d and %d bytes, first difference at "
            "byte %d" % (got.hex(), want.hex(), len(got), len(want), at))


def check_case(fid, kind, actions, change, ops):
    """Why the oracle and the builder disagree on a case, or None."""
    sent = build(kind, fid, change)
    try:
        got = oracle.expected(sent, ops, actions)
    except oracle.OracleError as e:
        return "the oracle: %s" % e
    try:
        want = build(kind, fid, change, builder_change(ops))
    except (ValueError, IndexError) as e:
        return "the builder: %s" % e
    if got == sent:
        return "the oracle left the frame as sent: %s" % sent.hex()
    return disagreement(got, want)


def case(name):
    return next(c for c in tg.ACTION_CASES if c[0] == name)


class NoIPv4Csum(dt.Frame):
    """A builder whose IPv4 header checksum is always 0."""

    def build(self, marker):
        b = bytearray(super().build(marker))
        at = 14 + 4 * len(self.tags)
        if self.etype == 0x0800 and len(b) >= at + 20:
            b[at + 10:at + 12] = b"\0\0"
        return bytes(b)


class SwappedTpids(dt.Frame):
    """A builder that writes 802.1Q tags as 802.1ad and the reverse (the
    TPID confusion of the mutants of test_21)."""

    def build(self, marker):
        swap = {0x8100: 0x88A8, 0x88A8: 0x8100}
        tags = self.tags
        self.tags = [(swap.get(t, t), tci) for t, tci in tags]
        try:
            return super().build(marker)
        finally:
            self.tags = tags


def must_differ(rep, name, got, want, where=None):
    """A negative check: got and want must differ (at the bytes where
    names, a slice, if given)."""
    if got == want:
        rep.line("negative: " + name, "the comparison did not tell them "
                 "apart: %s" % got.hex())
        return
    diff = [i for i, (x, y) in enumerate(zip(got, want)) if x != y]
    if where is not None and (len(got) != len(want) or
                              not all(where.start <= i < where.stop
                                      for i in diff)):
        rep.line("negative: " + name, "they differ at bytes %s, not only in "
                 "%d-%d" % (diff, where.start, where.stop - 1))
        return
    rep.line("negative: " + name, None, "caught (bytes %s differ)" % diff)


def negatives(rep, fid):
    """Expectations known to be wrong must disagree with the right ones."""
    # UDP checksum at 14 (Ethernet) + 20 (IPv4) + 6
    udp_csum = slice(40, 42)
    name, kind, _, _, actions, change, ops = case(
        "pedit ip dst, csum ip and udp")
    sent = build(kind, fid, change)
    stale = oracle.expected(sent, ops, actions.replace("csum ip and udp",
                                                       "csum ip"))
    must_differ(rep, "a UDP checksum left stale (%s without csum udp)" %
                name, stale, build(kind, fid, change, builder_change(ops)),
                udp_csum)

    name, kind, _, _, actions, change, ops = case(
        "csum udp keeps a zero UDP checksum")
    fid += 1
    sent = build(kind, fid, change)
    must_differ(rep, "a zero UDP checksum recomputed (%s)" % name,
                oracle.expected(sent, ops, actions),
                build(kind, fid, change, builder_change(ops),
                      tg.setf(l4csum=True)), udp_csum)

    name, kind, _, _, actions, change, ops = case("pedit ip tos, csum ip")
    fid += 1
    sent = build(kind, fid, change, frame_class=NoIPv4Csum)
    must_differ(rep, "a builder without IPv4 header checksums (%s)" % name,
                oracle.expected(sent, ops, actions),
                build(kind, fid, change, builder_change(ops),
                      frame_class=NoIPv4Csum), slice(24, 26))

    name, kind, _, _, actions, change, ops = case(
        "vlan push 802.1ad onto a tagged frame")
    fid += 1
    sent = build(kind, fid, change, frame_class=SwappedTpids)
    must_differ(rep, "a builder with 802.1Q and 802.1ad swapped (%s)" % name,
                oracle.expected(sent, ops, actions),
                build(kind, fid, change, builder_change(ops),
                      frame_class=SwappedTpids), slice(12, 20))


def main():
    try:
        oracle.scapy()
    except ImportError as e:
        Tap().skip("expected frames: oracle against builder",
                   "python3-scapy cannot be imported: %s" % e)
        return 4
    rep = Tap()
    fid = 0x7f000001
    refused = 0
    for name, kind, _, _, actions, change, ops in tg.ACTION_CASES:
        if ops is None:
            refused += 1
            continue
        rep.line("expected frame of '%s'" % name,
                 check_case(fid, kind, actions, change, ops),
                 "oracle and builder agree")
        fid += 1
    negatives(rep, fid)
    print("# %d ok, %d not ok (%d refused cases have no expected frame)" %
          (rep.ok, rep.failed, refused))
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())
