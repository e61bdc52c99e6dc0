#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nftables hardware offload through xdp_flow: a netdev chain on xfv0's
# ingress with `flags offload`. Its rules (drop by destination, drop by
# source and TCP port, fwd to another device) run in XDP: the packets they
# take never reach the stack, their counters come from XDP, and xdp-flow
# show lists them. A rule xdp_flow cannot run is refused by nft, with the
# reason in the kernel log, and nothing is left behind; deleting a rule, a
# chain or a table takes its rules out of XDP.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=30
T=xft

cleanup()
{
	nft delete table netdev $T 2>/dev/null
	nft delete table netdev ${T}2 2>/dev/null
	xf_test_cleanup
}
trap cleanup EXIT

xf_test_setup || exit 1

# nft_counter <comment>: packets counted by the rule of chain ing with
# that comment.
# shellcheck disable=SC2317  # called by counters_expect (fn:nft_counter/...)
nft_counter()
{
	local v

	v=$(nft -j list chain netdev $T ing |
	    jq -r ".nftables[] | select(.rule.comment == \"$1\") |
		   .rule.expr[] | select(.counter) | .counter.packets")
	[ -n "$v" ] || { xf_err "no counter on rule '$1'"; return 1; }
	echo "$v"
}

# nft_handle <comment>: the handle of that rule.
nft_handle()
{
	nft -a -j list chain netdev $T ing |
		jq -r ".nftables[] | select(.rule.comment == \"$1\") | .rule.handle"
}

# xf_nft_rules <dev>: how many rules xdp-flow show lists on <dev>, as
# "<in XDP> <software>", nftables' only.
xf_nft_rules()
{
	local js

	js=$(timeout 20 "$XF_CLI" -j show dev "$1") || return 1
	echo "$js" | jq -r '[.[] | select(.source == "nftables")] |
		"\([.[] | select(.software | not)] | length) \([.[] | select(.software)] | length)"'
}

# xf_nft_stat <dev> <addr>: packets of the nftables rule of xdp-flow show
# whose key has this destination address.
# shellcheck disable=SC2317  # called by counters_expect (fn:xf_nft_stat/...)
xf_nft_stat()
{
	timeout 20 "$XF_CLI" -j show dev "$1" |
		jq -r "[.[] | select(.source == \"nftables\" and .key.dst_ip == \"$2/32\")][0].stats.packets // empty"
}

# tcp_try <ns> <dst> <port>: one connection attempt, at most 2 s.
tcp_try()
{
	ip netns exec "$1" timeout 2 bash -c "exec 3<>/dev/tcp/$2/$3" 2>/dev/null
}

RET=0
xf_enable_dev xfv0 && wait_dev_attached xfv0 10
check_err $? "xdp-flow enable dev xfv0 failed or never attached"
# TCP SYN counters on veth_b, in software (xfb is not offloaded)
ip netns exec xfb tc filter add dev veth_b ingress pref 101 protocol ip \
	flower ip_proto tcp dst_port 7777 action pass &&
ip netns exec xfb tc filter add dev veth_b ingress pref 102 protocol ip \
	flower ip_proto tcp dst_port 7778 action pass
check_err $? "cannot add the TCP counters on veth_b"
nft -f - <<EOF
table netdev $T {
	chain ing {
		type filter hook ingress device xfv0 priority 10; flags offload;
		ip daddr 10.0.3.1 counter drop comment "daddr"
		ip saddr 10.0.1.1 tcp dport 7777 counter drop comment "tcp"
		ip daddr 10.0.9.9 counter fwd to xfv1 comment "fwd"
	}
}
EOF
check_err $? "nft could not add the offload chain and its rules"
st=$(xf_nft_rules xfv0)
[ "$st" = "3 0" ]
check_err $? "xdp-flow show lists '$st' nftables rules (in XDP, software), not '3 0'"
n=$("$XF_CLI" show dev xfv0 | grep -c "^dev xfv0 nftables prio 10 .* in_xdp$")
[ "$n" = 3 ]
check_err $? "xdp-flow show (text) prints $n rules as 'dev xfv0 nftables prio 10 ... in_xdp'"
log_test "nft chain with flags offload on xfv0: its 3 rules are in XDP"

RET=0
send_expect xfa 10.0.3.1 $N -- udp:xfc/veth_c+0 \
	fn:xf_nft_stat/xfv0/10.0.3.1=$N fn:nft_counter/daddr=$N
log_test "ip daddr 10.0.3.1 counter drop: $N packets dropped in XDP, counted by nft"

RET=0
tcp_try xfa 10.0.2.1 7777
[ $? = 124 ]
check_err $? "a connection to 10.0.2.1:7777 did not time out"
tcp_try xfa 10.0.2.1 7778
[ $? = 1 ]
check_err $? "a connection to 10.0.2.1:7778 was not refused by xfb"
s77=$(tc_stat xfb veth_b 101 packets) && s78=$(tc_stat xfb veth_b 102 packets)
check_err $? "cannot read the TCP counters"
[ "$s77" = 0 ] && [ "$s78" = 1 ]
check_err $? "veth_b saw $s77 SYNs to port 7777 (want 0) and $s78 to 7778 (want 1)"
nc=$(wait_value 1 5 nft_counter tcp)
[ "$nc" -ge 1 ] 2>/dev/null
check_err $? "nft's counter of the tcp rule shows '$nc'"
log_test "ip saddr 10.0.1.1 tcp dport 7777 drop: SYNs dropped in XDP ($nc), port 7778 reaches xfb"

RET=0
send_expect xfa 10.0.9.9 $N -- udp:xfb/veth_b+$N \
	fn:xf_nft_stat/xfv0/10.0.9.9=$N fn:nft_counter/fwd=$N
log_test "ip daddr 10.0.9.9 fwd to xfv1: $N packets forwarded in XDP"

RET=0
mark=$(dmesg_mark)
if [ "$(xf_dev_hook xfv0)" = xdp ]; then
	nft add rule netdev $T ing ip daddr 10.0.9.7 fwd to lo 2>/dev/null
	[ $? != 0 ]
	check_err $? "nft accepted a fwd to lo (no XDP frames) in an offload chain"
	dmesg_since "$mark" | grep -q "xfv0: nftables rule not offloaded.*redirect target takes no XDP frames"
	check_err $? "the kernel log gives no reason for the refusal"
else
	# The TC hook redirects skbs: any device is a target.
	out=$(nft -e -a add rule netdev $T ing ip daddr 10.0.9.7 fwd to lo)
	check_err $? "nft refused a fwd to lo with the tc hook"
	h=$(echo "$out" | sed -n 's/.*# handle \([0-9]*\).*/\1/p')
	[ -n "$h" ] && nft delete rule netdev $T ing handle "$h"
	check_err $? "cannot delete the fwd to lo rule (handle '$h')"
fi
nft add rule netdev $T ing ip daddr 10.0.9.7 counter 2>/dev/null
[ $? != 0 ]
check_err $? "nft accepted a rule without a verdict in an offload chain"
n=$(nft -j list chain netdev $T ing | jq '[.nftables[] | select(.rule)] | length')
[ "$n" = 3 ]
check_err $? "the chain has $n rules after the refusals, not 3"
st=$(xf_nft_rules xfv0)
[ "$st" = "3 0" ]
check_err $? "xdp-flow show lists '$st' nftables rules after the refusals, not '3 0'"
log_test "rules xdp_flow or nft cannot offload are refused and leave nothing behind"

RET=0
nft add table netdev ${T}2 &&
nft add chain netdev ${T}2 c "{ type filter hook ingress device xfv2 priority 10; flags offload; }"
check_err $? "cannot add an offload chain on xfv2"
mark=$(dmesg_mark)
nft add rule netdev ${T}2 c ip daddr 10.0.9.7 drop 2>/dev/null
[ $? != 0 ]
check_err $? "a rule was accepted on xfv2, where offload is not enabled"
dmesg_since "$mark" | grep -q "xfv2: nftables rule not offloaded.*not enabled"
check_err $? "the kernel log does not say that xfv2 is not enabled"
nft delete table netdev ${T}2
check_err $? "cannot delete table ${T}2"
log_test "a rule for a device where offload is not enabled is refused, with the reason logged"

# TC's ingress hook runs before nftables': a TC rule comes first whatever
# the numbers (TC pref 20 against the chain's priority 10).
RET=0
tc qdisc add dev xfv0 clsact &&
tc filter add dev xfv0 ingress pref 20 protocol ip flower dst_ip 10.0.9.9 \
	action drop
check_err $? "cannot add the TC drop rule on xfv0"
st=$(tc_hw_state "" xfv0 20)
[ "$st" = in_hw ]
check_err $? "the TC rule is $st, not in_hw"
send_expect xfa 10.0.9.9 $N -- hw:xfv0/20=$N \
	udp:xfb/veth_b+0 fn:xf_nft_stat/xfv0/10.0.9.9+0
tc qdisc del dev xfv0 clsact
check_err $? "cannot delete xfv0's clsact"
log_test "a TC rule (pref 20) runs before the nftables chain (priority 10) in XDP too"

RET=0
h=$(nft_handle daddr)
nft delete rule netdev $T ing handle "$h"
check_err $? "nft delete rule (handle '$h') failed"
st=$(xf_nft_rules xfv0)
[ "$st" = "2 0" ]
check_err $? "xdp-flow show lists '$st' nftables rules, not '2 0'"
send_expect xfa 10.0.3.1 $N -- udp:xfc/veth_c+$N
log_test "deleting the drop rule takes it out of XDP: $N packets reach veth_c"

RET=0
nft delete chain netdev $T ing
check_err $? "nft delete chain failed"
st=$(xf_nft_rules xfv0)
[ "$st" = "0 0" ]
check_err $? "xdp-flow show lists '$st' nftables rules after the chain was deleted"
tcp_try xfa 10.0.2.1 7777
[ $? = 1 ]
check_err $? "a connection to 10.0.2.1:7777 is still not refused by xfb"
log_test "deleting the chain takes its rules out of XDP"

RET=0
nft -f - <<EOF
table netdev $T {
	chain ing {
		type filter hook ingress device xfv0 priority 10; flags offload;
		ip daddr 10.0.3.1 counter drop comment "daddr"
	}
}
EOF
check_err $? "nft could not add the chain again"
st=$(xf_nft_rules xfv0)
[ "$st" = "1 0" ]
check_err $? "xdp-flow show lists '$st', not '1 0'"
nft delete table netdev $T
check_err $? "nft delete table failed"
st=$(xf_nft_rules xfv0)
[ "$st" = "0 0" ]
check_err $? "xdp-flow show lists '$st' nftables rules after the table was deleted"
send_expect xfa 10.0.3.1 $N -- udp:xfc/veth_c+$N
log_test "deleting the table takes its rules out of XDP"

exit $EXIT_STATUS
