#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The guest half of the benchmark: runs INSIDE a guest, all in one boot so
that configurations compare as ratios:

    selftests/vm/run-guest.sh 6.12 .cache/venv/bin/python3 \\
        bench/guest_bench.py <outdir>

(<outdir> under $XF_RESULTS, the folder the guest may write; bpffs
mounted; build the objects first with `make -C bench` on the host;
bench/run.sh does all of it.)

Sections (XF_BENCH_SECTIONS, default all, in this order), each in its
module under bench/guest/, whose docstring says what it measures:

  forward  the seed scenario: one flow redirected from veth D to veth V,
           xdp_flow against TC flower, OVS, a bare XDP redirect and the
           generator alone (guest/forward.py)
  latency  from `tc filter add` to the rule acting on a live flow
           (guest/latency.py)
  rate     10,000 rules through `tc -b` in four prio orders, offload on
           and off (guest/rules.py)
  ping     a first ping and a TCP stream through OVS, hw-offload off and
           on (guest/ping.py)
  miss     traffic no rule matches, with xdp_flow's hooks against
           nothing on the device (guest/miss.py)
  scale    100,000 rules: add, show, replay, delete (guest/rules.py)
  peer     TCP and 64-byte UDP into a container-style veth through TC's
           redirect, in software and through xdp_flow's TC hook with and
           without bpf_redirect_peer (guest/peer.py)
  flowtable  TCP and 64-byte UDP through a router with masquerade:
           forwarding, the nftables flowtable in software, offloaded by
           xdp_flow (both hooks), and XDP through bpf_xdp_flow_lookup()
           (guest/flowtable.py)
  tunnel   TCP and 64-byte UDP from a remote hypervisor to a VM over
           VXLAN: Open vSwitch's tunnel rules in TC software and on
           xdp_flow's tc hook, and the OVS kernel datapath
           (guest/tunnel.py)
  start    the helper's start with one hook's program and with both
           (guest/start.py)

Results: <outdir>/guest.csv, lines "section,config,metric,value,unit"
(value numeric except in section meta), <outdir>/guest.txt (the table
printed at the end) and <outdir>/guest_notes.txt (why something could
not be measured). A section that fails leaves a note and the others
run; every namespace and device a section made is removed after it.
Exits non-zero only when nothing could be measured.

The guest runs under QEMU TCG emulation: absolute rates and times are
those of an emulated machine (on a host shared with whatever else runs);
only the ratios between configurations of one run mean something.

Env (bench/README.md lists the defaults): XF_BENCH_QUICK=1 (a smoke run),
XF_BENCH_SECTIONS, XF_BENCH_GEN (xdp_gen|pktgen|both), XF_BENCH_SECS,
XF_BENCH_REPS, XF_BENCH_WARM, XF_BENCH_LAT_REPS, XF_BENCH_LAT_PPS,
XF_BENCH_RULES, XF_BENCH_RATE_ORDERS, XF_BENCH_RATE_REPS,
XF_BENCH_SCALE_RULES, XF_BENCH_PING_REPS, XF_BENCH_MISS_SECS,
XF_BENCH_MISS_REPS, XF_BENCH_PEER_SECS, XF_BENCH_PEER_REPS,
XF_BENCH_FT_SECS, XF_BENCH_FT_REPS, XF_BENCH_TUNNEL_SECS,
XF_BENCH_TUNNEL_REPS, XF_BENCH_START_REPS, XF_BENCH_OBJ,
XF_BENCH_SPLIT.
"""

import datetime
import os
import shutil
import sys
import time
import traceback

from guest import (flowtable, forward, latency, miss, peer, ping, rules,
                   start, tunnel)
from guest.common import PIN, Context, Knobs, Output, sink_load
from xfpy.net import devs_del
from xfpy.proc import Failed, ok, one_line, run_json
from xfpy.xdpflow import XdpFlow, kernel_warnings

SECTIONS = {"forward": forward.run_section, "latency": latency.run_section,
            "rate": rules.run_rate, "ping": ping.run_section,
            "miss": miss.run_section, "scale": rules.run_scale,
            "peer": peer.run_section, "flowtable": flowtable.run_section,
            "tunnel": tunnel.run_section, "start": start.run_section}
V6_DEFAULT = "/proc/sys/net/ipv6/conf/default/disable_ipv6"


def prepare(out, knobs):
    """bpffs, the sink, the module and its helper, xgk0/xgk1; a Context."""
    if not ok("mountpoint", "-q", "/sys/fs/bpf"):
        os.makedirs("/sys/fs/bpf", exist_ok=True)
        if not ok("mount", "-t", "bpf", "bpf", "/sys/fs/bpf"):
            out.log("cannot mount bpffs at /sys/fs/bpf")
    shutil.rmtree(PIN, ignore_errors=True)
    os.makedirs(PIN)
    sink_ok = False
    if not os.path.exists(knobs.sink_obj):
        out.note("setup", "no %s: run make -C bench on the host"
                 % knobs.sink_obj)
    else:
        try:
            sink_load(knobs.sink_obj)
            sink_ok = True
        except Failed as e:
            out.note("setup", "cannot load %s: %s" % (knobs.sink_obj, e))
    xf = XdpFlow()
    try:
        xf.load()
        if not xf.wait_helper(20):
            raise Failed("the helper is not running after 20 s")
    except Failed as e:
        out.note("setup", "the xdp_flow module or its helper did not come "
                 "up (%s): no xdp_flow figures" % e)
        xf = None
    # where xdp_gen parks its program (xgk0, and xgk1 for a second one at
    # the same time; down: no traffic ever)
    devs_del("xgk0")
    if not ok("ip", "link", "add", "xgk0", "type", "veth", "peer", "name",
              "xgk1"):
        out.note("setup", "cannot create xgk0/xgk1 for xdp_gen -k")
    return Context(out, knobs, xf, sink_ok)


def inventory():
    """The devices and the named network namespaces there are."""
    return ({d["ifname"] for d in run_json("ip", "-j", "link", "show") or []},
            {n["name"] for n in run_json("ip", "-j", "netns", "list") or []})


def summary(out):
    """guest.txt: the sections' tables, the notes, the kernel's warnings."""
    now = datetime.datetime.now(datetime.timezone.utc)
    lines = ["xdp_flow benchmark (guest half), kernel %s, %d CPUs, %s" % (
                 os.uname().release, os.cpu_count(),
                 now.strftime("%Y-%m-%d %H:%M UTC")),
             "The guest is emulated (QEMU TCG) on a shared host: absolute "
             "numbers are not meaningful;",
             "compare configurations within this run (ratios)."]
    lines += out.summary
    notes = out.notes()
    if notes:
        lines += ["", "not measured / remarks:"] + ["  " + n for n in notes]
    bad = kernel_warnings()[:5]
    if bad:
        lines += ["", "kernel log warnings:"] + ["  " + b for b in bad]
    lines += ["", "guest time %d s; %d figures in %s" % (
        time.monotonic() - out.start, out.measured, out.csv_path)]
    with open(out.txt_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n" + "\n".join(lines))


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out, knobs = Output(sys.argv[1]), Knobs()
    os.environ["PATH"] = ("/usr/local/sbin:/usr/local/bin:/usr/sbin:"
                          "/usr/bin:/sbin:/bin:" + os.environ.get("PATH", ""))
    out.log("xdp_flow benchmark, guest half: kernel %s, %d CPUs"
            % (os.uname().release, os.cpu_count()))
    out.log("NOTE: this guest is emulated (QEMU TCG): absolute rates and "
            "times mean nothing;")
    out.log("compare configurations of this one run as ratios.")
    out.csv("meta", "guest", "kernel", os.uname().release, "")
    out.csv("meta", "guest", "cpus", os.cpu_count(), "count")
    out.csv("meta", "bench", "secs", knobs.secs, "s")
    out.csv("meta", "bench", "reps", knobs.reps, "count")
    # the benchmark's own traffic only: no IPv6 chatter on new devices
    with open(V6_DEFAULT) as f:
        v6_default = f.read().strip()
    ctx = None
    before = inventory()
    try:
        with open(V6_DEFAULT, "w") as f:
            f.write("1")
        ctx = prepare(out, knobs)
        for name in knobs.sections:
            if name not in SECTIONS:
                out.note("setup", "unknown section '%s'" % name)
                continue
            t0 = time.monotonic()
            try:
                SECTIONS[name](ctx)
            except Failed as e:
                out.note(name, str(e))
            except Exception as e:  # one section's bug must not stop the rest
                out.note(name, "failed: %s: %s" % (type(e).__name__,
                                                   one_line(e)))
                traceback.print_exc()
            out.log("section %s took %.0f s" % (name, time.monotonic() - t0))
            out.csv("meta", name, "guest_time", round(time.monotonic() - t0),
                    "s")
    finally:
        if ctx and ctx.ovs.running:
            ctx.ovs.stop()
        devs_del("xgk0")
        with open(V6_DEFAULT, "w") as f:
            f.write(v6_default)
        shutil.rmtree(PIN, ignore_errors=True)
        if ctx and ctx.xf:
            ctx.xf.unload()
        devs, nss = (now - then for now, then in zip(inventory(), before))
        if devs or nss:
            out.note("setup", "left behind: devices %s, namespaces %s" % (
                " ".join(sorted(devs)) or "none",
                " ".join(sorted(nss)) or "none"))
        summary(out)
    return 0 if out.measured else 1


if __name__ == "__main__":
    sys.exit(main())
