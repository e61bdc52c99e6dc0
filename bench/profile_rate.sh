#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A profile of `tc -b` adding 10,000 flower rules to a device, with offload
# enabled (mode xf) and without (mode sw), in the prio orders asked for
# (perf record -a -g, every CPU, with the scheduler's switch and wake-up
# events). Run it in a guest:
#
#   XF_RESULTS=/tmp/prof bash selftests/vm/run-guest.sh 6.12 \
#           bash bench/profile_rate.sh
#
# It writes into $XF_RESULTS, for each mode and order:
#   perf.<mode>.<order>.txt      the share of each command, the top
#                                symbols of all, then those of tc alone
#   perf.<mode>.<order>.tc       tc's call graph
#   perf.<mode>.<order>.switch   how often tc left the CPU, how (R:
#                                preempted; D, S: it slept), to whom, from
#                                which call chain
#   perf.<mode>.<order>.wakeups  who woke the helper, kworkers and RCU's
#                                threads, from which call chain
# XF_PROFILE_MODES ("xf sw"), XF_PROFILE_ORDERS ("random asc"; also desc
# and one), XF_PROFILE_RULES (10000) choose the runs; XF_PROFILE_KEEP=1
# keeps perf.<mode>.<order>.data. A diagnostic, not a benchmark: perf
# slows the run down, so its times are not the rate section's.
XF_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$XF_ROOT" || exit 1
export PATH=$XF_ROOT/tools/xdp-flow:$PATH
source selftests/lib.sh
source selftests/guest/lib.sh
source selftests/guest/offload_lib.sh
require_cmd perf
OUT=${XF_RESULTS:-/tmp}
N=${XF_PROFILE_RULES:-10000}
MODES=${XF_PROFILE_MODES:-xf sw}
ORDERS=${XF_PROFILE_ORDERS:-random asc}

xf_load || { echo "cannot load the module" >&2; exit 1; }
xf_wait_helper 30
ip link add pa type veth peer name pb || exit 1
ip link set pa up
ip link set pb up
for mode in $MODES; do
for order in $ORDERS; do
	if [ "$mode" = xf ]; then
		xdp-flow enable dev pa || exit 1
	fi
	tc qdisc add dev pa clsact || exit 1
	case $order in
	asc) seq 1 "$N" ;;
	desc) seq "$N" -1 1 ;;
	one) yes 10 | head -n "$N" ;;
	random) seq 1 "$N" | shuf --random-source=<(yes 42) ;;
	esac | awk '{ i = NR - 1; printf "filter add dev pa ingress pref %d protocol ip flower dst_ip 10.%d.%d.%d action drop\n", $1, 100 + int(i / 65536), int(i / 256) % 256, i % 256 }' >"$OUT/rules"
	data=$OUT/perf.$mode.$order.data
	t0=$EPOCHREALTIME
	perf record -a -g -e cpu-clock/freq=499/ -e sched:sched_switch \
		-e sched:sched_wakeup \
		-o "$data" -- \
		tc -b "$OUT/rules" >/dev/null 2>&1
	t1=$EPOCHREALTIME
	echo "$mode $order: tc -b took $(echo "$t1 - $t0" | bc) s under perf"
	[ "$mode" = xf ] && xdp-flow wait timeout 600
	{
		perf report -i "$data" --no-children --sort comm --stdio \
			-g none -n 2>/dev/null | grep -v '^#' | grep -v '^$' |
			head -15
		perf report -i "$data" --no-children --sort comm,sym --stdio \
			-g none -n 2>/dev/null | grep -v '^#' | grep -v '^$' |
			head -60
		echo "== tc alone"
		perf report -i "$data" --no-children --comms tc --sort sym \
			--stdio -g none -n 2>/dev/null | grep -v '^#' |
			grep -v '^$' | head -80
	} >"$OUT/perf.$mode.$order.txt"
	perf report -i "$data" --no-children --comms tc --sort sym --stdio \
		-G --percent-limit 2 2>/dev/null | grep -v '^#' |
		grep -v '^$' | head -400 >"$OUT/perf.$mode.$order.tc"
	# each way tc left the CPU (prev_state R: preempted, else it slept),
	# to whom, with the call chain that led there, and how often
	perf script -i "$data" --comms tc -F event,trace,ip,sym 2>/dev/null |
		awk 'function flush() { if (sw) c[st stack]++; sw = 0 }
		/^[ \t]+[0-9a-f]+ / { if (!sw) next
			f = $2
			if (f ~ /^(__schedule|schedule|schedule_timeout|schedule_preempt_disabled|preempt_schedule.*|__cond_resched|__traceiter.*|\[unknown\])$/) next
			if (n++ < 12) stack = stack " < " f; next }
		/sched:sched_switch:/ { flush(); sw = 1; n = 0; stack = ""
			match($0, /prev_state=[^ ]+/)
			st = substr($0, RSTART + 11, RLENGTH - 11)
			match($0, /next_comm=[^ ]+/)
			st = st " to " substr($0, RSTART + 10, RLENGTH - 10)
			next }
		/: *$/ { flush() }
		END { flush(); for (k in c) printf "%6d %s\n", c[k], k }' |
		sort -rn | head -40 >"$OUT/perf.$mode.$order.switch"
	# who woke the tasks that took tc's CPU, from where, how often
	perf script -i "$data" -F comm,event,trace,ip,sym 2>/dev/null |
		awk 'function flush() { if (w) c[who stack]++; w = 0 }
		/^[ \t]+[0-9a-f]+ / { if (!w) next
			if (n++ < 10 && $2 != "[unknown]" && $2 !~ /^(__traceiter.*|ttwu_do_activate|try_to_wake_up|wake_up_process|__wake_up_common|__wake_up.*|autoremove_wake_function)$/)
				stack = stack " < " $2
			next }
		/sched:sched_wakeup:/ { flush()
			match($0, /comm=[^ ]+/)
			wakee = substr($0, RSTART + 5, RLENGTH - 5)
			if (wakee !~ /^(rcu_|xdp_flow_umh|kworker|ksoftirqd)/) next
			w = 1; n = 0; stack = ""
			who = wakee " by " $1; next }
		/: *$/ || /sched:/ { flush() }
		END { flush(); for (k in c) printf "%6d %s\n", c[k], k }' |
		sort -rn | head -40 >"$OUT/perf.$mode.$order.wakeups"
	[ -n "${XF_PROFILE_KEEP:-}" ] || rm -f "$data"
	tc qdisc del dev pa clsact
	[ "$mode" = xf ] && xdp-flow disable dev pa
	sleep 2
done
done
ip link del pa
xf_unload
