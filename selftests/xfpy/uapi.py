# SPDX-License-Identifier: GPL-2.0
"""The numbers of xdp_flow's generic netlink protocol, read from
include/uapi/linux/xdp_flow.h, the one definition of it: nothing here
copies a value."""

import os
import re

from xfpy import ROOT

HEADER = os.path.join(ROOT, "include", "uapi", "linux", "xdp_flow.h")


class HeaderError(ValueError):
    """The header lacks an enum or a define the protocol needs."""


def parse_header(path=HEADER):
    """The enums and defines of the uapi header that the protocol needs:
    {"cmd": {name: value}, "attr": {name: value}, "abi": int,
    "genl_version": int, "family": str}."""
    text = open(path).read()
    # no comments: they may contain commas and braces
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)

    def enum(name):
        m = re.search(r"enum\s+%s\s*\{(.*?)\}" % name, text, re.S)
        if not m:
            raise HeaderError("no enum %s in %s" % (name, path))
        vals, nxt = {}, 0
        for item in m.group(1).split(","):
            item = item.strip()
            if not item:
                continue
            if "=" in item:
                k, v = (s.strip() for s in item.split("=", 1))
                nxt = int(v, 0)
            else:
                k = item
            vals[k] = nxt
            nxt += 1
        return vals

    def define(name):
        m = re.search(r"#define\s+%s\s+(\S+)" % name, text)
        if not m:
            raise HeaderError("no #define %s in %s" % (name, path))
        return m.group(1).strip('"')

    return {
        "cmd": enum("xdp_flow_cmd"),
        "attr": enum("xdp_flow_attr"),
        "abi": int(define("XDP_FLOW_ABI_VERSION"), 0),
        "genl_version": int(define("XDP_FLOW_GENL_VERSION"), 0),
        "family": define("XDP_FLOW_GENL_NAME"),
    }
