#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The differential test (selftests/diff/difftest.py): seeded rule sets and
# frames, offload on (xdp_flow enabled on the A device of each lane) against
# offload off (the B device, TC alone), in this kernel. Every frame must end
# up in the same place with the same bytes, and every rule's counters must
# be equal.
#
# Env: XF_DIFF_CASES (default 2000), XF_DIFF_SEED (default 1),
#      XF_DIFF_LANES (default 8)

source "$XF_ROOT/selftests/lib.sh"
source "$XF_ROOT/selftests/guest/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

CASES=${XF_DIFF_CASES:-2000}
SEED=${XF_DIFF_SEED:-1}
LANES=${XF_DIFF_LANES:-8}
DIFF="python3 $XF_ROOT/selftests/diff/difftest.py"

trap 'diff_cleanup "$LANES"' EXIT

diff_setup "$LANES" "module, helper" || exit 1

RET=0
out=$($DIFF run --lanes "$LANES" --seed "$SEED" --cases "$CASES" \
	--progress 50 2>&1)
rc=$?
echo "$out" | sed 's/^/# /; s/^# # /# /'
last=$(echo "$out" | tail -n 1)
[ $rc -eq 0 ] && [[ "$last" =~ ^cases\ $CASES,\ differences\ 0 ]]
check_err $? "the differential run failed: $last"
log_test "$CASES cases (seed $SEED): offload on and off agree on every frame and counter"

exit $EXIT_STATUS
