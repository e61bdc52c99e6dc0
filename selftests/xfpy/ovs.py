# SPDX-License-Identifier: GPL-2.0
"""Open vSwitch: Debian's ovsdb-server and ovs-vswitchd, with their
database, sockets and logs in a directory of their own (nothing of a
system installation is used or touched), as selftests/guest/ovs_lib.sh
runs them for the shell tests."""

import os
import re
import shutil
import signal
import time

from xfpy.proc import must, ok, pid_alive, pid_kill, run


class Ovs:
    """The daemons of one test or benchmark section; OVS_DIR as in
    ovs_lib.sh."""

    DIR = os.environ.get("OVS_DIR", "/tmp/xf-ovs")
    SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"

    def __init__(self):
        for k in ("OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR",
                  "OVS_SYSCONFDIR"):
            os.environ[k] = self.DIR
        self.running = False

    def unavailable(self):
        """Why OVS cannot run here, None when it can (ovs_available)."""
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
        hw-offload on or off (read at start-up only; ovs_start)."""
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
        """Both daemons gone, the kernel datapath deleted (ovs_stop)."""
        pid = self._pid("ovs-vswitchd")
        if pid:
            if not ok("ovs-appctl", "-t", "ovs-vswitchd", "exit",
                      timeout=10):
                pid_kill(pid, signal.SIGTERM)
            end = time.monotonic() + 10
            while pid_alive(pid) and time.monotonic() < end:
                time.sleep(0.1)
            if pid_alive(pid):
                pid_kill(pid, signal.SIGKILL)
        pid = self._pid("ovsdb-server")
        if pid:
            pid_kill(pid, signal.SIGTERM)
        run("ovs-dpctl", "del-dp", "ovs-system")
        self.running = False

    @staticmethod
    def dp_flows(kind=None):
        """The datapath's flows, one dict each ("packets" of the flow):
        OVS 3.1 has no JSON output for dpctl/dump-flows, whose lines are
        "<match>, packets:N, ..., actions:<actions>" (ovs_flows)."""
        p = run("ovs-appctl", "dpctl/dump-flows",
                *(["type=" + kind] if kind else []))
        flows = []
        for line in p.stdout.splitlines():
            if "actions:" in line:
                m = re.search(r"packets:(\d+)", line)
                flows.append({"packets": int(m.group(1)) if m else 0})
        return flows
