#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's two paths into a container's veth, on the host (real CPU,
# the host's kernel, no module): what bpf_redirect_peer() saves against a
# plain redirect, which the guest benchmark (section peer, emulated) cannot
# tell reliably.
#
#   bash bench/host/bench_peer.sh <outdir>        (as root)
#
# Three namespaces made here and removed at exit, named with this script's
# pid: a sender (S 10.0.6.1), a router (D 10.0.6.254 facing S, X
# 10.0.5.1, ifindex 4242) and a container (P 10.0.5.2, X's peer). S sends
# to P's address with P's MAC; a program on D's TC ingress
# (peer_redir.bpf.o) hands every frame from S to X:
#   plain  bpf_redirect(X): X transmits, veth queues to P's backlog
#   peer   bpf_redirect_peer(X): into P directly
# P's answers are routed back by the router. Traffic: iperf3 TCP
# (Gbit/s received) and UDP with 18-byte payloads (64-byte frames), -b 0,
# counted at the container's UDP layer (InDatagrams + InErrors a second);
# client on CPU 0, server on CPU 1, XF_PEER_SECS (4) each, the two
# configurations alternating over XF_PEER_REPS (5) rounds; medians, and
# X's tx_packets per datagram (about 0 with peer: X transmits nothing).
#
# Results: <outdir>/host_peer.csv, lines "peer_host,config,metric,value,unit"
# (tcp_gbps, udp_pps: medians; _run<N>; udp_ratio_to_plain,
# tcp_ratio_to_plain; x_tx_per_udp) and the table on stderr.

set -u
export LC_ALL=C

XF_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ $# -ne 1 ]; then
	echo "usage: $0 <outdir>" >&2
	exit 2
fi
OUT=$1
OBJ=$XF_TOP/bench/host/peer_redir.bpf.o
SECS=${XF_PEER_SECS:-4}
REPS=${XF_PEER_REPS:-5}
[ "${XF_BENCH_QUICK:-0}" = 1 ] && SECS=2 REPS=1
NR=xfpr_r_$$ NT=xfpr_t_$$ NC=xfpr_c_$$
P_MAC=02:0f:00:50:00:02 S_MAC=02:0f:00:60:00:01
CSV=$OUT/host_peer.csv

msg() { echo "bench_peer: $*" >&2; }

cleanup()
{
	local n

	for n in "$NR" "$NT" "$NC"; do
		ip netns pids "$n" 2>/dev/null | xargs -r kill 2>/dev/null
		ip netns del "$n" 2>/dev/null
	done
}
trap cleanup EXIT

for c in ip tc iperf3 jq taskset; do
	command -v $c >/dev/null || { msg "needs $c"; exit 1; }
done
[ -f "$OBJ" ] || { msg "build it first: make -C bench/host"; exit 1; }
mkdir -p "$OUT" || exit 1

setup()
{
	ip netns add "$NR" && ip netns add "$NT" && ip netns add "$NC" &&
	ip -n "$NR" link add D type veth peer name S address $S_MAC netns "$NT" &&
	ip -n "$NR" link add X index 4242 type veth peer name P \
		address $P_MAC netns "$NC" &&
	ip -n "$NR" -batch - <<EOF &&
addr add 10.0.6.254/24 dev D
addr add 10.0.5.1/24 dev X
link set lo up
link set D up
link set X up
neigh replace 10.0.6.1 lladdr $S_MAC dev D nud permanent
EOF
	ip netns exec "$NR" sysctl -qw net.ipv4.ip_forward=1 &&
	ip -n "$NT" -batch - <<EOF &&
addr add 10.0.6.1/24 dev S
link set lo up
link set S up
neigh replace 10.0.6.99 lladdr $P_MAC dev S nud permanent
route add 10.0.5.2/32 via 10.0.6.99
EOF
	ip -n "$NC" -batch - <<EOF &&
addr add 10.0.5.2/24 dev P
link set lo up
link set P up
route add default via 10.0.5.1
EOF
	tc -n "$NR" qdisc add dev D clsact
}

udp_in()
{
	ip netns exec "$NC" awk '/^Udp:/ { if (h) { print $2 + $3; exit } h = 1 }' \
		/proc/net/snmp
}

x_tx() { ip netns exec "$NR" cat /sys/class/net/X/statistics/tx_packets; }

# run <cfg> <round>: one UDP and one TCP run with <cfg> on D
run()
{
	local cfg=$1 r=$2 a b t0 t1 g

	tc -n "$NR" filter del dev D ingress 2>/dev/null
	tc -n "$NR" filter add dev D ingress pref 1 bpf da obj "$OBJ" \
		sec "classifier/$cfg" || return 1
	taskset -c 1 ip netns exec "$NC" iperf3 -s -1 -p 5301 >/dev/null 2>&1 &
	sleep 0.3
	a=$(udp_in) t0=$(x_tx)
	taskset -c 0 ip netns exec "$NT" iperf3 -c 10.0.5.2 -p 5301 -u -l 18 \
		-b 0 -t "$SECS" >/dev/null 2>&1
	b=$(udp_in) t1=$(x_tx)
	wait
	echo "peer_host,$cfg,udp_pps_run$r,$(((b - a) / SECS)),pps" >>"$CSV"
	echo "peer_host,$cfg,x_tx_per_udp_run$r,$(echo "scale=3; ($t1 - $t0) / ($b - $a + 1)" | bc),ratio" >>"$CSV"
	taskset -c 1 ip netns exec "$NC" iperf3 -s -1 -p 5302 >/dev/null 2>&1 &
	sleep 0.3
	g=$(taskset -c 0 ip netns exec "$NT" iperf3 -c 10.0.5.2 -p 5302 \
		-t "$SECS" -J 2>/dev/null |
	    jq '.end.sum_received.bits_per_second / 1e9')
	wait
	echo "peer_host,$cfg,tcp_gbps_run$r,$g,Gbit/s" >>"$CSV"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
metric() { grep "^peer_host,$1,$2_run" "$CSV" | cut -d, -f4 | median; }

: >"$CSV"
setup || { msg "set-up failed"; exit 1; }
for ((r = 1; r <= REPS; r++)); do
	for cfg in plain peer; do
		# the first configuration alternates
		[ $((r % 2)) = 0 ] && cfg=$([ $cfg = plain ] && echo peer || echo plain)
		run "$cfg" "$r" || { msg "$cfg failed"; exit 1; }
	done
done
for cfg in plain peer; do
	for m in udp_pps tcp_gbps x_tx_per_udp; do
		echo "peer_host,$cfg,$m,$(metric $cfg $m),$(
			case $m in udp_pps) echo pps ;; tcp_gbps) echo Gbit/s ;; *) echo ratio ;; esac)" >>"$CSV"
	done
done
for m in udp_pps tcp_gbps; do
	p=$(grep "^peer_host,plain,$m," "$CSV" | cut -d, -f4)
	q=$(grep "^peer_host,peer,$m," "$CSV" | cut -d, -f4)
	echo "peer_host,peer,${m%_*}_ratio_to_plain,$(echo "scale=3; $q / $p" | bc),ratio" >>"$CSV"
done
{
	echo "host $(uname -r), $REPS x ${SECS}s, medians"
	printf '%-6s %10s %9s %12s\n' config "udp pps" "tcp Gb/s" "X tx/udp"
	for cfg in plain peer; do
		printf '%-6s %10s %9.2f %12s\n' $cfg "$(metric $cfg udp_pps)" \
			"$(metric $cfg tcp_gbps)" "$(metric $cfg x_tx_per_udp)"
	done
	grep "_ratio_to_plain" "$CSV"
} >&2
