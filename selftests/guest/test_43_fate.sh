#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Offload leaves every packet's fate as TC alone decides it, also where
# more than offloaded flower rules are on the path. Each part first shows
# an offloaded flower redirect at pref 2 (packets to 10.0.3.1, routed out
# of xfv2, redirected out of xfv1) running in XDP, then changes what is
# around it: where the packets arrive and what each rule counted are what
# TC alone gives, and the flower rule counts no hardware packet where TC
# must run it.
#
# 1. Rules of classifiers other than flower (matchall, u32, bpf) at pref 1
#    stay in TC, and XDP hands the frames that reach their prio to the
#    stack, so that the flower rule never acts before them; with the
#    matchall first of all, xdp-flow status and the kernel log say that
#    nothing of the device runs in XDP. Deleting the rule gives the flower
#    rule back to XDP.
# 2. A redirect whose target went away drops, as mirred does, also when a
#    device of the same ifindex is there again: mirred lets go of a device
#    that is unregistered or leaves the namespace, while XDP redirects by
#    ifindex, so the module turns the rules that redirect there into
#    software rules. The target moves to another namespace and back, then
#    is deleted and made again with its ifindex.
# 3. At the XDP hook (whatever hook auto picks on this kernel), a redirect
#    whose target has something on its egress path goes to the stack, where
#    mirred runs that path: an egress matchall drop (clsact) drops all, an
#    nftables netdev egress chain that drops passes all (redirects from TC
#    ingress skip netfilter's egress hook), a tbf shaper's rate holds. The
#    module keeps an entry per device whose egress path is empty in the XDP
#    program's map xf_egress; each element gone, the entry is back, and the
#    redirect runs in XDP again.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=300
NS_TMP=xf_gone

cleanup()
{
	ip netns del "$NS_TMP" 2>/dev/null
	xf_test_cleanup
}
trap cleanup EXIT

xf_test_setup || exit 1

# add_redirect: the flower redirect at pref 2, in_hw.
add_redirect()
{
	local st

	tc filter add dev xfv0 ingress pref 2 protocol ip flower \
		dst_ip 10.0.3.1 action mirred egress redirect dev xfv1
	check_err $? "tc filter add (flower) failed"
	st=$(tc_hw_state "" xfv0 2)
	[ "$st" = in_hw ]
	check_err $? "the flower rule shows $st, not in_hw"
}

hw_of_flower()
{
	tc_stat "" xfv0 2 hw_packets
}

# rule_packets <pref>: the packets the first action of the rule at <pref>
# counted (a u32 prio lists its hash table before its rules).
rule_packets()
{
	local v

	v=$(timeout 20 tc -s -j filter show dev xfv0 ingress pref "$1" |
	    jq -r '[.[] | select(.options.actions != null)] | .[0].options.actions[0].stats.packets // empty')
	[ -n "$v" ] || { xf_err "no action stats for pref $1"; return 1; }
	echo "$v"
}

# expect_xdp: $N packets redirected in XDP.
expect_xdp()
{
	local hw0 hw

	hw0=$(hw_of_flower)
	send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+$N udp:xfc/veth_c+0
	hw=$(wait_value $((hw0 + N)) 5 hw_of_flower)
	[ "$hw" = $((hw0 + N)) ]
	check_err $? "the flower rule counted $((hw - hw0)) hardware packets, not $N"
}

# expect_shielded <what> <pref> [<before>]: after a send of $N, the rule
# at <pref> counted all of them in software (<before> plus $N), and the
# flower rule no hardware packet since hw0.
expect_shielded()
{
	local want=$((${3:-0} + N)) pk hw

	pk=$(wait_value $want 5 rule_packets "$2")
	[ "$pk" = $want ]
	check_err $? "the $1 rule counted $((pk - ${3:-0})) packets, not $N"
	hw=$(hw_of_flower)
	[ "$hw" = "$hw0" ]
	check_err $? "the flower rule counted $((hw - hw0)) hardware packets behind the $1 rule"
}

# drop_case <what> <tc filter args...>: a drop rule of classifier <what>
# at pref 1 drops all $N packets; the flower rule redirects none in XDP.
drop_case()
{
	local what=$1

	shift
	RET=0
	tc filter add dev xfv0 ingress pref 1 protocol ip "$@" action drop
	check_err $? "tc filter add ($what) failed"
	hw0=$(hw_of_flower)
	send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+0 udp:xfc/veth_c+0
	expect_shielded "$what" 1
	log_test "$what drop at pref 1 drops all $N packets, none redirected in XDP"
}

RET=0
xf_check_enable_xfv0
add_redirect
[ $RET -eq 0 ] && expect_xdp
log_test "flower redirect at pref 2 runs in XDP"

# ---- 1. other classifiers ----

# matchall police, as Open vSwitch's ingress_policing_rate: TC alone lets
# the burst through to the rules after it (conform: continue) and drops
# the rest.
RET=0
mark=$(dmesg_mark)
tc filter add dev xfv0 ingress pref 1 protocol ip matchall \
	action police rate 8bit burst 2k conform-exceed drop/continue
check_err $? "tc filter add (matchall police) failed"
hw0=$(hw_of_flower)
b0=$(udp_count xfb veth_b)
c0=$(udp_count xfc veth_c)
send_udp xfa 10.0.3.1 $N
check_err $? "send_udp failed"
expect_shielded matchall 1
got=$(($(udp_count xfb veth_b) - b0))
[ "$got" -lt $((N / 3)) ]
check_err $? "$got of $N packets passed a policer of 8 bit/s with a 2 KiB burst"
[ "$(udp_count xfc veth_c)" = "$c0" ]
check_err $? "packets were routed out of xfv2 past the redirect"
dmesg_since "$mark" |
	grep -q "xfv0: matchall rules at prio 1 stay in software and come first: every frame of the device goes to the stack"
check_err $? "no kernel log line says that the matchall prio sends every frame to the stack"
js=$(xdp-flow -j status | jq -c '.devices[] | select(.dev == "xfv0")')
[ "$(echo "$js" | jq -r '[.all_to_stack_prio, .all_to_stack_kind, .all_to_stack_after] | @tsv')" = "$(printf '1\tmatchall\t0')" ]
check_err $? "xdp-flow status -j does not say that a matchall at prio 1 sends every frame to the stack: $js"
xdp-flow status | grep -q "nothing runs in XDP: a matchall rule at prio 1 comes first"
check_err $? "xdp-flow status does not say that nothing runs in XDP: $(xdp-flow status)"
why=$(xf_rule_json xfv0 1 | jq -r 'select(.software) | .why')
[[ "$why" == "matchall rules stay in software"* ]]
check_err $? "xdp-flow show lists the matchall prio as '$why', not a software rule"
log_test "matchall police at pref 1 polices all $N packets ($got passed), none redirected in XDP"

RET=0
tc filter del dev xfv0 ingress pref 1
expect_xdp
xdp-flow -j status | jq -e '.devices[] | select(.dev == "xfv0") | has("all_to_stack_prio") | not' >/dev/null
check_err $? "xdp-flow status still says that every frame goes to the stack"
log_test "matchall police deleted: the flower redirect runs in XDP again"

# u32 drop; it is kept across disabling and enabling offload (the module
# keeps its place while the device is not enabled).
drop_case u32 u32 match ip dst 10.0.3.1/32

RET=0
"$XF_CLI" disable dev xfv0 >/dev/null
check_err $? "xdp-flow disable dev xfv0 failed"
xf_enable_dev xfv0 >/dev/null && wait_dev_attached xfv0 10
check_err $? "xdp-flow enable dev xfv0 failed again"
for _ in $(seq 50); do
	st=$(tc_hw_state "" xfv0 2)
	[ "$st" = in_hw ] && break
	sleep 0.2
done
[ "$st" = in_hw ]
check_err $? "the flower rule shows $st after enabling again, not in_hw"
hw0=$(hw_of_flower)
before=$(rule_packets 1)
send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+0 udp:xfc/veth_c+0
expect_shielded u32 1 "$before"
log_test "the u32 rule still comes first after offload is disabled and enabled again"
tc filter del dev xfv0 ingress pref 1

# bpf: a classic BPF program that matches every frame, action drop.
drop_case bpf bpf bytecode '1,6 0 0 4294967295,'

RET=0
tc filter del dev xfv0 ingress pref 1
expect_xdp
log_test "u32 and bpf drop deleted: the flower redirect runs in XDP again"

# ---- 2. the redirect's target goes away ----

# expect_dropped: $N packets dropped by TC's mirred, none by XDP.
expect_dropped()
{
	local hw0 pk0 pk why

	hw0=$(hw_of_flower)
	pk0=$(tc_stat "" xfv0 2 packets)
	send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+0 udp:xfc/veth_c+0
	pk=$(wait_value $((pk0 + N)) 5 tc_stat "" xfv0 2 packets)
	[ "$pk" = $((pk0 + N)) ]
	check_err $? "the rule counted $((pk - pk0)) packets, not $N"
	[ "$(hw_of_flower)" = "$hw0" ]
	check_err $? "the rule counted hardware packets after its target went away"
	why=$(xf_rule_json xfv0 2 | jq -r 'select(.software) | .why')
	[[ "$why" == "redirect target gone"* ]]
	check_err $? "xdp-flow show lists the rule with '$why', not as a software rule"
}

# xfv1_up: xfv1's address and state, as xf_veth_topology gives them.
xfv1_up()
{
	echo 1 >/proc/sys/net/ipv6/conf/xfv1/disable_ipv6 &&
	ip addr add 10.0.2.254/24 dev xfv1 &&
	ip link set dev xfv1 up &&
	ip neigh replace 10.0.2.1 lladdr "$XF_MAC_VETH_B" dev xfv1 nud permanent
}

# To another namespace and back: the same ifindex.
RET=0
idx=$(cat /sys/class/net/xfv1/ifindex)
ip netns add "$NS_TMP" &&
	ip link set dev xfv1 netns "$NS_TMP" &&
	ip -n "$NS_TMP" link set dev xfv1 netns 1 &&
	xfv1_up
check_err $? "cannot move xfv1 to $NS_TMP and back"
[ "$(cat /sys/class/net/xfv1/ifindex 2>/dev/null)" = "$idx" ]
check_err $? "xfv1 came back with another ifindex"
[ $RET -eq 0 ] && expect_dropped
log_test "target moved to another namespace and back: mirred drops all $N, XDP none"

# Deleted and made again with its ifindex.
RET=0
tc filter del dev xfv0 ingress pref 2
add_redirect
[ $RET -eq 0 ] && expect_xdp
ip link del dev xfv1 &&
	ip link add xfv1 index "$idx" address "$XF_MAC_XFV1" type veth \
		peer name veth_b address "$XF_MAC_VETH_B" netns xfb &&
	xfv1_up &&
	ip netns exec xfb ethtool -K veth_b gro on >/dev/null &&
	ip -n xfb link set dev veth_b up &&
	udp_counter_add xfb veth_b
check_err $? "cannot make xfv1 again with ifindex $idx"
[ $RET -eq 0 ] && expect_dropped
log_test "target deleted and made again with its ifindex: mirred drops all $N, XDP none"

# ---- 3. the target's egress path, at the XDP hook ----

EGRESS=/sys/fs/bpf/xdp_flow/xf_egress
# egress_is <dev> yes|no: whether <dev> has an xf_egress entry
egress_is()
{
	local idx got=no

	idx=$(cat "/sys/class/net/$1/ifindex") || return 1
	bpftool map lookup pinned $EGRESS key $((idx & 255)) \
		$((idx >> 8 & 255)) $((idx >> 16 & 255)) $((idx >> 24)) \
		>/dev/null 2>&1 && got=yes
	[ "$got" = "$2" ]
}

# egress_case <what> <check>: with <what> on xfv1 (its entry gone), $N
# packets end as TC alone ends them (<check> of veth_b), all counted by
# the flower rule, none in hardware. Then <what> goes (egress_del) and the
# entry comes back. The traffic in XDP, before the cases (the same rule and
# devices) and after each, is the one expect_xdp after the last: each send
# costs seconds in the emulated guest.
egress_case()
{
	local hw0 pk0 pk

	wait_for 5 egress_is xfv1 no
	check_err $? "xfv1 keeps its xf_egress entry with $1"
	hw0=$(hw_of_flower)
	pk0=$(tc_stat "" xfv0 2 packets)
	if [ "$2" = rate ]; then
		b0=$(udp_count xfb veth_b)
		send_udp xfa 10.0.3.1 $N
		check_err $? "send_udp failed"
		got=$(($(udp_count xfb veth_b) - b0))
		[ "$got" -gt 0 ] && [ "$got" -lt $((N / 2)) ]
		check_err $? "$got of $N packets passed $1"
	else
		send_expect xfa 10.0.3.1 $N -- "$2"
	fi
	pk=$(wait_value $((pk0 + N)) 5 tc_stat "" xfv0 2 packets)
	[ "$pk" = $((pk0 + N)) ]
	check_err $? "the flower rule counted $((pk - pk0)) packets, not $N"
	[ "$(hw_of_flower)" = "$hw0" ]
	check_err $? "the flower rule counted hardware packets past $1"
	egress_del
	wait_for 5 egress_is xfv1 yes
	check_err $? "no xf_egress entry for xfv1 once $1 went"
}

RET=0
tc filter del dev xfv0 ingress pref 2 &&
	"$XF_CLI" disable dev xfv0 >/dev/null &&
	"$XF_CLI" enable dev xfv0 hook xdp >/dev/null &&
	wait_dev_attached xfv0 10
check_err $? "cannot enable xfv0 again with hook xdp"
add_redirect
# The first device of the hook the helper did not load at start (xdp,
# where the kernel has tcx) waits for that program.
wait_dev_attached xfv0 10
check_err $? "xfv0 not attached at the xdp hook"
[ "$(xf_dev_hook xfv0)" = xdp ]
check_err $? "xfv0 runs hook $(xf_dev_hook xfv0), not xdp"
egress_is xfv1 yes
check_err $? "no xf_egress entry for xfv1"
log_test "xdp hook: flower redirect into xfv1 in_hw, xfv1's egress path empty"

RET=0
egress_del() { tc qdisc del dev xfv1 clsact; }
tc qdisc add dev xfv1 clsact &&
	tc filter add dev xfv1 egress pref 1 protocol ip matchall action drop
check_err $? "cannot add the egress matchall drop to xfv1"
egress_case "an egress matchall drop on xfv1" udp:xfb/veth_b+0
log_test "xdp hook: egress matchall drop on xfv1 drops all $N, none redirected in XDP"

# A frame that TC's ingress redirects skips netfilter's egress hook
# (skb->nf_skip_egress): the drop rule never sees it, with or without
# xdp_flow. The module still sends it to the stack: frames that
# nftables' own rules (fwd, flowtables) send out do meet the hook.
RET=0
egress_del() { nft delete table netdev xf_egress; }
nft -f - <<-EOT
	table netdev xf_egress {
		chain out {
			type filter hook egress device xfv1 priority 0;
			ip daddr 10.0.3.1 drop
		}
	}
EOT
check_err $? "cannot add the nftables egress chain on xfv1"
egress_case "an nftables egress chain on xfv1" udp:xfb/veth_b+$N
log_test "xdp hook: nftables egress chain on xfv1: all $N pass it, as mirred's do, none redirected in XDP"

# 8 kbit/s, a burst and a queue of 1600 bytes: some tens of the 60-byte
# frames pass at once, the rest of a burst of $N is dropped.
RET=0
egress_del() { tc qdisc del dev xfv1 root; }
tc qdisc add dev xfv1 root tbf rate 8kbit burst 1600 limit 1600
check_err $? "cannot add a tbf qdisc to xfv1"
egress_case "a tbf of 8 kbit/s on xfv1" rate
log_test "xdp hook: tbf on xfv1 shapes all $N ($got passed), none redirected in XDP"

RET=0
expect_xdp
log_test "xdp hook: the egress elements gone, the redirect runs in XDP again"

exit $EXIT_STATUS
