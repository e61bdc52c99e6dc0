# SPDX-License-Identifier: GPL-2.0
"""xdp_flow itself: the module, its helper and the xdp-flow CLI, read as
JSON (`xdp-flow -j status`); and the kernel log's warnings."""

import json
import os
import shutil
import time

from xfpy import ROOT
from xfpy.net import ifindex, xdp_prog_id
from xfpy.proc import Failed, must, ok, run, run_json

PARAMS = "/sys/module/xdp_flow/parameters"


def cli():
    """The xdp-flow command: XF_CLI, else the one on PATH, else the
    repository's (XF_CLI's default in selftests/guest/lib.sh)."""
    return (os.environ.get("XF_CLI") or shutil.which("xdp-flow") or
            os.path.join(ROOT, "tools", "xdp-flow", "xdp-flow"))


def loaded():
    return os.path.isdir("/sys/module/xdp_flow")


def settle_rules():
    """tc returns before the helper has put a new rule into XDP (its frames
    go to the stack until then): wait for that, so that frames meet every
    rule where it is going to run and XDP's share is measured
    (xf_settle_rules in selftests/guest/lib.sh; XF_NO_SETTLE=1: no
    wait)."""
    if not loaded() or os.environ.get("XF_NO_SETTLE"):
        return
    p = run(cli(), "wait")
    if p.returncode:
        raise Failed("xdp-flow wait: " + p.stderr.strip())


def kernel_warnings():
    """The kernel log's warnings, with the tests' own pattern
    (kernel_bad in selftests/lib.sh)."""
    p = run("bash", "-c", 'source "$1" && dmesg | kernel_bad', "bash",
            os.path.join(ROOT, "selftests", "lib.sh"))
    return p.stdout.splitlines()


class XdpFlow:
    """The module, its helper and the xdp-flow CLI."""

    def __init__(self):
        self.cli = cli()
        series = os.environ.get("XF_SERIES") or ".".join(
            os.uname().release.split(".")[:2])
        self.ko = os.environ.get("XF_KO") or os.path.join(
            ROOT, ".cache", "build", series, "net", "xdp_flow",
            "xdp_flow.ko")

    def load(self):
        """modprobe, as users load it; insmod of the build when this
        kernel has none installed. Fails with the reason (xf_load in
        selftests/guest/lib.sh)."""
        must("modprobe", "-a", "cls_flower", "act_gact", "act_mirred",
             "sch_ingress", "veth")
        if ok("modinfo", "-F", "filename", "xdp_flow"):
            must("modprobe", "xdp_flow")
        elif os.path.exists(self.ko):
            must("insmod", self.ko)
        else:
            raise Failed("no xdp_flow module for %s" % os.uname().release)

    # the module-level loaded(), as XdpFlow.loaded() too
    loaded = staticmethod(loaded)

    def unload(self):
        """xf_unload in selftests/guest/lib.sh."""
        if self.loaded():
            run("rmmod", "xdp_flow")

    @staticmethod
    def param(name):
        """The module parameter's value, None when it does not exist."""
        try:
            with open(os.path.join(PARAMS, name)) as f:
                return f.read().strip()
        except OSError:
            return None

    @staticmethod
    def set_param(name, value):
        """Sets a module parameter at run time; Failed when it cannot."""
        try:
            with open(os.path.join(PARAMS, name), "w") as f:
                f.write(str(value))
        except OSError as e:
            raise Failed("cannot set the module parameter %s to %s: %s"
                         % (name, value, e))

    def cmd(self, *args, timeout=60):
        return run(self.cli, *args, timeout=timeout)

    def status(self):
        """`xdp-flow -j status`, {} when it fails (xf_status_get in
        offload_lib.sh)."""
        return run_json(self.cli, "-j", "status", timeout=20) or {}

    def dev(self, dev):
        """The device's entry in the status, None when not enabled."""
        for d in self.status().get("devices", []):
            if d.get("dev") == dev:
                return d
        return None

    def dev_state(self, dev):
        """idle, attaching, attached, error, or "none" (not enabled;
        xf_dev_state in offload_lib.sh)."""
        return (self.dev(dev) or {}).get("state", "none")

    def dev_rules(self, dev):
        return (self.dev(dev) or {}).get("rule_count")

    def wait_helper(self, timeout=20):
        """Until the helper runs (xf_wait_helper in
        selftests/guest/lib.sh)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.status().get("helper_state") == "running":
                return True
            time.sleep(0.1)
        return False

    def wait_new_helper(self, old, timeout):
        """Until a helper other than pid old runs; its pid, or None
        (wait_new_helper in offload_lib.sh)."""
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
        is attached to it, and that is success too (wait_dev_attached in
        offload_lib.sh)."""
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
        first offloaded rule (xf_enable_default in offload_lib.sh, with a
        hook)."""
        must(self.cli, "enable", "dev", dev, "hook", hook,
             what="xdp-flow enable dev %s hook %s" % (dev, hook))
        self.wait_attached(dev)
        if clsact:
            must("tc", "qdisc", "add", "dev", dev, "clsact")

    def disable(self, *devs):
        if self.loaded():
            for d in devs:
                run(self.cli, "disable", "dev", d)
