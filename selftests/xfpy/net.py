# SPDX-License-Identifier: GPL-2.0
"""Devices, network namespaces and the stack's counters.

Configuration goes through `ip -batch` (one process for many commands:
a process costs 0.1 to 1 s in an emulated guest); what is read often
comes from sysfs or procfs without a process, and what sysfs has not
from `ip -j` (JSON). setns() moves this process (its calling thread)
into a named namespace and back, as the kernel selftests' NetNSEnter
(tools/testing/selftests/net/lib/py/netns.py) does: a file of
/proc/sys/net, a socket or a bind then belongs to that namespace.
"""

import contextlib
import ctypes
import os

from xfpy.proc import Failed, must, one_line, run, run_json

CLONE_NEWNET = 0x40000000
IP_FORWARD = "/proc/sys/net/ipv4/ip_forward"

_libc = ctypes.CDLL(None, use_errno=True)
# the namespace this process began in, for setns(None)
_HOME_NS = os.open("/proc/self/ns/net", os.O_RDONLY)


# ------------------------------------------------------------ namespaces

def setns(name):
    """Enters a named namespace, or (None) the one this process began in."""
    path = "/run/netns/" + name if name else "/proc/self/fd/%d" % _HOME_NS
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            e = ctypes.get_errno()
            raise OSError(e, "setns %s: %s" % (path, os.strerror(e)))
    finally:
        os.close(fd)


def netns_fresh(name):
    """A new, empty network namespace of that name, lo up (ns_create in
    selftests/lib.sh, which also registers it for its cleanup)."""
    run("ip", "netns", "del", name)
    must("ip", "netns", "add", name)
    run("ip", "link", "set", "dev", "lo", "up", ns=name)


def netns_del(*names):
    for name in names:
        run("ip", "netns", "del", name)


# ------------------------------------------------------------ devices

def ip_batch(lines, ns=None, force=False, check=False):
    """Runs the `ip` commands of lines in one process (in namespace ns,
    which ip enters itself, as xf_nsexec in offload_lib.sh has it; -force:
    on past a command that fails); check: Failed when any failed."""
    p = run("ip", *(["-n", ns] if ns else []),
            *(["-force"] if force else []), "-batch", "-",
            input="".join(line + "\n" for line in lines))
    if check and p.returncode:
        raise Failed("ip -batch: " + p.stderr)
    return p


def devs_del(*devs):
    """Deletes the devices there are (and so their veth peers)."""
    ip_batch(["link del dev %s" % d for d in devs], force=True)


def v6_off(*devs, ns=None):
    """No IPv6 on the devices (in namespace ns): no router solicitation
    or MLD report ever reaches a counter. Written in /proc/sys, in the
    namespace entered with setns(), without a process (the standard
    scene's xf_veth_topology and __xf_ns_side in selftests/guest/lib.sh
    write the same file)."""
    if ns:
        setns(ns)
    try:
        for d in devs:
            with open("/proc/sys/net/ipv6/conf/%s/disable_ipv6" % d,
                      "w") as f:
                f.write("1")
    finally:
        if ns:
            setns(None)


def veth_pairs(*pairs):
    """Creates the veth pairs (a, b), both ends up, IPv6 off."""
    devs_del(*(a for a, _ in pairs))
    p = ip_batch(["link add %s type veth peer name %s" % ab
                  for ab in pairs])
    if p.returncode != 0:
        raise Failed("cannot create veth pairs: " + one_line(p.stderr))
    for a, b in pairs:
        v6_off(a, b)
    ip_batch(["link set dev %s up" % d for ab in pairs for d in ab])


def gro_on(*devs):
    """NAPI on a veth without an XDP program, so that XDP frames sent to
    its peer (ndo_xdp_xmit) are taken."""
    for d in devs:
        must("ethtool", "-K", d, "gro", "on")


def dev_alone(ns, dev):
    """dev, up, in a namespace of its own, where xdp_flow binds nothing
    (it binds the blocks of the initial namespace and keeps a place for
    each of their rules): TC as it runs without xdp_flow."""
    netns_fresh(ns)
    must("ip", "link", "set", dev, "netns", ns)
    must("ip", "link", "set", dev, "up", ns=ns)


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


# ------------------------------------------------------------ reading

def sysfs_read(dev, name):
    with open("/sys/class/net/%s/%s" % (dev, name)) as f:
        return f.read().strip()


def rx_packets(dev):
    """The device's rx_packets (sysfs: fast enough for 1 ms polls;
    ns_rx_packets in selftests/guest/lib.sh)."""
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
    """The id of the XDP program on dev, or 0 (xdp_prog_id in
    offload_lib.sh)."""
    xdp = (link(dev, ns) or {}).get("xdp") or {}
    if "prog" in xdp:
        return xdp["prog"].get("id", 0)
    attached = xdp.get("attached") or [{}]
    return attached[0].get("prog", {}).get("id", 0)


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


def udp_layer(pid="self"):
    """(InDatagrams + InErrors, InDatagrams) of the UDP layer in the
    namespace of process pid: datagrams that reached the UDP layer, and
    of them the ones read by their socket's owner. /proc/<pid>/net/snmp,
    the table nstat reads (snmp in flowtable_lib.sh), without a process
    at the edges of a timed window."""
    with open("/proc/%s/net/snmp" % pid) as f:
        udp = [line.split()[1:] for line in f if line.startswith("Udp:")]
    row = dict(zip(udp[0], (int(v) for v in udp[1])))
    return row["InDatagrams"] + row["InErrors"], row["InDatagrams"]
