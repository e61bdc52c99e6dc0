#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A process that tries to pass for xdp_flow's helper, for the trust tests
(selftests/guest/test_25_helper_trust.sh). Runs as root, so it has
CAP_NET_ADMIN: only the module's own checks stand in its way.

    impostor.py hello --pid VICTIM --stop FILE --out FILE.json
        Sends HELLO (with VICTIM in XDP_FLOW_ATTR_PID) to the kernel in a
        tight loop until FILE exists (FILE.json.ready once it started),
        and writes what the kernel answered:
        {"pid": <own pid>, "sent": N, "accepted": N, "errors": {"EPERM": N}}

    impostor.py forge --port P [--port P...] [--rule FILE] --out FILE.json
        Sends RULE_ADD (the struct xdp_flow_rule in FILE), RULE_DEL (ids 0
        to 63), STATS_GET and SHUTDOWN, each with a SEQ as the module sends
        them, straight to each netlink port P (the helper's), then a REPLY
        to the kernel as if it were the helper; writes what each send did:
        {"sends": [{"port": P, "cmd": "RULE_ADD", "result":
        "ECONNREFUSED"|"sent"}...], "results": {"ECONNREFUSED": N...},
        "reply": "ENOTSUP"|"ok"|...}

Every number of the protocol (family, commands, attributes, ABI version)
is read from include/uapi/linux/xdp_flow.h, the one definition of it
(selftests/xfpy/uapi.py).
"""

import argparse
import errno
import json
import os
import socket
import struct
import sys

# the harness the tests share: selftests/xfpy
sys.path.append(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from xfpy import uapi  # noqa: E402


def import_pyroute2_netlink():
    """pyroute2's package __init__ imports all of pyroute2 (some 300 modules
    more than the netlink core needs): seconds of start-up in an emulated
    guest, where every file comes over 9p. Import the core alone under an
    empty package; fall back to the usual import."""
    import importlib.util
    import types

    spec = importlib.util.find_spec("pyroute2")
    if spec is None:
        sys.exit("impostor: pyroute2 is not installed (python3-pyroute2)")
    if "pyroute2" not in sys.modules and spec.submodule_search_locations:
        pkg = types.ModuleType("pyroute2")
        pkg.__path__ = list(spec.submodule_search_locations)
        sys.modules["pyroute2"] = pkg
        try:
            import pyroute2.netlink.generic  # noqa: F401
            return
        except Exception:
            for name in [n for n in sys.modules
                         if n == "pyroute2" or n.startswith("pyroute2.")]:
                del sys.modules[name]
    import pyroute2.netlink.generic  # noqa: F401,F811


import_pyroute2_netlink()
from pyroute2.netlink import NLM_F_ACK, NLM_F_REQUEST, genlmsg  # noqa: E402
from pyroute2.netlink.generic import GenericNetlinkSocket  # noqa: E402

try:
    P = uapi.parse_header()
except uapi.HeaderError as e:
    sys.exit("impostor: %s" % e)
CMD = P["cmd"]
ATTR = P["attr"]

# Attribute types, as the header's comments give them; the rest are u32.
BINARY = {"XDP_FLOW_ATTR_RULE", "XDP_FLOW_ATTR_STATS"}
STRING = {"XDP_FLOW_ATTR_MSG", "XDP_FLOW_ATTR_HOOK_WHY"}


def nla_type(name):
    if name in BINARY:
        return "cdata"
    if name in STRING:
        return "asciiz"
    if name in ("XDP_FLOW_ATTR_UNSPEC", "XDP_FLOW_ATTR_PAD") or \
            name.startswith("__"):
        return "none"
    if name == "XDP_FLOW_ATTR_ERROR":
        return "int32"
    return "uint32"


XfMsg = type("XfMsg", (genlmsg,), {
    "nla_map": tuple((num, name, nla_type(name))
                     for name, num in sorted(ATTR.items(),
                                             key=lambda kv: kv[1])
                     if not name.startswith("__")),
})


def errname(code):
    return errno.errorcode.get(code, str(code))


NLMSG_ERROR = 2
SEQ = [0]


def open_family():
    s = GenericNetlinkSocket()
    s.bind(P["family"], XfMsg)
    s.settimeout(10)
    return s


def encode(s, cmd, attrs, flags):
    """A message of the family, as bytes, with a new sequence number."""
    SEQ[0] = SEQ[0] % 0xffffff + 1
    m = XfMsg()
    m["cmd"] = CMD[cmd]
    m["version"] = P["genl_version"]
    m["attrs"] = attrs
    m["header"]["type"] = s.prid
    m["header"]["flags"] = flags
    m["header"]["sequence_number"] = SEQ[0]
    m["header"]["pid"] = 0
    m.encode()
    return bytes(m.data), SEQ[0]


def request(s, cmd, attrs):
    """Sends a request to the kernel and waits for its ack; returns "ok" or
    the errno's name. (Plain socket calls: pyroute2's nlm_request() would
    retry EBUSY by itself.)"""
    data, seq = encode(s, cmd, attrs, NLM_F_REQUEST | NLM_F_ACK)
    try:
        s.sendto(data, (0, 0))
        while True:
            buf = s.recv(65536)
            off = 0
            while off + 16 <= len(buf):
                ln, typ, _, sq, _ = struct.unpack_from("=IHHII", buf, off)
                if ln < 16:
                    break
                if typ == NLMSG_ERROR and sq == seq:
                    err = struct.unpack_from("=i", buf, off + 16)[0]
                    return "ok" if err == 0 else errname(-err)
                off += (ln + 3) & ~3
    except socket.timeout:
        return "TIMEOUT"
    except OSError as e:
        return errname(e.errno)


def do_hello(args):
    s = open_family()
    # python starts slowly in an emulated guest: say when the loop begins
    open(args.out + ".ready", "w").close()
    attrs = [["XDP_FLOW_ATTR_VERSION", P["abi"]],
             ["XDP_FLOW_ATTR_PID", args.pid]]
    sent = accepted = 0
    errors = {}
    while True:
        # one HELLO at least, then until told to stop
        r = request(s, "XDP_FLOW_CMD_HELLO", attrs)
        sent += 1
        if r == "ok":
            accepted += 1
        else:
            errors[r] = errors.get(r, 0) + 1
        if args.count and sent >= args.count:
            break
        if args.stop and os.path.exists(args.stop):
            break
    s.close()
    out = {"pid": os.getpid(), "sent": sent, "accepted": accepted,
           "errors": errors}
    with open(args.out, "w") as f:
        json.dump(out, f)


def do_forge(args):
    rule = open(args.rule, "rb").read() if args.rule else b""
    s = open_family()
    seq = 0x7000
    sends = []

    def send(port, cmd, attrs):
        nonlocal seq
        seq += 1
        attrs = [["XDP_FLOW_ATTR_SEQ", seq]] + attrs
        # as the module sends them: a request, no ack asked for
        data, _ = encode(s, cmd, attrs, NLM_F_REQUEST)
        try:
            s.sendto(data, (port, 0))
            r = "sent"
        except OSError as e:
            r = errname(e.errno)
        sends.append({"port": port, "cmd": cmd[len("XDP_FLOW_CMD_"):],
                      "result": r})

    for port in args.port:
        if rule:
            send(port, "XDP_FLOW_CMD_RULE_ADD",
                 [["XDP_FLOW_ATTR_RULE", rule]])
        for rid in range(64):
            send(port, "XDP_FLOW_CMD_RULE_DEL",
                 [["XDP_FLOW_ATTR_RULE_ID", rid]])
        send(port, "XDP_FLOW_CMD_STATS_GET", [])
        send(port, "XDP_FLOW_CMD_SHUTDOWN", [])
    # A REPLY to the kernel, as if this were the helper answering.
    reply = request(s, "XDP_FLOW_CMD_REPLY",
                    [["XDP_FLOW_ATTR_SEQ", 1], ["XDP_FLOW_ATTR_ERROR", 0]])
    s.close()
    summary = {}
    for x in sends:
        summary[x["result"]] = summary.get(x["result"], 0) + 1
    out = {"pid": os.getpid(), "sends": sends, "results": summary,
           "reply": reply}
    with open(args.out, "w") as f:
        json.dump(out, f)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    h = sub.add_parser("hello")
    h.add_argument("--pid", type=int, required=True)
    h.add_argument("--stop", help="stop once this file exists")
    h.add_argument("--count", type=int, default=0, help="stop after N")
    h.add_argument("--out", required=True)
    f = sub.add_parser("forge")
    f.add_argument("--port", type=int, action="append", required=True)
    f.add_argument("--rule", help="a struct xdp_flow_rule, binary")
    f.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.what == "hello":
        if not args.stop and not args.count:
            ap.error("hello needs --stop or --count")
        do_hello(args)
    else:
        do_forge(args)


if __name__ == "__main__":
    main()
