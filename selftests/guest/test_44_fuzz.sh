#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module's generic netlink family under random and malformed messages
# (selftests/guest/fuzz_genl.c, built by `make fuzz` / selftests/vm/build.sh):
# every command from 0 to past XDP_FLOW_CMD_MAX (the helper's HELLO,
# REPLY, RULE_ADD... too), attributes of every id and out-of-range ids, of
# wrong and exact lengths, nested garbage, random flags (NLM_F_DUMP on do
# operations and the other way round), truncated headers, zero-length and
# huge sends, dumps abandoned half-read, and some of it to the helper's own
# netlink ports. The messages carry the ifindexes of lo and of a device
# with an offloaded rule (xff0), so that DEV_ENABLE and DEV_DISABLE act on
# real devices, while xfv0 carries offloaded rules the fuzzer never names.
#
# Afterwards: the fuzzer saw no hang, and every message that asked for an
# ack got an answer (or a refusal); the family still answers; the helper
# is the one from before (same pid, no restart: nothing the fuzzer sent
# may reach it or kill it); xfv0's drop and redirect rules are still in_hw
# and act in the datapath (hardware counters); the kernel log since the
# start has no BUG, WARNING, KASAN, lockdep or kmemleak report (kmemleak
# scanned when the kernel has it).
#
# Env: XF_FUZZ_MESSAGES  messages to send (default 30000: about 2 s in an
#                        emulated guest on 6.12, which took 1000000 in
#                        64 s, 15700/s; shared between the kernels of a
#                        run, xf_share)
#      XF_FUZZ_SEED      the fuzzer's seed (default random; always logged,
#                        so a failure can be run again with the same one)
#
# On the patched debug kernel (KASAN, lockdep, kmemleak), the issue's full
# run of a million messages:
#   XF_SERIES=patched XF_FUZZ_MESSAGES=1000000 XF_FILTER=test_44_ make test
# (at 6.12's rate about a minute of fuzzing; XF_PACE=10 allows for the
# debug kernel being ten times slower).
#
# Then, with XF_FUZZ_REPLIES=1 (not by default: it adds about a minute
# a kernel to a run near its time budget), the reply channel: the module
# loaded again with umh_path= naming umh/xdp_flow_umh_mangle (make -C umh mangle), a helper that damages
# about one reply in four while /tmp/xdp_flow_mangle exists (random
# bytes, cut short, wrong SEQ, wrong ROOM/STATS/MSG lengths, wrong ERROR,
# wrong nlmsg_len, twice, not at all), and rule churn on xfv0 meanwhile.
# Once the file is gone: a helper runs (restarted if it had to be), the
# rules are in_hw and act, and the kernel log is clean.
#
# That part found that a damaged answer to a RULE_ADD (a wrong ERROR, or
# a message the module cannot parse) counted as the helper's refusal: the
# rule stayed in software for good, although the restarted helper had it.
# Since, a malformed reply restarts the helper, and what waited fails as
# if it had gone, so that the replay puts it back (reply.c and
# requests.c). A reply that is well formed but carries another request's
# SEQ cannot be told from a real one; the helper is the module's own
# program.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

FUZZ=$XF_ROOT/selftests/guest/fuzz_genl
MESSAGES=${XF_FUZZ_MESSAGES:-$(xf_share 30000)}
SEED=${XF_FUZZ_SEED:-$(((RANDOM << 30) | (RANDOM << 15) | RANDOM))}
N=50
# What kernel_bad does not know: lockdep's and kmemleak's reports.
BAD_MORE_RE='unreferenced object|inconsistent lock state|suspicious RCU usage|circular locking|lock held when returning|possible recursive locking|non-static key'

if [ ! -x "$FUZZ" ]; then
	log_skip "$(basename "$0")" "no $FUZZ (make fuzz, or selftests/vm/build.sh)"
	exit $ksft_skip
fi

TMP=$(mktemp -d /tmp/xf_fuzz.XXXXXX)

cleanup()
{
	"$XF_CLI" disable dev lo >/dev/null 2>&1
	ip link del xff0 2>/dev/null
	rm -rf "$TMP" /tmp/xdp_flow_mangle
	xf_test_cleanup
}
trap cleanup EXIT

KMEMLEAK=/sys/kernel/debug/kmemleak

# kmemleak_clear: forget what kmemleak suspected before (nothing where the
# kernel has no kmemleak).
kmemleak_clear()
{
	[ -e "$KMEMLEAK" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	[ -w "$KMEMLEAK" ] && echo clear >"$KMEMLEAK" 2>/dev/null
	return 0
}

# kmemleak_ours: have kmemleak scan now, and print the objects it
# suspects whose backtrace passes through xdp_flow or netlink.
kmemleak_ours()
{
	[ -w "$KMEMLEAK" ] || return 0
	echo scan >"$KMEMLEAK" 2>/dev/null
	awk '/^unreferenced object/ { if (ours) printf "%s", obj; obj = ""; ours = 0 }
	     { obj = obj $0 "\n" } /xdp_flow|netlink|genl/ { ours = 1 }
	     END { if (ours) printf "%s", obj }' "$KMEMLEAK" 2>/dev/null
}

# summary <field>: a number of the fuzzer's summary line.
summary()
{
	sed -n "s/^fuzz_genl: seed .* $1 \([0-9.]*\) .*/\1/p" "$TMP/fuzz.out" | tail -n 1
}

xf_test_setup || exit 1

RET=0
xf_enable_default xfv0
check_err $? "xdp-flow enable dev xfv0 failed or xfv0 never got attached"
tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop &&
	tc filter add dev xfv0 ingress pref 2 protocol ip flower dst_ip 10.0.3.1 \
		action mirred egress redirect dev xfv1
check_err $? "tc filter add on xfv0 failed"
# The device the fuzzer enables and disables, with an offloaded rule.
ip link add xff0 type veth peer name xff1 && ip link set dev xff0 up &&
	ip link set dev xff1 up
check_err $? "cannot make the veth pair xff0/xff1"
xf_enable_default xff0
check_err $? "xdp-flow enable dev xff0 failed"
tc filter add dev xff0 ingress pref 1 protocol ip flower dst_ip 10.9.9.9 action drop
check_err $? "tc filter add on xff0 failed"
for p in 1 2; do
	st=$(tc_hw_state "" xfv0 $p)
	[ "$st" = in_hw ]
	check_err $? "xfv0's rule at pref $p is $st, not in_hw"
done
pid=$(xf_status_get .helper_pid)
restarts=$(xf_status_get .helper_restarts)
[ "$(xf_helper_state)" = running ] && [ "${pid:-0}" -gt 0 ]
check_err $? "no running helper (pid '$pid')"
ports=$(nl_generic_ports "$pid" | sort -u)
log_setup "setup: drop and redirect offloaded on xfv0, a drop on xff0, helper pid $pid (ports $(echo $ports))"
[ $RET -eq 0 ] || exit 1

# ---- the fuzzer ----
RET=0
args=(-n "$MESSAGES" -s "$SEED" -i xff0 -i lo -a $((5000 * XF_PACE)) -t $((60 * XF_PACE)) -v)
for p in $ports; do
	args+=(-p "$p")
done
log_info "fuzz_genl ${args[*]}   (XF_FUZZ_SEED=$SEED XF_FUZZ_MESSAGES=$MESSAGES to repeat)"
kmemleak_clear
mark=$(dmesg_mark "test_44 fuzz seed $SEED")
first_mark=$mark
start=$SECONDS
timeout -k 10 $((600 + MESSAGES / 50 * XF_PACE)) "$FUZZ" "${args[@]}" >"$TMP/fuzz.out" 2>"$TMP/fuzz.err"
rc=$?
took=$((SECONDS - start))
sed 's/^/# /' "$TMP/fuzz.out"
head -n 10 "$TMP/fuzz.err" | sed 's/^/# /'
case $rc in
0) ;;
3) check_err 1 "the fuzzer saw a hang: $(grep HANG "$TMP/fuzz.out")" ;;
124|137) check_err 1 "the fuzzer did not finish within the timeout (a hang)" ;;
*) check_err 1 "the fuzzer failed (status $rc): $(tail -n 2 "$TMP/fuzz.out" | head -n 1)" ;;
esac
sent=$(summary messages)
unanswered=$(summary unanswered)
overruns=$(summary overruns)
must=$(summary must_answer)
secs=$(summary seconds)
rate=$(sed -n 's/^fuzz_genl: seed .* rate \([0-9]*\)\/s .*/\1/p' "$TMP/fuzz.out" | tail -n 1)
[ "${sent:-0}" = "$MESSAGES" ]
check_err $? "the fuzzer sent ${sent:-no} messages, not $MESSAGES"
[ "${unanswered:-x}" = 0 ] && [ "${overruns:-x}" = 0 ]
check_err $? "messages that asked for an answer and got none: ${unanswered:-?} of ${must:-?}; receive overruns ${overruns:-?}"
grep -q ' alive yes;' "$TMP/fuzz.out"
check_err $? "the family did not answer STATUS_GET after the fuzzing"
log_test "fuzz_genl seed $SEED: ${sent:-0} messages in ${secs:-?} s (${rate:-?}/s; $took s in all), ${must:-0} that asked for an ack all answered, no hang, the family still answers"

RET=0
st=$(xf_helper_state)
now=$(xf_status_get .helper_pid)
nr=$(xf_status_get .helper_restarts)
[ "$st" = running ] && [ "$now" = "$pid" ] && [ "$nr" = "$restarts" ] &&
	proc_alive "$pid"
check_err $? "the helper changed: state $st, pid $now (was $pid), restarts $nr (were $restarts)"
[ "$(helper_pids | tr '\n' ' ')" = "$pid " ]
check_err $? "helper processes: $(helper_pids | tr '\n' ' '), not just $pid"
log_test "the same helper runs after the fuzzing (pid $pid, $restarts restarts)"

RET=0
for p in 1 2; do
	st=$(tc_hw_state "" xfv0 $p)
	[ "$st" = in_hw ]
	check_err $? "xfv0's rule at pref $p is $st after the fuzzing, not in_hw"
done
[ "$(xf_dev_state xfv0)" = attached ]
check_err $? "xfv0 is $(xf_dev_state xfv0) after the fuzzing, not attached"
[ $RET -eq 0 ] &&
	send_expect xfa 10.0.2.1 $N -- hw:xfv0/1+$N udp:xfb/veth_b+0
[ $RET -eq 0 ] &&
	send_expect xfa 10.0.3.1 $N -- hw:xfv0/2+$N udp:xfb/veth_b+$N
log_test "xfv0's drop and redirect are still in_hw and act in the datapath ($N packets each, counted in hardware)"

# ---- 2: damaged replies on the reply channel ----
MANGLER=$XF_ROOT/umh/xdp_flow_umh_mangle
MANGLE_FILE=/tmp/xdp_flow_mangle
ROUNDS=${XF_FUZZ_REPLY_ROUNDS:-$(xf_share 8)}

# churn <round>: four rules added on xfv0 (prefs 10-13), their counters
# read (STATS_GET), deleted again.
churn()
{
	local r=$1 p

	for p in 10 11 12 13; do
		timeout 30 tc filter add dev xfv0 ingress pref $p protocol ip flower \
			dst_ip 10.7.$r.$p action drop
	done
	timeout 30 tc -s filter show dev xfv0 ingress >/dev/null
	timeout 30 "$XF_CLI" -j show dev xfv0 >/dev/null
	for p in 10 11 12 13; do
		timeout 30 tc filter del dev xfv0 ingress pref $p
	done
}

if [ "${XF_FUZZ_REPLIES:-0}" != 1 ]; then
	log_info "damaged replies: not run (XF_FUZZ_REPLIES=1 runs them)"
elif [ ! -x "$MANGLER" ]; then
	log_skip "damaged replies" "no $MANGLER (make -C umh mangle)"
else
	RET=0
	rm -f "$MANGLE_FILE"
	"$XF_CLI" disable dev lo >/dev/null 2>&1
	tc qdisc del dev xfv0 clsact 2>/dev/null
	tc qdisc del dev xff0 clsact 2>/dev/null
	xf_unload
	check_err $? "rmmod failed"
	xf_load umh_path="$MANGLER" helper_timeout_ms=$((500 * XF_PACE))
	check_err $? "loading the module with umh_path=$MANGLER failed"
	[ $RET -eq 0 ] && { xf_wait_helper; check_err $? "the mangling helper did not come up"; }
	[ $RET -eq 0 ] && { xf_enable_default xfv0; check_err $? "xdp-flow enable dev xfv0 failed"; }
	tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop &&
		tc filter add dev xfv0 ingress pref 2 protocol ip flower dst_ip 10.0.3.1 \
			action mirred egress redirect dev xfv1
	check_err $? "tc filter add on xfv0 failed"
	r0=$(xf_status_get .helper_restarts)
	mark=$(dmesg_mark "test_44 replies")
	start=$SECONDS
	if [ $RET -eq 0 ]; then
		: >"$MANGLE_FILE"
		for ((r = 0; r < ROUNDS; r++)); do
			churn $r
			# now and then a device enabled and disabled
			"$XF_CLI" enable dev lo >/dev/null 2>&1
			"$XF_CLI" disable dev lo >/dev/null 2>&1
		done
		rm -f "$MANGLE_FILE"
	fi
	took=$((SECONDS - start))
	wait_helper_state running "$(xf_helper_wait_min 40)"
	check_err $? "no helper running after the damaged replies: $(xf_helper_state)"
	timeout 60 "$XF_CLI" wait >/dev/null
	check_err $? "xdp-flow wait failed after the damaged replies"
	r1=$(xf_status_get .helper_restarts)
	damaged=$(dmesg_since "$mark" | grep -cE 'xdp_flow: (a malformed reply|a reply from the helper over)')
	log_info "$ROUNDS rounds of churn in $took s, helper restarts $r0 -> $r1, $damaged malformed replies logged (ratelimited)"
	log_test "damaged replies during $ROUNDS rounds of rule churn: a helper runs again ($((r1 - r0)) restarts)"

	RET=0
	# a restarted helper may still be attaching
	wait_dev_attached xfv0 $((10 * XF_PACE))
	check_err $? "xfv0 is not attached after the damaged replies"
	for p in 1 2; do
		st=$(tc_hw_state "" xfv0 $p)
		[ "$st" = in_hw ]
		check_err $? "xfv0's rule at pref $p is $st after the damaged replies, not in_hw"
	done
	[ $RET -eq 0 ] &&
		send_expect xfa 10.0.2.1 $N -- hw:xfv0/1+$N udp:xfb/veth_b+0
	[ $RET -eq 0 ] &&
		send_expect xfa 10.0.3.1 $N -- hw:xfv0/2+$N udp:xfb/veth_b+$N
	if [ $RET -ne 0 ]; then
		log_info "xdp-flow status: $(timeout 20 "$XF_CLI" -j status | tr -d '\n')"
		log_info "sw packets: drop $(tc_stat "" xfv0 1 sw_packets), redirect $(tc_stat "" xfv0 2 sw_packets)"
		timeout 20 "$XF_CLI" -j show dev xfv0 | jq -c '.[]' 2>/dev/null | head -n 4 | sed 's/^/# /'
		dmesg_since "$mark" | grep -E 'xdp_flow' | tail -n 15 | sed 's/^/# /'
	fi
	log_test "after the damaged replies xfv0's drop and redirect are in_hw and act in the datapath"
fi

RET=0
bad=$(dmesg_since "$first_mark" | grep -E "$XF_KERNEL_BAD_RE|$BAD_MORE_RE" | head -n 20)
leaks=$(kmemleak_ours | head -n 40)
[ -n "$leaks" ] && bad+="${bad:+
}$leaks"
[ -z "$bad" ]
check_err $? "the kernel log since the fuzzing: $(echo "$bad" | head -n 5 | tr '\n' '|')"
[ -z "$bad" ] || echo "$bad" | sed 's/^/# /'
log_test "the kernel log since the fuzzing began has no BUG, WARNING, KASAN, lockdep or kmemleak report"

exit $EXIT_STATUS
