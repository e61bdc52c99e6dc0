#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Waiting for the helper never holds what the helper's answer needs. While
# another module registers and unregisters its generic netlink family in a
# loop (modprobe/rmmod team: genetlink's global lock, taken for writing,
# which a reply over generic netlink would queue behind), and the helper is
# stopped for 50 ms at a time (so that a registration comes while a caller
# waits for it), xdp-flow enable,
# show and disable go on working, and so do rule adds and deletes on a
# block shared with a device whose qdisc comes and goes. And nftables
# commits of the first rule of an offload chain (which attaches the
# datapath, which needs rtnl) go on while devices come and go (rtnl held,
# waiting for nftables' commit mutex). No request times out, the helper is
# never restarted, and the rules act in XDP. Stats, show and status need
# no helper at all: they answer while it is stopped past the timeout.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=20
ROUNDS=${XF_LOCK_ROUNDS:-$(xf_share 6)}
TMP=$(mktemp -d)
CHURN=
PAUSER=

cleanup()
{
	touch "$TMP/stop"
	[ -n "$CHURN" ] && wait "$CHURN" 2>/dev/null
	[ -n "$PAUSER" ] && wait "$PAUSER" 2>/dev/null
	rmmod team 2>/dev/null
	ip link del xfdummy 2>/dev/null
	nft delete table netdev xf_lock 2>/dev/null
	xf_test_cleanup
	rm -rf "$TMP"
}
trap cleanup EXIT

if ! modinfo team >/dev/null 2>&1; then
	log_skip "$(basename "$0")" "no team module to register a generic netlink family with"
	exit $ksft_skip
fi

# The module's own helper timeout (longer on a slow kernel: the helper
# answers there as much slower as everything else).
# shellcheck disable=SC2046
xf_test_setup $(xf_helper_timeout_param) || exit 1

RET=0
restarts=$(xf_status_get .helper_restarts)
mark=$(dmesg_mark "test_30")
# Register and unregister a family as fast as modprobe goes; count rounds.
(
	n=0
	while [ ! -e "$TMP/stop" ]; do
		modprobe team && rmmod team && n=$((n + 1))
	done
	echo $n >"$TMP/churned"
) &
CHURN=$!
helper=$(xf_status_get .helper_pid)
(
	while [ ! -e "$TMP/stop" ]; do
		kill -STOP "$helper" && sleep 0.05
		kill -CONT "$helper" && sleep 0.05
	done
	kill -CONT "$helper"
) &
PAUSER=$!

tc qdisc add dev xfv0 ingress_block 9 clsact
check_err $? "tc qdisc add block 9 on xfv0 failed"
fails=
for i in $(seq "$ROUNDS"); do
	"$XF_CLI" enable dev xfv0 >/dev/null || fails+=" enable#$i"
	# The first rule of the block attaches the datapath, while xfv2
	# binds and unbinds the same block.
	tc qdisc add dev xfv2 ingress_block 9 clsact || fails+=" qdisc-add#$i"
	tc filter add block 9 pref 1 protocol ip flower dst_ip 10.0.2.1 \
		action drop || fails+=" filter-add#$i"
	tc qdisc del dev xfv2 clsact || fails+=" qdisc-del#$i"
	"$XF_CLI" show >/dev/null || fails+=" show#$i"
	[ "$(tc_hw_state "" xfv0 1)" = in_hw ] || fails+=" not-in_hw#$i"
	tc filter del block 9 pref 1 || fails+=" filter-del#$i"
	"$XF_CLI" disable dev xfv0 >/dev/null || fails+=" disable#$i"
done
touch "$TMP/stop"
wait "$CHURN" "$PAUSER"
CHURN= PAUSER=
churned=$(cat "$TMP/churned" 2>/dev/null)
log_info "$ROUNDS rounds of enable, rule add and delete, show, disable; team registered and unregistered ${churned:-?} times meanwhile"
[ -z "$fails" ]
check_err $? "failed:$fails"
[ "${churned:-0}" -gt 0 ]
check_err $? "the genetlink family never came and went"
log_test "enable, rules, show and disable while another genetlink family comes and goes"

RET=0
late=$(dmesg_since "$mark" | grep -E "did not answer in time|did not register in time")
[ -z "$late" ]
check_err $? "the helper was waited for in vain: $late"
[ "$(xf_status_get .helper_restarts)" = "$restarts" ]
check_err $? "the helper was restarted ($restarts before, $(xf_status_get .helper_restarts) after)"
bad=$(dmesg_bad_since "$mark")
[ -z "$bad" ]
check_err $? "kernel log: $bad"
log_test "no request timed out, no helper restart, kernel log clean"

RET=0
rm -f "$TMP/stop"
xf_enable_dev xfv2
check_err $? "xdp-flow enable dev xfv2 failed"
nft add table netdev xf_lock &&
	nft add chain netdev xf_lock ing "{ type filter hook ingress device xfv2 priority 10; flags offload; }"
check_err $? "nft could not add an offload chain on xfv2"
(
	n=0
	while [ ! -e "$TMP/stop" ]; do
		ip link add xfdummy type dummy && ip link del xfdummy &&
			n=$((n + 1))
	done
	echo $n >"$TMP/churned"
) &
CHURN=$!
fails=
for i in $(seq "$ROUNDS"); do
	nft add rule netdev xf_lock ing ip daddr 10.0.9.9 counter drop ||
		fails+=" add#$i"
	nft flush chain netdev xf_lock ing || fails+=" flush#$i"
done
touch "$TMP/stop"
wait "$CHURN"
CHURN=
churned=$(cat "$TMP/churned" 2>/dev/null)
late=$(dmesg_since "$mark" | grep -E "did not answer in time|did not register in time")
log_info "$ROUNDS first rules of an nftables offload chain; a device added and removed ${churned:-?} times meanwhile"
[ -z "$fails" ] && [ -z "$late" ] &&
	[ "$(xf_status_get .helper_restarts)" = "$restarts" ]
check_err $? "failed:$fails; $late; helper restarts $restarts -> $(xf_status_get .helper_restarts)"
[ "${churned:-0}" -gt 0 ]
check_err $? "no device came and went"
nft delete table netdev xf_lock
log_test "nftables commits while devices come and go: no request timed out, no restart"

RET=0
xf_enable_dev xfv0
check_err $? "xdp-flow enable dev xfv0 failed"
tc filter add block 9 pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add failed"
send_expect xfa 10.0.2.1 $N -- hw:xfv0/1+$N udp:xfb/veth_b+0
log_test "afterwards the rule drops in XDP ($N hardware packets)"

# Counters come from the XDP program's map, not from the helper: with the
# helper stopped for longer than the module waits for an answer, TC's
# stats, xdp-flow show and status answer, the counters move, and the
# helper is neither waited for nor restarted.
RET=0
timeout_ms=$(cat /sys/module/xdp_flow/parameters/helper_timeout_ms)
helper=$(xf_status_get .helper_pid)
mark=$(dmesg_mark "test_30 stopped")
t0=${EPOCHREALTIME/./}
kill -STOP "$helper"
check_err $? "cannot stop the helper"
send_expect xfa 10.0.2.1 $N -- hw:xfv0/1+$N udp:xfb/veth_b+0
rule=$(xf_rule_json xfv0 1)
[ "$(echo "$rule" | jq -r '.software, .stats.packets' | tr '\n' ' ')" = "false $((2 * N)) " ]
check_err $? "xdp-flow show: the rule is not in XDP with $((2 * N)) packets: $rule"
"$XF_CLI" status >/dev/null
check_err $? "xdp-flow status failed with the helper stopped"
while [ $(( (${EPOCHREALTIME/./} - t0) / 1000 )) -le $((timeout_ms + 500)) ]; do
	sleep 0.2
done
kill -CONT "$helper"
late=$(dmesg_since "$mark" | grep -E "did not answer in time|did not register in time")
[ -z "$late" ] && [ "$(xf_status_get .helper_pid)" = "$helper" ] &&
	[ "$(xf_status_get .helper_restarts)" = "$restarts" ]
check_err $? "the helper was waited for: $late; pid $helper -> $(xf_status_get .helper_pid), restarts $restarts -> $(xf_status_get .helper_restarts)"
log_test "helper stopped longer than the timeout (${timeout_ms} ms): stats, show and status answer, counters move, no restart"

exit $EXIT_STATUS
