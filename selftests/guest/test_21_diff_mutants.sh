#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The differential test catches a wrong datapath. umh/Makefile's mutants
# (make -C umh mutants; the faults are listed in umh/xdp_flow.bpf.c) are
# builds of the helper whose XDP program is wrong in one way each: a false
# match, a never-match, a priority inversion, a wrong counter, a wrong
# rewrite byte, a VLAN TPID confusion, mirrored copies without the rule's
# VLAN actions (the tc hook's: the XDP hook leaves mirrors to TC, so that
# mutant is skipped there). Each mutant runs in turn (test_20's
# vocabulary, this seed) until its first difference or software hit, which
# it must have within $XF_MUTANT_CASES cases. The control is the good
# build on the same cases, up to the last one a mutant needed, with no
# difference: test_20's own run in this boot covers its first cases, and
# the good build runs only the cases beyond them.
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
ALL_MUTANTS="mask_dst never_tcp prio_last count_path vlan_tci vlan_tpid mirror_vlan"
# shellcheck disable=SC2086  # the names
MUTANTS=${XF_MUTANTS:-$(xf_share_pick $ALL_MUTANTS)}

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

# The mutant builds another kernel of the run catches load here too (this
# kernel's own are loaded below): a mutant's datapath is the real one but
# for one fault, and one this kernel's verifier refuses says that the real
# one is near a limit here (6.1's refused mask_dst's combined stack once).
# The helper in its test driver mode loads both hooks' programs
# (--load-all), answers the shutdown, exits.
others=
for m in $ALL_MUTANTS; do
	[[ " $MUTANTS " == *" $m "* ]] || others+=" $m"
done
if [ -n "$others" ]; then
	RET=0
	bad=
	for m in $others; do
		out=$(echo shutdown | timeout $((120 * XF_PACE)) \
			"$XF_ROOT/umh/xdp_flow_umh_mutant_$m" --driver --no-pin \
			--load-all --log=stderr --max-rules=2048 --max-flows=1024 2>&1)
		if [ $? -ne 0 ] || ! grep -qx ok <<<"$out"; then
			bad+=" $m"
			echo "$out" | tail -n 5 | sed "s/^/# $m: /"
		else
			echo "$out" | grep "verifier processed" | sed "s/^/# $m: /"
		fi
	done
	[ -z "$bad" ]
	check_err $? "mutant builds this kernel's verifier refuses:$bad"
	log_test "the mutant builds the other kernels run load here too:$others"
fi

diff_setup "$LANES" "module with the good helper" || exit 1
hook=$(xf_dev_hook xda0)

caught=0
needed=0
for m in $MUTANTS; do
	RET=0
	if [ "$m" = mirror_vlan ] && [ "$hook" != tc ]; then
		log_skip "mutant $m caught" "the $hook hook leaves mirrors to TC"
		continue
	fi
	diff_reload "mutant $m" umh_path="$XF_ROOT/umh/xdp_flow_umh_mutant_$m"
	check_err $? "cannot load the module with mutant $m"
	if [ $RET -eq 0 ]; then
		diff_run "$hook" --seed "$SEED" --cases "$CASES" --stop --show 1
		[[ "$DIFF_LAST" =~ ^cases\ [0-9]+,\ differences\ [1-9] ]]
		check_err $? "mutant $m was not caught in $CASES cases: $DIFF_LAST"
	fi
	if [ $RET -eq 0 ]; then
		caught=$((caught + 1))
		k=${DIFF_LAST#cases }
		k=${k%%,*}
		[ "$k" -gt "$needed" ] && needed=$k
	fi
	log_test "mutant $m caught (hook $hook): ${DIFF_LAST%% (seed*}"
done

# The control: no difference with the good build on cases 0 to
# $needed - 1, the first $covered of which test_20 ran in this boot.
RET=0
covered=0
read -r c_seed c_hook c_cases c_first 2>/dev/null <"$DIFF_CONTROL"
if [ "${c_seed:-}" = "$SEED" ] && [ "${c_hook:-}" = "$hook" ] &&
   [ "${c_first:-0}" = 0 ]; then
	covered=${c_cases:-0}
fi
if [ "$covered" -ge "$needed" ]; then
	log_test "control: the mutants needed $needed cases; test_20 ran the good build on the first $covered (seed $SEED, hook $hook) with no difference"
else
	diff_reload "the good build (the control)"
	check_err $? "cannot load the module with the good build"
	if [ $RET -eq 0 ]; then
		# no floors on a few cases: the control is about differences
		diff_run "$hook" --seed "$SEED" --first "$covered" \
			--cases $((needed - covered)) \
			--min-rules-hw 0 --min-xdp-packets 0
		check_err $? "the control run failed: $DIFF_LAST"
	fi
	log_test "control: the mutants needed $needed cases; the good build on cases $covered to $((needed - 1)) (seed $SEED, hook $XF_HOOK: $hook), the ones before by test_20: $DIFF_LAST"
fi

RET=0
n=$(echo $MUTANTS | wc -w)
[ "$hook" = tc ] || n=$(echo $MUTANTS | tr ' ' '\n' | grep -cvx mirror_vlan)
[ "$caught" -eq "$n" ]
check_err $? "only $caught of $n mutants caught"
log_test "mutants caught: $caught/$n (hook $XF_HOOK: $hook)"

exit $EXIT_STATUS
