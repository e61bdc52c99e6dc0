#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Full tables change speed, never outcome, checked differentially: the
# module is loaded with XDP tables far too small for the differential
# test's rules (max_masks=3, max_flows=12), so that most rules wait for
# room behind their device's shield, rules are deleted and added while
# others wait, and waiting rules go in when room comes. Every frame must
# still get what TC gives it, and every counter what TC counts
# (difftest.py --full-tables: a rule that waits shadows later prios in
# every chain, so their software hits are expected), and XDP must still
# handle some of the traffic (low floors of rules in_hw and of hits
# counted by XDP).
#
# Env: XF_FULL_CASES (default 30), XF_DIFF_SEED (default 1),
#      XF_FULL_LANES (default 4), XF_FULL_MIN_HW (5), XF_FULL_MIN_XDP (3)

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

# The same 30 on every kernel, the floors below tuned on them. A share of
# them per kernel is too small a sample for a floor: since the difftest
# vocabulary has mirrors (rules with several outputs, which compete for
# the tables at the tc hook), the first 20 give 2.6% of hits by XDP (5 of
# 196), all 30 give 8.0%.
CASES=${XF_FULL_CASES:-30}
SEED=${XF_DIFF_SEED:-1}
LANES=${XF_FULL_LANES:-4}

trap 'diff_cleanup "$LANES"' EXIT

diff_setup "$LANES" "module with max_masks=3 max_flows=12" \
	max_masks=3 max_flows=12 || exit 1
hook=$(xf_dev_hook xda0)

RET=0
mark=$(dmesg_mark "test_31")
# Low floors: few rules fit, by design (seed 1's 30 cases give 10.4% of
# rules in_hw and 8.0% of hits counted by XDP on 6.12 and 7.3, hook tc;
# 12.8% and 8.7% on 6.1, hook xdp);
# XDP must still do some of the work.
XF_DIFF_MIN_HW=${XF_FULL_MIN_HW:-5} XF_DIFF_MIN_XDP=${XF_FULL_MIN_XDP:-3} \
	diff_run "$hook" --seed "$SEED" \
	--cases "$CASES" --full-tables
check_err $? "the differential run failed: $DIFF_LAST"
log_test "$CASES cases with tables for 3 masks and 12 flow entries (hook $XF_HOOK: $hook): $DIFF_LAST"

RET=0
dmesg_since "$mark" | grep -q "rules wait for room in the XDP tables"
check_err $? "no rule ever waited for room: the tables were not full"
bad=$(dmesg_bad_since "$mark")
[ -z "$bad" ]
check_err $? "kernel log: $bad"
log_test "rules waited for room; kernel log clean"

exit $EXIT_STATUS
