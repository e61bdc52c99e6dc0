# SPDX-License-Identifier: GPL-2.0
#
# nftables flowtables for the guest tests (test_39, test_40): the root
# namespace of the standard scene routes between xfa and xfb through an
# inet flowtable on xfv0 and xfv1 and masquerades what leaves through
# xfv1; IPv6 on xfb's link too (fd00:2::/64), a VLAN (10.0.4.0/24 on
# xfv1.10) on request. Sourced after selftests/lib.sh,
# selftests/guest/lib.sh and offload_lib.sh.

FT_TABLE=xfft
FT_UDP_TIMEOUT=net.netfilter.nf_flowtable_udp_timeout
FT_TCP_TIMEOUT=net.netfilter.nf_flowtable_tcp_timeout
FT_TMPD=$(mktemp -d /tmp/xf-ft.XXXXXX)
FT_SYSCTLS=()	# "name=value" as they were before ft_sysctl

# ft_sysctl <name> <value>: set a sysctl for a while; ft_sysctl_restore
# (or ft_cleanup) puts back the value it had before the first change.
ft_sysctl()
{
	local old

	old=$(sysctl -n "$1") || return 1
	FT_SYSCTLS+=("$1=$old")
	sysctl -qw "$1=$2"
}

# ft_sysctl_restore: what ft_sysctl changed, back as it was.
ft_sysctl_restore()
{
	local i

	for ((i = ${#FT_SYSCTLS[@]} - 1; i >= 0; i--)); do
		sysctl -qw "${FT_SYSCTLS[i]}"
	done
	FT_SYSCTLS=()
}

# ft_cleanup: for the EXIT trap: the sysctls, the tables, the scene, the
# module, conntrack's entries, FT_TMPD.
ft_cleanup()
{
	ft_sysctl_restore
	nft delete table inet $FT_TABLE 2>/dev/null
	nft delete table netdev xfho 2>/dev/null
	xf_test_cleanup
	conntrack -F >/dev/null 2>&1
	conntrack -F -f ipv6 >/dev/null 2>&1
	rm -rf "$FT_TMPD"
}

# ft_require: the tools the flowtable tests use.
ft_require()
{
	require_cmd nft
	require_cmd conntrack
	require_cmd nstat
}

# ft_rules <dev> [jq condition]: the flowtable rules xdp-flow show lists
# on <dev> in XDP, and no longer in flight (those that meet the
# condition): a flow's change in flight holds it back until the module
# has checked it (net/xdp_flow/install.c).
ft_rules()
{
	timeout 20 "$XF_CLI" -j show dev "$1" |
		jq "[.[] | select(.source == \"flowtable\" and (.software | not) and
				 (.in_flight | not)) |
		     select(${2:-true})] | length"
}

# ft_packets <dev> <ip_proto> [packets|bytes] [jq condition]: what XDP
# counted for the flowtable's rules of that protocol on <dev> (those that
# meet the condition on the rule, such as '.key.src_port == 4000').
ft_packets()
{
	timeout 20 "$XF_CLI" -j show dev "$1" |
		jq "[.[] | select(.source == \"flowtable\" and .key.ip_proto == \"$2\") |
		     select(${4:-true}) | .stats.${3:-packets}] | add // 0"
}

# ct_offloaded <proto>: conntrack entries of that protocol marked HW_OFFLOAD.
ct_offloaded()
{
	conntrack -L -p "$1" 2>/dev/null | grep -c "HW_OFFLOAD"
}

# snmp <ns> <counter>: a counter of nstat's in namespace <ns> ("" = root).
snmp()
{
	local -a pre=()

	[ -n "$1" ] && pre=(ip netns exec "$1")
	"${pre[@]}" nstat -asz "$2" |
		awk -v k="$2" '$1 == k { print $2; f = 1 } END { exit !f }'
}

# csum_offload <on|off>: the clients' transmit checksum offload. Off, the
# senders compute every transport checksum and the receivers verify it
# (a veth passes CHECKSUM_PARTIAL on, and nothing checks it).
csum_offload()
{
	ip netns exec xfa ethtool -K veth_a tx "$1" >/dev/null &&
	ip netns exec xfb ethtool -K veth_b tx "$1" >/dev/null
}

# ft_table [offload]: the table: the flowtable on xfv0 and xfv1 (with
# flags offload when asked), the forward chain that puts TCP and UDP
# connections into it, masquerade out of xfv1. The rules count what they
# see (the forward chain sees only what the flowtable leaves to the
# stack).
ft_table()
{
	local flags=

	[ "${1:-}" = offload ] && flags="flags offload;"
	nft -f - <<EOF
table inet $FT_TABLE {
	flowtable f {
		hook ingress priority 0; devices = { xfv0, xfv1 }; $flags
	}
	chain forwarding {
		type filter hook forward priority 0; policy accept;
		meta l4proto udp counter flow add @f comment "udp"
		meta l4proto tcp counter flow add @f comment "tcp"
	}
	chain masq {
		type nat hook postrouting priority 100; policy accept;
		oifname "xfv1" counter masquerade comment "masquerade"
	}
}
EOF
}

# ft_counters: the table's rule counters, one "<chain> <comment> <packets>
# <bytes>" line a rule.
ft_counters()
{
	nft -j list table inet $FT_TABLE |
		jq -r '.nftables[] | select(.rule) | .rule as $r |
		       $r.expr[] | select(.counter) |
		       "\($r.chain) \($r.comment // "-") \(.counter.packets) \(.counter.bytes)"'
}

# ft_ipv6_setup: IPv6 on xfb's link (fd00:2::254 on xfv1, fd00:2::1 on
# veth_b), static neighbours as the rest of the scene has.
ft_ipv6_setup()
{
	echo 0 >/proc/sys/net/ipv6/conf/xfv1/disable_ipv6 &&
	ip -batch - <<EOF &&
addr add fd00:2::254/64 dev xfv1 nodad
neigh replace fd00:2::1 lladdr $XF_MAC_VETH_B dev xfv1 nud permanent
EOF
	ip netns exec xfb sh -c "echo 0 >/proc/sys/net/ipv6/conf/veth_b/disable_ipv6" &&
	ip -n xfb -batch - <<EOF
addr add fd00:2::1/64 dev veth_b nodad
route add default via fd00:2::254
neigh replace fd00:2::254 lladdr $XF_MAC_XFV1 dev veth_b nud permanent
EOF
}

# ft_vlan_setup: VLAN 10 between the router and xfb, 10.0.4.0/24 on
# xfv1.10 and veth_b.10 (not masqueraded: oifname is xfv1.10).
ft_vlan_setup()
{
	ip -batch - <<EOF &&
link add link xfv1 name xfv1.10 type vlan id 10
addr add 10.0.4.254/24 dev xfv1.10
link set dev xfv1.10 up
neigh replace 10.0.4.1 lladdr $XF_MAC_VETH_B dev xfv1.10 nud permanent
EOF
	ip -n xfb -batch - <<EOF
link add link veth_b name veth_b.10 type vlan id 10
addr add 10.0.4.1/24 dev veth_b.10
link set dev veth_b.10 up
route add 10.0.1.0/24 via 10.0.4.254 dev veth_b.10
neigh replace 10.0.4.254 lladdr $XF_MAC_XFV1 dev veth_b.10 nud permanent
EOF
}

# udp_flow <sport> <dport> <dst> <back-dst>: a UDP connection from xfa's
# <sport> to <dst>:<dport> and an answer from xfb back to <back-dst>
# (where the router masquerades it), in software; the forward chain then
# puts it in the flowtable and, with flags offload, the kernel offers both
# directions. The forward chain offers the connection once conntrack has
# confirmed its entry, at the second datagram; the first goes alone, so
# that none arrives with it. A veth with an XDP program (xdp_flow enabled)
# receives in NAPI batches, handed to the stack as lists, and a datagram
# of the first one's batch would meet no confirmed entry either: one more
# datagram through the forward chain, by chance (test_40 compares those
# counters).
udp_flow()
{
	send_udp xfa "$3" 1 "$2" 18 "$1" &&
	send_udp xfa "$3" 2 "$2" 18 "$1" &&
	send_udp xfb "$4" 3 "$1" 18 "$2"
}
