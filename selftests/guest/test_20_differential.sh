#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The differential test (selftests/diff/difftest.py): seeded rule sets and
# frames, offload on (xdp_flow enabled on the A device of each lane) against
# offload off (the B device, TC alone), in this kernel. Every frame must end
# up in the same place with the same bytes, and every rule's counters must
# be equal after each phase of each round (deleted rules included).
#
# Equal outcomes alone would pass a datapath that does nothing (TC runs in
# software whatever XDP misses), so the run also fails when
#  - fewer than XF_DIFF_MIN_HW percent of the final rules are in_hw, or
#    fewer than XF_DIFF_MIN_XDP percent of the rules' hits were counted by
#    the datapath (the hardware counters), or
#  - a drop or redirect rule that is in_hw and not shadowed by a rule still
#    in software counted a plain frame (one the datapath parses) in
#    software.
# The floors are what the vocabulary reaches with each hook, less a margin.
#
# Env: XF_DIFF_CASES (default 200), XF_DIFF_FIRST (the first case's
#      number, default 0), XF_DIFF_SEED (default 1),
#      XF_DIFF_LANES (default 8), XF_DIFF_MIN_HW, XF_DIFF_MIN_XDP

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

CASES=${XF_DIFF_CASES:-200}
FIRST=${XF_DIFF_FIRST:-0}
SEED=${XF_DIFF_SEED:-1}
LANES=${XF_DIFF_LANES:-8}

trap 'diff_cleanup "$LANES"' EXIT

diff_setup "$LANES" "module, helper" || exit 1
hook=$(xf_dev_hook xda0)

RET=0
diff_run "$hook" --seed "$SEED" --first "$FIRST" --cases "$CASES" --progress 50
rc=$?
check_err $rc "the differential run failed: $DIFF_LAST"
# test_21 takes this run as the control of its mutants (same build, seed,
# vocabulary and hook) when it covers their cases.
[ $rc -eq 0 ] && echo "$SEED $hook $CASES $FIRST" >"$DIFF_CONTROL"
log_test "$CASES cases from case $FIRST (seed $SEED, hook $XF_HOOK: $hook): $DIFF_LAST"

# The sinks carry addresses the frames use (difftest.py), so on the tc hook
# a redirect of a frame to its sink's address enters the sink with
# bpf_redirect_peer(), which its target never transmits; B's targets
# transmit every redirected frame. A short run (XF_DIFF_CASES) may have
# no such frame: then there is nothing to count (test_35 tests the path).
own=$(sed -n "s/^# frames B delivered to one sink, of that sink's address: \([0-9]*\)$/\1/p" <<<"$DIFF_OUT")
if [ "$hook" = tc ] && [ "${own:-0}" -eq 0 ]; then
	echo "# no frame of the $CASES cases went to one sink only, with its address: no peer path to count"
elif [ "$hook" = tc ]; then
	RET=0
	tx_sum() { cat /sys/class/net/xo"$1"*/statistics/tx_packets | paste -sd+ | bc; }
	ta=$(tx_sum a) tb=$(tx_sum b)
	[ "$ta" -lt "$tb" ]
	check_err $? "A's targets transmitted $ta frames, B's $tb: no redirect took the peer path"
	log_test "with the same outcomes, A's redirect targets transmitted $ta frames, B's $tb (of $own frames to a sink's own address, the rest entered the sinks directly)"
fi

exit $EXIT_STATUS
