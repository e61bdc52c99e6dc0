# SPDX-License-Identifier: GPL-2.0
"""Section start: how long the helper takes to start.

The module is loaded and unloaded XF_BENCH_START_REPS times with each
helper configuration, the configurations interleaved; each time, the
helper's own figure from the kernel log ("started (pid P) in T ms": from
its exec to the pinned state taken over, just before HELLO), and the time
from modprobe until `xdp-flow status` shows the helper running:

  one    as the module runs it: the maps, the two programs that carry the
         module's maps, and the program of the hook a veth gets by default
         (tc where the kernel has tcx, else XDP); the other hook's program
         waits for its first device
  both   the same helper with --load-all: both hooks' programs at start,
         as every start verified them before.

Both run the built helper (umh/xdp_flow_umh) through the module parameter
umh_path and a two-line script that execs it, so that both pay the same
exec; a test module load pays this once per test, a restart once more.
"""

import os
import re
import subprocess
import tempfile
import time

from benchstats import median, ratio
from xfpy import ROOT
from xfpy.proc import Failed, must

CONFIGS = ("one", "both")
ARGS = {"one": "", "both": " --load-all"}
STARTED = re.compile(r"xdp_flow_umh: started \(pid (\d+)\) in (\d+) ms")


def started_lines():
    """The helper's "started" lines in the kernel log, oldest first."""
    p = subprocess.run(["dmesg"], capture_output=True, text=True)
    return STARTED.findall(p.stdout)


def one_start(ctx, script):
    """Loads the module with the helper of @script: (the helper's
    "started" ms, ms from modprobe to the helper running)."""
    xf = ctx.xf
    xf.unload()
    seen = len(started_lines())
    t0 = time.monotonic()
    must("modprobe", "xdp_flow", "umh_path=" + script)
    if not xf.wait_helper(120):
        raise Failed("no helper running 120 s after modprobe")
    up = (time.monotonic() - t0) * 1000
    lines = started_lines()
    if len(lines) <= seen:
        raise Failed("the helper logged no start time")
    return float(lines[-1][1]), up


def run_section(ctx):
    out, k = ctx.out, ctx.knobs
    if not ctx.xf:
        out.note("start", "no xdp_flow: not measured")
        return
    umh = os.path.join(ROOT, "umh", "xdp_flow_umh")
    if not os.access(umh, os.X_OK):
        out.note("start", "no %s: not measured" % umh)
        return
    res = {c: {"started": [], "up": []} for c in CONFIGS}
    tmp = tempfile.mkdtemp(prefix="xf_start")
    scripts = {}
    for c in CONFIGS:
        scripts[c] = os.path.join(tmp, "umh_" + c)
        with open(scripts[c], "w") as f:
            f.write("#!/bin/sh\nexec %s%s \"$@\"\n" % (umh, ARGS[c]))
        os.chmod(scripts[c], 0o755)
    try:
        for _ in range(k.start_reps):
            for c in CONFIGS:
                s, u = one_start(ctx, scripts[c])
                res[c]["started"].append(s)
                res[c]["up"].append(u)
    finally:
        ctx.xf.unload()
        ctx.xf.load()
        ctx.xf.wait_helper(120)
        for c in CONFIGS:
            os.unlink(scripts[c])
        os.rmdir(tmp)
    report(out, k, res)


def report(out, k, res):
    sm, csv = out.sum, out.csv
    med = {c: {m: median(res[c][m]) for m in ("started", "up")}
           for c in CONFIGS}
    sm()
    sm("start: the helper's start, loaded by modprobe; median ms of %d, "
       "the configurations interleaved" % k.start_reps)
    sm("  %-8s %12s %14s %10s" % ("helper", "started in", "modprobe to up",
                                  "ratio"))
    for c in CONFIGS:
        r = ratio(med[c]["up"], med["both"]["up"])
        csv("start", c, "started_ms", med[c]["started"], "ms")
        csv("start", c, "up_ms", med[c]["up"], "ms")
        csv("start", c, "up_ratio_to_both", r, "ratio")
        sm("  %-8s %12.0f %14.0f %10s" % (
            c, med[c]["started"], med[c]["up"],
            "-" if r is None else "%.2f" % r))
