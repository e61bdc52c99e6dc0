# SPDX-License-Identifier: GPL-2.0
#
# VXLAN and Geneve for the guest tests of tunnels (test_46, test_48): the
# host carries a VXLAN device in external mode, xfx (port 4789, as Open
# vSwitch's vxlan_sys_4789), and a Geneve device in external mode, xfg
# (genev_sys_6081); xfb, the remote hypervisor, a VXLAN device vxb and a
# Geneve device gnb (VNI 42 both, address XF_MAC_XFV0) over veth_b, the
# underlay, whose other end is xfv1 (10.0.2.254). vxb has 192.168.42.2/24,
# gnb 192.168.43.2/24, each with a UDP counter. Sourced after
# selftests/lib.sh, selftests/guest/lib.sh and offload_lib.sh.

TUN_VNI=42

# tunnel_require: skips the test unless the kernel has VXLAN, Geneve and
# act_tunnel_key.
tunnel_require()
{
	local m

	for m in vxlan geneve act_tunnel_key; do
		if ! modprobe "$m" 2>/dev/null; then
			log_skip "$(basename "$0")" "the kernel has no $m"
			exit $ksft_skip
		fi
	done
}

# tunnel_setup: the devices above, after xf_test_setup.
tunnel_setup()
{
	ip link add xfx type vxlan external dstport 4789 &&
		ip link set xfx up &&
		ip link add xfg type geneve external &&
		ip link set xfg up &&
		ip -n xfb link add vxb address "$XF_MAC_XFV0" type vxlan \
			id $TUN_VNI local 10.0.2.1 remote 10.0.2.254 \
			dstport 4789 dev veth_b &&
		ip netns exec xfb sysctl -qw net.ipv6.conf.vxb.disable_ipv6=1 &&
		ip -n xfb addr add 192.168.42.2/24 dev vxb &&
		ip -n xfb link set vxb up &&
		ip -n xfb link add gnb address "$XF_MAC_XFV0" type geneve \
			id $TUN_VNI remote 10.0.2.254 &&
		ip netns exec xfb sysctl -qw net.ipv6.conf.gnb.disable_ipv6=1 &&
		ip -n xfb addr add 192.168.43.2/24 dev gnb &&
		ip -n xfb link set gnb up &&
		udp_counter_add xfb vxb && udp_counter_add xfb gnb
}

# tunnel_refused <dev> <pref> <what> <reason> <tc's output>: checks of
# the current group that <dev>'s rule <pref> (<what>) stays in software,
# tc's output naming <reason> where the hook ($hook) is tc.
tunnel_refused()
{
	[ "$(tc_hw_state "" "$1" "$2")" = not_in_hw ]
	check_err $? "$3 is in_hw"
	if [ "$hook" = tc ]; then
		echo "$5" | grep -q "$4"
		check_err $? "tc printed no reason for $3 ($4): '$5'"
	fi
}

# tunnel_cleanup: the host's tunnel devices (the namespaces' go with them).
tunnel_cleanup()
{
	ip link del xfx 2>/dev/null
	ip link del xfg 2>/dev/null
}

# tunnel_act_stat <dev> <pref> <field>: a field of the stats of the last
# action (the redirect, or a drop) of <dev>'s filter <pref>: packets
# (software and hardware together), hw_packets. TC gives hardware
# counters to every action of an offloaded rule but tunnel_key, which has
# no stats_update (for every driver): the last action's are the rule's.
tunnel_act_stat()
{
	tc_filter_json "" "$1" "$2" '(.options.actions[-1].stats // {}) |
		.[$f] // 0' --arg f "$3"
}

# tunnel_normalize <pcap> <from-to>...: each frame in hex, one a line,
# with the bytes of each range zeroed (what differs between two runs of
# the same datagrams: IPv4 ids, the checksums that cover them).
tunnel_normalize()
{
	"$XF_PYTHON" - "$@" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
zero = [tuple(map(int, r.split("-"))) for r in sys.argv[2:]]
off = 24
while off + 16 <= len(d):
    incl = struct.unpack_from("<I", d, off + 8)[0]
    f = bytearray(d[off + 16:off + 16 + incl])
    off += 16 + incl
    for a, b in zero:
        if len(f) >= b:
            f[a:b] = bytes(b - a)
    print(f.hex())
PY
}

# tunnel_capture <file> <ns> <dev> <pcap filter> <from-to,...>
# <send_expect args...>: send_expect, with what arrives at <dev> in <ns>
# and passes the filter captured, normalized (tunnel_normalize with the
# ranges) into <file>.
tunnel_capture()
{
	local file=$1 ns=$2 dev=$3 filter=$4 zero=$5 pid i

	shift 5
	ip netns exec "$ns" tcpdump -i "$dev" -Q in -n -Z root -s 256 -U \
		-w "$file.pcap" "$filter" 2>"$file.err" &
	pid=$!
	for i in $(seq 50); do
		grep -q "listening on" "$file.err" 2>/dev/null && break
		sleep 0.1
	done
	send_expect "$@"
	sleep 0.5
	kill "$pid"
	wait "$pid" 2>/dev/null
	# shellcheck disable=SC2046  # the ranges: words
	tunnel_normalize "$file.pcap" $(tr , ' ' <<<"$zero") >"$file"
}

# tunnel_compare <TC's capture> <offload's capture> <n>: a check of the
# current group that the two are the same <n> frames.
tunnel_compare()
{
	local d

	d=$(diff "$1" "$2")
	check_err $? "the frames differ from TC's (< TC, > offload): $(echo "$d" | grep '^[<>]' | head -n 2 | cut -c1-200 | paste -sd ';')"
	[ "$(wc -l <"$2")" = "$3" ]
	check_err $? "captured $(wc -l <"$2") frames, not $3"
}

# tunnel_queue_check <dev> <pk spec> <hw spec> <n> <send_expect args...>:
# with a queueing qdisc on <dev>, the rule's <n> frames go through TC
# (<pk spec> moves by <n>, <hw spec> not); without it, through the tc
# hook again (both move by <n>). The module sees the qdisc come and go as
# rtnetlink announces it.
tunnel_queue_check()
{
	local dev=$1 pk=$2 hw=$3 n=$4

	shift 4
	tc qdisc add dev "$dev" root pfifo
	check_err $? "cannot add a qdisc to $dev"
	sleep "$XF_PACE"
	send_expect "$@" "$pk+$n" "$hw+0"
	tc qdisc del dev "$dev" root
	check_err $? "cannot delete $dev's qdisc"
	sleep "$XF_PACE"
	send_expect "$@" "$pk+$n" "$hw+$n"
}
