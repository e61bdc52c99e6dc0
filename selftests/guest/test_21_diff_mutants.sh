#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The differential test catches a wrong datapath. umh/Makefile's mutants
# (make -C umh mutants; the faults are listed in umh/xdp_flow.bpf.c) are
# builds of the helper whose XDP program is wrong in one way each: a false
# match, a never-match, a priority inversion, a wrong counter, a wrong
# rewrite byte, a VLAN TPID confusion. The good build runs first, on the
# cases every mutant may run (test_20's vocabulary, this seed), with no
# difference as the control (test_20's own run is that control when it
# ran those cases in this boot); then each mutant in turn, until its first
# difference or software hit, which it must have within those cases.
#
# Env: XF_DIFF_SEED (default 1), XF_MUTANT_CASES (default 200),
#      XF_MUTANTS (default: all built)

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

CASES=${XF_MUTANT_CASES:-200}
LANES=${XF_DIFF_LANES:-8}
SEED=${XF_DIFF_SEED:-1}
# Shared out between the kernels of a run (xf_share_pick), so that each
# mutant is caught once per `make test` (a mutant is a datapath fault, not
# a kernel's); a kernel alone runs all six.
MUTANTS=${XF_MUTANTS:-$(xf_share_pick mask_dst never_tcp prio_last \
				     count_path vlan_tci vlan_tpid)}

trap 'diff_cleanup "$LANES"' EXIT

RET=0
missing=
for m in $MUTANTS; do
	[ -x "$XF_ROOT/umh/xdp_flow_umh_mutant_$m" ] || missing="$missing $m"
done
[ -z "$missing" ]
check_err $? "mutant builds missing (make -C umh mutants):$missing"
log_setup "setup: the mutant builds exist: $MUTANTS"
[ $RET -eq 0 ] || exit 1

diff_setup "$LANES" "module with the good helper (the control)" || exit 1
hook=$(xf_dev_hook xda0)

RET=0
read -r c_seed c_hook c_cases 2>/dev/null <"$DIFF_CONTROL"
if [ "${c_seed:-}" = "$SEED" ] && [ "${c_hook:-}" = "$hook" ] &&
   [ "${c_cases:-0}" -ge "$CASES" ]; then
	# test_20 ran the good build on these cases in this boot.
	log_test "control: test_20 ran the good build on the first $c_cases cases (seed $SEED, hook $hook) with no difference"
else
	diff_run "$hook" --seed "$SEED" --cases "$CASES"
	check_err $? "the control run failed: $DIFF_LAST"
	log_test "control: the good build, $CASES cases (seed $SEED, hook $XF_HOOK: $hook): $DIFF_LAST"
fi

caught=0
for m in $MUTANTS; do
	RET=0
	diff_reload "mutant $m" umh_path="$XF_ROOT/umh/xdp_flow_umh_mutant_$m"
	check_err $? "cannot load the module with mutant $m"
	if [ $RET -eq 0 ]; then
		diff_run "$hook" --seed "$SEED" --cases "$CASES" --stop --show 1
		[[ "$DIFF_LAST" =~ ^cases\ [0-9]+,\ differences\ [1-9] ]]
		check_err $? "mutant $m was not caught in $CASES cases: $DIFF_LAST"
	fi
	[ $RET -eq 0 ] && caught=$((caught + 1))
	log_test "mutant $m caught (hook $hook): ${DIFF_LAST%% (seed*}"
done

RET=0
n=$(echo $MUTANTS | wc -w)
[ "$caught" -eq "$n" ]
check_err $? "only $caught of $n mutants caught"
log_test "mutants caught: $caught/$n (hook $XF_HOOK: $hook)"

exit $EXIT_STATUS
