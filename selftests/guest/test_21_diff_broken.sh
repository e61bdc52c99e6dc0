#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The differential test catches a wrong datapath: with the helper's test
# build whose XDP program masks IPv4 destinations one bit short
# (umh/xdp_flow_umh_broken, make -C umh broken), a short differential run
# must report differences, and print a reproduction of them.
#
# Env: XF_DIFF_SEED (default 1)

source "$XF_ROOT/selftests/lib.sh"
source "$XF_ROOT/selftests/guest/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

CASES=160
LANES=8
SEED=${XF_DIFF_SEED:-1}
DIFF="python3 $XF_ROOT/selftests/diff/difftest.py"
BROKEN=$XF_ROOT/umh/xdp_flow_umh_broken

cleanup()
{
	$DIFF cleanup --lanes "$LANES" >/dev/null 2>&1
	xf_unload >/dev/null 2>&1
}
trap cleanup EXIT

RET=0
[ -x "$BROKEN" ]
check_err $? "no broken test build at $BROKEN (make -C umh broken)"
if [ $RET -eq 0 ]; then
	XF_UMH=$BROKEN xf_load
	check_err $? "xf_load with the broken helper failed"
fi
if [ $RET -eq 0 ]; then
	xf_wait_helper 20
	check_err $? "the helper did not come up"
fi
if [ $RET -eq 0 ]; then
	$DIFF setup --lanes "$LANES"
	check_err $? "difftest.py setup failed"
fi
for ((i = 0; i < LANES && RET == 0; i++)); do
	"$XF_CLI" enable dev "xda$i" && wait_dev_attached "xda$i" 20
	check_err $? "cannot enable xda$i"
done
log_test "setup: module with the broken helper, $LANES lanes"
[ $RET -eq 0 ] || exit 1

RET=0
out=$($DIFF run --lanes "$LANES" --seed "$SEED" --cases $CASES --show 1 2>&1)
rc=$?
echo "$out" | sed 's/^/# /; s/^# # /# /'
last=$(echo "$out" | tail -n 1)
[ $rc -eq 1 ] && [[ "$last" =~ ^cases\ $CASES,\ differences\ [1-9] ]]
check_err $? "the differential test did not notice the broken datapath: $last"
echo "$out" | grep -q "DIFFERENCE in case .* reproduce with" &&
	echo "$out" | grep -q "tc filter add dev DEV"
check_err $? "no reproduction printed"
log_test "a datapath that masks IPv4 destinations one bit short is caught ($last)"

exit $EXIT_STATUS
