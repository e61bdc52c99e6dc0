# SPDX-License-Identifier: GPL-2.0
"""The benchmark's statistics, shared by the guest harness and report.py.

Every figure of a run is a median over repetitions, a best run, the range
of the runs or a ratio of two such figures; they are computed here, once,
so that the CSV the guest writes and the tables report.py prints agree.
"""

import statistics


def median(values):
    """The median of the numbers (the mean of the middle two for an even
    count), or None when there are none."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def best(values):
    """The best run of a rate: the highest value (a busy host only ever
    slows a run down). None when there are none."""
    values = [v for v in values if v is not None]
    return max(values) if values else None


def value_range(values):
    """(lowest, highest) of the numbers, or None when there are none."""
    values = [v for v in values if v is not None]
    return (min(values), max(values)) if values else None


def ratio(a, b):
    """a / b, or None when either is missing or b is zero."""
    if a is None or not b:
        return None
    return a / b


def fmt(v):
    """A figure for a table: three significant digits or so, "-" for
    none."""
    if v is None:
        return "-"
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.2f" % v


def fmt_range(values):
    """"lowest-highest" of the numbers, "-" for none."""
    r = value_range(values)
    return "-" if r is None else "%s-%s" % (fmt(r[0]), fmt(r[1]))
