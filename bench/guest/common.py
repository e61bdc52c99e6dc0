# SPDX-License-Identifier: GPL-2.0
"""What every section of the guest benchmark uses.

Commands run through subprocess (tc, ip, ethtool, bpftool, the xdp-flow
CLI, OVS's tools, iperf3, ping); their state is read as JSON (`ip -j -s
link`, `tc -j -s filter show`, `xdp-flow -j status`, iperf3 -J). Where a
counter is polled every millisecond (rx_packets) or read at the edges of
a timed window (the UDP layer's counters), it comes from sysfs or procfs
without a process: a process costs 0.1 to 1 s in the emulated guest.
"""

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PIN = "/sys/fs/bpf/xfbench"
PKTGEN = "/proc/net/pktgen"
XF_PARAMS = "/sys/module/xdp_flow/parameters"
IP_FORWARD = "/proc/sys/net/ipv4/ip_forward"


class Failed(Exception):
    """Something could not be set up or measured; the message says what,
    for the notes."""


# ------------------------------------------------------------ the knobs

def _env(name, default, kind=int):
    v = os.environ.get(name)
    return default if v in (None, "") else kind(v)


class Knobs:
    """The environment's settings (bench/README.md lists them), with the
    defaults of a real run or, with XF_BENCH_QUICK=1, of a smoke run."""

    SECTIONS = ("forward", "latency", "rate", "ping", "miss", "scale",
                "peer", "flowtable")

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


# ------------------------------------------------------------ processes

def run(*cmd, ns=None, input=None, timeout=None):
    """Runs a command (in namespace ns if given); a CompletedProcess with
    stdout and stderr as text, returncode 124 on a timeout."""
    argv = [str(c) for c in cmd]
    if ns:
        argv = ["ip", "netns", "exec", ns] + argv
    try:
        return subprocess.run(argv, input=input, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(argv, 124, e.stdout or "",
                                           e.stderr or "")
    except OSError as e:
        return subprocess.CompletedProcess(argv, 127, "", str(e))


def ok(*cmd, **kw):
    """The command succeeded."""
    return run(*cmd, **kw).returncode == 0


def must(*cmd, what=None, **kw):
    """Runs the command; Failed with its error output when it fails."""
    p = run(*cmd, **kw)
    if p.returncode != 0:
        raise Failed("%s failed: %s" % (
            what or " ".join(str(c) for c in cmd),
            one_line(p.stderr or p.stdout)))
    return p.stdout


def one_line(text, limit=300):
    return " ".join(str(text).split())[:limit]


def run_json(*cmd, **kw):
    """The command's JSON output, None when it fails or is no JSON."""
    p = run(*cmd, **kw)
    if p.returncode != 0:
        return None
    try:
        return json.loads(p.stdout)
    except ValueError:
        return None


def stop_process(proc, sig=signal.SIGTERM, timeout=10):
    """Signals a Popen and reaps it; killed after timeout."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# ------------------------------------------------------------ devices

def sysfs_read(dev, name):
    with open("/sys/class/net/%s/%s" % (dev, name)) as f:
        return f.read().strip()


def rx_packets(dev):
    """The device's rx_packets (sysfs: fast enough for 1 ms polls)."""
    return int(sysfs_read(dev, "statistics/rx_packets"))


def mac(dev):
    return sysfs_read(dev, "address")


def ifindex(dev):
    return int(sysfs_read(dev, "ifindex"))


def link(dev, ns=None, stats=False):
    """The device's `ip -j [-s] link show` object, None when it has
    none."""
    js = run_json("ip", "-j", *(["-s"] if stats else []), "link", "show",
                  "dev", dev, ns=ns)
    return js[0] if js else None


def link_stats(dev, ns=None):
    """{"rx": {...}, "tx": {...}} of `ip -j -s link show`."""
    js = link(dev, ns, stats=True)
    if not js or "stats64" not in js:
        raise Failed("no statistics for %s" % dev)
    return js["stats64"]


def xdp_prog_id(dev, ns=None):
    """The id of the XDP program on dev, or 0."""
    xdp = (link(dev, ns) or {}).get("xdp") or {}
    if "prog" in xdp:
        return xdp["prog"].get("id", 0)
    attached = xdp.get("attached") or [{}]
    return attached[0].get("prog", {}).get("id", 0)


def ip_batch(lines, ns=None, force=False):
    """Runs the `ip` commands of lines in one process."""
    return run("ip", *(["-force"] if force else []), "-batch", "-",
               ns=ns, input="".join(line + "\n" for line in lines))


def devs_del(*devs):
    """Deletes the devices there are (and so their veth peers)."""
    ip_batch(["link del dev %s" % d for d in devs], force=True)


def v6_off(dev, ns=None):
    """No IPv6 on dev: no router solicitation or MLD report ever reaches
    a counter. (In the root namespace without a process.)"""
    if ns:
        run("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % dev, ns=ns)
        return
    with open("/proc/sys/net/ipv6/conf/%s/disable_ipv6" % dev, "w") as f:
        f.write("1")


def veth_pairs(*pairs):
    """Creates the veth pairs (a, b), both ends up, IPv6 off."""
    devs_del(*(a for a, _ in pairs))
    p = ip_batch(["link add %s type veth peer name %s" % ab
                  for ab in pairs])
    if p.returncode != 0:
        raise Failed("cannot create veth pairs: " + one_line(p.stderr))
    for a, b in pairs:
        v6_off(a)
        v6_off(b)
    ip_batch(["link set dev %s up" % d for ab in pairs for d in ab])


def gro_on(*devs):
    """NAPI on a veth without an XDP program, so that XDP frames sent to
    its peer (ndo_xdp_xmit) are taken."""
    for d in devs:
        must("ethtool", "-K", d, "gro", "on")


def netns_fresh(name):
    """A new, empty network namespace of that name, lo up."""
    run("ip", "netns", "del", name)
    must("ip", "netns", "add", name)
    run("ip", "link", "set", "dev", "lo", "up", ns=name)


def netns_del(*names):
    for name in names:
        run("ip", "netns", "del", name)


def dev_alone(ns, dev):
    """dev, up, in a namespace of its own, where xdp_flow binds nothing
    (it binds the blocks of the initial namespace and keeps a place for
    each of their rules): TC as it runs without xdp_flow."""
    netns_fresh(ns)
    must("ip", "link", "set", dev, "netns", ns)
    must("ip", "link", "set", dev, "up", ns=ns)


def ethtool_stat(dev, name):
    """The sum of the device's `ethtool -S` counters ending in name
    (per queue on veth). ethtool 6.1 has no JSON for -S: its lines are
    "name: value"."""
    p = run("ethtool", "-S", dev)
    total = 0
    for line in p.stdout.splitlines():
        key, _, value = line.strip().partition(":")
        if key.endswith(name) and value.strip().isdigit():
            total += int(value)
    return total


# ------------------------------------------------------------ tc

def tc_rule(dev, pref, ns=None):
    """The ingress flower rule at pref as `tc -j -s filter show` gives it
    (its "options" object), None when there is none."""
    js = run_json("tc", "-j", "-s", "filter", "show", "dev", dev,
                  "ingress", "pref", pref, ns=ns) or []
    for entry in js:
        if "options" in entry:
            return entry["options"]
    return None


def rule_in_hw(dev, pref, ns=None):
    return bool((tc_rule(dev, pref, ns) or {}).get("in_hw"))


def rule_packets(dev, pref, hw=False, ns=None):
    """The packets the rule's first action counted: all of them, or only
    the hardware's (xdp_flow's datapath); None when there is no rule."""
    r = tc_rule(dev, pref, ns)
    if not r or not r.get("actions"):
        return None
    stats = r["actions"][0].get("stats", {})
    return stats.get("hw_packets", 0) if hw else stats.get("packets", 0)


# ------------------------------------------------------------ xdp_flow

class XdpFlow:
    """The module, its helper and the xdp-flow CLI."""

    def __init__(self):
        self.cli = (os.environ.get("XF_CLI") or shutil.which("xdp-flow") or
                    os.path.join(ROOT, "tools", "xdp-flow", "xdp-flow"))
        series = os.environ.get("XF_SERIES") or ".".join(
            os.uname().release.split(".")[:2])
        self.ko = os.environ.get("XF_KO") or os.path.join(
            ROOT, ".cache", "build", series, "net", "xdp_flow",
            "xdp_flow.ko")

    def load(self):
        """modprobe, as users load it; insmod of the build when this
        kernel has none installed. Fails with the reason."""
        must("modprobe", "-a", "cls_flower", "act_gact", "act_mirred",
             "sch_ingress", "veth")
        if ok("modinfo", "-F", "filename", "xdp_flow"):
            must("modprobe", "xdp_flow")
        elif os.path.exists(self.ko):
            must("insmod", self.ko)
        else:
            raise Failed("no xdp_flow module for %s" % os.uname().release)

    @staticmethod
    def loaded():
        return os.path.isdir("/sys/module/xdp_flow")

    def unload(self):
        if self.loaded():
            run("rmmod", "xdp_flow")

    @staticmethod
    def param(name):
        """The module parameter's value, None when it does not exist."""
        try:
            with open(os.path.join(XF_PARAMS, name)) as f:
                return f.read().strip()
        except OSError:
            return None

    @staticmethod
    def set_param(name, value):
        """Sets a module parameter at run time; Failed when it cannot."""
        try:
            with open(os.path.join(XF_PARAMS, name), "w") as f:
                f.write(str(value))
        except OSError as e:
            raise Failed("cannot set the module parameter %s to %s: %s"
                         % (name, value, e))

    def cmd(self, *args, timeout=60):
        return run(self.cli, *args, timeout=timeout)

    def status(self):
        """`xdp-flow -j status`, {} when it fails."""
        return run_json(self.cli, "-j", "status", timeout=20) or {}

    def dev(self, dev):
        """The device's entry in the status, None when not enabled."""
        for d in self.status().get("devices", []):
            if d.get("dev") == dev:
                return d
        return None

    def dev_state(self, dev):
        """idle, attaching, attached, error, or "none" (not enabled)."""
        return (self.dev(dev) or {}).get("state", "none")

    def dev_rules(self, dev):
        return (self.dev(dev) or {}).get("rule_count")

    def wait_helper(self, timeout=20):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.status().get("helper_state") == "running":
                return True
            time.sleep(0.1)
        return False

    def wait_new_helper(self, old, timeout):
        """Until a helper other than pid old runs; its pid, or None."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            st = self.status()
            pid = st.get("helper_pid", 0)
            if st.get("helper_state") == "running" and pid and pid != old:
                return pid
            time.sleep(0.1)
        return None

    def wait_datapath(self, dev, timeout=20):
        """Until dev's datapath is attached (after its first offloaded
        rule); Failed on the state error or after timeout."""
        end = time.monotonic() + timeout
        st = None
        while time.monotonic() < end:
            st = self.dev_state(dev)
            if st in ("attached", "error"):
                break
            time.sleep(0.2)
        if st != "attached":
            raise Failed("%s is not attached: state %s: %s" % (
                dev, st, json.dumps(self.status())))

    def wait_attached(self, dev, timeout=20):
        """Enabled, and once it has offloaded rules, the datapath on it
        (state attached, the helper's pinned link, for the xdp hook an
        XDP program). A device without offloaded rules is idle: nothing
        is attached to it, and that is success too."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            d = self.dev(dev) or {}
            st = d.get("state")
            if st == "idle":
                return True
            if st == "error":
                raise Failed("%s: state error: %s" % (dev, d))
            if (st == "attached" and os.path.exists(
                    "/sys/fs/bpf/xdp_flow/link_%d" % ifindex(dev)) and
                    (d.get("hook") == "tc" or xdp_prog_id(dev))):
                return True
            time.sleep(0.1)
        raise Failed("%s: not attached after %d s (state %s)" % (
            dev, timeout, self.dev_state(dev)))

    def enable(self, dev, hook="xdp", clsact=True):
        """xdp_flow on dev with that hook, then clsact (so that the module
        binds its block; OVS adds its own); the datapath attaches with the
        first offloaded rule."""
        must(self.cli, "enable", "dev", dev, "hook", hook,
             what="xdp-flow enable dev %s hook %s" % (dev, hook))
        self.wait_attached(dev)
        if clsact:
            must("tc", "qdisc", "add", "dev", dev, "clsact")

    def disable(self, *devs):
        if self.loaded():
            for d in devs:
                run(self.cli, "disable", "dev", d)


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


# ------------------------------------------------------------ generators

X = "10.0.2.1"		# the generated flow's destination
XSRC = "10.0.1.1"


class Gen:
    """A flow of 64-byte UDP frames to X out of dev, into its peer:
    xdp_gen (bench/xdp_gen.c) or the kernel's pktgen; paced at pps when
    given. xdp_gen parks its program on keep (xgk0, or xgk1 for a second
    one at the same time: see xdp_gen.c)."""

    def __init__(self, knobs, kind, dev, dst_mac, pps=None, keep="xgk0"):
        self.kind, self.dev = kind, dev
        self.proc = None
        if kind == "xdp_gen":
            # CPU 0: the sender, and the NAPI work it schedules unless
            # that runs in a thread elsewhere
            argv = [knobs.xdp_gen, "-i", dev, "-D", dst_mac, "-S", XSRC,
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


# ------------------------------------------------------------ OVS

class Ovs:
    """Debian's ovsdb-server and ovs-vswitchd, with their database,
    sockets and logs in a directory of their own (the guest tests'
    selftests/guest/ovs_lib.sh does the same)."""

    DIR = os.environ.get("OVS_DIR", "/tmp/xf-ovs")
    SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"

    def __init__(self):
        for k in ("OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR",
                  "OVS_SYSCONFDIR"):
            os.environ[k] = self.DIR
        self.running = False

    def unavailable(self):
        """Why OVS cannot run here, None when it can."""
        for b in ("ovsdb-server", "ovs-vswitchd", "ovs-vsctl",
                  "ovs-appctl", "ovsdb-tool", "ovs-ofctl"):
            if not shutil.which(b):
                return "no %s (openvswitch-switch)" % b
        if not os.path.exists(self.SCHEMA):
            return "no " + self.SCHEMA
        if not ok("modprobe", "openvswitch"):
            return "cannot load openvswitch.ko"
        return None

    def start(self, offload):
        """A fresh database, ovsdb-server and ovs-vswitchd with
        hw-offload on or off (read at start-up only)."""
        self.stop()
        shutil.rmtree(self.DIR, ignore_errors=True)
        os.makedirs(self.DIR)
        d = self.DIR
        must("ovsdb-tool", "create", d + "/conf.db", self.SCHEMA)
        must("ovsdb-server", d + "/conf.db", "--remote=punix:%s/db.sock" % d,
             "--pidfile=%s/ovsdb-server.pid" % d,
             "--log-file=%s/ovsdb-server.log" % d, "--detach", "--no-chdir",
             "-vconsole:off")
        self.running = True
        must("ovs-vsctl", "--no-wait", "init")
        must("ovs-vsctl", "--no-wait", "set", "Open_vSwitch", ".",
             "other_config:hw-offload=%s" % ("true" if offload else "false"))
        must("ovs-vswitchd", "unix:%s/db.sock" % d,
             "--pidfile=%s/ovs-vswitchd.pid" % d,
             "--log-file=%s/ovs-vswitchd.log" % d, "--detach", "--no-chdir",
             "-vconsole:off", "-vfile:info")

    def _pid(self, name):
        try:
            with open("%s/%s.pid" % (self.DIR, name)) as f:
                return int(f.read())
        except (OSError, ValueError):
            return None

    def stop(self):
        """Both daemons gone, the kernel datapath deleted."""
        pid = self._pid("ovs-vswitchd")
        if pid:
            if not ok("ovs-appctl", "-t", "ovs-vswitchd", "exit",
                      timeout=10):
                _kill(pid, signal.SIGTERM)
            end = time.monotonic() + 10
            while _alive(pid) and time.monotonic() < end:
                time.sleep(0.1)
            if _alive(pid):
                _kill(pid, signal.SIGKILL)
        pid = self._pid("ovsdb-server")
        if pid:
            _kill(pid, signal.SIGTERM)
        run("ovs-dpctl", "del-dp", "ovs-system")
        self.running = False

    @staticmethod
    def dp_flows(kind=None):
        """The datapath's flows, one dict each ("packets" of the flow):
        OVS 3.1 has no JSON output for dpctl/dump-flows, whose lines are
        "<match>, packets:N, ..., actions:<actions>"."""
        p = run("ovs-appctl", "dpctl/dump-flows",
                *(["type=" + kind] if kind else []))
        flows = []
        for line in p.stdout.splitlines():
            if "actions:" in line:
                m = re.search(r"packets:(\d+)", line)
                flows.append({"packets": int(m.group(1)) if m else 0})
        return flows


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def _kill(pid, sig):
    try:
        os.kill(pid, sig)
    except OSError:
        pass


# ------------------------------------------------------------ UDP layer

def udp_layer(pid="self"):
    """(InDatagrams + InErrors, InDatagrams) of the UDP layer in the
    namespace of process pid: datagrams that reached the UDP layer, and
    of them the ones read by their socket's owner. /proc/<pid>/net/snmp,
    the table nstat reads, without a process at the edges of a timed
    window."""
    with open("/proc/%s/net/snmp" % pid) as f:
        udp = [line.split()[1:] for line in f if line.startswith("Udp:")]
    row = dict(zip(udp[0], (int(v) for v in udp[1])))
    return row["InDatagrams"] + row["InErrors"], row["InDatagrams"]


def kernel_warnings():
    """The kernel log's warnings, with the tests' own pattern
    (kernel_bad in selftests/lib.sh)."""
    p = run("bash", "-c", 'source "$1" && dmesg | kernel_bad', "bash",
            os.path.join(ROOT, "selftests", "lib.sh"))
    return p.stdout.splitlines()


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
                  cleanup, up, one_run, down):
    """A section of rounds through a router: topology(), IPv4 forwarding
    on, an iperf3 server at server (namespace, address, port), then
    round_robin() over up(ctx, cfg), one_run(ctx, cfg, r, srv), down(ctx);
    the server stopped and cleanup(ctx) run however it ends."""
    srv = None
    try:
        topology()
        with ip_forward():
            srv = Iperf3Server(*server)
            round_robin(ctx.out, section, cfgs, reps, why,
                        lambda cfg: up(ctx, cfg),
                        lambda cfg, r: one_run(ctx, cfg, r, srv),
                        lambda: down(ctx))
    finally:
        if srv:
            srv.stop()
        cleanup(ctx)


@contextlib.contextmanager
def ip_forward():
    """IPv4 forwarding on in the root namespace, as it was after."""
    with open(IP_FORWARD) as f:
        saved = f.read().strip()
    with open(IP_FORWARD, "w") as f:
        f.write("1")
    try:
        yield
    finally:
        with open(IP_FORWARD, "w") as f:
            f.write(saved)


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
