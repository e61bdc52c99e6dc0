#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A posted rule change whose send fails while the helper goes away is
# settled once (issue 47). The module's test fault point (debugfs
# xdp_flow/fail_posted_send) makes the next posted sends fail as on a full
# receive queue, each after fail_posted_send_delay_ms with the request
# already listed; the helper is SIGKILLed in that window, seen through
# xdp_flow/posted (posted requests not answered yet), so that the module
# finds the helper gone while the sender still holds the request:
#  - a tc filter add, then a tc filter del, each posted and failing so;
#  - a batch of adds and deletes, several of them failing so, with the
#    kill in the first one's window.
# After each kill: tc succeeded, the module answers (xdp-flow status), a
# new helper runs, nothing is posted any more (neither stuck nor an
# underflowed count). At the end every live rule is in_hw and drops in
# XDP, no deleted rule acts, and the kernel log is clean.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=20
DBG=/sys/kernel/debug/xdp_flow
# long enough to see the request listed and kill the helper in an
# emulated guest, short enough not to hold TC long
DELAY_MS=$((1500 * XF_PACE))
RESTART_WAIT=$(xf_helper_wait_min 60)
TMP=$(mktemp -d /tmp/xf_sendfault.XXXXXX)

cleanup()
{
	echo 0 >"$DBG/fail_posted_send" 2>/dev/null
	rm -rf "$TMP"
	xf_test_cleanup
}
trap cleanup EXIT

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug

posted()
{
	cat "$DBG/posted"
}

# wait_posted <n> <timeout_s>: until xdp_flow/posted reads <n> exactly
# (0 afterwards: a count that went below zero reads 4294967295).
wait_posted()
{
	local end=$((SECONDS + $2)) v

	while :; do
		v=$(posted) || return 1
		[ "$v" = "$1" ] && return 0
		[ $SECONDS -ge $end ] && { xf_err "xdp_flow/posted is $v, not $1"; return 1; }
		sleep 0.1
	done
}

# fault_round <what> <faults> <tc batch file>: arm <faults> failing
# posted sends, run the batch, SIGKILL the helper as soon as a posted
# request waits in its failing send; then the module must have settled
# everything once.
fault_round()
{
	local what=$1 faults=$2 batch=$3 pid tcpid v left new i

	pid=$(xf_status_get .helper_pid)
	echo "$DELAY_MS" >"$DBG/fail_posted_send_delay_ms" &&
		echo "$faults" >"$DBG/fail_posted_send"
	check_err $? "$what: cannot arm the fault point"
	tc -force -batch "$batch" 2>>"$TMP/tc.err" &
	tcpid=$!
	# a builtin read per poll: the window is 1.5 s in an emulated guest
	for ((i = 0; i < 2000; i++)); do
		read -r v <"$DBG/posted"
		[ "$v" != 0 ] && break
		sleep 0.01
	done
	[ "$v" != 0 ]
	check_err $? "$what: no posted request waited in its send"
	kill -KILL "$pid"
	check_err $? "$what: cannot kill the helper (pid $pid)"
	wait "$tcpid"
	check_err $? "$what: tc failed: $(tail -n 3 "$TMP/tc.err" | tr '\n' ' ')"
	left=$(cat "$DBG/fail_posted_send")
	echo 0 >"$DBG/fail_posted_send"
	[ "$left" -lt "$faults" ]
	check_err $? "$what: the fault point never fired"
	new=$(wait_new_helper "$pid" "$RESTART_WAIT")
	check_err $? "$what: no new helper within $RESTART_WAIT s of killing $pid"
	[ "$(xf_helper_state)" = running ]
	check_err $? "$what: the module does not answer, or its helper is $(xf_helper_state)"
	wait_posted 0 $((20 * XF_PACE))
	check_err $? "$what: posted requests left"
	"$XF_CLI" wait timeout $((20 * XF_PACE))
	check_err $? "$what: rule changes still in flight"
	log_info "$what: helper $pid killed with $v posted request(s) in a failing send, $((faults - left)) send(s) failed; helper $new took over"
}

# wait_to_xdp: until the replay has opened the gate again.
wait_to_xdp()
{
	local end=$((SECONDS + 20 * XF_PACE))

	until [ "$(xf_status_get .to_stack)" = false ]; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.2
	done
}

xf_test_setup || exit 1

RET=0
xf_enable_xfv0
check_err $? "xdp-flow enable dev xfv0 hook $XF_HOOK failed"
[ $RET -eq 0 ] || exit 1
if [ ! -r "$DBG/posted" ] || [ ! -w "$DBG/fail_posted_send" ]; then
	log_skip "posted sends failing while the helper is killed" \
		"no $DBG/posted or $DBG/fail_posted_send (CONFIG_DEBUG_FS)"
	exit $EXIT_STATUS
fi
tc filter add dev xfv0 ingress pref 100 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add pref 100 failed"
send_expect xfa 10.0.2.1 $N -- hw:xfv0/100+$N udp:xfb/veth_b+0
wait_posted 0 10
check_err $? "posted requests left with the helper idle"
log_test "prio 100 drop of 10.0.2.1 in XDP; xdp_flow/posted reads 0"

RET=0
mark=$(dmesg_mark "test_42")
echo "filter add dev xfv0 ingress pref 200 protocol ip flower dst_ip 10.0.3.1 action drop" >"$TMP/add"
fault_round "RULE_ADD" 1 "$TMP/add"
log_test "a posted RULE_ADD fails to send while the helper is killed: settled once, nothing left posted"

RET=0
echo "filter del dev xfv0 ingress pref 200" >"$TMP/del"
fault_round "RULE_DEL" 1 "$TMP/del"
log_test "a posted RULE_DEL fails to send while the helper is killed: settled once, nothing left posted"

RET=0
# adds of prefs 300..305 (dst_ip 10.0.4.x), deletes of 301, 303, 305
for i in 0 1 2 3 4 5; do
	echo "filter add dev xfv0 ingress pref $((300 + i)) protocol ip flower dst_ip 10.0.4.$((10 + i)) action drop"
	[ $((i % 2)) = 1 ] && echo "filter del dev xfv0 ingress pref $((300 + i))"
done >"$TMP/churn"
fault_round "churn" 4 "$TMP/churn"
log_test "rules added and deleted while posted sends fail and the helper is killed: settled once, nothing left posted"

RET=0
wait_to_xdp
check_err $? "frames still go to the stack after the replay"
for p in 100 300 302 304; do
	st=$(tc_hw_state "" xfv0 $p)
	[ "$st" = in_hw ]
	check_err $? "pref $p shows $st, not in_hw"
done
for p in 200 301 303 305; do
	n=$(timeout 20 tc -j filter show dev xfv0 ingress pref $p | jq length)
	[ "$n" = 0 ]
	check_err $? "deleted pref $p is still listed"
done
send_expect xfa 10.0.2.1 $N -- hw:xfv0/100+$N udp:xfb/veth_b+0
send_expect xfa 10.0.3.1 $N -- udp:xfc/veth_c+$N hw:xfv0/100+0
send_expect xfa 10.0.4.12 $N -- hw:xfv0/302+$N
[ "$(posted)" = 0 ]
check_err $? "xdp_flow/posted reads $(posted) at the end"
bad=$(dmesg_bad_since "$mark")
[ -z "$bad" ]
check_err $? "kernel log: $(echo "$bad" | head -n 5)"
log_test "afterwards: live rules in_hw, the drops drop $N each in XDP, the deleted drop of 10.0.3.1 acts no more; kernel log clean"

exit $EXIT_STATUS
