#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The miss path on the host (real CPU, the host's kernel): what xdp_flow
# costs the traffic that matches none of its rules, on a veth.
#
#   bash bench/host/bench_miss.sh <outdir>        (as root)
#
# Two network namespaces xfmiss_a_<pid> and xfmiss_b_<pid> (<pid>: this
# script's; below xfmiss_a and xfmiss_b) joined by a veth pair (xfm_a
# 10.199.0.1 -- xfm_b 10.199.0.2), made here and removed at exit (and
# those of a run that died, at the start of the next). One run at a time:
# a second run waits for the first (a lock), as both would measure each
# other.
# Traffic from a to b, received on xfm_b, where each configuration puts
# (or does not put) a program:
#
#   disabled       nothing on xfm_b
#   xdp            the helper (umh/xdp_flow_umh --driver --no-pin, run in
#                  xfmiss_b): "attach xfm_b", one rule that matches none of
#                  the traffic (dst_ip 192.0.2.99 action drop)
#   tc             the same with "attach xfm_b tc" (the TC-BPF hook,
#                  attached through tcx); not measured, with the reason,
#                  when the helper refuses it or attaches something else
#   bare_xdp_pass  a program that only returns XDP_PASS (miss_pass.bpf.o,
#                  native mode): what any XDP program costs here
#   bare_tc_pass   a cls_bpf direct-action program that only returns
#                  TC_ACT_OK, at clsact ingress (iproute2 cannot attach
#                  through tcx): what any TC program costs here
#
# Before the rule that is measured, the helper's configurations are
# checked: the program is where the configuration says (XDP on the device
# or not), and a probe rule matching a few UDP datagrams counts them (the
# datapath sees the device's packets); the probe is deleted again.
#
# Traffic, one configuration at a time, round robin over the repetitions
# (a busy spell of the machine hits every configuration alike), each
# configuration set up just before its runs and removed after them:
#   tcp  iperf3 -c ... -t SECS -O 1 -J: end.sum_received.bits_per_second
#   udp  iperf3 -u -l 64 -b 0 (64-byte payloads, as fast as one sender
#        goes): datagrams a second that reached xfmiss_b's UDP layer
#        (Udp InDatagrams + InErrors over SECS seconds, after a second of
#        warm-up): delivered to the socket, or dropped there because the
#        reader was behind; also those delivered alone, what xfm_b
#        received and what the client sent
# The machine may be shared: the CPU time that processes outside this
# script's session (kernel threads left out) take during each tcp or udp
# run is read from /proc; a run during which they took more than
# XF_MISS_FOREIGN_MAX (0.05) of a CPU is run again, up to XF_MISS_TRIES (3)
# times in all, then kept and counted as disturbed (processes that start
# and end within a run escape this count); after two runs in a row that
# stayed disturbed, the machine is taken as busy and runs are no longer
# repeated (noted). The medians are those of the
# undisturbed runs (of all runs when every run was disturbed); best is
# the fastest of all.
# The client is pinned to CPU 0, the server to CPU 1. veth receives in
# the sender's context: the receive path up to the socket, and with it
# any program on xfm_b, runs on CPU 0 with the sender, so the sender's
# rate is what the receive path allows; the server's reads on CPU 1 only
# decide how many of those datagrams reach it.
#
# Results: <outdir>/host_miss.csv, lines "miss_host,config,metric,value,unit"
# (no header, as host.csv): tcp_gbps and udp_pps (medians), _best (the
# fastest run: a busy machine only slows a run down), _run<N> for each
# run, tcp_ratio_to_disabled and udp_ratio_to_disabled (of the medians),
# tcp_best_ratio_to_disabled and udp_best_ratio_to_disabled,
# udp_delivered_pps, udp_dev_pps, udp_sent_pps, udp_sock_drops_ps
# (medians), tcp_disturbed_runs and udp_disturbed_runs, measured (flag); <outdir>/host_miss_notes.txt (what was not measured, and why),
# <outdir>/host_miss.txt (the table). Exits non-zero only when disabled
# could not be measured.
#
# Env: XF_MISS_SECS (5), XF_MISS_REPS (5), XF_MISS_CONFIGS (the five above),
#      XF_BENCH_QUICK=1 (2 s, 1 repetition: a smoke run), XF_MISS_KEEP=1
#      (keep the helper's log in <outdir>).

set -u
export LC_ALL=C

XF_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ $# -ne 1 ]; then
	echo "usage: $0 <outdir>" >&2
	exit 2
fi
mkdir -p "$1" || exit 1
OUT=$(cd "$1" && pwd)

if [ "${XF_BENCH_QUICK:-0}" = 1 ]; then
	d_secs=2 d_reps=1
else
	d_secs=5 d_reps=5
fi
SECS=${XF_MISS_SECS:-$d_secs}
REPS=${XF_MISS_REPS:-$d_reps}
FOREIGN_MAX=${XF_MISS_FOREIGN_MAX:-0.05}
TRIES=${XF_MISS_TRIES:-3}
BUSY=0
read -r -a CONFIGS <<<"${XF_MISS_CONFIGS:-disabled xdp tc bare_xdp_pass bare_tc_pass}"

SEC=miss_host
NSA=xfmiss_a_$$
NSB=xfmiss_b_$$
LOCK=/tmp/xdp_flow_bench_miss.lock
DEVA=xfm_a
DEVB=xfm_b
IPA=10.199.0.1
IPB=10.199.0.2
MACA=02:0f:00:99:00:01
MACB=02:0f:00:99:00:02
PORT=5299
NOMATCH=192.0.2.99
UMH=$XF_TOP/umh/xdp_flow_umh
PASS_OBJ=$XF_TOP/bench/host/miss_pass.bpf.o

CSV=$OUT/host_miss.csv
NOTES=$OUT/host_miss_notes.txt
TXT=$OUT/host_miss.txt
TMP=
SRV_PID=
UMH_PID=
START=$SECONDS

log()
{
	echo "# [$((SECONDS - START))s] $*" >&2
}

csv()
{
	echo "$SEC,$1,$2,$3,$4" >>"$CSV"
}

# note <config> <text>: why something was not measured (or looks odd).
note()
{
	log "$1: $2"
	echo "$1: $2" >>"$NOTES"
}

calc()
{
	awk "BEGIN { printf \"%.10g\n\", ($1) }"
}

median()
{
	[ $# -gt 0 ] || return 1
	printf '%s\n' "$@" | sort -g |
		awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2];
			else printf "%.10g\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# ------------------------------------------------------------ topology

topo_del()
{
	ip netns del $NSA 2>/dev/null
	ip netns del $NSB 2>/dev/null
	return 0
}

# stale_del: the namespaces of runs whose script is gone.
stale_del()
{
	local ns pid

	for ns in $(ip netns list 2>/dev/null | awk '/^xfmiss_[ab]_[0-9]+/ { print $1 }'); do
		pid=${ns##*_}
		[ -d "/proc/$pid" ] || ip netns del "$ns" 2>/dev/null
	done
	return 0
}

topo()
{
	local ns dev ip peer mac

	topo_del
	ip netns add $NSA && ip netns add $NSB &&
	ip -n $NSA link add $DEVA address $MACA type veth \
		peer name $DEVB address $MACB netns $NSB || return 1
	for ns in $NSA $NSB; do
		if [ $ns = $NSA ]; then
			dev=$DEVA ip=$IPA peer=$IPB mac=$MACB
		else
			dev=$DEVB ip=$IPB peer=$IPA mac=$MACA
		fi
		ip netns exec $ns sh -c "echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6" &&
		ip -n $ns -batch - <<EOF || return 1
link set dev lo up
addr add $ip/24 dev $dev
link set dev $dev up
neigh replace $peer lladdr $mac dev $dev nud permanent
EOF
	done
	ip netns exec $NSA ping -q -c 1 -W 2 $IPB >/dev/null
}

# dev_xdp: xfm_b carries an XDP program.
dev_xdp()
{
	ip -n $NSB -d link show dev $DEVB | grep -q 'prog/xdp'
}

# dev_clean: nothing on xfm_b (no XDP program, no clsact qdisc).
dev_clean()
{
	! dev_xdp && ! tc -n $NSB qdisc show dev $DEVB | grep -q clsact
}

# rx_counts: sets UDP_IN (Udp InDatagrams), UDP_ERR (Udp InErrors) and
# DEV_RX (xfm_b's rx_packets) of xfmiss_b, from the server's /proc/PID/net
# (no process started).
rx_counts()
{
	local a b

	UDP_IN= UDP_ERR= DEV_RX=
	{ read -r a; read -r b; } < <(grep '^Udp:' "/proc/$SRV_PID/net/snmp")
	read -r UDP_IN UDP_ERR < <(awk -v h="$a" -v v="$b" 'BEGIN {
		n = split(h, hs, " "); split(v, vs, " ")
		for (i = 2; i <= n; i++) f[hs[i]] = vs[i]
		print f["InDatagrams"], f["InErrors"] }')
	DEV_RX=$(awk -v d="$DEVB:" '$1 == d { print $3 }' "/proc/$SRV_PID/net/dev")
	[ -n "$UDP_IN" ] && [ -n "$DEV_RX" ]
}

server_start()
{
	ip netns exec $NSB iperf3 -s -p $PORT -A 1 >"$TMP/server.log" 2>&1 {LOCKFD}>&- &
	SRV_PID=$!
	sleep 0.5
	kill -0 "$SRV_PID" 2>/dev/null
}

server_stop()
{
	if [ -n "$SRV_PID" ]; then
		kill "$SRV_PID" 2>/dev/null
		wait "$SRV_PID" 2>/dev/null
	fi
	SRV_PID=
}

# ----------------------------------------------------------- the helper

# umh <request>: one line to the helper; its reply in REPLY.
umh()
{
	REPLY=
	echo "$*" >&"${HELPER[1]}" 2>/dev/null || { REPLY="(the helper is gone)"; return 1; }
	read -r -t 30 REPLY <&"${HELPER[0]}" || { REPLY="(no reply in 30 s)"; return 1; }
	echo "> $* < $REPLY" >>"$TMP/umh.log"
	[[ $REPLY == ok* ]]
}

umh_start()
{
	coproc HELPER { exec nsenter --net=/run/netns/$NSB "$UMH" --driver \
		--no-pin --log=stderr 2>>"$TMP/umh.log" {LOCKFD}>&-; }
	UMH_PID=$HELPER_PID
}

umh_stop()
{
	local i

	[ -n "$UMH_PID" ] || return 0
	umh shutdown >/dev/null 2>&1
	for ((i = 0; i < 50; i++)); do
		kill -0 "$UMH_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$UMH_PID" 2>/dev/null
	wait "$UMH_PID" 2>/dev/null
	UMH_PID=
}

# probe: a rule matching 5 UDP datagrams to IPB:9 counts them all: the
# helper's datapath sees xfm_b's packets. Deleted again after.
probe()
{
	local n

	umh add id=2 prio=1 dev=$DEVB dst_ip=$IPB ip_proto=udp dst_port=9 action=drop ||
		{ WHY="probe rule refused: $REPLY"; return 1; }
	ip netns exec $NSA bash -c "for i in 1 2 3 4 5; do echo probe >/dev/udp/$IPB/9; done" 2>/dev/null
	sleep 0.2
	umh stats id=2 || { WHY="probe stats: $REPLY"; return 1; }
	n=$(sed -n 's/.* packets=\([0-9]*\).*/\1/p' <<<"$REPLY")
	umh del id=2 || { WHY="probe delete: $REPLY"; return 1; }
	[ "${n:-0}" -ge 5 ] || { WHY="the probe rule counted ${n:-?} of 5 datagrams: the datapath does not see xfm_b's packets"; return 1; }
}

# ------------------------------------------------------- configurations

# cfg_up <config>: set the configuration up on xfm_b; WHY says why not.
cfg_up()
{
	WHY=
	dev_clean || { WHY="xfm_b is not clean before set-up"; return 1; }
	case $1 in
	disabled) ;;
	xdp|tc)
		[ -x "$UMH" ] || { WHY="no $UMH (make -C umh)"; return 1; }
		umh_start
		if [ $1 = xdp ]; then
			umh attach $DEVB || { WHY="attach $DEVB: $REPLY"; return 1; }
			dev_xdp || { WHY="the helper replied ok but xfm_b has no XDP program"; return 1; }
		else
			umh attach $DEVB tc || { WHY="the helper refused 'attach $DEVB tc': $REPLY"; return 1; }
			! dev_xdp || { WHY="asked for the tc hook, the helper attached XDP (it does not know 'tc' yet)"; return 1; }
			! tc -n $NSB qdisc show dev $DEVB | grep -q clsact ||
				note tc "a clsact qdisc appeared on xfm_b (tcx needs none)"
		fi
		probe || return 1
		umh add id=1 prio=1 dev=$DEVB dst_ip=$NOMATCH eth_type=0x800 action=drop ||
			{ WHY="the non-matching rule: $REPLY"; return 1; }
		;;
	bare_xdp_pass)
		[ -f "$PASS_OBJ" ] || { WHY="no $PASS_OBJ (make -C bench/host)"; return 1; }
		ip -n $NSB link set dev $DEVB xdpdrv obj "$PASS_OBJ" sec xdp 2>"$TMP/err" ||
			{ WHY="ip link set xdpdrv: $(tr '\n' ' ' <"$TMP/err")"; return 1; }
		;;
	bare_tc_pass)
		[ -f "$PASS_OBJ" ] || { WHY="no $PASS_OBJ (make -C bench/host)"; return 1; }
		{ tc -n $NSB qdisc add dev $DEVB clsact &&
		  tc -n $NSB filter add dev $DEVB ingress bpf da obj "$PASS_OBJ" sec tc; } 2>"$TMP/err" ||
			{ WHY="tc clsact/bpf: $(tr '\n' ' ' <"$TMP/err")"; return 1; }
		;;
	*) WHY="unknown configuration"; return 1 ;;
	esac
	return 0
}

cfg_down()
{
	case $1 in
	xdp|tc) umh_stop ;;
	bare_xdp_pass) ip -n $NSB link set dev $DEVB xdpdrv off 2>/dev/null ;;
	bare_tc_pass) tc -n $NSB qdisc del dev $DEVB clsact 2>/dev/null ;;
	esac
	sleep 0.2
	dev_clean || { note "$1" "xfm_b not clean after tear-down"; return 1; }
}

# ---------------------------------------------------------------- traffic

# run_tcp: sets TCP (Gbit/s).
run_tcp()
{
	TCP=
	ip netns exec $NSA timeout $((SECS + 30)) iperf3 -c $IPB -p $PORT \
		-t "$SECS" -O 1 -A 0 -J >"$TMP/tcp.json" 2>"$TMP/tcp.err"
	TCP=$(jq -r '.end.sum_received.bits_per_second // empty' "$TMP/tcp.json" 2>/dev/null)
	[ -n "$TCP" ] || { WHY="iperf3 tcp: $(jq -r '.error // empty' "$TMP/tcp.json" 2>/dev/null) $(head -c 300 "$TMP/tcp.err")"; return 1; }
	TCP=$(calc "$TCP / 1e9")
}

# run_udp: sets UDP (datagrams that reached the UDP layer a second),
# UDP_DLV (of them delivered to the socket), UDP_DEV (frames xfm_b
# received a second), UDP_SENT (datagrams the client sent a second) and
# UDP_ERRS (datagrams the UDP layer dropped a second).
run_udp()
{
	local pid i0 e0 d0 t0 i1 e1 d1 t1 n s

	UDP= UDP_DLV= UDP_DEV= UDP_SENT= UDP_ERRS=
	ip netns exec $NSA timeout $((SECS + 30)) iperf3 -c $IPB -p $PORT -u \
		-l 64 -b 0 -t $((SECS + 2)) -A 0 -J >"$TMP/udp.json" 2>"$TMP/udp.err" &
	pid=$!
	sleep 1
	rx_counts || { wait $pid; WHY="cannot read xfmiss_b's counters"; return 1; }
	i0=$UDP_IN e0=$UDP_ERR d0=$DEV_RX t0=${EPOCHREALTIME/./}
	sleep "$SECS"
	rx_counts || { wait $pid; WHY="cannot read xfmiss_b's counters"; return 1; }
	i1=$UDP_IN e1=$UDP_ERR d1=$DEV_RX t1=${EPOCHREALTIME/./}
	wait $pid
	if ! kill -0 "$SRV_PID" 2>/dev/null; then
		WHY="the iperf3 server died"
		return 1
	fi
	n=$(jq -r '.end.sum.packets // empty' "$TMP/udp.json" 2>/dev/null)
	s=$(jq -r '.end.sum.seconds // empty' "$TMP/udp.json" 2>/dev/null)
	[ -n "$n" ] && [ -n "$s" ] ||
		{ WHY="iperf3 udp: $(jq -r '.error // empty' "$TMP/udp.json" 2>/dev/null) $(head -c 300 "$TMP/udp.err")"; return 1; }
	UDP=$(calc "($i1 - $i0 + $e1 - $e0) * 1e6 / ($t1 - $t0)")
	UDP_DLV=$(calc "($i1 - $i0) * 1e6 / ($t1 - $t0)")
	UDP_ERRS=$(calc "($e1 - $e0) * 1e6 / ($t1 - $t0)")
	UDP_DEV=$(calc "($d1 - $d0) * 1e6 / ($t1 - $t0)")
	UDP_SENT=$(calc "$n / $s")
	[ "$(calc "$UDP > 0")" = 1 ] || { WHY="no datagram arrived"; return 1; }
}

# cpu_snap <file>: "pid ticks" (utime + stime) of every process outside
# this script's session, kernel threads left out.
cpu_snap()
{
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v sid="$MYSID" '{
		s = $0; sub(/^[0-9]+ \(.*\) /, "", s); split(s, f, " ")
		# f[4] session, f[7] flags (PF_KTHREAD 0x200000), f[12] utime, f[13] stime
		if (f[4] == sid || int(f[7] / 2097152) % 2) next
		print $1, f[12] + f[13] }' >"$1"
}

# measure <tcp|udp>: run_<tcp|udp> again while other processes took more
# than FOREIGN_MAX of a CPU during it, TRIES times at most; sets FOREIGN
# (the CPUs they took in the run kept) and DISTURBED (0 or 1).
measure()
{
	local t t0 t1

	DISTURBED=0
	for ((t = 1; t <= TRIES; t++)); do
		cpu_snap "$TMP/cpu0"
		t0=${EPOCHREALTIME/./}
		"run_$1" || return 1
		t1=${EPOCHREALTIME/./}
		cpu_snap "$TMP/cpu1"
		FOREIGN=$(awk -v us=$((t1 - t0)) -v hz="$HZ" '
			NR == FNR { b[$1] = $2; next }
			{ d += $2 - ($1 in b ? b[$1] : 0) }
			END { printf "%.3f\n", d / hz / (us / 1e6) }' "$TMP/cpu0" "$TMP/cpu1")
		[ "$(calc "$FOREIGN <= $FOREIGN_MAX")" = 1 ] && { BUSY=0; return 0; }
		log "$cfg $1: other processes took $FOREIGN CPUs during the run (try $t of $TRIES)"
	done
	DISTURBED=1
	BUSY=$((BUSY + 1))
	if [ $BUSY -ge 2 ] && [ "$TRIES" -gt 1 ]; then
		note "$cfg" "the machine is busy: runs are no longer repeated"
		TRIES=1
	fi
	return 0
}

# ------------------------------------------------------------------ main

cleanup()
{
	local rc=$?

	umh_stop >/dev/null 2>&1
	server_stop
	topo_del
	if [ -n "$TMP" ]; then
		[ "${XF_MISS_KEEP:-0}" = 1 ] && cp "$TMP/umh.log" "$OUT/host_miss_umh.log" 2>/dev/null
		rm -rf "$TMP"
	fi
	exit $rc
}

if [ "$(id -u)" != 0 ]; then
	echo "$0: run as root" >&2
	exit 2
fi
for c in iperf3 jq nsenter ip tc flock; do
	command -v $c >/dev/null || { echo "$0: no $c" >&2; exit 2; }
done
if [ ! -f "$PASS_OBJ" ] || [ "$PASS_OBJ" -ot "${PASS_OBJ%.o}.c" ]; then
	make -s -C "$XF_TOP/bench/host" miss_pass.bpf.o >&2 ||
		log "cannot build $PASS_OBJ: no bare_* references"
fi

: >"$CSV"
: >"$NOTES"
TMP=$(mktemp -d /tmp/xfmiss.XXXXXX) || exit 1
: >"$TMP/umh.log"
trap cleanup EXIT
trap 'exit 130' INT TERM

exec {LOCKFD}>>"$LOCK"
if ! flock -n "$LOCKFD"; then
	log "another bench_miss.sh runs: waiting for it (up to an hour)"
	flock -w 3600 "$LOCKFD" || { echo "$0: still locked ($LOCK)" >&2; exit 1; }
fi
stale_del
topo || { echo "$0: cannot build the namespaces" >&2; exit 1; }
server_start || { echo "$0: the iperf3 server does not start: $(cat "$TMP/server.log")" >&2; exit 1; }

echo "meta,host_miss,secs,$SECS,s" >>"$CSV"
echo "meta,host_miss,reps,$REPS,count" >>"$CSV"
log "miss path on the host, kernel $(uname -r), $(nproc) CPUs: ${CONFIGS[*]}; $REPS x (tcp ${SECS}s, udp ${SECS}s)"

MYSID=$(awk '{ s = $0; sub(/^[0-9]+ \(.*\) /, "", s); split(s, f, " "); print f[4] }' /proc/$$/stat)
HZ=$(getconf CLK_TCK)
declare -A ok=() tcp=() udp=() udpdlv=() udpdev=() udpsent=() udperr=() why=()
declare -A dtcp=() dudp=() tcpc=() udpc=()
for cfg in "${CONFIGS[@]}"; do
	ok[$cfg]=1
done

for ((r = 1; r <= REPS; r++)); do
	n=${#CONFIGS[@]}
	for ((k = 0; k < n; k++)); do
		# a different configuration first in each round
		cfg=${CONFIGS[$(((k + r - 1) % n))]}
		[ "${ok[$cfg]}" = 1 ] || continue
		if ! cfg_up "$cfg"; then
			why[$cfg]=$WHY
			ok[$cfg]=0
			note "$cfg" "not measured: $WHY"
			cfg_down "$cfg" >/dev/null 2>&1
			continue
		fi
		if ! kill -0 "$SRV_PID" 2>/dev/null; then
			note "$cfg" "run $r: the iperf3 server had gone: started again"
			server_stop
			server_start || note "$cfg" "the iperf3 server does not start again"
		fi
		line="$cfg run $r:"
		if measure tcp; then
			tcp[$cfg]+="$TCP "
			[ $DISTURBED = 1 ] || tcpc[$cfg]+="$TCP "
			csv "$cfg" "tcp_gbps_run$r" "$TCP" Gbit/s
			line+=" tcp $(printf '%.2f' "$TCP") Gbit/s"
			if [ $DISTURBED = 1 ]; then
				dtcp[$cfg]=$((${dtcp[$cfg]:-0} + 1))
				note "$cfg" "run $r tcp: other processes took $FOREIGN CPUs (after $TRIES tries)"
			fi
		else
			note "$cfg" "run $r tcp failed: $WHY"
		fi
		if measure udp; then
			if [ $DISTURBED = 1 ]; then
				dudp[$cfg]=$((${dudp[$cfg]:-0} + 1))
				note "$cfg" "run $r udp: other processes took $FOREIGN CPUs (after $TRIES tries)"
			fi
			udp[$cfg]+="$UDP "
			[ $DISTURBED = 1 ] || udpc[$cfg]+="$UDP "
			udpdlv[$cfg]+="$UDP_DLV "
			udpdev[$cfg]+="$UDP_DEV "
			udpsent[$cfg]+="$UDP_SENT "
			udperr[$cfg]+="$UDP_ERRS "
			csv "$cfg" "udp_pps_run$r" "$UDP" pps
			line+="; udp $(printf '%.0f' "$UDP") pps at the UDP layer, $(printf '%.0f' "$UDP_DLV") delivered, $(printf '%.0f' "$UDP_DEV") at xfm_b, $(printf '%.0f' "$UDP_SENT") sent, $(printf '%.0f' "$UDP_ERRS") socket drops"
		else
			note "$cfg" "run $r udp failed: $WHY"
		fi
		log "$line"
		cfg_down "$cfg"
	done
done

# ---------------------------------------------------------------- table

# best <numbers...>: the largest.
best()
{
	printf '%s\n' "$@" | sort -g | tail -n 1
}

declare -A med_tcp=() med_udp=() best_tcp=() best_udp=()
{
	echo "miss path on the host: kernel $(uname -r), $(nproc) CPUs, veth between two namespaces; traffic"
	echo "matches no rule; $REPS runs of ${SECS}s each: median of the undisturbed ones (of all if none"
	echo "was), and best of all; ratio: to disabled's"
	echo "udp: 64-byte datagrams a second that reached the UDP layer (delivered: of them, read by iperf3)"
	printf '  %-14s %8s %6s %8s %6s %9s %6s %9s %6s %9s %9s %9s\n' config 'tcp Gb/s' ratio best ratio \
		'udp pps' ratio best ratio delivered 'at dev' sent
} >"$TXT"
for cfg in "${CONFIGS[@]}"; do
	if [ "${ok[$cfg]}" != 1 ] || [ -z "${tcp[$cfg]:-}${udp[$cfg]:-}" ]; then
		csv "$cfg" measured 0 flag
		continue
	fi
	csv "$cfg" measured 1 flag
	csv "$cfg" tcp_disturbed_runs "${dtcp[$cfg]:-0}" count
	csv "$cfg" udp_disturbed_runs "${dudp[$cfg]:-0}" count
	if [ -n "${tcp[$cfg]:-}" ]; then
		# shellcheck disable=SC2086
		med_tcp[$cfg]=$(median ${tcpc[$cfg]:-${tcp[$cfg]}})
		# shellcheck disable=SC2086
		best_tcp[$cfg]=$(best ${tcp[$cfg]})
		csv "$cfg" tcp_gbps "${med_tcp[$cfg]}" Gbit/s
		csv "$cfg" tcp_gbps_best "${best_tcp[$cfg]}" Gbit/s
	fi
	if [ -n "${udp[$cfg]:-}" ]; then
		# shellcheck disable=SC2086
		med_udp[$cfg]=$(median ${udpc[$cfg]:-${udp[$cfg]}})
		# shellcheck disable=SC2086
		best_udp[$cfg]=$(best ${udp[$cfg]})
		csv "$cfg" udp_pps "${med_udp[$cfg]}" pps
		csv "$cfg" udp_pps_best "${best_udp[$cfg]}" pps
		# shellcheck disable=SC2086
		csv "$cfg" udp_delivered_pps "$(median ${udpdlv[$cfg]})" pps
		# shellcheck disable=SC2086
		csv "$cfg" udp_dev_pps "$(median ${udpdev[$cfg]})" pps
		# shellcheck disable=SC2086
		csv "$cfg" udp_sent_pps "$(median ${udpsent[$cfg]})" pps
		# shellcheck disable=SC2086
		csv "$cfg" udp_sock_drops_ps "$(median ${udperr[$cfg]})" pps
	fi
done

# ratio <config> <metric> <value> <base>: the csv line; prints the ratio.
ratio()
{
	local v

	if [ -z "$3" ] || [ -z "$4" ] || [ "$(calc "$4 > 0")" != 1 ]; then
		echo -
		return
	fi
	v=$(calc "$3 / $4")
	csv "$1" "$2" "$v" ratio
	printf '%.3f\n' "$v"
}

for cfg in "${CONFIGS[@]}"; do
	if [ "${ok[$cfg]}" != 1 ] || [ -z "${tcp[$cfg]:-}${udp[$cfg]:-}" ]; then
		printf '  %-14s not measured: %s\n' "$cfg" "${why[$cfg]:-every run failed}" >>"$TXT"
		continue
	fi
	rt=$(ratio "$cfg" tcp_ratio_to_disabled "${med_tcp[$cfg]:-}" "${med_tcp[disabled]:-}")
	rtb=$(ratio "$cfg" tcp_best_ratio_to_disabled "${best_tcp[$cfg]:-}" "${best_tcp[disabled]:-}")
	ru=$(ratio "$cfg" udp_ratio_to_disabled "${med_udp[$cfg]:-}" "${med_udp[disabled]:-}")
	rub=$(ratio "$cfg" udp_best_ratio_to_disabled "${best_udp[$cfg]:-}" "${best_udp[disabled]:-}")
	# shellcheck disable=SC2086
	printf '  %-14s %8.2f %6s %8.2f %6s %9.0f %6s %9.0f %6s %9.0f %9.0f %9.0f\n' "$cfg" \
		"${med_tcp[$cfg]:-0}" "$rt" "${best_tcp[$cfg]:-0}" "$rtb" \
		"${med_udp[$cfg]:-0}" "$ru" "${best_udp[$cfg]:-0}" "$rub" \
		"$(median ${udpdlv[$cfg]:-0})" "$(median ${udpdev[$cfg]:-0})" \
		"$(median ${udpsent[$cfg]:-0})" >>"$TXT"
done
{
	echo "  runs (tcp Gbit/s; udp pps):"
	for cfg in "${CONFIGS[@]}"; do
		[ -n "${tcp[$cfg]:-}${udp[$cfg]:-}" ] || continue
		printf '    %-14s %s; %s  (disturbed: tcp %s, udp %s)\n' "$cfg" \
			"$(printf '%.2f ' ${tcp[$cfg]:-})" "$(printf '%.0f ' ${udp[$cfg]:-})" \
			"${dtcp[$cfg]:-0}" "${dudp[$cfg]:-0}"
	done
	echo "  targets (issue 6, the auto hook, which is tc on veth): tcp >= 0.9, udp >= 0.95 of disabled"
	if [ -s "$NOTES" ]; then
		echo "not measured / remarks:"
		sed 's/^/  /' "$NOTES"
	fi
	echo "host time $((SECONDS - START)) s"
} >>"$TXT"
cat "$TXT"

[ -n "${med_tcp[disabled]:-}${med_udp[disabled]:-}" ]
