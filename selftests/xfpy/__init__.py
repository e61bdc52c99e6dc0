# SPDX-License-Identifier: GPL-2.0
"""The Python harness of the tests and the benchmarks: one library.

The Python tests (selftests/diff/, selftests/guest/impostor.py,
selftests/host/test_oracle.py) and the guest half of the benchmark
(bench/guest_bench.py, bench/guest/) drive the system through this
package.
The shell tests have their own libraries (selftests/lib.sh,
selftests/guest/lib.sh, offload_lib.sh, ovs_lib.sh, flowtable_lib.sh);
where a function here does what one of them does, its docstring names
that shell function, so that a change of one is made in the other too.

  proc      running commands: run(), must(), ok(), run_json(), Failed
  net       devices, namespaces and the stack's counters: ip -batch,
            veth pairs, setns(), IPv6 off, sysfs and procfs counters
  tc        tc -batch, a rule's JSON, in_hw and counters (RuleStats)
  xdpflow   the module, its helper and the xdp-flow CLI (XdpFlow,
            settle_rules()), the kernel log's warnings
  ovs       Open vSwitch in a directory of its own (Ovs)
  traffic   generators (xdp_gen, pktgen) and iperf3
  tap       a test's "ok - " and "not ok - " lines
  uapi      the numbers of include/uapi/linux/xdp_flow.h

A script finds the package through its own path: the scripts are
started by path (`python3 .../difftest.py`), so sys.path[0] is their own
folder, and each adds selftests/ to sys.path before it imports xfpy
(bench/guest/__init__.py does it for the benchmark). The package imports
none of its modules by itself: a script pays only for what it uses
(every file read costs in an emulated guest).
"""

import os

# The repository: XF_ROOT (selftests/guest/lib.sh exports it), else where
# this package lies.
ROOT = os.environ.get("XF_ROOT") or os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.realpath(__file__))))
