#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The helper driven directly (--driver, no module) with real packets over
# veth pairs in namespaces of its own:
#
#   xfh_s: xfh_s0 10.99.1.1 ---- xfh_m0 10.99.1.2  (XDP here)   xfh_m
#                                 xfh_m1 10.99.2.2 ---- xfh_d0 10.99.2.1  xfh_d
#                                 xfh_m2 ------------- xfh_r0 10.99.2.1  xfh_r
#
# xfh_m routes s -> d. A redirect rule sends the frames out of xfh_m2
# instead; xfh_r0 has xfh_m0's MAC address and d's IP address, so it takes
# them as its own. The helper runs in xfh_m's network namespace (nsenter:
# the mount namespace, and so /sys/fs/bpf, stays the host's).
#
# XF_HOOK=tc: the same through the TC hook (tcx, Linux 6.6 or later).

source "$(dirname "$0")/../lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
UMH_BIN="$XF_ROOT/umh/xdp_flow_umh"
PIN=/sys/fs/bpf/xdp_flow
N=20
PAYLOAD=100
BYTES=$((N * (20 + 8 + PAYLOAD)))	# TC counts from the IP header
UMH_PID=
HOOK=${XF_HOOK:-xdp}
MODE=		# the attach command's mode word
[ "$HOOK" = tc ] && MODE=tc

require_root
require_cmd nsenter
require_cmd python3

cleanup()
{
	if [ -n "$UMH_PID" ]; then
		kill -9 "$UMH_PID" 2>/dev/null
		wait "$UMH_PID" 2>/dev/null
	fi
	ns_cleanup
	# Links of deleted devices are dead; the maps go with the directory.
	rm -rf "$PIN"
}
trap cleanup EXIT

setup()
{
	ns_create xfh_s xfh_m xfh_d xfh_r || return 1
	ip -n xfh_s link add xfh_s0 type veth peer name xfh_m0 netns xfh_m &&
	ip -n xfh_m link add xfh_m1 type veth peer name xfh_d0 netns xfh_d &&
	ip -n xfh_m link add xfh_m2 type veth peer name xfh_r0 netns xfh_r ||
		return 1
	ip -n xfh_s addr add 10.99.1.1/24 dev xfh_s0
	ip -n xfh_m addr add 10.99.1.2/24 dev xfh_m0
	ip -n xfh_m addr add 10.99.2.2/24 dev xfh_m1
	ip -n xfh_d addr add 10.99.2.1/24 dev xfh_d0
	ip -n xfh_r addr add 10.99.2.1/24 dev xfh_r0
	ip -n xfh_r link set dev xfh_r0 address \
		"$(ip -n xfh_m -br link show xfh_m0 | awk '{print $3}')"
	for l in xfh_s:xfh_s0 xfh_m:xfh_m0 xfh_m:xfh_m1 xfh_m:xfh_m2 \
		 xfh_d:xfh_d0 xfh_r:xfh_r0; do
		ip -n "${l%%:*}" link set dev "${l#*:}" up || return 1
	done
	ip -n xfh_s route add default via 10.99.1.2 &&
	ip -n xfh_d route add default via 10.99.2.2 &&
	ip -n xfh_r route add default dev xfh_r0 || return 1
	ip netns exec xfh_m sysctl -qw net.ipv4.ip_forward=1
	# XDP_REDIRECT into a veth needs GRO (or XDP) on its peer.
	ip netns exec xfh_r ethtool -K xfh_r0 gro on >/dev/null
	# A veth sender leaves UDP checksums to "hardware" (CHECKSUM_PARTIAL);
	# XDP sees only the bytes, so a redirected frame would arrive with a
	# bad checksum. Real senders put the checksum on the wire.
	ip netns exec xfh_s ethtool -K xfh_s0 tx off >/dev/null
	ip netns exec xfh_s ping -q -c 1 -W 2 10.99.2.1 >/dev/null ||
		ip netns exec xfh_s ping -q -c 1 -W 2 10.99.2.1 >/dev/null
}

umh_start()
{
	coproc HELPER { exec nsenter --net=/run/netns/xfh_m "$UMH_BIN" \
		--driver --log=stderr 2>>"$LOG"; }
	UMH_PID=$HELPER_PID
}

# umh <request>: one request to the helper; its reply line in $REPLY.
umh()
{
	REPLY=
	echo "$*" >&"${HELPER[1]}" || return 1
	read -r -t 10 REPLY <&"${HELPER[0]}" || return 1
	echo "# > $* < $REPLY" >>"$LOG"
	[[ $REPLY == ok* ]]
}

# field <name>: the value of name=... in $REPLY.
field()
{
	sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$REPLY"
}

# traffic <port>: send N datagrams s -> 10.99.2.1:<port>; sets GOT_D and
# GOT_R, what arrived at xfh_d and at xfh_r.
traffic()
{
	local port=$1 tmp pd pr

	tmp=$(mktemp -d /tmp/xfh_traffic.XXXXXX)
	ip netns exec xfh_d python3 "$HERE/udp.py" recv "$port" \
		"$tmp/ready_d" "$tmp/stop" >"$tmp/d" &
	pd=$!
	ip netns exec xfh_r python3 "$HERE/udp.py" recv "$port" \
		"$tmp/ready_r" "$tmp/stop" >"$tmp/r" &
	pr=$!
	for _ in $(seq 300); do
		[ -e "$tmp/ready_d" ] && [ -e "$tmp/ready_r" ] && break
		sleep 0.1
	done
	ip netns exec xfh_s python3 "$HERE/udp.py" send 10.99.2.1 "$port" \
		"$N" "$PAYLOAD"
	touch "$tmp/stop"
	# Not a bare wait: the helper is a child too.
	wait "$pd" "$pr"
	GOT_D=$(cat "$tmp/d")
	GOT_R=$(cat "$tmp/r")
	rm -rf "$tmp"
}

# dp_on_dev: the datapath is on xfh_m0 (for tc: a tcx link exists, which
# only this test's helper makes here).
dp_on_dev()
{
	if [ "$HOOK" = tc ]; then
		bpftool -j link list |
			jq -e '[.[] | select(.type == 11 or .type == "tcx")] | length > 0' >/dev/null
	else
		ip -n xfh_m -d link show dev xfh_m0 | grep -q "prog/xdp"
	fi
}

LOG=$(mktemp /tmp/xfh_umh.XXXXXX.log)
rm -rf "$PIN"

RET=0
setup
check_err $? "topology setup failed"
log_test "veth topology in namespaces xfh_*"
[ "$RET" -eq 0 ] || exit 1

RET=0
traffic 5001
[ "$GOT_D" -eq "$N" ]
check_err $? "without the helper $GOT_D of $N arrived"
log_test "control: traffic s -> d is routed"

RET=0
umh_start
umh attach xfh_m0 $MODE
check_err $? "attach: $REPLY"
dp_on_dev
check_err $? "no $HOOK program on xfh_m0"
[ -e "$PIN/link_$(ip netns exec xfh_m cat /sys/class/net/xfh_m0/ifindex)" ]
check_err $? "link not pinned"
[ "$HOOK" = xdp ] || ! ip -n xfh_m -d link show dev xfh_m0 | grep -q "prog/xdp"
check_err $? "an XDP program on xfh_m0 with the tc hook"
log_test "$HOOK hook: helper attaches to xfh_m0 through a pinned link"

RET=0
umh add id=1 prio=1 dev=xfh_m0 dst_ip=10.99.2.1 ip_proto=udp dst_port=5001 \
	action=drop
check_err $? "add: $REPLY"
traffic 5001
[ "$GOT_D" -eq 0 ]
check_err $? "$GOT_D of $N dropped datagrams arrived"
umh stats id=1
[ "$(field packets)" = "$N" ] && [ "$(field bytes)" = "$BYTES" ]
check_err $? "counters: $REPLY (expected packets=$N bytes=$BYTES)"
log_test "$HOOK hook: drop rule: nothing arrives, counted $N packets, $BYTES bytes"

# The XDP hook redirects only into devices whose egress path the module
# found empty (xf_egress, written by the module alone): stand in for it.
egress_empty()
{
	local idx

	idx=$(ip netns exec xfh_m cat "/sys/class/net/$1/ifindex") &&
	bpftool map update pinned "$PIN/xf_egress" key $((idx & 255)) \
		$((idx >> 8 & 255)) $((idx >> 16 & 255)) $((idx >> 24)) \
		value 1 0 0 0 0 0 0 0
}

RET=0
umh add id=2 prio=1 dev=xfh_m0 dst_ip=10.99.2.1 ip_proto=udp dst_port=5002 \
	action=redirect:xfh_m2
check_err $? "add: $REPLY"
egress_empty xfh_m2
check_err $? "cannot write xfh_m2's xf_egress entry"
traffic 5002
[ "$GOT_R" -eq "$N" ] && [ "$GOT_D" -eq 0 ]
check_err $? "redirected: $GOT_R at r, $GOT_D at d (expected $N, 0)"
umh stats id=2
[ "$(field packets)" = "$N" ]
check_err $? "counters: $REPLY"
log_test "$HOOK hook: redirect rule delivers $N packets through xfh_m2"

RET=0
umh del id=1
check_err $? "del: $REPLY"
traffic 5001
[ "$GOT_D" -eq "$N" ]
check_err $? "after delete $GOT_D of $N arrived"
log_test "delete takes effect at once"

RET=0
umh add id=1 prio=1 dev=xfh_m0 dst_ip=10.99.2.1 ip_proto=udp dst_port=5001 \
	action=drop
umh add id=3 prio=1 dev=xfh_m0 dst_ip=10.99.2.1 ip_proto=udp dst_port=5003 \
	action=drop
check_err $? "add: $REPLY"
traffic 5001
kill -9 "$UMH_PID"
wait "$UMH_PID" 2>/dev/null
UMH_PID=
traffic 5001
[ "$GOT_D" -eq 0 ]
check_err $? "with the helper dead $GOT_D of $N arrived"
dp_on_dev
check_err $? "$HOOK program gone with the helper"
log_test "$HOOK hook: SIGKILL: pinned link and maps keep dropping"

RET=0
umh_start
umh add id=1 prio=1 dev=xfh_m0 dst_ip=10.99.2.1 ip_proto=udp dst_port=5001 \
	action=drop
check_err $? "replay add 1: $REPLY"
umh add id=2 prio=1 dev=xfh_m0 dst_ip=10.99.2.1 ip_proto=udp dst_port=5002 \
	action=redirect:xfh_m2
check_err $? "replay add 2: $REPLY"
umh attach xfh_m0 $MODE
check_err $? "replay attach: $REPLY"
umh stats id=3
check_err $? "before sync rule 3 must still be there: $REPLY"
umh sync
check_err $? "sync: $REPLY"
umh stats id=1
[ "$(field packets)" = "$((2 * N))" ]
check_err $? "counters across the restart: $REPLY (expected $((2 * N)))"
umh stats id=3
check_fail $? "rule 3 not replayed but still there: $REPLY"
traffic 5003
[ "$GOT_D" -eq "$N" ]
check_err $? "rule 3 still drops: $GOT_D of $N arrived"
traffic 5001
[ "$GOT_D" -eq 0 ]
check_err $? "rule 1 lost: $GOT_D of $N arrived"
log_test "$HOOK hook: restart: replay + sync keeps counters, drops what was not replayed"

RET=0
if [ "$HOOK" = tc ]; then
	# From tc to XDP and back: each switch replaces the link.
	umh attach xfh_m0
	check_err $? "attach native: $REPLY"
	ip -n xfh_m -d link show dev xfh_m0 | grep -q "prog/xdp"
	check_err $? "no XDP program after switching to xdp"
	dp_on_dev
	check_fail $? "tcx link left after switching to xdp"
	traffic 5001
	[ "$GOT_D" -eq 0 ]
	check_err $? "after switching to xdp: $GOT_D of $N dropped datagrams arrived"
	umh attach xfh_m0 tc
	check_err $? "back to tc: $REPLY"
	ip -n xfh_m -d link show dev xfh_m0 | grep -q "prog/xdp"
	check_fail $? "XDP program left after switching back to tc"
	dp_on_dev
	check_err $? "no tcx link after switching back"
	traffic 5001
	[ "$GOT_D" -eq 0 ]
	check_err $? "back on tc: $GOT_D of $N dropped datagrams arrived"
	log_test "tc hook: switching to xdp and back replaces the link"
fi

RET=0
if [ "$HOOK" = xdp ]; then
umh attach xfh_m0 generic
check_err $? "attach generic: $REPLY"
ip -n xfh_m -d link show dev xfh_m0 | grep -q "xdpgeneric"
check_err $? "no generic XDP program on xfh_m0"
traffic 5001
[ "$GOT_D" -eq 0 ]
check_err $? "generic mode: $GOT_D of $N dropped datagrams arrived"
umh attach xfh_m0
check_err $? "back to native: $REPLY"
ip -n xfh_m -d link show dev xfh_m0 | grep -q "xdpgeneric"
check_fail $? "still in generic mode"
dp_on_dev
check_err $? "no native XDP program after switching back"
log_test "generic mode only when asked; switching modes replaces the link"
fi

RET=0
umh detach xfh_m0
check_err $? "detach: $REPLY"
dp_on_dev
check_fail $? "$HOOK program still on xfh_m0 after detach"
[ ! -e "$PIN/link_$(ip netns exec xfh_m cat /sys/class/net/xfh_m0/ifindex)" ]
check_err $? "link still pinned after detach"
umh detach xfh_m0
check_err $? "detaching twice: $REPLY"
log_test "$HOOK hook: detach removes the program and the pinned link"

RET=0
umh attach xfh_m0 $MODE
check_err $? "attach again: $REPLY"
umh shutdown
check_err $? "shutdown: $REPLY"
wait "$UMH_PID"
check_err $? "helper exit status $?"
UMH_PID=
dp_on_dev
check_fail $? "$HOOK program still on xfh_m0"
[ ! -e "$PIN" ]
check_err $? "$PIN still exists: $(ls "$PIN" 2>&1)"
log_test "$HOOK hook: shutdown: no program left, nothing under $PIN"

if [ "$EXIT_STATUS" -ne 0 ]; then
	echo "# helper log ($LOG):"
	sed 's/^/#   /' "$LOG"
fi
rm -f "$LOG"
exit "$EXIT_STATUS"
