# SPDX-License-Identifier: GPL-2.0
"""Traffic: a flow of 64-byte UDP frames from a generator (bench/xdp_gen.c
or the kernel's pktgen), and iperf3 (TCP streams, UDP datagrams at full
speed) with its JSON (-J). The shell tests send with send_udp
(selftests/guest/lib.sh) and udp_flow (flowtable_lib.sh)."""

import json
import os
import re
import signal
import subprocess
import time

from xfpy.proc import Failed, one_line, run, stop_process

PKTGEN = "/proc/net/pktgen"
X = "10.0.2.1"		# the generated flow's destination
XSRC = "10.0.1.1"


class Gen:
    """A flow of 64-byte UDP frames to X out of dev, into its peer:
    xdp_gen (the program at path xdp_gen) or the kernel's pktgen; paced
    at pps when given. xdp_gen parks its program on keep (xgk0, or xgk1
    for a second one at the same time: see bench/xdp_gen.c)."""

    def __init__(self, xdp_gen, kind, dev, dst_mac, pps=None, keep="xgk0"):
        self.kind, self.dev = kind, dev
        self.proc = None
        if kind == "xdp_gen":
            # CPU 0: the sender, and the NAPI work it schedules unless
            # that runs in a thread elsewhere
            argv = [xdp_gen, "-i", dev, "-D", dst_mac, "-S", XSRC,
                    "-T", X, "-t", "0", "-c", "0", "-k", keep]
            if pps:
                argv += ["-r", str(pps)]
            self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT,
                                         text=True)
        elif kind == "pktgen":
            self._pktgen_setup(dst_mac, pps)
            self.proc = subprocess.Popen(
                ["sh", "-c", "echo start >%s/pgctrl" % PKTGEN],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        else:
            raise Failed("unknown generator %s" % kind)
        # a generator that cannot run says so at once
        time.sleep(0.3)
        if not self.alive():
            out = self.proc.communicate()[0]
            raise Failed("%s on %s stopped at once: %s" % (
                kind, dev, one_line(out)))

    def _pktgen_setup(self, dst_mac, pps):
        def put(path, cmd):
            with open(path, "w") as f:
                f.write(cmd + "\n")

        put(PKTGEN + "/kpktgend_0", "rem_device_all")
        put(PKTGEN + "/kpktgend_0", "add_device " + self.dev)
        path = "%s/%s" % (PKTGEN, self.dev)
        # clone_skb 0: veth cannot send one skb twice
        cmds = ["count 0", "clone_skb 0", "pkt_size 60", "dst " + X,
                "src_min " + XSRC, "src_max " + XSRC, "dst_mac " + dst_mac,
                "udp_src_min 9", "udp_src_max 9", "udp_dst_min 9",
                "udp_dst_max 9"] + (["ratep %d" % pps] if pps else [])
        for c in cmds:
            put(path, c)
            with open(path) as f:
                result = [ln for ln in f if ln.startswith("Result:")]
            if not result or not result[0].startswith("Result: OK"):
                raise Failed("pktgen %s '%s': %s" % (
                    self.dev, c, one_line(result)))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def output(self):
        return one_line(self.proc.communicate()[0] if self.proc else "")

    def stop(self):
        """Stops it; the frames it sent a second (the offered load), None
        when unknown."""
        if self.proc is None:
            return None
        rate = None
        if self.kind == "xdp_gen":
            stop_process(self.proc, signal.SIGINT)
            out = self.proc.stdout.read()
            # xdp_gen's one line of output: "sent N seconds S"
            m = re.search(r"sent (\d+) seconds ([\d.]+)", out)
            if m and float(m.group(2)) > 0:
                rate = int(m.group(1)) / float(m.group(2))
        else:
            with open(PKTGEN + "/pgctrl", "w") as f:
                f.write("stop\n")
            self.proc.wait()
            # pktgen's only interface is its text in procfs
            with open("%s/%s" % (PKTGEN, self.dev)) as f:
                m = re.search(r"Result: OK: (\d+)\([^)]*\) usec, (\d+) ",
                              f.read())
            if m and int(m.group(1)) > 0:
                rate = int(m.group(2)) * 1e6 / int(m.group(1))
            with open(PKTGEN + "/kpktgend_0", "w") as f:
                f.write("rem_device_all\n")
        self.proc = None
        return rate


# ------------------------------------------------------------ iperf3

class Iperf3Server:
    """iperf3 -s on CPU 1 in namespace ns, bound to addr."""

    def __init__(self, ns, addr, port):
        self.log = os.path.join("/tmp", "xfbench-iperf3-%d.log" % port)
        with open(self.log, "w") as f:
            self.proc = subprocess.Popen(
                (["ip", "netns", "exec", ns] if ns else []) +
                ["iperf3", "-s", "-B", addr, "-p", str(port), "-A", "1"],
                stdout=f, stderr=subprocess.STDOUT)
        time.sleep(1)
        if self.proc.poll() is not None:
            with open(self.log) as f:
                raise Failed("the iperf3 server does not start: " +
                             one_line(f.read()))

    @property
    def pid(self):
        return self.proc.pid

    def stop(self):
        stop_process(self.proc)
        try:
            os.unlink(self.log)
        except OSError:
            pass


def iperf3_client(ns, addr, port, secs, *args):
    """iperf3 -c on CPU 0 in namespace ns; its JSON, or Failed."""
    p = run("iperf3", "-c", addr, "-p", port, "-t", secs, "-A", "0", "-J",
            *args, ns=ns, timeout=secs + 60)
    try:
        return json.loads(p.stdout)
    except ValueError:
        raise Failed("iperf3: " + one_line(p.stdout + p.stderr))


def tcp_gbps(ns, addr, port, secs):
    """An iperf3 TCP stream: Gbit/s received (end.sum_received)."""
    js = iperf3_client(ns, addr, port, int(secs), "-O", "1")
    bps = js.get("end", {}).get("sum_received", {}).get("bits_per_second")
    if bps is None:
        raise Failed("iperf3 tcp: " + one_line(js.get("error", js)))
    return bps / 1e9


def udp_rates(ns, addr, port, secs, length, counters):
    """iperf3 UDP datagrams of length bytes at full speed (-b 0); from
    the first datagrams on (processes start slowly here), a window of
    secs seconds in which counters() (a dict of named counters, "in"
    among them: the datagrams that reached the receiver's UDP layer) is
    read at both ends. The counters' rates a second, and "sent": what
    the client sent a second."""
    argv = ["iperf3", "-c", addr, "-p", str(port), "-u", "-l", str(length),
            "-b", "0", "-t", str(int(secs) + 2), "-A", "0", "-J"]
    client = subprocess.Popen(["ip", "netns", "exec", ns] + argv,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        c0 = counters()
        for _ in range(100):
            time.sleep(0.1)
            if counters()["in"] - c0["in"] > 100:
                break
        time.sleep(0.5)
        c0, t0 = counters(), time.monotonic()
        time.sleep(secs)
        c1, t1 = counters(), time.monotonic()
        # the window must end before the sender does
        if client.poll() is not None:
            raise Failed("the sender ended within the window "
                         "(it started late)")
        out = client.communicate(timeout=secs + 60)[0]
    finally:
        stop_process(client)
    try:
        s = json.loads(out)["end"]["sum"]
        sent = s["packets"] / s["seconds"]
    except (ValueError, KeyError, ZeroDivisionError):
        raise Failed("iperf3 udp: " + one_line(out))
    rates = {k: (c1[k] - c0[k]) / (t1 - t0) for k in c0}
    rates["sent"] = sent
    if rates["in"] <= 0:
        raise Failed("no datagram arrived")
    return rates
