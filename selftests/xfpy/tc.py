# SPDX-License-Identifier: GPL-2.0
"""TC: rules added in batches, and what `tc -s -j filter show` says of
them (in_hw, the actions' counters and their hardware share: xdp_flow's
datapath, XDP or its TC hook).

tc enters a namespace itself (-n), as xf_nsexec in offload_lib.sh has it.
"""

import json

from xfpy.proc import Failed, run, run_json


def _ns(ns):
    return ["-n", ns] if ns else []


def batch(lines, ns=None, json_out=False, stats=False):
    """Runs `tc [-s] [-j] -force -batch -` on lines (in namespace ns):
    every command is tried; stderr names those that failed ("Command
    failed -:N"). The CompletedProcess."""
    return run("tc", *_ns(ns), *(["-s"] if stats else []),
               *(["-j"] if json_out else []), "-force", "-batch", "-",
               input="".join(line + "\n" for line in lines))


def filters(dev, pref=None, ns=None):
    """The ingress rules of dev (only the one at pref if given) as `tc -s
    -j filter show` gives them: the entries with options (not the chain
    heads), in tc's order; [] when there are none or tc fails."""
    js = run_json("tc", *_ns(ns), "-s", "-j", "filter", "show", "dev", dev,
                  "ingress", *(["pref", pref] if pref is not None else []))
    return [f for f in js or [] if f.get("options")]


def filters_of(devs, ns=None):
    """filters() of each device, one tc process for all: a list per
    device. Failed when tc fails or gives one answer too few."""
    lines = ["filter show dev %s ingress" % d for d in devs]
    p = batch(lines, ns=ns, json_out=True, stats=True)
    if p.returncode:
        raise Failed("tc -s -j filter show: " + p.stderr)
    # one JSON array a command, one after the other
    dec = json.JSONDecoder()
    arrays, pos, text = [], 0, p.stdout.strip()
    while pos < len(text):
        obj, n = dec.raw_decode(text, pos)
        arrays.append(obj)
        pos = n
        while pos < len(text) and text[pos].isspace():
            pos += 1
    if len(arrays) == 1 and len(lines) > 1 and arrays[0] and \
            isinstance(arrays[0][0], list):
        arrays = arrays[0]
    if len(arrays) != len(lines):
        raise Failed("tc -s -j -batch: %d outputs for %d commands" %
                     (len(arrays), len(lines)))
    return [[f for f in arr if f.get("options")] for arr in arrays]


def rule(dev, pref, ns=None):
    """The ingress flower rule at pref (its "options" object), None when
    there is none (tc_filter_json in offload_lib.sh)."""
    rs = filters(dev, pref, ns)
    return rs[0]["options"] if rs else None


def rule_in_hw(dev, pref, ns=None):
    """The rule at pref is in_hw (tc_hw_state in offload_lib.sh)."""
    return bool((rule(dev, pref, ns) or {}).get("in_hw"))


def rule_packets(dev, pref, hw=False, ns=None, action=0):
    """The packets the rule's first action (or the one at that index: -1,
    the last, where the first takes no hardware counts, as tunnel_key)
    counted: all of them, or only the hardware's (xdp_flow's datapath;
    absent, as iproute2 leaves it when it is 0, it reads 0); None when
    there is no rule (tc_stat in offload_lib.sh)."""
    r = rule(dev, pref, ns)
    if not r or not r.get("actions"):
        return None
    stats = r["actions"][action].get("stats", {})
    return stats.get("hw_packets", 0) if hw else stats.get("packets", 0)


class RuleStats:
    """One rule's counters as `tc -s` shows them (f: an entry of
    filters())."""

    def __init__(self, f):
        opt = f["options"]
        acts = opt.get("actions", [])
        # act_csum takes no counts from drivers (it has no stats_update):
        # with any offload its counters show only what TC ran itself.
        # Compared without them.
        self.acts = [(a.get("kind"), a.get("stats", {}).get("packets"),
                      a.get("stats", {}).get("bytes"),
                      a.get("stats", {}).get("drops"))
                     for a in acts if a.get("kind") != "csum"]
        self.in_hw = bool(opt.get("in_hw", False))
        # The terminal action's share from hardware (here: XDP or the TC
        # hook); iproute2 prints hw_packets only when it is not zero.
        st = acts[-1].get("stats", {}) if acts else {}
        self.packets = st.get("packets", 0) or 0
        self.hw_packets = st.get("hw_packets", 0) or 0
