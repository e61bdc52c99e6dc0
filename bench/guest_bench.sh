#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of the benchmark: runs INSIDE a guest, all in one boot so
# that configurations compare as ratios:
#
#   selftests/vm/run-guest.sh 6.12 bash bench/guest_bench.sh <outdir>
#
# (<outdir> under $XF_RESULTS, the folder the guest may write; build the
# objects first with `make -C bench` on the host.)
#
# Sections (XF_BENCH_SECTIONS, default all six, in this order):
#
#   forward  One UDP flow of 64-byte frames from a generator into veth D,
#            D's ingress sends it to veth V, and an XDP program on V's peer
#            P counts and drops it (bench/xdp_sink.bpf.c); packets per
#            second at P for:
#              xdp_flow   `xdp-flow enable dev D` and a flower rule
#                         dst_ip X action mirred egress redirect dev V
#                         (in_hw: XDP runs it)
#              tc_flower  the same rule in TC software (D not enabled)
#              ovs        D and V ports of an OVS bridge (kernel datapath,
#                         hw-offload=false), flow in_port=D actions=output:V
#              xdp_floor  bench/xdp_floor.bpf.c on D: bpf_redirect to V,
#                         no parsing, no lookup (what any XDP forwarding
#                         costs at the least)
#              gen_only   the sink on D itself: what generating and
#                         receiving cost without forwarding
#            Generator and forwarding share CPU 0, so the time a packet
#            costs adds up: 1/pps - 1/pps(gen_only) is what forwarding
#            costs (taken from each one's best run: a busy host only
#            slows runs down, and a difference amplifies noise)
#            (XF_BENCH_SPLIT=1 runs D's NAPI in a thread on CPU 1
#            instead: TC and OVS are then measured alone, but the XDP
#            configurations forward as fast as the generator sends).
#            The generator (XF_BENCH_GEN) is xdp_gen (bench/xdp_gen.c:
#            BPF_PROG_TEST_RUN with live frames sends xdp_frames out of D's
#            peer, so D gets them as a NIC driver gets its ring's frames),
#            pktgen (the kernel's, on D's peer: skbs, which veth copies
#            before XDP may write to them), or both.
#   latency  A steady flow to X through D (redirected to V by a prio 2
#            rule); the time from starting `tc filter add ... prio 1
#            flower dst_ip X action drop` until (a) tc returns, (b) the
#            rule's counter first moves in `tc -s filter show` (hardware
#            counter with xdp_flow), (c) the flow stops arriving at P
#            (the rule acts on the datapath); and after `tc filter del`,
#            until the flow arrives again. With xdp_flow and in software.
#   rate     XF_BENCH_RULES (10000) flower rules (distinct dst_ip, action
#            drop) through `tc -b`: with xdp_flow enabled on the device
#            and without it (a device in a namespace of its own, where
#            xdp_flow binds nothing), interleaved, in each prio order of
#            XF_BENCH_RATE_ORDERS (default "one asc desc random": all
#            pref 10, ascending, descending, shuffled); with xdp_flow
#            also until every rule is in XDP (`xdp-flow wait` after tc
#            returns: in_xdp_s); then deleting the qdisc. XF_BENCH_RATE_REPS
#            rounds (default 5), each running both
#            configurations of every order, first one then the other in
#            turn; medians, and the range of the rounds' ratios.
#   ping     Two namespaces on an OVS bridge: the round trip of a first
#            ping (datapath flows flushed before it: upcall, flow set-up)
#            and of the ping after it, with hw-offload off, on without
#            xdp_flow (on_sw: TC flower in software) and on (xdp_flow
#            enabled on the ports).
#   scale    XF_BENCH_SCALE_RULES (100000) rules (one prio, distinct
#            dst_ip, action drop) through `tc -b`, with xdp_flow and
#            without (as in rate): the time to add them, `tc -s filter show`,
#            `xdp-flow show`, every rule back in XDP after a helper kill
#            (the replay), and `tc qdisc del`.
#   miss     The miss path: traffic that matches no offloaded rule, from
#            namespace xfbm (ms0) to mr0 in the root namespace; iperf3
#            TCP (end.sum_received) and 64-byte UDP, -b 0 (datagrams
#            a second that reached the UDP layer: Udp InDatagrams +
#            InErrors; veth receives in the sender's context, so this is
#            what the receive path allows), client on CPU 0, server on
#            CPU 1, XF_BENCH_MISS_SECS each, round robin over
#            XF_BENCH_MISS_REPS, each configuration set up just before
#            its runs:
#              disabled   nothing on mr0
#              xdp|tc|auto  `xdp-flow enable dev mr0 hook <hook>`, clsact
#                         and one flower rule that matches none of the
#                         traffic (dst_ip 192.0.2.99 action drop, in_hw),
#                         so that the datapath is attached; the first
#                         time, a probe rule checks that the datapath
#                         counts mr0's packets. Without the CLI's `hook`
#                         word, xdp is a plain `xdp-flow enable` and tc
#                         and auto are not measured.
#
# Results: <outdir>/guest.csv, lines "section,config,metric,value,unit"
# (value numeric except in section meta), <outdir>/guest.txt (the table
# printed at the end) and <outdir>/guest_notes.txt (why something could
# not be measured). Exits non-zero only when nothing could be measured.
#
# The guest runs under QEMU TCG emulation: absolute rates and times are
# those of an emulated machine (on a host shared with whatever else runs);
# only the ratios between configurations of one run mean something.
#
# Env: XF_BENCH_QUICK=1 (a smoke run: 2 s, 1 run, 2 latency and ping
#      repetitions, 1000 rules), XF_BENCH_SECTIONS (forward latency rate
#      ping miss), XF_BENCH_GEN
#      (xdp_gen|pktgen|both, default xdp_gen), XF_BENCH_SECS (5),
#      XF_BENCH_MISS_SECS (2), XF_BENCH_MISS_REPS (2: a run of tcp and
#      udp costs ~20 s here, process starts mostly; with the set-ups the
#      section stays under 3 minutes),
#      XF_BENCH_REPS (3), XF_BENCH_WARM (1 s), XF_BENCH_LAT_REPS (5),
#      XF_BENCH_LAT_PPS (2000), XF_BENCH_RULES (10000),
#      XF_BENCH_PING_REPS (5), XF_BENCH_OBJ (folder of the built objects,
#      default bench/), XF_BENCH_SPLIT (0; 1: in forward, D's NAPI in a
#      thread on CPU 1, the generator on CPU 0).

set -u
export LC_ALL=C		# a dot in $EPOCHREALTIME and in awk's numbers
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

XF_ROOT=${XF_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
export XF_ROOT
source "$XF_ROOT/selftests/lib.sh"
source "$XF_ROOT/selftests/guest/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"
source "$XF_ROOT/selftests/guest/ovs_lib.sh"

if [ $# -ne 1 ]; then
	echo "usage: $0 <outdir>" >&2
	exit 2
fi
OUT=$1

# XF_BENCH_QUICK=1: a smoke run (every section, few repetitions)
if [ "${XF_BENCH_QUICK:-0}" = 1 ]; then
	d_secs=2 d_reps=1 d_lat_reps=2 d_rules=1000 d_ping_reps=2 d_miss_secs=2
	d_scale_rules=5000
	d_miss_reps=1 d_rate_reps=1
else
	d_secs=5 d_reps=3 d_lat_reps=5 d_rules=10000 d_ping_reps=5 d_miss_secs=2
	d_scale_rules=100000
	# single rounds of rate swing by +-0.15 in the emulated guests
	d_miss_reps=2 d_rate_reps=5
fi
SECTIONS=${XF_BENCH_SECTIONS:-forward latency rate ping miss scale}
GENS=${XF_BENCH_GEN:-xdp_gen}
SECS=${XF_BENCH_SECS:-$d_secs}
REPS=${XF_BENCH_REPS:-$d_reps}
WARM=${XF_BENCH_WARM:-1}
LAT_REPS=${XF_BENCH_LAT_REPS:-$d_lat_reps}
LAT_PPS=${XF_BENCH_LAT_PPS:-2000}
NRULES=${XF_BENCH_RULES:-$d_rules}
RATE_ORDERS=${XF_BENCH_RATE_ORDERS:-one asc desc random}
RATE_REPS=${XF_BENCH_RATE_REPS:-$d_rate_reps}
SCALE_RULES=${XF_BENCH_SCALE_RULES:-$d_scale_rules}
PING_REPS=${XF_BENCH_PING_REPS:-$d_ping_reps}
MISS_SECS=${XF_BENCH_MISS_SECS:-$d_miss_secs}
MISS_REPS=${XF_BENCH_MISS_REPS:-$d_miss_reps}
OBJ=${XF_BENCH_OBJ:-$XF_ROOT/bench}
SPLIT=${XF_BENCH_SPLIT:-0}
SINK_OBJ=$OBJ/xdp_sink.bpf.o
FLOOR_OBJ=$OBJ/xdp_floor.bpf.o
XDP_GEN=$OBJ/xdp_gen

PIN=/sys/fs/bpf/xfbench
PG=/proc/net/pktgen
TMP=
X=10.0.2.1		# the flow's destination
XSRC=10.0.1.1

START=$SECONDS
CSV=$OUT/guest.csv
TXT=$OUT/guest.txt
NOTES=$OUT/guest_notes.txt
NMEAS=0
SUMMARY=()
OVS_RUNNING=0
GEN_PID=
GEN_KIND=
GEN_OUT=
POLL_PID=
V6DEFAULT=

# ---------------------------------------------------------------- output

# csv <section> <config> <metric> <value> <unit>
csv()
{
	echo "$1,$2,$3,$4,$5" >>"$CSV"
	[ "$1" = meta ] || NMEAS=$((NMEAS + 1))
}

# note <section> <text>: why something was not measured (or looks odd).
note()
{
	echo "# $1: $2"
	echo "$1: $2" >>"$NOTES"
}

log()
{
	echo "# [$((SECONDS - START))s] $*"
}

# sum <line>: a line of the final table.
sum()
{
	SUMMARY+=("$*")
}

# ------------------------------------------------------------- utilities

# now: microseconds, without a fork.
now()
{
	NOW=${EPOCHREALTIME/./}
}

# bsleep <seconds>: sleep without a fork (a process costs 0.1-1 s here).
bsleep()
{
	read -r -t "$1" -u "$SLEEP_FD" _
	return 0
}

# median <numbers...>: prints the median (the mean of the middle two for
# an even count); fails on no numbers.
median()
{
	[ $# -gt 0 ] || return 1
	printf '%s\n' "$@" | sort -g |
		awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2];
			else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# calc <awk expression>: floating point arithmetic.
calc()
{
	awk "BEGIN { printf \"%.10g\n\", ($1) }"
}

# rx <dev>: sets RX to the device's rx_packets (no fork: read is a builtin).
rx()
{
	RX=
	read -r RX <"/sys/class/net/$1/statistics/rx_packets" 2>/dev/null
	[ -n "$RX" ]
}

# ms <from_us> <to_us>: prints milliseconds.
ms()
{
	calc "($2 - $1) / 1000"
}

# devs_del <dev...>: delete veth pairs (one process for all).
devs_del()
{
	local d

	for d in "$@"; do
		echo "link del dev $d"
	done | ip -force -batch - >/dev/null 2>&1
	return 0
}

# veth_pairs <a:b...>: create veth pairs a<->b, up, IPv6 off (no router
# solicitation or MLD report ever reaches a counter).
veth_pairs()
{
	local p

	devs_del "${@%%:*}"
	for p in "$@"; do
		echo "link add ${p%%:*} type veth peer name ${p##*:}"
	done | ip -batch - || return 1
	for p in "$@"; do
		echo 1 >"/proc/sys/net/ipv6/conf/${p%%:*}/disable_ipv6" &&
		echo 1 >"/proc/sys/net/ipv6/conf/${p##*:}/disable_ipv6" || return 1
		echo "link set dev ${p%%:*} up"
		echo "link set dev ${p##*:} up"
	done | ip -batch -
}

# dev_alone <ns> <dev>: <dev>, up, in a new namespace <ns>, where xdp_flow
# binds nothing (it binds the blocks of the initial namespace and keeps a
# place for each of their rules): software's side of rate and scale, TC as
# it runs without xdp_flow.
dev_alone()
{
	ip netns del "$1" 2>/dev/null
	ip netns add "$1" && ip link set "$2" netns "$1" &&
		ip -n "$1" link set "$2" up
}

# sink_attach <dev...>: the sink on each device (one process for all).
sink_attach()
{
	local d

	for d in "$@"; do
		echo "link set dev $d xdpdrv pinned $PIN/sink"
	done | ip -batch -
}

# gro_on <dev...>: NAPI on a veth without an XDP program, so that XDP
# frames sent to its peer (ndo_xdp_xmit) are taken.
gro_on()
{
	local d

	for d in "$@"; do
		ethtool -K "$d" gro on >/dev/null || return 1
	done
}

# xf_enable <dev> [hook]: xdp_flow on the device (hook xdp unless given),
# clsact made after (so that the module binds its block); the datapath
# attaches with the first offloaded rule.
xf_enable()
{
	"$XF_CLI" enable dev "$1" hook "${2:-xdp}" >/dev/null || return 1
	wait_dev_attached "$1" 20 || return 1
	tc qdisc add dev "$1" clsact
}

# tc_pkts <dev> <pref> <hw|all>: sets PK to the packets of the filter's
# action: "Sent hardware ... pkt" (absent: 0) or the total "Sent ... pkt".
# One process, parsed by bash.
tc_pkts()
{
	local out re

	PK=
	out=$(tc -s filter show dev "$1" ingress pref "$2" 2>/dev/null) || return 1
	# (tc leaves "pref N" out when asked for one pref)
	[[ $out == *" handle "* ]] || return 1
	if [ "$3" = hw ]; then
		re='Sent hardware [0-9]+ bytes ([0-9]+) pkt'
		PK=0
	else
		re='Sent [0-9]+ bytes ([0-9]+) pkt'
	fi
	[[ $out =~ $re ]] && PK=${BASH_REMATCH[1]}
	[ -n "$PK" ]
}

# --------------------------------------------------------------- generators

# gen_start <kind> <gen-dev> <dst-mac> [pps [keep-dev]]: a flow of UDP
# frames to X out of <gen-dev>, into its peer. Paced at pps when given
# (not empty). xdp_gen parks its program on keep-dev (default xgk0; each
# of generators running together needs its own).
gen_start()
{
	local kind=$1 dev=$2 mac=$3 pps=${4:-} keep=${5:-xgk0} c

	GEN_KIND=$kind
	GEN_DEV=$dev
	GEN_OUT=$TMP/gen.$dev.out
	case $kind in
	xdp_gen)
		# CPU 0: the sender, and the NAPI work it schedules unless that
		# runs in a thread elsewhere; -k: see xdp_gen.c (keeps the XDP
		# dispatcher's code still while XDP runs on the other CPU)
		"$XDP_GEN" -i "$dev" -D "$mac" -S $XSRC -T $X -t 0 -c 0 \
			-k "$keep" ${pps:+-r "$pps"} >"$GEN_OUT" 2>&1 &
		GEN_PID=$!
		;;
	pktgen)
		echo rem_device_all >$PG/kpktgend_0 &&
		echo "add_device $dev" >$PG/kpktgend_0 || return 1
		# clone_skb 0: veth cannot send one skb twice
		for c in "count 0" "clone_skb 0" "pkt_size 60" "dst $X" \
			 "src_min $XSRC" "src_max $XSRC" "dst_mac $mac" \
			 "udp_src_min 9" "udp_src_max 9" "udp_dst_min 9" \
			 "udp_dst_max 9" "${pps:+ratep $pps}"; do
			[ -n "$c" ] || continue
			echo "$c" >"$PG/$dev" || return 1
			grep -q "^Result: OK" "$PG/$dev" ||
				{ log "pktgen $dev '$c': $(grep Result "$PG/$dev")"; return 1; }
		done
		(echo start >$PG/pgctrl) 2>"$GEN_OUT" &
		GEN_PID=$!
		;;
	*)
		return 1 ;;
	esac
	# a generator that cannot run says so at once
	bsleep 0.3
	if ! kill -0 "$GEN_PID" 2>/dev/null; then
		wait "$GEN_PID" 2>/dev/null
		log "$kind on $dev stopped at once: $(tr '\n' ' ' <"$GEN_OUT")"
		GEN_PID=
		return 1
	fi
}

# gen_stop: stop it; sets GEN_RATE to the frames it sent a second
# (the offered load) or "" when unknown.
gen_stop()
{
	local res re

	GEN_RATE=
	[ -n "$GEN_PID" ] || return 0
	case $GEN_KIND in
	xdp_gen)
		kill -INT "$GEN_PID" 2>/dev/null
		wait "$GEN_PID" 2>/dev/null
		res=$(cat "$GEN_OUT")
		re='sent ([0-9]+) seconds ([0-9.]+)'
		[[ $res =~ $re ]] &&
			GEN_RATE=$(calc "${BASH_REMATCH[1]} / ${BASH_REMATCH[2]}")
		;;
	pktgen)
		echo stop >$PG/pgctrl
		wait "$GEN_PID" 2>/dev/null
		res=$(cat "$PG/$GEN_DEV")
		re='Result: OK: ([0-9]+)\([^)]*\) usec, ([0-9]+) '
		[[ $res =~ $re ]] &&
			GEN_RATE=$(calc "${BASH_REMATCH[2]} * 1e6 / ${BASH_REMATCH[1]}")
		echo rem_device_all >$PG/kpktgend_0
		;;
	esac
	GEN_PID=
	return 0
}

# ----------------------------------------------------------- section 1

FWD_CFGS=(xdp_flow xdp_flow_tc tc_flower ovs xdp_floor gen_only)
declare -A FWD_SHORT=([xdp_flow]=xdp [xdp_flow_tc]=xtc [tc_flower]=tc [ovs]=ovs
		      [xdp_floor]=flr [gen_only]=nul)
# where each configuration's frames are counted: P, or D itself for
# gen_only (the sink on D: what generating and receiving alone cost)
declare -A FWD_RX=([xdp_flow]=fp_xdp [xdp_flow_tc]=fp_xtc [tc_flower]=fp_tc
		   [ovs]=fp_ovs [xdp_floor]=fp_flr [gen_only]=fd_nul)
declare -A FWD_OK=()
FWD_SPLIT=0

fwd_devs()
{
	local c

	for c in xdp xtc tc ovs flr; do
		echo "fg_$c fv_$c"
	done
	echo fg_nul
}

fwd_cleanup()
{
	if [ "$OVS_RUNNING" = 1 ]; then
		ovs_stop
		OVS_RUNNING=0
	fi
	[ -d /sys/module/xdp_flow ] && "$XF_CLI" disable dev fd_xdp >/dev/null 2>&1
	[ -d /sys/module/xdp_flow ] && "$XF_CLI" disable dev fd_xtc >/dev/null 2>&1
	# shellcheck disable=SC2046
	devs_del $(fwd_devs)
	rm -f "$PIN/floor"
	rm -rf "$PIN/floor_maps"
}

# fwd_setup: every configuration's devices and rules; FWD_OK[cfg]=1 for
# those that are ready, a note for the others.
fwd_setup()
{
	local c pairs=() why vidx

	for c in xdp xtc tc ovs flr; do
		pairs+=("fg_$c:fd_$c" "fv_$c:fp_$c")
	done
	veth_pairs "${pairs[@]}" fg_nul:fd_nul ||
		{ note forward "cannot create the veth pairs"; return 1; }
	sink_attach fp_xdp fp_xtc fp_tc fp_ovs fp_flr ||
		{ note forward "cannot attach the sink to fp_*"; return 1; }
	if sink_attach fd_nul; then
		FWD_OK[gen_only]=1
	else
		note forward "gen_only: cannot attach the sink to fd_nul"
	fi
	# NAPI on every D: the generator's frames arrive through ndo_xdp_xmit
	gro_on fd_xdp fd_xtc fd_tc fd_ovs fd_flr ||
		{ note forward "ethtool -K fd_* gro on failed"; return 1; }

	if [ "$XF_READY" != 1 ]; then
		note forward "xdp_flow: the module or its helper is not running"
	elif ! xf_enable fd_xdp; then
		note forward "xdp_flow: cannot enable fd_xdp or add its clsact"
	elif ! tc filter add dev fd_xdp ingress pref 1 protocol ip flower \
			dst_ip $X action mirred egress redirect dev fv_xdp; then
		note forward "xdp_flow: tc filter add (redirect to fv_xdp) failed"
	elif [ "$(tc_hw_state "" fd_xdp 1)" != in_hw ]; then
		note forward "xdp_flow: the redirect rule is not in_hw: $(tc filter show dev fd_xdp ingress | tr '\n' ' ')"
	else
		FWD_OK[xdp_flow]=1
	fi
	# The same rule through the TC hook (tcx, 6.6+).
	if [ "$XF_READY" != 1 ]; then
		:
	elif ! xf_enable fd_xtc tc; then
		note forward "xdp_flow_tc: cannot enable fd_xtc with hook tc (no tcx?)"
	elif ! tc filter add dev fd_xtc ingress pref 1 protocol ip flower \
			dst_ip $X action mirred egress redirect dev fv_xtc; then
		note forward "xdp_flow_tc: tc filter add (redirect to fv_xtc) failed"
	elif [ "$(tc_hw_state "" fd_xtc 1)" != in_hw ]; then
		note forward "xdp_flow_tc: the redirect rule is not in_hw"
	else
		FWD_OK[xdp_flow_tc]=1
	fi

	if tc qdisc add dev fd_tc clsact &&
	   tc filter add dev fd_tc ingress pref 1 protocol ip flower \
		dst_ip $X action mirred egress redirect dev fv_tc; then
		if [ "$(tc_hw_state "" fd_tc 1)" = in_hw ]; then
			note forward "tc_flower: the rule on fd_tc is in_hw (should run in TC)"
		else
			FWD_OK[tc_flower]=1
		fi
	else
		note forward "tc_flower: tc qdisc/filter add on fd_tc failed"
	fi

	if ! why=$(ovs_available); then
		note forward "ovs: $why"
	elif ! ovs_start false; then
		note forward "ovs: ovsdb-server/ovs-vswitchd do not start (see $OVS_DIR)"
	else
		OVS_RUNNING=1
		if ovs-vsctl -- add-br xfbr -- add-port xfbr fd_ovs \
			     -- add-port xfbr fv_ovs &&
		   ovs-ofctl del-flows xfbr &&
		   ovs-ofctl add-flow xfbr "in_port=fd_ovs,actions=output:fv_ovs"; then
			FWD_OK[ovs]=1
		else
			note forward "ovs: cannot build the bridge or add the flow"
		fi
	fi

	vidx=$(cat /sys/class/net/fv_flr/ifindex)
	# the ifindex goes into the program's .bss before it is attached
	if [ ! -f "$FLOOR_OBJ" ]; then
		note forward "xdp_floor: no $FLOOR_OBJ (make -C bench on the host)"
	elif ! bpftool prog load "$FLOOR_OBJ" "$PIN/floor" type xdp \
			pinmaps "$PIN/floor_maps" ||
	     ! bpftool map update pinned "$PIN/floor_maps/xdp_floo_bss" \
			key 0 0 0 0 value $((vidx & 255)) $((vidx >> 8 & 255)) \
			$((vidx >> 16 & 255)) $((vidx >> 24 & 255)) ||
	     ! ip link set dev fd_flr xdpdrv pinned "$PIN/floor"; then
		note forward "xdp_floor: cannot load or attach $FLOOR_OBJ"
	else
		FWD_OK[xdp_floor]=1
	fi

	# The generator runs on CPU 0; each D's NAPI (and with it all the
	# forwarding, the sink's NAPI included, raised from there) in a
	# thread on CPU 1: the rate is then what D's side forwards, not what
	# generating and forwarding on one core give.
	FWD_SPLIT=0
	if [ "$SPLIT" = 1 ] && [ "$(nproc)" -ge 2 ]; then
		if napi_pin fd_xdp 1 && napi_pin fd_tc 1 && napi_pin fd_ovs 1 &&
		   napi_pin fd_flr 1 && napi_pin fd_nul 1; then
			FWD_SPLIT=1
		else
			note forward "cannot run the NAPI of fd_* in threads on CPU 1: generator and forwarding share CPU 0"
			for c in xdp tc ovs flr nul; do
				echo 0 >"/sys/class/net/fd_$c/threaded" 2>/dev/null
			done
		fi
	fi
	return 0
}

# napi_pin <dev> <cpu>: the device's NAPI in a kernel thread on <cpu>.
napi_pin()
{
	local dev=$1 cpu=$2 p comm n=0

	echo 1 >"/sys/class/net/$dev/threaded" 2>/dev/null || return 1
	for p in /proc/[0-9]*; do
		read -r comm <"$p/comm" 2>/dev/null || continue
		[[ $comm == "napi/$dev-"* ]] || continue
		taskset -pc "$cpu" "${p#/proc/}" >/dev/null || return 1
		n=$((n + 1))
	done
	[ $n -gt 0 ]
}

# fwd_measure <gen> <cfg>: one measurement; sets PPS and OFFERED.
fwd_measure()
{
	local gen=$1 s=${FWD_SHORT[$2]} rxd=${FWD_RX[$2]} c0 c1 t0 t1

	PPS=
	OFFERED=
	gen_start "$gen" "fg_$s" "$(cat "/sys/class/net/fd_$s/address")" || return 1
	bsleep "$WARM"
	rx "$rxd" || return 1
	c0=$RX; now; t0=$NOW
	bsleep "$SECS"
	rx "$rxd" || return 1
	c1=$RX; now; t1=$NOW
	if ! kill -0 "$GEN_PID" 2>/dev/null; then
		log "$gen died: $(tr '\n' ' ' <"$GEN_OUT")"
		gen_stop
		return 1
	fi
	gen_stop
	PPS=$(calc "($c1 - $c0) * 1e6 / ($t1 - $t0)")
	OFFERED=$GEN_RATE
}

# fwd_check <cfg>: after the runs, the traffic went where the
# configuration says (XDP's counter for xdp_flow, TC's for tc_flower, the
# datapath flow for ovs); prints what it saw.
fwd_check()
{
	local f

	case $1 in
	xdp_flow)
		tc_pkts fd_xdp 1 hw && local hw=$PK &&
		tc_pkts fd_xdp 1 all && echo "rule counters: $PK packets, $hw of them in XDP (hardware)"
		;;
	xdp_flow_tc)
		tc_pkts fd_xtc 1 hw && local hw=$PK &&
		tc_pkts fd_xtc 1 all && echo "rule counters: $PK packets, $hw of them by the TC hook (hardware)"
		;;
	tc_flower)
		tc_pkts fd_tc 1 all && echo "rule counter: $PK packets, in software"
		;;
	ovs)
		f=$(ovs-appctl dpctl/dump-flows 2>/dev/null)
		echo "$(echo "$f" | grep -c 'actions:') datapath flow(s): $(echo "$f" |
			grep -o 'packets:[0-9]*' | tr '\n' ' ')"
		;;
	xdp_floor)
		echo "$(ethtool -S fd_flr 2>/dev/null | awk '/xdp_redirect:/ { s += $2 } END { print s + 0 }') frames redirected by XDP on fd_flr"
		;;
	gen_only)
		echo "$(ethtool -S fd_nul 2>/dev/null | awk '/xdp_drops:/ { s += $2 } END { print s + 0 }') frames dropped by the sink on fd_nul"
		;;
	esac
}

section_forward()
{
	local gen cfg r sec ok=0 base line
	local -A runs=() med=() best=() offered=() checks=()

	log "== forward: one UDP flow, 64-byte frames, D -> V -> XDP sink; $REPS x ${SECS}s per configuration"
	if [ ! -f "$SINK_OBJ" ]; then
		note forward "no $SINK_OBJ (make -C bench on the host)"
		return 1
	fi
	fwd_setup
	for cfg in "${FWD_CFGS[@]}"; do
		[ "${FWD_OK[$cfg]:-0}" = 1 ] && ok=1
	done
	if [ $ok = 0 ]; then
		note forward "no configuration could be set up"
		fwd_cleanup
		return 1
	fi
	log "configurations ready: ${!FWD_OK[*]}; NAPI threads on CPU 1: $FWD_SPLIT"
	csv meta forward napi_thread_cpu1 "$FWD_SPLIT" flag

	for gen in $( [ "$GENS" = both ] && echo "xdp_gen pktgen" || echo "$GENS"); do
		sec=forward
		[ "$gen" = xdp_gen ] || sec=forward_$gen
		if [ "$gen" = xdp_gen ] && [ ! -x "$XDP_GEN" ]; then
			note "$sec" "no $XDP_GEN (make -C bench on the host)"
			continue
		fi
		if [ "$gen" = pktgen ] && ! { modprobe pktgen && [ -d $PG ]; }; then
			note "$sec" "cannot load pktgen"
			continue
		fi
		runs=()
		offered=()
		# round robin: a slow spell of the (shared) host hits every
		# configuration alike
		for ((r = 1; r <= REPS; r++)); do
			for cfg in "${FWD_CFGS[@]}"; do
				[ "${FWD_OK[$cfg]:-0}" = 1 ] || continue
				if fwd_measure "$gen" "$cfg"; then
					log "$sec $cfg run $r: $(printf '%.0f' "$PPS") pps (offered $(printf '%.0f' "${OFFERED:-0}") pps)"
					runs[$cfg]+="$(printf '%.0f' "$PPS") "
					offered[$cfg]+="${OFFERED:-} "
					csv "$sec" "$cfg" "pps_run$r" "$PPS" pps
				else
					note "$sec" "$cfg run $r: the measurement failed"
				fi
				# while OVS still has its datapath flow (idle 10 s)
				if [ $r = "$REPS" ]; then
					checks[$cfg]=$(fwd_check "$cfg")
					log "$sec $cfg: ${checks[$cfg]}"
				fi
			done
		done

		sum ""
		if [ "$FWD_SPLIT" = 1 ]; then
			line="generator $gen on CPU 0, D's NAPI thread (all forwarding) on CPU 1"
		else
			line="generator $gen and all forwarding on CPU 0"
		fi
		sum "$sec: one UDP flow, 64-byte frames, $line;"
		sum "  pps: packets a second reaching P (the XDP sink), median of $REPS x ${SECS}s; ratio: to xdp_flow;"
		sum "  offered: what the generator sent a second"
		sum "  best: the fastest run (a busy host only ever slows a run down)"
		if [ "$FWD_SPLIT" = 0 ]; then
			sum "  us/pkt: forwarding cost from the best runs, 1/best - 1/best(gen_only), in emulated"
			sum "  microseconds a packet; ratio: to xdp_flow's"
		fi
		sum "$(printf '  %-10s %9s %6s %9s %9s %6s %8s %6s  %s' config pps ratio offered best ratio 'us/pkt' ratio 'runs (pps)')"
		med=()
		best=()
		for cfg in "${FWD_CFGS[@]}"; do
			[ -n "${runs[$cfg]:-}" ] || continue
			# shellcheck disable=SC2086
			med[$cfg]=$(median ${runs[$cfg]})
			csv "$sec" "$cfg" pps "${med[$cfg]}" pps
			# shellcheck disable=SC2086
			best[$cfg]=$(printf '%s\n' ${runs[$cfg]} | sort -g | tail -n 1)
			csv "$sec" "$cfg" pps_best "${best[$cfg]}" pps
			if [ -n "${offered[$cfg]// /}" ]; then
				# shellcheck disable=SC2086
				offered[$cfg]=$(median ${offered[$cfg]})
				csv "$sec" "$cfg" offered_pps "${offered[$cfg]}" pps
			fi
		done
		base=${med[xdp_flow]:-}
		# with all on one CPU, the time a packet costs adds up: less
		# what generating and receiving alone cost, forwarding remains
		local -A cost=()
		if [ "$FWD_SPLIT" = 0 ] && [ -n "${best[gen_only]:-}" ]; then
			for cfg in "${FWD_CFGS[@]}"; do
				[ -n "${best[$cfg]:-}" ] && [ $cfg != gen_only ] || continue
				[ "$(calc "${best[$cfg]} > 0")" = 1 ] || continue
				cost[$cfg]=$(calc "1e6 / ${best[$cfg]} - 1e6 / ${best[gen_only]}")
				csv "$sec" "$cfg" fwd_cost_us "${cost[$cfg]}" us/pkt
			done
		fi
		for cfg in "${FWD_CFGS[@]}"; do
			[ -n "${med[$cfg]:-}" ] || continue
			r=-
			local rb=-
			if [ -n "$base" ] && [ "$(calc "$base > 0")" = 1 ]; then
				r=$(calc "${med[$cfg]} / $base")
				csv "$sec" "$cfg" ratio_to_xdp_flow "$r" ratio
				r=$(printf '%.2f' "$r")
				rb=$(calc "${best[$cfg]} / ${best[xdp_flow]}")
				csv "$sec" "$cfg" best_ratio_to_xdp_flow "$rb" ratio
				rb=$(printf '%.2f' "$rb")
			fi
			local c=- cr=-
			if [ -n "${cost[$cfg]:-}" ]; then
				c=$(printf '%.2f' "${cost[$cfg]}")
				if [ -n "${cost[xdp_flow]:-}" ] &&
				   [ "$(calc "${cost[xdp_flow]} > 0")" = 1 ]; then
					cr=$(calc "${cost[$cfg]} / ${cost[xdp_flow]}")
					csv "$sec" "$cfg" fwd_cost_ratio_to_xdp_flow "$cr" ratio
					cr=$(printf '%.2f' "$cr")
				fi
			fi
			line=$(printf '  %-10s %9.0f %6s %9s %9.0f %6s %8s %6s  %s' "$cfg" "${med[$cfg]}" "$r" \
				"$(printf '%.0f' "${offered[$cfg]:-0}")" "${best[$cfg]}" "$rb" \
				"$c" "$cr" "${runs[$cfg]}")
			sum "$line"
		done
		[ -n "$base" ] || sum "  (no xdp_flow figure: no ratios)"
		for cfg in "${FWD_CFGS[@]}"; do
			[ -n "${checks[$cfg]:-}" ] && sum "  check $cfg: ${checks[$cfg]}"
		done
		checks=()
	done
	fwd_cleanup
}

# ----------------------------------------------------------- section 2

LAT_CFGS=(xdp_flow tc_flower)
declare -A LAT_SHORT=([xdp_flow]=xdp [tc_flower]=tc)
declare -A LAT_OK=()
LAT_GEN_PIDS=()

lat_cleanup()
{
	local p

	for p in "${LAT_GEN_PIDS[@]}"; do
		kill -INT "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	LAT_GEN_PIDS=()
	[ -d /sys/module/xdp_flow ] && "$XF_CLI" disable dev ld_xdp >/dev/null 2>&1
	devs_del lg_xdp lv_xdp lg_tc lv_tc
}

# poll_stop <rx-file> <stop-file> <out-file>: until <stop-file> exists,
# watch a counter every millisecond; then write the time of its last
# change and its value. Runs in the background, beside the tc command.
poll_stop()
{
	local f=$1 stop=$2 out=$3 v last t_last

	read -r last <"$f"
	t_last=${EPOCHREALTIME/./}
	while [ ! -e "$stop" ]; do
		read -r v <"$f"
		if [ "$v" != "$last" ]; then
			last=$v
			t_last=${EPOCHREALTIME/./}
		fi
		bsleep 0.001
	done
	echo "$t_last $last" >"$out"
}

# wait_moving <dev> <timeout_s>: the device's rx_packets moves; sets
# MOVED_AT (us) to when it was first seen moving.
wait_moving()
{
	local end c0

	rx "$1" || return 1
	c0=$RX
	now
	end=$((NOW + $2 * 1000000))
	while [ "$NOW" -lt "$end" ]; do
		bsleep 0.001
		rx "$1" || return 1
		now
		if [ "$RX" != "$c0" ]; then
			MOVED_AT=$NOW
			return 0
		fi
	done
	return 1
}

# lat_rep <cfg>: one addition and deletion of the drop rule; sets
# L_ADD L_CNT L_POLL (the duration of the poll that saw the counter move:
# the resolution of L_CNT) L_EFF L_DEL L_RES (ms).
lat_rep()
{
	local s=${LAT_SHORT[$1]} kind=all t0 t1 t2 tp end res last
	local stop=$TMP/poll.stop out=$TMP/poll.out

	L_ADD= L_CNT= L_POLL= L_EFF= L_DEL= L_RES=
	[ "$1" = xdp_flow ] && kind=hw
	wait_moving "lp_$s" 5 || { log "$1: no traffic at lp_$s"; return 1; }
	rm -f "$stop" "$out"
	poll_stop "/sys/class/net/lp_$s/statistics/rx_packets" "$stop" "$out" &
	POLL_PID=$!
	bsleep 0.05

	now; t0=$NOW
	tc filter add dev "ld_$s" ingress pref 1 protocol ip flower dst_ip $X \
		action drop
	res=$?
	now; t1=$NOW
	if [ $res != 0 ]; then
		touch "$stop"; wait "$POLL_PID"; POLL_PID=
		log "$1: tc filter add failed"
		return 1
	fi
	# the counter: one tc process a poll, which sets the resolution
	end=$((t0 + 10000000))
	t2=
	while [ "$NOW" -lt "$end" ]; do
		tp=$NOW
		if tc_pkts "ld_$s" 1 $kind && [ "$PK" -gt 0 ]; then
			now; t2=$NOW
			L_POLL=$(ms "$tp" "$t2")
			break
		fi
		now
	done
	# the flow has stopped when the counter at lp stays still
	bsleep 0.5
	touch "$stop"
	wait "$POLL_PID"
	POLL_PID=
	read -r last _ <"$out"
	now
	L_ADD=$(ms "$t0" "$t1")
	[ -n "$t2" ] && L_CNT=$(ms "$t0" "$t2")
	if [ "$((NOW - last))" -lt 400000 ]; then
		log "$1: the flow did not stop within $(ms "$t0" "$NOW") ms"
	else
		L_EFF=$(ms "$t0" "$last")
	fi
	[ "$1" = xdp_flow ] && [ "$(tc_hw_state "" "ld_$s" 1)" != in_hw ] &&
		log "$1: the drop rule is not in_hw"

	now; t0=$NOW
	tc filter del dev "ld_$s" ingress pref 1 || { log "$1: tc filter del failed"; return 1; }
	now; t1=$NOW
	L_DEL=$(ms "$t0" "$t1")
	if wait_moving "lp_$s" 10; then
		L_RES=$(ms "$t0" "$MOVED_AT")
	else
		log "$1: the flow did not come back after the delete"
	fi
	return 0
}

section_latency()
{
	local cfg s r m t0 t1 noop=() line
	local -A add=() cnt=() poll=() eff=() del=() resm=() meds=()
	local -A name=([add]=tc_add [cnt]=counter [poll]=counter_poll
		       [eff]=flow_stops [del]=tc_del [resm]=flow_back)

	log "== latency: a flow of $LAT_PPS pps to $X; tc filter add prio 1 ... action drop; $LAT_REPS times each"
	if [ ! -f "$SINK_OBJ" ] || [ ! -x "$XDP_GEN" ]; then
		note latency "no $SINK_OBJ or $XDP_GEN (make -C bench on the host)"
		return 1
	fi
	veth_pairs lg_xdp:ld_xdp lv_xdp:lp_xdp lg_tc:ld_tc lv_tc:lp_tc ||
		{ note latency "cannot create the veth pairs"; lat_cleanup; return 1; }
	sink_attach lp_xdp lp_tc && gro_on ld_xdp ld_tc ||
		{ note latency "cannot attach the sinks or turn GRO on"; lat_cleanup; return 1; }

	if [ "$XF_READY" != 1 ]; then
		note latency "xdp_flow: the module or its helper is not running"
	elif ! xf_enable ld_xdp; then
		note latency "xdp_flow: cannot enable ld_xdp"
	else
		LAT_OK[xdp_flow]=1
	fi
	tc qdisc add dev ld_tc clsact && LAT_OK[tc_flower]=1 ||
		note latency "tc_flower: cannot add clsact to ld_tc"

	for cfg in "${LAT_CFGS[@]}"; do
		[ "${LAT_OK[$cfg]:-0}" = 1 ] || continue
		s=${LAT_SHORT[$cfg]}
		# the base path: prio 2 sends the flow to the sink
		if ! tc filter add dev "ld_$s" ingress pref 2 protocol ip flower \
				dst_ip $X action mirred egress redirect dev "lv_$s"; then
			note latency "$cfg: cannot add the prio 2 redirect"
			LAT_OK[$cfg]=0
			continue
		fi
		if [ "$cfg" = xdp_flow ] && [ "$(tc_hw_state "" ld_xdp 2)" != in_hw ]; then
			note latency "xdp_flow: the prio 2 redirect is not in_hw"
			LAT_OK[$cfg]=0
			continue
		fi
		# both flows run throughout: the same background load for both
		if ! gen_start xdp_gen "lg_$s" "$(cat "/sys/class/net/ld_$s/address")" \
				"$LAT_PPS" "xgk${#LAT_GEN_PIDS[@]}"; then
			note latency "$cfg: the generator does not run"
			LAT_OK[$cfg]=0
			continue
		fi
		LAT_GEN_PIDS+=("$GEN_PID")
		GEN_PID=
	done

	# what a tc process costs here, whatever it does
	for ((r = 1; r <= 3; r++)); do
		now; t0=$NOW
		tc filter show dev lo ingress >/dev/null 2>&1
		now; t1=$NOW
		noop+=("$(ms "$t0" "$t1")")
	done

	for ((r = 1; r <= LAT_REPS; r++)); do
		for cfg in "${LAT_CFGS[@]}"; do
			[ "${LAT_OK[$cfg]:-0}" = 1 ] || continue
			if ! lat_rep "$cfg"; then
				note latency "$cfg rep $r failed"
				continue
			fi
			log "latency $cfg rep $r: tc add ${L_ADD} ms, counter ${L_CNT:--} ms, flow stopped ${L_EFF:--} ms; tc del ${L_DEL} ms, flow back ${L_RES:--} ms"
			add[$cfg]+="$L_ADD "
			[ -n "$L_CNT" ] && cnt[$cfg]+="$L_CNT " && poll[$cfg]+="$L_POLL "
			[ -n "$L_EFF" ] && eff[$cfg]+="$L_EFF "
			del[$cfg]+="$L_DEL "
			[ -n "$L_RES" ] && resm[$cfg]+="$L_RES "
		done
	done
	lat_cleanup

	sum ""
	sum "latency: a flow of $LAT_PPS pps to $X through D; tc filter add prio 1 flower dst_ip $X action drop, then tc filter del; median ms of $LAT_REPS"
	sum "  (each tc process costs ~$(median "${noop[@]}") ms here by itself: tc filter show dev lo)"
	csv latency tc_process noop_ms "$(median "${noop[@]}")" ms
	sum "$(printf '  %-10s %10s %10s %10s %10s %10s %10s' config 'tc add' counter '(poll)' 'flow stops' 'tc del' 'flow back')"
	for cfg in "${LAT_CFGS[@]}"; do
		[ -n "${add[$cfg]:-}" ] || continue
		line=$(printf '  %-10s' "$cfg")
		for m in add cnt poll eff del resm; do
			local -n arr=$m
			local v=-
			if [ -n "${arr[$cfg]:-}" ]; then
				# shellcheck disable=SC2086
				v=$(median ${arr[$cfg]})
				meds[$cfg.$m]=$v
				csv latency "$cfg" "${name[$m]}_ms" "$v" ms
			fi
			unset -n arr
			if [ "$v" = - ]; then
				line+=$(printf ' %10s' -)
			else
				line+=$(printf ' %10.1f' "$v")
			fi
		done
		sum "$line"
	done
	if [ -n "${meds[xdp_flow.add]:-}" ] && [ -n "${meds[tc_flower.add]:-}" ]; then
		line=$(printf '  %-10s' 'xdp/sw')
		for m in add cnt poll eff del resm; do
			v=-
			if [ -n "${meds[xdp_flow.$m]:-}" ] && [ -n "${meds[tc_flower.$m]:-}" ] &&
			   [ "$(calc "${meds[tc_flower.$m]} > 0")" = 1 ]; then
				v=$(calc "${meds[xdp_flow.$m]} / ${meds[tc_flower.$m]}")
				csv latency xdp_flow "${name[$m]}_ratio_to_tc_flower" "$v" ratio
				v=$(printf '%.2f' "$v")
			fi
			line+=$(printf ' %10s' "$v")
		done
		sum "$line"
	fi
	sum "  ms from the start of the tc command: tc add, tc del: until the command returned (a tc process"
	sum "  alone costs the time above); counter: until a poll (one tc process each, lasting (poll))"
	sum "  saw the rule's counter move (the hardware counter with xdp_flow); flow stops / flow back: until"
	sum "  the flow stopped / came back at the sink (1 ms polls of its rx_packets)"
}

# ----------------------------------------------------------- section 3

rate_cleanup()
{
	[ -d /sys/module/xdp_flow ] && "$XF_CLI" disable dev rd_xdp >/dev/null 2>&1
	devs_del rd_xdp
	ip netns del xf_rate 2>/dev/null
}

# xf_dev_rules <dev>: the device's rule count in `xdp-flow status`.
xf_dev_rules()
{
	xf_status_get ".devices[] | select(.dev == \"$1\") | .rule_count" | head -n 1
}

# rate_rules <dev> <order>: NRULES flower rules for `tc -b` on <dev>,
# distinct dst_ip, action drop, in prio order <order>: one (all pref 10),
# asc (pref 1, 2, ...), desc (pref NRULES down to 1) or random (the same
# prios shuffled, a fixed seed).
rate_rules()
{
	local d=$1 order=$2

	case $order in
	one)	yes 10 | head -n "$NRULES" ;;
	asc)	seq 1 "$NRULES" ;;
	desc)	seq "$NRULES" -1 1 ;;
	random)	seq 1 "$NRULES" | shuf --random-source=<(yes 42) ;;
	esac | awk -v d="$d" '{ i = NR - 1
		printf "filter add dev %s ingress pref %d protocol ip flower dst_ip 10.%d.%d.%d action drop\n",
			d, $1, 100 + int(i / 65536), int(i / 256) % 256, i % 256 }'
}

# rate_run <cfg> <order>: one tc -b of NRULES rules on <cfg>'s device, then
# tc qdisc del. Sets R_ADD, R_RPS, R_IN_XDP, R_DEL, R_EMPTY (seconds, rules
# per second; R_IN_XDP and R_EMPTY for xdp_flow only), R_ADD empty when it
# could not be measured. tc_flower's device is in a namespace of its own
# (dev_alone()).
rate_run()
{
	local cfg=$1 order=$2 d=rd_tc t0 t1 rc n
	local -a tc=(ip netns exec xf_rate tc)

	R_ADD= R_RPS= R_IN_XDP= R_DEL= R_EMPTY=
	if [ $cfg = xdp_flow ]; then
		d=rd_xdp
		tc=(tc)
		if [ "$XF_READY" != 1 ]; then
			note rate "xdp_flow: the module or its helper is not running"
			return 1
		fi
		xf_enable $d || { note rate "xdp_flow: cannot enable $d"; return 1; }
	else
		"${tc[@]}" qdisc add dev $d clsact || { note rate "$cfg: cannot add clsact"; return 1; }
	fi
	rate_rules $d "$order" >"$TMP/rules.$d"
	now; t0=$NOW
	timeout 900 "${tc[@]}" -b "$TMP/rules.$d" >"$TMP/tc.out" 2>&1
	rc=$?
	now; t1=$NOW
	R_ADD=$(calc "($t1 - $t0) / 1e6")
	if [ $rc != 0 ]; then
		note rate "$cfg $order: tc -b failed (rc $rc) after $R_ADD s: $(tail -n 2 "$TMP/tc.out" | tr '\n' ' ')"
		R_ADD=
		"${tc[@]}" qdisc del dev $d clsact 2>/dev/null
		[ $cfg = xdp_flow ] && "$XF_CLI" disable dev $d >/dev/null 2>&1
		return 1
	fi
	n=$NRULES
	if [ $cfg = xdp_flow ]; then
		# tc returns before the helper has put the last rules into
		# XDP: the time until all are there
		"$XF_CLI" wait timeout 600 ||
			note rate "xdp_flow $order: xdp-flow wait failed"
		now
		R_IN_XDP=$(calc "($NOW - $t0) / 1e6")
		n=$(xf_dev_rules $d)
		[ "$n" = "$NRULES" ] ||
			note rate "xdp_flow $order: xdp-flow status counts ${n:-?} rules on $d, not $NRULES"
		[[ $n =~ ^[0-9]+$ ]] || n=0
	fi
	R_RPS=$(calc "$n / $R_ADD")
	log "rate $cfg $order: $n rules in $R_ADD s ($R_RPS rules/s)${R_IN_XDP:+, all in XDP after $R_IN_XDP s}"

	now; t0=$NOW
	"${tc[@]}" qdisc del dev $d clsact
	rc=$?
	now; t1=$NOW
	R_DEL=$(calc "($t1 - $t0) / 1e6")
	[ $rc = 0 ] || note rate "$cfg $order: tc qdisc del failed"
	if [ $cfg = xdp_flow ]; then
		# should the module take them out of XDP after the block
		# went, count that too (one status poll costs ~1 s here)
		while n=$(xf_dev_rules $d) && [ -n "$n" ] && [ "$n" != 0 ] &&
		      [ $(( ${EPOCHREALTIME/./} - t0 )) -lt 300000000 ]; do
			bsleep 0.1
		done
		now
		[ "${n:-0}" = 0 ] || note rate "xdp_flow $order: $n rules still in XDP after the qdisc went"
		R_EMPTY=$(calc "($NOW - $t0) / 1e6")
		log "rate $cfg $order: qdisc del $R_DEL s, XDP empty after $R_EMPTY s"
		"$XF_CLI" disable dev $d >/dev/null 2>&1
	fi
	return 0
}

# RATE_REPS rounds; in each, every order runs both configurations, the
# first of the pair alternating between rounds (the host drifts). The
# table gives medians over the rounds, and the range of the rounds'
# ratios (each round's xdp_flow rate over its tc_flower rate).
section_rate()
{
	local cfg order rep first m r lo hi k
	local -A rate=()

	log "== rate: $NRULES flower rules through tc -b, with and without xdp_flow, prio orders: $RATE_ORDERS, $RATE_REPS rounds"
	veth_pairs rd_xdp:rp_xdp rd_tc:rp_tc || { note rate "cannot create the veth pairs"; rate_cleanup; return 1; }
	dev_alone xf_rate rd_tc ||
		{ note rate "cannot move rd_tc into a namespace"; rate_cleanup; return 1; }

	for ((rep = 1; rep <= RATE_REPS; rep++)); do
		for order in $RATE_ORDERS; do
			first="tc_flower xdp_flow"
			((rep % 2)) || first="xdp_flow tc_flower"
			for cfg in $first; do
				rate_run $cfg "$order" || continue
				csv rate "$cfg" "add_s_${order}_run$rep" "$R_ADD" s
				rate[$cfg.$order.add]+=" $R_ADD"
				rate[$cfg.$order.rps]+=" $R_RPS"
				rate[$cfg.$order.del]+=" $R_DEL"
				rate[$cfg.$order.rps.$rep]=$R_RPS
				if [ -n "$R_IN_XDP" ]; then
					rate[$cfg.$order.in_xdp]+=" $R_IN_XDP"
					rate[$cfg.$order.empty]+=" $R_EMPTY"
				fi
			done
			if [ -n "${rate[xdp_flow.$order.rps.$rep]:-}" ] &&
			   [ -n "${rate[tc_flower.$order.rps.$rep]:-}" ]; then
				r=$(calc "${rate[xdp_flow.$order.rps.$rep]} / ${rate[tc_flower.$order.rps.$rep]}")
				rate[$order.ratios]+=" $r"
				csv rate xdp_flow "ratio_to_tc_flower_${order}_run$rep" "$r" ratio
			fi
		done
	done

	sum ""
	sum "rate: $NRULES rules (distinct dst_ip, action drop) through tc -b, prio order one (all 10), asc, desc or random; then tc qdisc del; medians of $RATE_REPS rounds"
	sum "$(printf '  %-7s %-10s %8s %9s %7s %13s %9s %8s %11s' order config 'add s' 'rules/s' ratio 'round ratios' 'in XDP s' 'del s' 'XDP empty s')"
	for order in $RATE_ORDERS; do
		for cfg in tc_flower xdp_flow; do
			[ -n "${rate[$cfg.$order.rps]:-}" ] || continue
			for k in add rps del in_xdp empty; do
				m=
				# shellcheck disable=SC2086
				[ -n "${rate[$cfg.$order.$k]:-}" ] &&
					m=$(median ${rate[$cfg.$order.$k]})
				[ -z "$m" ] || m=$(printf '%.2f' "$m")
				rate[$cfg.$order.$k.med]=$m
				[ -n "$m" ] || continue
				case $k in
				rps)	csv rate "$cfg" "rules_per_s_$order" "$m" rules/s ;;
				empty)	csv rate "$cfg" "xdp_empty_s_$order" "$m" s ;;
				*)	csv rate "$cfg" "${k}_s_$order" "$m" s ;;
				esac
			done
			r=- lo=-
			if [ $cfg = xdp_flow ] && [ -n "${rate[tc_flower.$order.rps.med]:-}" ]; then
				r=$(calc "${rate[xdp_flow.$order.rps.med]} / ${rate[tc_flower.$order.rps.med]}")
				csv rate xdp_flow "ratio_to_tc_flower_$order" "$r" ratio
				r=$(printf '%.2f' "$r")
				if [ -n "${rate[xdp_flow.$order.in_xdp.med]:-}" ]; then
					csv rate xdp_flow "in_xdp_ratio_to_tc_flower_$order" \
						"$(calc "$NRULES / ${rate[xdp_flow.$order.in_xdp.med]} / ${rate[tc_flower.$order.rps.med]}")" ratio
				fi
				# shellcheck disable=SC2086
				if [ -n "${rate[$order.ratios]:-}" ]; then
					lo=$(printf '%s\n' ${rate[$order.ratios]} | sort -g | head -n 1)
					hi=$(printf '%s\n' ${rate[$order.ratios]} | sort -g | tail -n 1)
					lo=$(printf '%.2f-%.2f' "$lo" "$hi")
				fi
			fi
			sum "$(printf '  %-7s %-10s %8.2f %9.1f %7s %13s %9s %8.2f %11s' "$order" $cfg \
				"${rate[$cfg.$order.add.med]}" "${rate[$cfg.$order.rps.med]}" "$r" "$lo" \
				"${rate[$cfg.$order.in_xdp.med]:--}" "${rate[$cfg.$order.del.med]}" \
				"${rate[$cfg.$order.empty.med]:--}")"
		done
	done
	rate_cleanup
}

# ------------------------------------------------------ section: scale

scale_cleanup()
{
	[ -d /sys/module/xdp_flow ] && "$XF_CLI" disable dev sc_xdp >/dev/null 2>&1
	devs_del sc_xdp
	ip netns del xf_scale 2>/dev/null
}

# scale_time <var> cmd...: runs cmd (output discarded), its seconds in var.
scale_time()
{
	local -n out=$1
	local t0

	shift
	now; t0=$NOW
	"$@" >/dev/null 2>&1
	now
	out=$(calc "($NOW - $t0) / 1e6")
}

section_scale()
{
	local d cfg s_add s_show s_xshow s_replay s_del n pid new t0 r
	local -a tc
	local -A v=()

	log "== scale: $SCALE_RULES rules, with and without xdp_flow"
	veth_pairs sc_xdp:sp_xdp sc_tc:sp_tc || { note scale "cannot create the veth pairs"; scale_cleanup; return 1; }
	dev_alone xf_scale sc_tc ||
		{ note scale "cannot move sc_tc into a namespace"; scale_cleanup; return 1; }
	for cfg in tc_flower xdp_flow; do
		d=sc_tc
		tc=(ip netns exec xf_scale tc)
		if [ $cfg = xdp_flow ]; then
			d=sc_xdp
			tc=(tc)
			[ "$XF_READY" = 1 ] || { note scale "xdp_flow: the module or its helper is not running"; continue; }
			xf_enable $d || { note scale "xdp_flow: cannot enable $d"; continue; }
		else
			"${tc[@]}" qdisc add dev $d clsact || { note scale "cannot add clsact"; continue; }
		fi
		NRULES=$SCALE_RULES rate_rules $d one >"$TMP/scale.$d"
		scale_time s_add timeout 1800 "${tc[@]}" -b "$TMP/scale.$d"
		n=$SCALE_RULES
		if [ $cfg = xdp_flow ]; then
			n=$(xf_dev_rules $d)
			[ "$n" = "$SCALE_RULES" ] || note scale "xdp_flow: $n of $SCALE_RULES rules in XDP"
		fi
		v[$cfg.add]=$s_add
		csv scale "$cfg" add_s "$s_add" s
		scale_time s_show "${tc[@]}" -s filter show dev $d ingress
		v[$cfg.show]=$s_show
		csv scale "$cfg" tc_s_show_s "$s_show" s
		log "scale $cfg: $n rules added in $s_add s; tc -s filter show $s_show s"
		if [ $cfg = xdp_flow ]; then
			scale_time s_xshow "$XF_CLI" show dev $d
			csv scale "$cfg" xdp_flow_show_s "$s_xshow" s
			v[$cfg.xshow]=$s_xshow
			# replay: kill the helper; until a new one has every
			# rule in XDP again
			pid=$(xf_status_get .helper_pid)
			now; t0=$NOW
			kill -KILL "$pid"
			new=$(wait_new_helper "$pid" 600) || note scale "no new helper within 600 s"
			while n=$(xf_dev_rules $d) && [ "${n:-0}" != "$SCALE_RULES" ] &&
			      [ $(( ${EPOCHREALTIME/./} - t0 )) -lt 600000000 ]; do
				bsleep 0.5
			done
			now
			s_replay=$(calc "($NOW - $t0) / 1e6")
			[ "$n" = "$SCALE_RULES" ] || note scale "after the kill, $n of $SCALE_RULES rules in XDP"
			v[$cfg.replay]=$s_replay
			csv scale "$cfg" replay_s "$s_replay" s
			log "scale $cfg: xdp-flow show $s_xshow s; after a helper kill every rule in XDP again in $s_replay s"
		fi
		scale_time s_del "${tc[@]}" qdisc del dev $d clsact
		v[$cfg.del]=$s_del
		csv scale "$cfg" qdisc_del_s "$s_del" s
		[ $cfg = xdp_flow ] && "$XF_CLI" disable dev $d >/dev/null 2>&1
	done
	sum ""
	sum "scale: $SCALE_RULES rules (one prio, distinct dst_ip, action drop), seconds"
	sum "$(printf '  %-10s %10s %12s %14s %12s %10s' config 'tc -b' 'tc -s show' 'xdp-flow show' 'replay' 'qdisc del')"
	for cfg in tc_flower xdp_flow; do
		[ -n "${v[$cfg.add]:-}" ] || continue
		sum "$(printf '  %-10s %10.2f %12.2f %14s %12s %10.2f' $cfg "${v[$cfg.add]}" "${v[$cfg.show]}" "${v[$cfg.xshow]:--}" "${v[$cfg.replay]:--}" "${v[$cfg.del]}")"
	done
	if [ -n "${v[tc_flower.add]:-}" ] && [ -n "${v[xdp_flow.add]:-}" ]; then
		r=$(calc "${v[tc_flower.add]} / ${v[xdp_flow.add]}")
		csv scale xdp_flow add_rate_ratio_to_tc_flower "$r" ratio
		sum "$(printf '  rules/s with offload, of without: %.2f' "$r")"
	fi
	scale_cleanup
}

# ----------------------------------------------------------- section 4

ping_cleanup()
{
	[ "$OVS_RUNNING" = 1 ] && ovs_stop
	OVS_RUNNING=0
	if [ -d /sys/module/xdp_flow ]; then
		"$XF_CLI" disable dev op1 >/dev/null 2>&1
		"$XF_CLI" disable dev op2 >/dev/null 2>&1
	fi
	ip netns del xfbo1 2>/dev/null
	ip netns del xfbo2 2>/dev/null
	devs_del op1 op2
}

# ping_topo: op1/op2 in the root namespace, eth0 10.20.0.1 and .2 in two
# namespaces; static neighbours (no ARP in the measured pings), GRO on
# the namespace ends (XDP redirects into them need it).
ping_topo()
{
	local i

	ping_cleanup
	for i in 1 2; do
		ip netns add "xfbo$i" &&
		ip link add "op$i" type veth peer name eth0 netns "xfbo$i" &&
		echo 1 >"/proc/sys/net/ipv6/conf/op$i/disable_ipv6" &&
		ip link set dev "op$i" up || return 1
	done
	ip netns exec xfbo1 sh -c '
		echo 1 >/proc/sys/net/ipv6/conf/eth0/disable_ipv6
		ip link set dev eth0 address 02:0f:00:20:00:01 &&
		ethtool -K eth0 gro on >/dev/null && ip link set dev lo up &&
		ip addr add 10.20.0.1/24 dev eth0 && ip link set dev eth0 up &&
		ip neigh replace 10.20.0.2 lladdr 02:0f:00:20:00:02 dev eth0 nud permanent' &&
	ip netns exec xfbo2 sh -c '
		echo 1 >/proc/sys/net/ipv6/conf/eth0/disable_ipv6
		ip link set dev eth0 address 02:0f:00:20:00:02 &&
		ethtool -K eth0 gro on >/dev/null && ip link set dev lo up &&
		ip addr add 10.20.0.2/24 dev eth0 && ip link set dev eth0 up &&
		ip neigh replace 10.20.0.1 lladdr 02:0f:00:20:00:01 dev eth0 nud permanent'
}

# ping_rtts: ping 10.20.0.2 twice from xfbo1 (the first after the
# datapath's flows are flushed); sets FIRST and SECOND (ms), and FLOWS to
# the datapath flows there are after them.
ping_rtts()
{
	local out re='time=([0-9.]+) ms'

	FIRST= SECOND=
	# purge, not dpctl/del-flows: that leaves the revalidators' keys of
	# the flows, and upcalls of packets of a still-known flow are then
	# answered without setting the flow up again
	ovs-appctl revalidator/purge >/dev/null 2>&1 || return 1
	out=$(ip netns exec xfbo1 ping -c 2 -i 0.5 -W 5 10.20.0.2 2>&1)
	[[ $out =~ $re ]] || return 1
	FIRST=${BASH_REMATCH[1]}
	out=${out#*time=}
	[[ $out =~ $re ]] || return 1
	SECOND=${BASH_REMATCH[1]}
	FLOWS=$(ovs-appctl dpctl/dump-flows 2>/dev/null | grep -c 'actions:')
}

section_ping()
{
	local mode why r off f n line hook
	local -A first=() second=() oflows=() tcp=()

	log "== ping: first ping through OVS, hw-offload off and on; $PING_REPS times each; then a TCP stream"
	if ! why=$(ovs_available); then
		note ping "$why"
		return 1
	fi
	ping_topo || { note ping "cannot build the namespaces"; ping_cleanup; return 1; }

	# off: software OVS; on_sw: hw-offload without xdp_flow (the flows
	# are TC flower rules in software); on: hw-offload with xdp_flow's
	# default hook (auto: tc on these veths where the kernel has tcx);
	# on_xdp: hook xdp.
	for off in off on_sw on on_xdp; do
		mode=true
		[ $off = off ] && mode=false
		if [ $off = on_sw ]; then
			ovs_stop
			OVS_RUNNING=0
			"$XF_CLI" disable dev op1 >/dev/null 2>&1
			"$XF_CLI" disable dev op2 >/dev/null 2>&1
		elif [ $mode = true ]; then
			if [ "$XF_READY" != 1 ]; then
				note ping "hw-offload on: the xdp_flow module or its helper is not running"
				break
			fi
			ovs_stop
			OVS_RUNNING=0
			"$XF_CLI" disable dev op1 >/dev/null 2>&1
			"$XF_CLI" disable dev op2 >/dev/null 2>&1
			hook=auto
			[ $off = on_xdp ] && hook=xdp
			# enabled before OVS adds the ports (and their clsact)
			if ! { "$XF_CLI" enable dev op1 hook $hook >/dev/null &&
			       "$XF_CLI" enable dev op2 hook $hook >/dev/null &&
			       wait_dev_attached op1 20 && wait_dev_attached op2 20; }; then
				note ping "hw-offload $off: cannot enable xdp_flow (hook $hook) on op1/op2"
				continue
			fi
		fi
		if ! ovs_start $mode; then
			note ping "hw-offload=$mode: OVS does not start"
			continue
		fi
		OVS_RUNNING=1
		if ! ovs-vsctl -- add-br xfbr -- add-port xfbr op1 -- add-port xfbr op2; then
			note ping "hw-offload=$mode: cannot build the bridge"
			continue
		fi
		# learn both MACs (NORMAL then outputs to one port: offloadable)
		ip netns exec xfbo1 ping -c 2 -i 0.3 -W 5 10.20.0.2 >/dev/null 2>&1
		if ! ip netns exec xfbo1 ping -c 1 -W 5 10.20.0.2 >/dev/null 2>&1; then
			note ping "hw-offload=$mode: no ping through the bridge"
			continue
		fi
		for ((r = 1; r <= PING_REPS; r++)); do
			if ping_rtts; then
				first[$off]+="$FIRST "
				second[$off]+="$SECOND "
				log "ping hw-offload $off rep $r: first $FIRST ms, second $SECOND ms; $FLOWS datapath flows"
				[ "$FLOWS" -gt 0 ] ||
					note ping "hw-offload $off rep $r: the pings set up no datapath flow"
			else
				note ping "hw-offload $off rep $r: ping failed"
			fi
		done
		# A TCP stream between the namespaces, through the bridge.
		for ((r = 1; r <= REPS; r++)); do
			ip netns exec xfbo2 iperf3 -s -D -1 >/dev/null 2>&1
			sleep 0.3
			f=$(ip netns exec xfbo1 timeout $((SECS + 20)) iperf3 -c 10.20.0.2 \
				-t "$SECS" -O 1 -J 2>/dev/null |
			    jq -r '.end.sum_received.bits_per_second // empty' 2>/dev/null)
			if [ -n "$f" ]; then
				f=$(calc "$f / 1e9")
				tcp[$off]+="$f "
				log "tcp hw-offload $off run $r: $f Gbit/s"
			else
				note ping "hw-offload $off: iperf3 run $r failed"
			fi
		done
		pkill -f "iperf3 -s" 2>/dev/null
		n=$(ovs-appctl dpctl/dump-flows type=offloaded 2>/dev/null | grep -c 'actions:')
		oflows[$off]=$n
		if [ $off = on ] && [ "$n" = 0 ]; then
			note ping "hw-offload on: no flow was offloaded (OVS log in $OUT/ovs-ping.log)"
			{
				ovs-vsctl get Open_vSwitch . other_config
				ovs-appctl dpctl/dump-flows -m
				tc -s filter show dev op1 ingress
				"$XF_CLI" show
				cat "$OVS_DIR/ovs-vswitchd.log"
			} >"$OUT/ovs-ping.log" 2>&1
		fi
	done
	ping_cleanup

	sum ""
	sum "ping: two namespaces on an OVS bridge; the first ping after revalidator/purge (upcall, flows set up) and the next; median ms of $PING_REPS"
	sum "$(printf '  %-14s %10s %10s %10s %s' hw-offload 'first' 'second' 'ratio' 'flows offloaded after')"
	for off in off on_sw on on_xdp; do
		[ -n "${first[$off]:-}" ] || continue
		# shellcheck disable=SC2086
		f=$(median ${first[$off]})
		# shellcheck disable=SC2086
		n=$(median ${second[$off]})
		csv ping "hw_offload_$off" first_rtt_ms "$f" ms
		csv ping "hw_offload_$off" second_rtt_ms "$n" ms
		csv ping "hw_offload_$off" flows_offloaded "${oflows[$off]:-0}" count
		r=-
		if [ -n "${first[off]:-}" ]; then
			r=$(calc "$f / $(median ${first[off]})")
			csv ping "hw_offload_$off" first_ratio_to_off "$r" ratio
			r=$(printf '%.2f' "$r")
		fi
		if [ -n "${first[on_sw]:-}" ] && [ $off != off ]; then
			# shellcheck disable=SC2086
			csv ping "hw_offload_$off" first_ratio_to_on_sw \
				"$(calc "$f / $(median ${first[on_sw]})")" ratio
		fi
		sum "$(printf '  %-14s %10s %10s %10s %s' "$off" "$f" "$n" "$r" "${oflows[$off]:-0}")"
	done
	sum ""
	sum "tcp: an iperf3 TCP stream between the namespaces through the bridge, median of $REPS x ${SECS}s"
	sum "$(printf '  %-14s %10s %10s' hw-offload 'Gbit/s' 'ratio')"
	for off in off on_sw on on_xdp; do
		[ -n "${tcp[$off]:-}" ] || continue
		# shellcheck disable=SC2086
		f=$(median ${tcp[$off]})
		csv ping "hw_offload_$off" tcp_gbps "$f" Gbit/s
		r=-
		if [ -n "${tcp[off]:-}" ]; then
			# shellcheck disable=SC2086
			r=$(calc "$f / $(median ${tcp[off]})")
			csv ping "hw_offload_$off" tcp_ratio_to_off "$r" ratio
			r=$(printf '%.2f' "$r")
		fi
		sum "$(printf '  %-14s %10.2f %10s' "$off" "$f" "$r")"
	done
}

# ----------------------------------------------------------- section 5

# The miss path: traffic that matches no offloaded rule, from namespace
# xfbm (ms0) to mr0 in the root namespace, with xdp_flow enabled on mr0
# (one flower rule that matches none of it, so that the datapath is
# attached) against nothing on mr0.
MISS_CFGS=(disabled xdp tc auto)
MISS_DEV=mr0
MISS_IP=10.30.0.1
MISS_SIP=10.30.0.2
MISS_MAC=02:0f:00:30:00:01
MISS_SMAC=02:0f:00:30:00:02
MISS_PORT=5299
MISS_SRV=
MISS_HOOKWORD=1

miss_cleanup()
{
	if [ -n "$MISS_SRV" ]; then
		kill "$MISS_SRV" 2>/dev/null
		wait "$MISS_SRV" 2>/dev/null
		MISS_SRV=
	fi
	tc qdisc del dev $MISS_DEV clsact 2>/dev/null
	[ -d /sys/module/xdp_flow ] && "$XF_CLI" disable dev $MISS_DEV >/dev/null 2>&1
	ip netns del xfbm 2>/dev/null
	devs_del $MISS_DEV
}

miss_topo()
{
	miss_cleanup
	ip netns add xfbm &&
	ip link add $MISS_DEV address $MISS_MAC type veth peer name ms0 \
		address $MISS_SMAC netns xfbm || return 1
	echo 1 >/proc/sys/net/ipv6/conf/$MISS_DEV/disable_ipv6
	ip -batch - <<EOT || return 1
addr add $MISS_IP/24 dev $MISS_DEV
link set dev $MISS_DEV up
neigh replace $MISS_SIP lladdr $MISS_SMAC dev $MISS_DEV nud permanent
EOT
	ip netns exec xfbm sh -c "
		echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
		ip -batch - <<EOT
link set dev lo up
addr add $MISS_SIP/24 dev ms0
link set dev ms0 up
neigh replace $MISS_IP lladdr $MISS_MAC dev ms0 nud permanent
EOT"
}

# miss_counts: sets M_IN (Udp InDatagrams + InErrors of the root namespace:
# datagrams that reached the UDP layer), M_DLV (InDatagrams alone: read by
# the socket's owner) and M_DEV (mr0's rx_packets), without a process.
miss_counts()
{
	local l h=

	M_IN= M_DLV= M_DEV=
	while read -r l; do
		[[ $l == Udp:* ]] || continue
		if [ -z "$h" ]; then
			h=$l
			continue
		fi
		local -a hs=($h) vs=($l)
		local i e=
		for ((i = 1; i < ${#hs[@]}; i++)); do
			[ "${hs[$i]}" = InDatagrams ] && M_DLV=${vs[$i]}
			[ "${hs[$i]}" = InErrors ] && e=${vs[$i]}
		done
		[ -n "$M_DLV" ] && [ -n "$e" ] && M_IN=$((M_DLV + e))
		break
	done </proc/net/snmp
	rx $MISS_DEV && M_DEV=$RX
	[ -n "$M_IN" ] && [ -n "$M_DEV" ]
}

# miss_probe: a rule matching 5 UDP datagrams to mr0 counts them in the
# datapath ("Sent hardware"); deleted again. WHY says why not.
miss_probe()
{
	local i

	if ! tc filter add dev $MISS_DEV ingress pref 1 protocol ip flower \
			dst_ip $MISS_IP ip_proto udp dst_port 9 action drop; then
		WHY="probe rule: tc filter add failed"
		return 1
	fi
	ip netns exec xfbm bash -c "for i in 1 2 3 4 5; do echo probe >/dev/udp/$MISS_IP/9; done" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		tc_pkts $MISS_DEV 1 hw && [ "$PK" -ge 5 ] && break
		bsleep 0.2
	done
	tc filter del dev $MISS_DEV ingress pref 1
	[ "${PK:-0}" -ge 5 ] ||
		{ WHY="the probe rule counted ${PK:-?} of 5 datagrams in the datapath"; return 1; }
}

# miss_up <cfg> <check>: enable xdp_flow on mr0 with the configuration's
# hook, one non-matching rule; with check=1 also the probe. Sets WHY on
# failure and HOOK to the hook found on the device (xdp or tc).
miss_up()
{
	local cfg=$1 check=$2 st i js

	WHY= HOOK=
	[ "$cfg" = disabled ] && return 0
	if [ "$XF_READY" != 1 ]; then
		WHY="the module or its helper is not running"
		return 1
	fi
	if [ "$MISS_HOOKWORD" = 1 ] &&
	   ! "$XF_CLI" enable dev $MISS_DEV hook "$cfg" >/dev/null 2>"$TMP/miss.err"; then
		if [ "$cfg" != xdp ]; then
			WHY="xdp-flow enable dev $MISS_DEV hook $cfg: $(tr '\n' ' ' <"$TMP/miss.err")"
			return 1
		fi
		# no hook word: the CLI (and so the module) knows XDP alone
		"$XF_CLI" enable dev $MISS_DEV >/dev/null 2>"$TMP/miss.err2" ||
			{ WHY="xdp-flow enable: $(tr '\n' ' ' <"$TMP/miss.err2")"; return 1; }
		MISS_HOOKWORD=0
		note miss "xdp-flow refuses 'hook' ($(tr '\n' ' ' <"$TMP/miss.err")): xdp measured with a plain 'xdp-flow enable'"
	elif [ "$MISS_HOOKWORD" = 0 ]; then
		if [ "$cfg" != xdp ]; then
			WHY="xdp-flow has no 'hook' word"
			return 1
		fi
		"$XF_CLI" enable dev $MISS_DEV >/dev/null 2>"$TMP/miss.err2" ||
			{ WHY="xdp-flow enable: $(tr '\n' ' ' <"$TMP/miss.err2")"; return 1; }
	fi
	tc qdisc add dev $MISS_DEV clsact &&
	tc filter add dev $MISS_DEV ingress pref 10 protocol ip flower \
		dst_ip 192.0.2.99 action drop || { WHY="tc qdisc/filter add failed"; return 1; }
	[ "$(tc_hw_state "" $MISS_DEV 10)" = in_hw ] ||
		{ WHY="the non-matching rule is not in_hw: $(tc filter show dev $MISS_DEV ingress | tr '\n' ' ')"; return 1; }
	for ((i = 0; i < 100; i++)); do
		st=$(xf_dev_state $MISS_DEV)
		[ "$st" = attached ] && break
		[ "$st" = error ] && break
		bsleep 0.2
	done
	[ "$st" = attached ] ||
		{ WHY="mr0 is not attached: state $st: $("$XF_CLI" status 2>&1 | tr '\n' ' ')"; return 1; }
	if [ "$(xdp_prog_id "" $MISS_DEV)" != 0 ]; then
		HOOK=xdp
	else
		HOOK=tc
	fi
	case $cfg in
	xdp) [ $HOOK = xdp ] || { WHY="hook xdp, but mr0 has no XDP program"; return 1; } ;;
	tc) [ $HOOK = tc ] || { WHY="hook tc, but mr0 has an XDP program"; return 1; } ;;
	esac
	if [ "$check" = 1 ]; then
		js=$(timeout 20 "$XF_CLI" -j status 2>/dev/null |
			jq -c ".devices[] | select(.dev == \"$MISS_DEV\")" 2>/dev/null)
		log "miss $cfg: on the $HOOK hook; xdp-flow status: $js"
		st=$(jq -r '.hook // empty' <<<"$js" 2>/dev/null)
		[ -z "$st" ] || [ "$st" = "$HOOK" ] ||
			note miss "$cfg: xdp-flow status says hook $st, but mr0 looks like $HOOK"
		[ "$cfg" = auto ] &&
			note miss "auto: picked $HOOK ($(jq -r '.hook_why // "no reason given"' <<<"$js" 2>/dev/null))"
		miss_probe || return 1
	fi
	return 0
}

miss_down()
{
	[ "$1" = disabled ] && return 0
	tc qdisc del dev $MISS_DEV clsact 2>/dev/null
	"$XF_CLI" disable dev $MISS_DEV >/dev/null 2>&1
	[ "$(xdp_prog_id "" $MISS_DEV)" = 0 ] ||
		{ note miss "$1: an XDP program stays on mr0 after disable"; return 1; }
}

# miss_tcp: sets M_TCP (Gbit/s).
miss_tcp()
{
	M_TCP=
	ip netns exec xfbm timeout $((MISS_SECS + 60)) iperf3 -c $MISS_IP \
		-p $MISS_PORT -t "$MISS_SECS" -O 1 -A 0 -J >"$TMP/miss_tcp.json" 2>&1
	M_TCP=$(jq -r '.end.sum_received.bits_per_second // empty' "$TMP/miss_tcp.json" 2>/dev/null)
	[ -n "$M_TCP" ] ||
		{ WHY="iperf3 tcp: $(head -c 300 "$TMP/miss_tcp.json" | tr '\n' ' ')"; return 1; }
	M_TCP=$(calc "$M_TCP / 1e9")
}

# miss_udp: sets M_UDP (datagrams that reached the UDP layer a second),
# M_UDLV (of them, read by iperf3), M_UDEV (frames at mr0 a second),
# M_SENT (datagrams the client sent a second).
miss_udp()
{
	local pid i0 d0 l0 t0 i1 d1 l1 t1 n s k

	M_UDP= M_UDLV= M_UDEV= M_SENT=
	ip netns exec xfbm timeout $((MISS_SECS + 60)) iperf3 -c $MISS_IP \
		-p $MISS_PORT -u -l 64 -b 0 -t $((MISS_SECS + 2)) -A 0 -J \
		>"$TMP/miss_udp.json" 2>&1 &
	pid=$!
	# processes start slowly here: from the first datagrams on
	miss_counts || { wait $pid; WHY="cannot read the counters"; return 1; }
	i0=$M_IN
	for ((k = 0; k < 100; k++)); do
		bsleep 0.1
		miss_counts && [ $((M_IN - i0)) -gt 100 ] && break
	done
	bsleep 0.5
	miss_counts || { wait $pid; WHY="cannot read the counters"; return 1; }
	i0=$M_IN d0=$M_DEV l0=$M_DLV; now; t0=$NOW
	bsleep "$MISS_SECS"
	miss_counts || { wait $pid; WHY="cannot read the counters"; return 1; }
	i1=$M_IN d1=$M_DEV l1=$M_DLV; now; t1=$NOW
	# the window must end before the sender does
	if ! kill -0 $pid 2>/dev/null; then
		wait $pid
		WHY="the sender ended within the window (it started late)"
		return 1
	fi
	wait $pid
	read -r n s < <(jq -r '"\(.end.sum.packets // "") \(.end.sum.seconds // "")"' \
		"$TMP/miss_udp.json" 2>/dev/null)
	[ -n "$n" ] && [ -n "$s" ] ||
		{ WHY="iperf3 udp: $(head -c 300 "$TMP/miss_udp.json" | tr '\n' ' ')"; return 1; }
	M_UDP=$(calc "($i1 - $i0) * 1e6 / ($t1 - $t0)")
	M_UDLV=$(calc "($l1 - $l0) * 1e6 / ($t1 - $t0)")
	M_UDEV=$(calc "($d1 - $d0) * 1e6 / ($t1 - $t0)")
	M_SENT=$(calc "$n / $s")
	[ "$(calc "$M_UDP > 0")" = 1 ] || { WHY="no datagram arrived"; return 1; }
}

section_miss()
{
	local cfg r k n line rt ru check
	local -A ok=() why=() tcp=() udp=() udlv=() udev=() usent=() mt=() mu=() hook=()

	log "== miss: traffic matching no rule, xfbm -> mr0; tcp and 64-byte udp; $MISS_REPS x ${MISS_SECS}s per configuration"
	command -v iperf3 >/dev/null || { note miss "no iperf3"; return 1; }
	miss_topo || { note miss "cannot build the namespace and veth pair"; miss_cleanup; return 1; }
	iperf3 -s -B $MISS_IP -p $MISS_PORT -A 1 >"$TMP/miss_srv.log" 2>&1 &
	MISS_SRV=$!
	bsleep 1
	kill -0 "$MISS_SRV" 2>/dev/null ||
		{ note miss "the iperf3 server does not start: $(cat "$TMP/miss_srv.log")"; MISS_SRV=; miss_cleanup; return 1; }
	for cfg in "${MISS_CFGS[@]}"; do
		ok[$cfg]=1
	done

	n=${#MISS_CFGS[@]}
	for ((r = 1; r <= MISS_REPS; r++)); do
		for ((k = 0; k < n; k++)); do
			cfg=${MISS_CFGS[$(((k + r - 1) % n))]}
			[ "${ok[$cfg]}" = 1 ] || continue
			check=0
			[ -z "${hook[$cfg]:-}" ] && check=1
			if ! miss_up "$cfg" $check; then
				ok[$cfg]=0
				why[$cfg]=$WHY
				note miss "$cfg: not measured: $WHY"
				miss_down "$cfg" >/dev/null 2>&1
				continue
			fi
			hook[$cfg]=${HOOK:-none}
			line="miss $cfg run $r:"
			if miss_tcp; then
				tcp[$cfg]+="$M_TCP "
				csv miss "$cfg" "tcp_gbps_run$r" "$M_TCP" Gbit/s
				line+=" tcp $(printf '%.3f' "$M_TCP") Gbit/s"
			else
				note miss "$cfg run $r: tcp failed: $WHY"
			fi
			if miss_udp; then
				udp[$cfg]+="$M_UDP "
				udlv[$cfg]+="$M_UDLV "
				udev[$cfg]+="$M_UDEV "
				usent[$cfg]+="$M_SENT "
				csv miss "$cfg" "udp_pps_run$r" "$M_UDP" pps
				line+="; udp $(printf '%.0f' "$M_UDP") pps at the UDP layer, $(printf '%.0f' "$M_UDLV") delivered, $(printf '%.0f' "$M_UDEV") at mr0, $(printf '%.0f' "$M_SENT") sent"
			else
				note miss "$cfg run $r: udp failed: $WHY"
			fi
			log "$line"
			miss_down "$cfg"
		done
	done
	miss_cleanup

	sum ""
	sum "miss: traffic matching no rule (xdp_flow enabled on mr0 with one non-matching flower rule,"
	sum "  hook xdp|tc|auto, against nothing on mr0): iperf3 tcp, and 64-byte udp (datagrams that"
	sum "  reached the UDP layer; delivered: read by iperf3); median of $MISS_REPS x ${MISS_SECS}s; ratio: to disabled"
	sum "$(printf '  %-10s %-5s %9s %6s %10s %6s %10s %10s %10s' config hook 'tcp Gb/s' ratio 'udp pps' ratio delivered 'at mr0' 'sent')"
	for cfg in "${MISS_CFGS[@]}"; do
		if [ -z "${tcp[$cfg]:-}${udp[$cfg]:-}" ]; then
			csv miss "$cfg" measured 0 flag
			sum "$(printf '  %-10s not measured: %s' "$cfg" "${why[$cfg]:-every run failed}")"
			continue
		fi
		csv miss "$cfg" measured 1 flag
		[ "$cfg" = auto ] && csv miss auto hook_is_tc "$([ "${hook[auto]}" = tc ] && echo 1 || echo 0)" flag
		# shellcheck disable=SC2086
		[ -n "${tcp[$cfg]:-}" ] && mt[$cfg]=$(median ${tcp[$cfg]}) &&
			csv miss "$cfg" tcp_gbps "${mt[$cfg]}" Gbit/s
		if [ -n "${udp[$cfg]:-}" ]; then
			# shellcheck disable=SC2086
			mu[$cfg]=$(median ${udp[$cfg]})
			csv miss "$cfg" udp_pps "${mu[$cfg]}" pps
			# shellcheck disable=SC2086
			csv miss "$cfg" udp_delivered_pps "$(median ${udlv[$cfg]})" pps
			# shellcheck disable=SC2086
			csv miss "$cfg" udp_dev_pps "$(median ${udev[$cfg]})" pps
			# shellcheck disable=SC2086
			csv miss "$cfg" udp_sent_pps "$(median ${usent[$cfg]})" pps
		fi
	done
	for cfg in "${MISS_CFGS[@]}"; do
		[ -n "${tcp[$cfg]:-}${udp[$cfg]:-}" ] || continue
		rt=- ru=-
		if [ -n "${mt[$cfg]:-}" ] && [ -n "${mt[disabled]:-}" ]; then
			rt=$(calc "${mt[$cfg]} / ${mt[disabled]}")
			csv miss "$cfg" tcp_ratio_to_disabled "$rt" ratio
			rt=$(printf '%.3f' "$rt")
		fi
		if [ -n "${mu[$cfg]:-}" ] && [ -n "${mu[disabled]:-}" ]; then
			ru=$(calc "${mu[$cfg]} / ${mu[disabled]}")
			csv miss "$cfg" udp_ratio_to_disabled "$ru" ratio
			ru=$(printf '%.3f' "$ru")
		fi
		# shellcheck disable=SC2086
		sum "$(printf '  %-10s %-5s %9.3f %6s %10.0f %6s %10.0f %10.0f %10.0f' "$cfg" "${hook[$cfg]:--}" \
			"${mt[$cfg]:-0}" "$rt" "${mu[$cfg]:-0}" "$ru" "$(median ${udlv[$cfg]:-0})" \
			"$(median ${udev[$cfg]:-0})" "$(median ${usent[$cfg]:-0})")"
	done
	sum "  targets (issue 6, hook auto): tcp >= 0.9, udp >= 0.95 of disabled"
}

# ------------------------------------------------------------------ main

cleanup()
{
	local rc=$?

	if [ -n "$POLL_PID" ]; then
		touch "$TMP/poll.stop" 2>/dev/null
		wait "$POLL_PID" 2>/dev/null
	fi
	gen_stop >/dev/null 2>&1
	lat_cleanup >/dev/null 2>&1
	fwd_cleanup >/dev/null 2>&1
	rate_cleanup >/dev/null 2>&1
	ping_cleanup >/dev/null 2>&1
	miss_cleanup >/dev/null 2>&1
	devs_del xgk0
	[ -n "$V6DEFAULT" ] && echo "$V6DEFAULT" >/proc/sys/net/ipv6/conf/default/disable_ipv6
	rm -rf "$PIN"
	xf_unload >/dev/null 2>&1
	[ -n "$TMP" ] && rm -rf "$TMP"
	exit $rc
}

mkdir -p "$OUT" || { echo "cannot create $OUT" >&2; exit 1; }
: >"$NOTES"
echo "section,config,metric,value,unit" >"$CSV" || exit 1
TMP=$(mktemp -d /tmp/xfbench.XXXXXX) || exit 1
mkfifo "$TMP/sleep" && exec {SLEEP_FD}<>"$TMP/sleep" || exit 1
trap cleanup EXIT

if ! mountpoint -q /sys/fs/bpf; then
	mkdir -p /sys/fs/bpf 2>/dev/null
	mount -t bpf bpf /sys/fs/bpf || log "cannot mount bpffs at /sys/fs/bpf"
fi
ulimit -l unlimited 2>/dev/null

log "xdp_flow benchmark, guest half: kernel $(uname -r), $(nproc) CPUs"
log "NOTE: this guest is emulated (QEMU TCG): absolute rates and times mean nothing;"
log "compare configurations of this one run as ratios."
csv meta guest kernel "$(uname -r)" ""
csv meta guest cpus "$(nproc)" count
csv meta bench secs "$SECS" s
csv meta bench reps "$REPS" count

XF_READY=0
rm -rf "$PIN"
mkdir -p "$PIN"
if [ ! -f "$SINK_OBJ" ]; then
	note setup "no $SINK_OBJ: run make -C bench on the host"
elif ! bpftool prog load "$SINK_OBJ" "$PIN/sink" type xdp pinmaps "$PIN/sink_maps"; then
	note setup "cannot load $SINK_OBJ"
	SINK_OBJ=$SINK_OBJ.unusable
fi
if xf_load && xf_wait_helper 20; then
	XF_READY=1
else
	note setup "the xdp_flow module or its helper did not come up: no xdp_flow figures"
fi
# the benchmark's own traffic only: no IPv6 chatter on new devices
read -r V6DEFAULT </proc/sys/net/ipv6/conf/default/disable_ipv6
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
# where xdp_gen parks its program (xgk0, and xgk1 for a second one at
# the same time; down: no traffic ever)
devs_del xgk0
ip link add xgk0 type veth peer name xgk1 ||
	note setup "cannot create xgk0/xgk1 for xdp_gen -k"

for s in $SECTIONS; do
	case $s in
	forward|latency|rate|ping|miss|scale)
		t=$SECONDS
		"section_$s"
		log "section $s took $((SECONDS - t)) s"
		csv meta "$s" guest_time $((SECONDS - t)) s
		;;
	*) note setup "unknown section '$s'" ;;
	esac
done

{
	echo "xdp_flow benchmark (guest half), kernel $(uname -r), $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "The guest is emulated (QEMU TCG) on a shared host: absolute numbers are not meaningful;"
	echo "compare configurations within this run (ratios)."
	printf '%s\n' "${SUMMARY[@]}"
	if [ -s "$NOTES" ]; then
		echo ""
		echo "not measured / remarks:"
		sed 's/^/  /' "$NOTES"
	fi
	bad=$(dmesg | kernel_bad | head -n 5)
	[ -z "$bad" ] || { echo ""; echo "kernel log warnings:"; echo "$bad" | sed 's/^/  /'; }
	echo ""
	echo "guest time $((SECONDS - START)) s; $NMEAS figures in $CSV"
} >"$TXT"
echo
cat "$TXT"

[ "$NMEAS" -gt 0 ] || exit 1
exit 0
