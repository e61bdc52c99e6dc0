# SPDX-License-Identifier: GPL-2.0
"""The guest half of the benchmark (bench/guest_bench.py runs it): one
module per group of sections, common.py for what they share of their
own. The harness they drive the system with is the tests' own,
selftests/xfpy: importing this package puts selftests/ on sys.path."""

import os
import sys

sys.path.append(os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.realpath(__file__)))), "selftests"))
