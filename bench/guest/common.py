# SPDX-License-Identifier: GPL-2.0
"""What every section of the guest benchmark uses of its own: the knobs,
the output, the counting sink, and the rounds of a section's runs.

The rest (commands, devices and namespaces, tc, xdp_flow, OVS, the
generators and iperf3) is the harness the Python tests use too:
selftests/xfpy (guest_bench.py puts selftests/ on sys.path). State is
read as JSON (`ip -j -s link`, `tc -s -j filter show`, `xdp-flow -j
status`, iperf3 -J). Where a counter is polled every millisecond
(rx_packets) or read at the edges of a timed window (the UDP layer's
counters), it comes from sysfs or procfs without a process: a process
costs 0.1 to 1 s in the emulated guest.
"""

import os
import time

from benchstats import median, ratio
from xfpy import ROOT
from xfpy.net import ip_batch, ip_forward
from xfpy.ovs import Ovs
from xfpy.proc import Failed, must, one_line
from xfpy.traffic import Iperf3Server, tcp_gbps, udp_rates

PIN = "/sys/fs/bpf/xfbench"


# ------------------------------------------------------------ the knobs

def _env(name, default, kind=int):
    v = os.environ.get(name)
    return default if v in (None, "") else kind(v)


class Knobs:
    """The environment's settings (bench/README.md lists them), with the
    defaults of a real run or, with XF_BENCH_QUICK=1, of a smoke run."""

    SECTIONS = ("forward", "latency", "rate", "ping", "miss", "scale",
                "peer", "flowtable", "tunnel", "start")

    def __init__(self):
        self.quick = _env("XF_BENCH_QUICK", 0) == 1
        q = self.quick
        self.sections = os.environ.get("XF_BENCH_SECTIONS",
                                       " ".join(self.SECTIONS)).split()
        self.gens = os.environ.get("XF_BENCH_GEN", "xdp_gen")
        self.secs = _env("XF_BENCH_SECS", 2 if q else 5, float)
        self.reps = _env("XF_BENCH_REPS", 1 if q else 3)
        self.warm = _env("XF_BENCH_WARM", 1, float)
        self.lat_reps = _env("XF_BENCH_LAT_REPS", 2 if q else 5)
        self.lat_pps = _env("XF_BENCH_LAT_PPS", 2000)
        self.rules = _env("XF_BENCH_RULES", 1000 if q else 10000)
        self.rate_orders = os.environ.get("XF_BENCH_RATE_ORDERS",
                                          "one asc desc random").split()
        # single rounds of rate swing by +-0.15 in the emulated guests
        self.rate_reps = _env("XF_BENCH_RATE_REPS", 1 if q else 5)
        self.scale_rules = _env("XF_BENCH_SCALE_RULES",
                                5000 if q else 100000)
        self.ping_reps = _env("XF_BENCH_PING_REPS", 2 if q else 5)
        self.miss_secs = _env("XF_BENCH_MISS_SECS", 2, float)
        self.miss_reps = _env("XF_BENCH_MISS_REPS", 1 if q else 2)
        self.peer_secs = _env("XF_BENCH_PEER_SECS", 2, float)
        self.peer_reps = _env("XF_BENCH_PEER_REPS", 1 if q else 3)
        self.ft_secs = _env("XF_BENCH_FT_SECS", 2, float)
        self.ft_reps = _env("XF_BENCH_FT_REPS", 1 if q else 3)
        self.tunnel_secs = _env("XF_BENCH_TUNNEL_SECS", 2, float)
        self.tunnel_reps = _env("XF_BENCH_TUNNEL_REPS", 1 if q else 3)
        self.start_reps = _env("XF_BENCH_START_REPS", 2 if q else 5)
        self.obj = os.environ.get("XF_BENCH_OBJ",
                                  os.path.join(ROOT, "bench"))
        self.split = _env("XF_BENCH_SPLIT", 0) == 1
        self.sink_obj = os.path.join(self.obj, "xdp_sink.bpf.o")
        self.floor_obj = os.path.join(self.obj, "xdp_floor.bpf.o")
        self.xdp_gen = os.path.join(self.obj, "xdp_gen")


# ------------------------------------------------------------ the output

class Output:
    """<outdir>/guest.csv ("section,config,metric,value,unit"),
    guest_notes.txt (what could not be measured, and why) and the summary
    that becomes guest.txt."""

    def __init__(self, outdir):
        os.makedirs(outdir, exist_ok=True)
        self.csv_path = os.path.join(outdir, "guest.csv")
        self.notes_path = os.path.join(outdir, "guest_notes.txt")
        self.txt_path = os.path.join(outdir, "guest.txt")
        self.outdir = outdir
        self.measured = 0
        self.summary = []
        self.start = time.monotonic()
        with open(self.csv_path, "w") as f:
            f.write("section,config,metric,value,unit\n")
        open(self.notes_path, "w").close()

    def csv(self, section, config, metric, value, unit):
        """One figure; None is left out (not measured)."""
        if value is None:
            return
        if isinstance(value, float):
            value = "%.10g" % value
        with open(self.csv_path, "a") as f:
            f.write("%s,%s,%s,%s,%s\n" % (section, config, metric, value,
                                          unit))
        if section != "meta":
            self.measured += 1

    def note(self, section, text):
        """Why something was not measured (or looks odd)."""
        print("# %s: %s" % (section, text), flush=True)
        with open(self.notes_path, "a") as f:
            f.write("%s: %s\n" % (section, text))

    def log(self, text):
        print("# [%ds] %s" % (time.monotonic() - self.start, text),
              flush=True)

    def sum(self, line=""):
        """A line of the final table."""
        self.summary.append(line)

    def notes(self):
        with open(self.notes_path) as f:
            return [line.rstrip("\n") for line in f]


# ------------------------------------------------------------ BPF objects

def sink_load(obj):
    """The counting sink (bench/xdp_sink.bpf.o), pinned at PIN/sink."""
    must("bpftool", "prog", "load", obj, PIN + "/sink", "type", "xdp",
         "pinmaps", PIN + "/sink_maps")


def sink_attach(*devs):
    """The sink on each device, native XDP."""
    p = ip_batch(["link set dev %s xdpdrv pinned %s/sink" % (d, PIN)
                  for d in devs])
    if p.returncode != 0:
        raise Failed("cannot attach the sink to %s: %s" % (
            " ".join(devs), one_line(p.stderr)))


# ------------------------------------------------------------ rounds

def tcp_udp_run(out, section, cfg, r, ns, addr, port, secs, length,
                counters, res, udp_fields):
    """One run of a TCP stream, then UDP datagrams of length bytes, from
    namespace ns to addr (tcp_gbps(), udp_rates() with counters()): the
    figures go to res ("tcp" and the keys of udp_fields, lists) and to the
    CSV as tcp_gbps_run<r> and udp_pps_run<r>; a failure is a note.
    Returns the log line's text (udp_fields: what each figure is)."""
    line = "%s %s run %d:" % (section, cfg, r)
    try:
        g = tcp_gbps(ns, addr, port, secs)
        res["tcp"].append(g)
        out.csv(section, cfg, "tcp_gbps_run%d" % r, g, "Gbit/s")
        line += " tcp %.3f Gbit/s" % g
    except Failed as e:
        out.note(section, "%s run %d: tcp failed: %s" % (cfg, r, e))
    try:
        u = udp_rates(ns, addr, port, secs, length, counters)
        for w in udp_fields:
            res[w].append(u[w])
        out.csv(section, cfg, "udp_pps_run%d" % r, u["in"], "pps")
        line += "; udp " + ", ".join("%.0f pps %s" % (u[w], udp_fields[w])
                                     for w in udp_fields)
    except Failed as e:
        out.note(section, "%s run %d: udp failed: %s" % (cfg, r, e))
    return line


def round_robin(out, section, cfgs, reps, why, up, one_run, down):
    """reps rounds over the configurations cfgs, each round starting one
    later, so that a slow spell of the shared host hits all alike. A run
    is up(cfg), one_run(cfg, r), down(); a configuration that fails is
    noted (in why and the section's notes) and not run again."""
    for r in range(1, reps + 1):
        for i in range(len(cfgs)):
            cfg = cfgs[(i + r - 1) % len(cfgs)]
            if cfg in why:
                continue
            try:
                up(cfg)
                one_run(cfg, r)
            except Failed as e:
                why[cfg] = str(e)
                out.note(section, "%s: not measured: %s" % (cfg, e))
            finally:
                down()


def iperf3_rounds(ctx, section, cfgs, reps, why, server, topology,
                  cleanup, up, one_run, down, res):
    """A section of rounds through a router: topology(), IPv4 forwarding
    on, an iperf3 server at server (namespace, address, port), then
    round_robin() over up(ctx, cfg), one_run(ctx, cfg, r, srv, res[cfg])
    (the configuration's results), down(ctx); the server stopped and
    cleanup(ctx) run however it ends."""
    srv = None
    try:
        topology()
        with ip_forward():
            srv = Iperf3Server(*server)
            round_robin(ctx.out, section, cfgs, reps, why,
                        lambda cfg: up(ctx, cfg),
                        lambda cfg, r: one_run(ctx, cfg, r, srv, res[cfg]),
                        lambda: down(ctx))
    finally:
        if srv:
            srv.stop()
        cleanup(ctx)


def rate_table(out, section, cfgs, res, why, base, extra=()):
    """The summary table and the CSV figures of a section of
    tcp_udp_run()s: for each configuration of cfgs, the medians of its
    runs in res ("tcp", "in", "sent", and "dlv" where the section counts
    it), their ratios to configuration base's, then the extra columns,
    (title, width, fn) each: fn(cfg) gives the cell (and may write CSV
    rows and notes of its own). A configuration without a figure is "not
    measured", with why's reason."""
    sm, csv = out.sum, out.csv
    wc = max([len("config")] + [len(c) for c in cfgs])
    sm("  %-*s %9s %6s %10s %6s %10s" % (
        wc, "config", "tcp Gb/s", "ratio", "udp pps", "ratio", "sent") +
       "".join(" %*s" % (w, t) for t, w, _ in extra))
    med = {c: {w: median(res[c].get(w, [])) for w in ("tcp", "in", "dlv",
                                                       "sent")}
           for c in cfgs if c in res}
    ref = med.get(base, {})
    for c in cfgs:
        m = med.get(c)
        if m is None or (m["tcp"] is None and m["in"] is None):
            csv(section, c, "measured", 0, "flag")
            sm("  %-*s not measured: %s"
               % (wc, c, why.get(c, "every run failed")))
            continue
        csv(section, c, "measured", 1, "flag")
        csv(section, c, "tcp_gbps", m["tcp"], "Gbit/s")
        csv(section, c, "udp_pps", m["in"], "pps")
        if "dlv" in res[c]:
            csv(section, c, "udp_delivered_pps", m["dlv"], "pps")
        csv(section, c, "udp_sent_pps", m["sent"], "pps")
        rt = ratio(m["tcp"], ref.get("tcp"))
        ru = ratio(m["in"], ref.get("in"))
        csv(section, c, "tcp_ratio_to_" + base, rt, "ratio")
        csv(section, c, "udp_ratio_to_" + base, ru, "ratio")
        sm("  %-*s %9.3f %6s %10.0f %6s %10.0f" % (
            wc, c, m["tcp"] or 0, "-" if rt is None else "%.2f" % rt,
            m["in"] or 0, "-" if ru is None else "%.2f" % ru,
            m["sent"] or 0) +
           "".join(" %*s" % (w, fn(c)) for _, w, fn in extra))


# ------------------------------------------------------------ the run

class Context:
    """What a section gets: the output, the knobs, xdp_flow (None when
    the module or its helper is not running) and OVS."""

    def __init__(self, out, knobs, xf, sink_ok):
        self.out, self.knobs, self.xf = out, knobs, xf
        self.sink_ok = sink_ok
        self.ovs = Ovs()

    def need_xf(self):
        if self.xf is None:
            raise Failed("the xdp_flow module or its helper is not running")
        return self.xf
