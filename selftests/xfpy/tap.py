# SPDX-License-Identifier: GPL-2.0
"""A test's result lines, as the shell tests print them (log_test and
log_skip in selftests/lib.sh) and selftests/run.sh counts them:

    ok - <name>[: <what was shown>]
    not ok - <name> # <why>
    ok - <name> # SKIP <why>
"""

import sys


class Tap:
    """The lines of one script, and how many of each it printed."""

    def __init__(self):
        self.ok = 0
        self.failed = 0
        self.skipped = 0

    def line(self, name, why, ok_msg=""):
        """not ok with why when there is one, else ok."""
        if why:
            self.failed += 1
            print("not ok - %s # %s" % (name, why))
        else:
            self.ok += 1
            print("ok - %s%s" % (name, ": " + ok_msg if ok_msg else ""))
        sys.stdout.flush()

    def skip(self, name, why):
        self.skipped += 1
        print("ok - %s # SKIP %s" % (name, why))
        sys.stdout.flush()
