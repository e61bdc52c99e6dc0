# SPDX-License-Identifier: GPL-2.0
"""The guest half of the benchmark (bench/guest_bench.py runs it): one
module per group of sections, common.py for what they share."""
