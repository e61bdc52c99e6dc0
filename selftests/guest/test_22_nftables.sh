#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nftables hardware offload through xdp_flow: a netdev chain on veth0's
# ingress with `flags offload`. Its rules (drop by destination, drop by
# source and TCP port, fwd to another device) run in XDP: the packets they
# take never reach the stack, their counters come from XDP, and xdp-flow
# show lists them. A rule xdp_flow cannot run is refused by nft, with the
# reason in the kernel log, and nothing is left behind; deleting a rule, a
# chain or a table takes its rules out of XDP.

source "$XF_ROOT/selftests/lib.sh"
source "$XF_ROOT/selftests/guest/lib.sh"
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
xf_enable_dev veth0 && wait_dev_attached veth0 10
check_err $? "xdp-flow enable dev veth0 failed or never attached"
# TCP SYN counters on veth_b, in software (xfb is not offloaded)
ip netns exec xfb tc filter add dev veth_b ingress pref 101 protocol ip \
	flower ip_proto tcp dst_port 7777 action pass &&
ip netns exec xfb tc filter add dev veth_b ingress pref 102 protocol ip \
	flower ip_proto tcp dst_port 7778 action pass
check_err $? "cannot add the TCP counters on veth_b"
nft -f - <<EOF
table netdev $T {
	chain ing {
		type filter hook ingress device veth0 priority 10; flags offload;
		ip daddr 10.0.3.1 counter drop comment "daddr"
		ip saddr 10.0.1.1 tcp dport 7777 counter drop comment "tcp"
		ip daddr 10.0.9.9 counter fwd to veth1 comment "fwd"
	}
}
EOF
check_err $? "nft could not add the offload chain and its rules"
st=$(xf_nft_rules veth0)
[ "$st" = "3 0" ]
check_err $? "xdp-flow show lists '$st' nftables rules (in XDP, software), not '3 0'"
n=$("$XF_CLI" show dev veth0 | grep -c "^dev veth0 nftables prio 10 .* in_xdp$")
[ "$n" = 3 ]
check_err $? "xdp-flow show (text) prints $n rules as 'dev veth0 nftables prio 10 ... in_xdp'"
log_test "nft chain with flags offload on veth0: its 3 rules are in XDP"

RET=0
c0=$(udp_count xfc veth_c)
check_err $? "cannot read the counters"
send_udp xfa 10.0.3.1 $N
check_err $? "send_udp failed"
settle
c1=$(udp_count xfc veth_c)
[ "$c1" = "$c0" ]
check_err $? "$((c1 - c0)) of $N packets to 10.0.3.1 reached veth_c"
hw=$(wait_value $N 5 xf_nft_stat veth0 10.0.3.1)
[ "$hw" = $N ]
check_err $? "xdp-flow show counts $hw packets on the rule, not $N"
nc=$(wait_value $N 5 nft_counter daddr)
[ "$nc" = $N ]
check_err $? "nft's counter of the rule shows $nc packets, not $N"
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
b0=$(udp_count xfb veth_b)
send_udp xfa 10.0.9.9 $N
check_err $? "send_udp failed"
b1=$(wait_value $((b0 + N)) 5 udp_count xfb veth_b)
[ "$b1" = $((b0 + N)) ]
check_err $? "veth_b received $((b1 - b0)) of $N packets forwarded to veth1"
hw=$(wait_value $N 5 xf_nft_stat veth0 10.0.9.9)
[ "$hw" = $N ]
check_err $? "xdp-flow show counts $hw packets on the fwd rule, not $N"
nc=$(wait_value $N 5 nft_counter fwd)
[ "$nc" = $N ]
check_err $? "nft's counter of the fwd rule shows $nc packets, not $N"
log_test "ip daddr 10.0.9.9 fwd to veth1: $N packets forwarded in XDP"

RET=0
mark=$(dmesg_mark)
if [ "$(xf_dev_hook veth0)" = xdp ]; then
	nft add rule netdev $T ing ip daddr 10.0.9.7 fwd to lo 2>/dev/null
	[ $? != 0 ]
	check_err $? "nft accepted a fwd to lo (no XDP frames) in an offload chain"
	dmesg_since "$mark" | grep -q "veth0: nftables rule not offloaded.*redirect target takes no XDP frames"
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
st=$(xf_nft_rules veth0)
[ "$st" = "3 0" ]
check_err $? "xdp-flow show lists '$st' nftables rules after the refusals, not '3 0'"
log_test "rules xdp_flow or nft cannot offload are refused and leave nothing behind"

RET=0
nft add table netdev ${T}2 &&
nft add chain netdev ${T}2 c "{ type filter hook ingress device veth2 priority 10; flags offload; }"
check_err $? "cannot add an offload chain on veth2"
mark=$(dmesg_mark)
nft add rule netdev ${T}2 c ip daddr 10.0.9.7 drop 2>/dev/null
[ $? != 0 ]
check_err $? "a rule was accepted on veth2, where offload is not enabled"
dmesg_since "$mark" | grep -q "veth2: nftables rule not offloaded.*not enabled"
check_err $? "the kernel log does not say that veth2 is not enabled"
nft delete table netdev ${T}2
check_err $? "cannot delete table ${T}2"
log_test "a rule for a device where offload is not enabled is refused, with the reason logged"

# TC's ingress hook runs before nftables': a TC rule comes first whatever
# the numbers (TC pref 20 against the chain's priority 10).
RET=0
tc qdisc add dev veth0 clsact &&
tc filter add dev veth0 ingress pref 20 protocol ip flower dst_ip 10.0.9.9 \
	action drop
check_err $? "cannot add the TC drop rule on veth0"
st=$(tc_hw_state "" veth0 20)
[ "$st" = in_hw ]
check_err $? "the TC rule is $st, not in_hw"
b0=$(udp_count xfb veth_b) && f0=$(xf_nft_stat veth0 10.0.9.9)
check_err $? "cannot read the counters"
send_udp xfa 10.0.9.9 $N
check_err $? "send_udp failed"
hw=$(wait_value $N 5 tc_stat "" veth0 20 hw_packets)
[ "$hw" = $N ]
check_err $? "the TC drop rule counted $hw hardware packets, not $N"
b1=$(udp_count xfb veth_b) && f1=$(xf_nft_stat veth0 10.0.9.9)
[ "$b1" = "$b0" ] && [ "$f1" = "$f0" ]
check_err $? "the nftables fwd rule took $((f1 - f0)) packets, veth_b got $((b1 - b0))"
tc qdisc del dev veth0 clsact
check_err $? "cannot delete veth0's clsact"
log_test "a TC rule (pref 20) runs before the nftables chain (priority 10) in XDP too"

RET=0
h=$(nft_handle daddr)
nft delete rule netdev $T ing handle "$h"
check_err $? "nft delete rule (handle '$h') failed"
st=$(xf_nft_rules veth0)
[ "$st" = "2 0" ]
check_err $? "xdp-flow show lists '$st' nftables rules, not '2 0'"
c0=$(udp_count xfc veth_c)
send_udp xfa 10.0.3.1 $N
c1=$(wait_value $((c0 + N)) 5 udp_count xfc veth_c)
[ "$c1" = $((c0 + N)) ]
check_err $? "veth_c received $((c1 - c0)) of $N packets after the rule was deleted"
log_test "deleting the drop rule takes it out of XDP: $N packets reach veth_c"

RET=0
nft delete chain netdev $T ing
check_err $? "nft delete chain failed"
st=$(xf_nft_rules veth0)
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
		type filter hook ingress device veth0 priority 10; flags offload;
		ip daddr 10.0.3.1 counter drop comment "daddr"
	}
}
EOF
check_err $? "nft could not add the chain again"
st=$(xf_nft_rules veth0)
[ "$st" = "1 0" ]
check_err $? "xdp-flow show lists '$st', not '1 0'"
nft delete table netdev $T
check_err $? "nft delete table failed"
st=$(xf_nft_rules veth0)
[ "$st" = "0 0" ]
check_err $? "xdp-flow show lists '$st' nftables rules after the table was deleted"
c0=$(udp_count xfc veth_c)
send_udp xfa 10.0.3.1 $N
c1=$(wait_value $((c0 + N)) 5 udp_count xfc veth_c)
[ "$c1" = $((c0 + N)) ]
check_err $? "veth_c received $((c1 - c0)) of $N packets after the table was deleted"
log_test "deleting the table takes its rules out of XDP"

exit $EXIT_STATUS
