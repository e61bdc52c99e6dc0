# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the guest acceptance tests (test_1*.sh): reading what tc, ip
# and xdp-flow report. Sourced after selftests/lib.sh and
# selftests/guest/lib.sh. Every reader prints a number or a word on stdout,
# and fails (non-zero, message on stderr) when the thing it reads is absent,
# so that a test never compares against an empty string by accident.

# Packets that arrive at a device are counted by a software flower rule on
# its ingress (pref XF_COUNT_PREF) matching UDP only: rx_packets would also
# count ARP, IPv6 router solicitations and MLD reports, and tests assert
# exact counts.
XF_COUNT_PREF=100

xf_err()
{
	echo "# $*" >&2
}

# xf_nsexec <ns|""> cmd...: run in a namespace, or in the root one. ip
# and tc enter it themselves (-n): every process costs a lot in an
# emulated guest, and ip netns exec is one more.
xf_nsexec()
{
	local ns=$1 cmd

	shift
	if [ -z "$ns" ]; then
		"$@"
	elif [ "$1" = ip ] || [ "$1" = tc ]; then
		cmd=$1
		shift
		"$cmd" -n "$ns" "$@"
	else
		ip netns exec "$ns" "$@"
	fi
}

# udp_counter_add <ns> <dev>: count the UDP packets that reach <dev>.
udp_counter_add()
{
	local ns=$1 dev=$2

	# One tc; the qdisc may be there already (-force: on to the filter,
	# and then whether the filter is there says).
	printf '%s\n' "qdisc add dev $dev clsact" \
		"filter add dev $dev ingress pref $XF_COUNT_PREF protocol ip flower ip_proto udp action pass" |
		xf_nsexec "$ns" tc -force -batch - 2>/dev/null ||
		tc_filter_json "$ns" "$dev" $XF_COUNT_PREF >/dev/null
}

# tc_filter_json <ns> <dev> <pref> [<jq filter> [jq options...]]: the JSON
# object of the filter (the entry with options, not the chain head), or
# what the jq filter makes of it (strings raw).
tc_filter_json()
{
	local ns=$1 dev=$2 pref=$3 prog=${4:-.} out

	# No timeout(1) around tc: each costs a process (about 45 ms in the
	# emulated guest, and this is the tests' most frequent call). The
	# module bounds its wait for the helper's stats (helper_timeout_ms);
	# a hang past that is run.sh's per-test timeout's, with its report.
	out=$(tc ${ns:+-n "$ns"} -s -j filter show dev "$dev" ingress pref "$pref" |
	      jq -cr "${@:5}" "[.[] | select(.options != null)] | .[0] // empty | $prog")
	if [ -z "$out" ]; then
		xf_err "no filter with pref $pref on $dev${ns:+ in $ns}"
		return 1
	fi
	echo "$out"
}

# tc_stat <ns> <dev> <pref> <field>: a field of the first action's stats of
# the filter: packets, bytes (software and hardware together, as TC adds
# them up), hw_packets, hw_bytes, sw_packets, sw_bytes. iproute2 prints the
# sw_ and hw_ fields only when the hardware counters are not zero: absent,
# they read as 0 (a test expecting hardware packets then fails on 0); the
# stats object and its packets/bytes must be there.
tc_stat()
{
	local field=$4 val

	# Read in the one jq of tc_filter_json: this runs in every poll of
	# every counter.
	val=$(tc_filter_json "$1" "$2" "$3" '(.options.actions[0].stats // {}) |
		if .packets == null then "nofield"
		elif ($f | test("^(hw|sw)_")) then (.[$f] // 0)
		else (.[$f] // "nofield") end' --arg f "$field") || return 1
	if [ "$val" = nofield ]; then
		xf_err "filter pref $3 on $2 has no stats field '$field'"
		return 1
	fi
	echo "$val"
}

# udp_count <ns> <dev>: UDP packets counted by udp_counter_add.
udp_count()
{
	tc_stat "$1" "$2" $XF_COUNT_PREF packets
}

udp_bytes()
{
	tc_stat "$1" "$2" $XF_COUNT_PREF bytes
}

# tc_hw_state <ns> <dev> <pref>: prints in_hw, not_in_hw, or "none" when
# tc prints neither: TC sets not_in_hw only when a driver refused the rule
# as it was added; a rule whose offload went away later (driver gone, block
# unbound) just loses in_hw.
tc_hw_state()
{
	local js

	js=$(tc_filter_json "$1" "$2" "$3") || return 1
	if [ "$(echo "$js" | jq -r '.options.in_hw // false')" = true ]; then
		echo in_hw
	elif [ "$(echo "$js" | jq -r '.options.not_in_hw // false')" = true ]; then
		echo not_in_hw
	else
		echo none
	fi
}

# xdp_prog_id <ns> <dev>: the id of the XDP program on <dev>, or 0.
xdp_prog_id()
{
	local ns=$1 dev=$2 js

	js=$(xf_nsexec "$ns" ip -j link show dev "$dev") || return 1
	echo "$js" | jq -r '.[0].xdp.prog.id // .[0].xdp.attached[0].prog.id // 0'
}

# xdp_progs_anywhere: prints "ns/dev" for every device, in the root
# namespace and every named one, that carries an XDP program.
xdp_progs_anywhere()
{
	local ns

	for ns in "" $(ip netns list | awk '{print $1}'); do
		xf_nsexec "$ns" ip -j link show |
			jq -r --arg ns "${ns:-root}" \
			   '.[] | select(.xdp != null) | "\($ns)/\(.ifname)"'
	done
}

# wait_xdp_prog <dev> <present|absent> [timeout_s]: attaching and detaching
# are asynchronous (the helper does them).
wait_xdp_prog()
{
	local dev=$1 want=$2 end=$((SECONDS + ${3:-10})) id

	while :; do
		id=$(xdp_prog_id "" "$dev") || return 1
		if [ "$want" = present ] && [ "$id" != 0 ]; then
			return 0
		fi
		if [ "$want" = absent ] && [ "$id" = 0 ]; then
			return 0
		fi
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}

# xf_status_get <jq-filter>: a field of `xdp-flow status -j`.
xf_status_get()
{
	local js

	js=$("$XF_CLI" -j status) || return 1
	jq -r "$1" <<<"$js"
}

# xf_dev_state <dev>: idle, attaching, attached, error, or "none" when the
# device is not enabled.
xf_dev_state()
{
	xf_status_get ".devices[] | select(.dev == \"$1\") | .state" |
		awk 'BEGIN { s = "none" } { s = $0 } END { print s }'
}

# The hook the tests enable offload with (xdp, tc or auto): XF_HOOK, by
# default auto (what users get); run.sh runs some tests again with the
# other hook.
XF_HOOK=${XF_HOOK:-auto}

# xf_enable_dev <dev> [args]: xdp-flow enable dev <dev> hook $XF_HOOK [args].
xf_enable_dev()
{
	"$XF_CLI" enable dev "$1" hook "$XF_HOOK" "${@:2}"
}

# xf_dev_hook <dev>: xdp or tc, as `xdp-flow status` says.
xf_dev_hook()
{
	xf_status_get ".devices[] | select(.dev == \"$1\") | .hook"
}

# xf_dev_switch <dev>: the switch that enabled <dev> (xdp-flow,
# hw-tc-offload or flow-offload-xdp), as `xdp-flow status` says; nothing
# when it is not enabled.
xf_dev_switch()
{
	xf_status_get ".devices[] | select(.dev == \"$1\") | .switch"
}

# xf_dp_linked <dev>: the helper's pinned link for <dev> exists (the
# datapath is on it, whichever hook).
xf_dp_linked()
{
	local ifi

	ifi=$(cat "/sys/class/net/$1/ifindex" 2>/dev/null) || return 1
	[ -e "/sys/fs/bpf/xdp_flow/link_$ifi" ]
}

# wait_dev_attached <dev> [timeout_s]: enabled, and, once it has offloaded
# rules, the datapath on it (state attached; for the xdp hook also an XDP
# program in ip link). A device without offloaded rules is idle: nothing
# is attached to it, and that is success too. The timeout is at this
# kernel's pace (XF_PACE): the first device of the hook the helper did not
# load at start waits for its program's verification.
wait_dev_attached()
{
	local dev=$1 end=$((SECONDS + ${2:-10} * ${XF_PACE:-1})) st

	while :; do
		st=$(xf_dev_state "$dev")
		[ "$st" = idle ] && return 0
		if [ "$st" = attached ] && xf_dp_linked "$dev"; then
			[ "$(xf_dev_hook "$dev")" = tc ] && return 0
			[ "$(xdp_prog_id "" "$dev")" != 0 ] && return 0
		fi
		if [ "$st" = error ]; then
			xf_err "$dev: $("$XF_CLI" status 2>&1)"
			return 1
		fi
		[ $SECONDS -ge $end ] && { xf_err "$dev not attached: state $st"; return 1; }
		sleep 0.1
	done
}

# wait_dev_state <dev> <state> [timeout_s]: idle, attaching, attached...
wait_dev_state()
{
	local end=$((SECONDS + ${3:-10}))

	until [ "$(xf_dev_state "$1")" = "$2" ]; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}

# xf_rule_json <dev> <prio>: the rule of `xdp-flow show -j dev <dev>` with
# that prio (fails when there is none or more than one).
xf_rule_json()
{
	local dev=$1 prio=$2 js n

	js=$("$XF_CLI" -j show dev "$dev") || return 1
	# one jq: the rule, or the number of rules with that prio
	js=$(jq -c "[.[] | select(.prio == $prio)] |
		    if length == 1 then .[0] else length end" <<<"$js")
	if [ "${js:0:1}" != "{" ]; then
		xf_err "xdp-flow show dev $dev lists ${js:-no} rules with prio $prio"
		return 1
	fi
	echo "$js"
}

# wait_value <expected> <timeout_s> cmd...: poll cmd until it prints
# <expected> or a number above it; prints the last value. Counters are
# asserted with exact equality after the wait, so an overshoot still fails.
wait_value()
{
	local want=$1 end=$((SECONDS + $2)) v

	shift 2
	while :; do
		v=$("$@") || { echo "error"; return 1; }
		if [[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -ge "$want" ]; then
			echo "$v"
			return 0
		fi
		if [ $SECONDS -ge $end ]; then
			echo "$v"
			return 1
		fi
		sleep 0.1
	done
}

# wait_value_le <limit> <timeout_s> cmd...: poll cmd until it prints a
# number at most <limit>; prints the last value.
wait_value_le()
{
	local want=$1 end=$((SECONDS + $2)) v

	shift 2
	while :; do
		v=$("$@") || { echo "error"; return 1; }
		[[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -le "$want" ] && break
		[ $SECONDS -ge $end ] && break
		sleep 0.2
	done
	echo "$v"
}

# settle: time for packets that are still in flight (queues, NAPI) to land
# before asserting that something did NOT arrive.
settle()
{
	sleep 1
}

# warm_neighbours: resolve ARP along every path before counting, so no
# packet waits in a neighbour queue while a test reads counters.
warm_neighbours()
{
	local dst

	for dst in 10.0.2.1 10.0.3.1; do
		ip netns exec xfa ping -q -c 1 -W 2 "$dst" >/dev/null ||
			{ xf_err "no route from xfa to $dst"; return 1; }
	done
	ip netns exec xfc ping -q -c 1 -W 2 10.0.1.1 >/dev/null ||
		{ xf_err "no route from xfc to 10.0.1.1"; return 1; }
}

# dmesg_bad_since <mark>: kernel warnings since the mark.
dmesg_bad_since()
{
	dmesg_since "$1" | kernel_bad
}

# xf_held_umh <dir>: write <dir>/held_umh, for the module to start
# instead of its own helper (umh_path=): it waits while <dir>/hold exists,
# then becomes the helper (the same process). Prints its path.
xf_held_umh()
{
	cat >"$1/held_umh" <<EOF || return 1
#!/bin/sh
while [ -e "$1/hold" ]; do sleep 0.1; done
exec "$XF_UMH" "\$@"
EOF
	chmod 755 "$1/held_umh" && echo "$1/held_umh"
}

# helper_pids: pids of helper processes (the helper names itself
# xdp_flow_umh, whichever binary it was started from).
helper_pids()
{
	pgrep -x xdp_flow_umh
}

# xf_start [module parameters...]: load the module and wait for its
# helper, as checks of the current group.
xf_start()
{
	xf_load "$@"
	check_err $? "xf_load failed"
	[ $RET -eq 0 ] || return 1
	xf_wait_helper
	check_err $? "the helper did not come up"
}

# xf_test_setup [module params]: the module with its helper running, the
# standard topology, neighbours resolved, UDP counters on veth_a, veth_b
# and veth_c. Logs one test line; returns non-zero when anything failed.
xf_test_setup()
{
	RET=0
	xf_start "$@"
	if [ $RET -eq 0 ]; then
		xf_veth_topology
		check_err $? "xf_veth_topology failed"
	fi
	if [ $RET -eq 0 ]; then
		warm_neighbours
		check_err $? "the topology does not forward"
	fi
	if [ $RET -eq 0 ]; then
		udp_counter_add xfa veth_a && udp_counter_add xfb veth_b &&
			udp_counter_add xfc veth_c
		check_err $? "cannot add the UDP counters"
	fi
	log_setup "setup: module, helper, topology"
	return $RET
}

# xf_test_cleanup: for the EXIT trap of every test.
xf_test_cleanup()
{
	xf_topology_cleanup >/dev/null 2>&1
	xf_unload >/dev/null 2>&1
}

# xf_test_begin [module parameters...]: how a test on the standard scene
# opens: the scene goes away at exit (xf_test_cleanup), and is set up
# (xf_test_setup, with the parameters for the module); the test exits 1
# if that failed.
xf_test_begin()
{
	trap xf_test_cleanup EXIT
	xf_test_setup "$@" || exit 1
}

# xf_enable_xfv0: enable offload on xfv0 and add its clsact qdisc (after
# enabling, so that the module binds the new block).
xf_enable_xfv0()
{
	xf_enable_dev xfv0 || return 1
	wait_dev_attached xfv0 10 || return 1
	tc qdisc add dev xfv0 clsact
}

# xf_check_enable_xfv0: xf_enable_xfv0, as a check of the current group.
xf_check_enable_xfv0()
{
	xf_enable_xfv0
	check_err $? "xdp-flow enable dev xfv0 failed or the device never got attached"
}

# per_packet_bytes <ns> <dev> <before> <n>: the bytes one of the <n> UDP
# packets counted since <before> (bytes) took at ingress, as TC counts them.
per_packet_bytes()
{
	local now

	now=$(udp_bytes "$1" "$2") || return 1
	if [ $(((now - $3) % $4)) -ne 0 ]; then
		xf_err "$2 counted $((now - $3)) bytes for $4 packets"
		return 1
	fi
	echo $(((now - $3) / $4))
}

# ---- counters before and after a send (counters_snap, counters_expect,
# send_expect) ----
#
# A test names the counters it asserts with short specs, <kind>:<where>,
# the fields of <where> separated by '/' (a namespace may be empty, for the
# root one):
#   udp:[<ns>/]<dev>          udp_count: UDP packets that reached <dev>
#   pk:[<ns>/]<dev>/<pref>    tc_stat packets of the rule (software and
#                             hardware together)
#   hw:[<ns>/]<dev>/<pref>    tc_stat hw_packets of the rule
#   xf:<dev>/<prio>           packets of the rule in `xdp-flow show`
#   fn:<func>[/<arg>...]      what `<func> <arg>...` prints: a reader of
#                             the test's own (block_stat, nft_counter...)
# <ns> defaults to the root namespace: udp:xfb/veth_b is veth_b in xfb,
# hw:xfv0/1 the rule of pref 1 on xfv0 in the root namespace, pk:xfb/veth_b/5
# the rule of pref 5 on veth_b in xfb.
#
# A check is a spec with what is expected of it:
#   <spec>+<n>   the counter moves by exactly <n> (+0: it does not move)
#   <spec>=<n>   the counter ends at exactly <n>
# e.g. udp:xfb/veth_b+0 (nothing reached veth_b), hw:xfv0/1=50 (the rule
# counted 50 hardware packets in all). Every counter must read as a number.
#
#   counters_snap <check>...     read the counters before
#   ...send, or whatever moves them...
#   counters_expect              wait, settle, compare
# or, when one send_udp is all that happens in between:
#   send_expect <send_udp args> -- <check>...
# A test's own reader (fn:) is called only through these: shellcheck then
# takes it for unreachable code (SC2317).

# How long counters_expect waits for the counters to get there (s; on a
# slow kernel, XF_PACE times as long).
XF_EXPECT_WAIT=${XF_EXPECT_WAIT:-$((5 * ${XF_PACE:-1}))}

# The checks of the last counters_snap, and the values it read (by spec).
XF_CNT_CHECKS=()
declare -gA XF_CNT_BEFORE=()

# counter_read <spec>: the value of the counter <spec> names.
counter_read()
{
	local kind=${1%%:*} v js
	local -a f=()

	if [ "$kind" = "$1" ]; then
		xf_err "counter spec '$1' has no kind"
		return 1
	fi
	IFS=/ read -r -a f <<<"${1#*:}"
	case $kind:${#f[@]} in
	udp:1) v=$(udp_count "" "${f[0]}") ;;
	udp:2) v=$(udp_count "${f[0]}" "${f[1]}") ;;
	pk:2) v=$(tc_stat "" "${f[0]}" "${f[1]}" packets) ;;
	pk:3) v=$(tc_stat "${f[0]}" "${f[1]}" "${f[2]}" packets) ;;
	hw:2) v=$(tc_stat "" "${f[0]}" "${f[1]}" hw_packets) ;;
	hw:3) v=$(tc_stat "${f[0]}" "${f[1]}" "${f[2]}" hw_packets) ;;
	xf:2)
		js=$(xf_rule_json "${f[0]}" "${f[1]}") &&
			v=$(echo "$js" | jq -r '.stats.packets // empty') ;;
	fn:*)
		if [ ${#f[@]} -eq 0 ] || ! declare -F "${f[0]}" >/dev/null; then
			xf_err "counter spec '$1': no function '${f[0]:-}'"
			return 1
		fi
		v=$("${f[@]}") ;;
	*)
		xf_err "counter spec '$1' is not one of udp:[ns/]dev, pk:[ns/]dev/pref, hw:[ns/]dev/pref, xf:dev/prio, fn:func[/arg...]"
		return 1 ;;
	esac
	if ! [[ "$v" =~ ^[0-9]+$ ]]; then
		xf_err "counter $1 reads '$v', not a number"
		return 1
	fi
	echo "$v"
}

# __xf_check_parse <check>: split a check into the caller's spec, op (+ or
# =) and want; fails when it is no <spec>+<n> or <spec>=<n>.
__xf_check_parse()
{
	want=${1##*[+=]}
	spec=${1%[+=]*}
	op=${1:${#spec}:1}
	if [ -z "$spec" ] || [ "$spec" = "$1" ] || ! [[ "$want" =~ ^[0-9]+$ ]]; then
		xf_err "counter check '$1' is not <spec>+<n> or <spec>=<n>"
		return 1
	fi
}

# counters_snap <check>...: read the counters of the checks before a send,
# for counters_expect. A counter that cannot be read fails the current
# group (check_err) when its check is +<n>; returns non-zero then.
counters_snap()
{
	local c spec op want v bad=

	XF_CNT_CHECKS=("$@")
	XF_CNT_BEFORE=()
	for c in "$@"; do
		if ! __xf_check_parse "$c"; then
			bad+="${bad:+; }bad check '$c'"
			continue
		fi
		if v=$(counter_read "$spec"); then
			XF_CNT_BEFORE[$spec]=$v
		elif [ "$op" = + ]; then
			bad+="${bad:+; }cannot read $spec"
		fi
	done
	if [ -n "$bad" ]; then
		check_err 1 "$bad"
		return 1
	fi
}

# counters_expect: for the checks of the last counters_snap, wait (at most
# XF_EXPECT_WAIT s) until every counter reaches what its check expects (at
# once for +0), settle (0.3 s when no counter must stay put), then compare
# every counter exactly. One check_err names every counter that is off, as
# "<spec>: <got>, expected <want>" (+<got>, +<want> for a move); returns
# non-zero then.
counters_expect()
{
	local -a checks=("${XF_CNT_CHECKS[@]}") specs=() ops=() wants=()
	local -a befores=() targets=() reached=()
	local spec op want v d i n left end msg=

	n=${#checks[@]}
	XF_CNT_CHECKS=()
	if [ "$n" -eq 0 ]; then
		check_err 1 "counters_expect: no check (no counters_snap before)"
		return 1
	fi
	for ((i = 0; i < n; i++)); do
		__xf_check_parse "${checks[i]}" ||
			{ msg+="${msg:+; }bad check '${checks[i]}'"; continue; }
		if [ "$op" = + ]; then
			if [ -z "${XF_CNT_BEFORE[$spec]+set}" ]; then
				msg+="${msg:+; }$spec: no value before (counters_snap)"
				continue
			fi
			befores[i]=${XF_CNT_BEFORE[$spec]}
			targets[i]=$((befores[i] + want))
		else
			targets[i]=$want
		fi
		specs[i]=$spec ops[i]=$op wants[i]=$want reached[i]=0
		# No need to poll what counters_snap already saw there (+0 among
		# them): the reading after the settle decides.
		if [ -n "${XF_CNT_BEFORE[$spec]+set}" ] &&
		   [ "${XF_CNT_BEFORE[$spec]}" -ge "${targets[i]}" ]; then
			reached[i]=1
		fi
	done
	if [ -n "$msg" ]; then
		check_err 1 "$msg"
		return 1
	fi

	# Counters only grow: wait until each is at least its target.
	end=$((SECONDS + XF_EXPECT_WAIT))
	while :; do
		left=0
		for ((i = 0; i < n; i++)); do
			[ "${reached[i]}" = 1 ] && continue
			if v=$(counter_read "${specs[i]}" 2>/dev/null) &&
			   [ "$v" -ge "${targets[i]}" ]; then
				reached[i]=1
			else
				left=$((left + 1))
			fi
		done
		[ $left -eq 0 ] && break
		[ $SECONDS -ge $end ] && break
		sleep 0.1
	done
	# A counter that must not move gets the full settle; counters that
	# reached their targets a moment for a surplus of the same burst.
	if [[ " ${wants[*]} " == *" 0 "* ]]; then
		settle
	else
		sleep 0.3
	fi

	for ((i = 0; i < n; i++)); do
		spec=${specs[i]}
		if ! v=$(counter_read "$spec"); then
			msg+="${msg:+; }$spec: unreadable"
		elif [ "${ops[i]}" = + ]; then
			printf -v d '%+d' $((v - befores[i]))
			[ "$v" -eq "${targets[i]}" ] ||
				msg+="${msg:+; }$spec: $d, expected +${wants[i]}"
		else
			[ "$v" -eq "${targets[i]}" ] ||
				msg+="${msg:+; }$spec: $v, expected ${wants[i]}"
		fi
	done
	if [ -n "$msg" ]; then
		check_err 1 "$msg"
		return 1
	fi
}

# send_expect <ns> <dst> <count> [dport [payload_bytes [sport]]] --
# <check>...: counters_snap the checks, send_udp, counters_expect. A
# failed send fails the current group ("send_udp failed").
send_expect()
{
	local -a send=()

	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		send+=("$1")
		shift
	done
	if [ $# -lt 2 ] || [ ${#send[@]} -lt 3 ]; then
		check_err 1 "send_expect: <ns> <dst> <count> [send_udp args] -- <check>..."
		return 1
	fi
	shift
	counters_snap "$@" || return 1
	if ! send_udp "${send[@]}"; then
		check_err 1 "send_udp failed"
		return 1
	fi
	counters_expect
}

# diff_setup <lanes> <description> [module params]: the module and the
# lanes of the differential test, the A device of each enabled. Logs one
# test line; returns non-zero when anything failed.
diff_setup()
{
	local lanes=$1 what=$2

	shift 2
	RET=0
	xf_start "$@"
	if [ $RET -eq 0 ]; then
		python3 "$XF_ROOT/selftests/diff/difftest.py" setup --lanes "$lanes"
		check_err $? "difftest.py setup failed"
	fi
	if [ $RET -eq 0 ]; then
		diff_enable_lanes "$lanes"
		check_err $? "cannot enable the A devices"
	fi
	log_setup "setup: $what, $lanes lanes of A (offload) and B (software)"
	return $RET
}

# The floors of the differential test, per hook: the share of final rules
# in_hw and of rule hits counted by the datapath that test_20's vocabulary
# reaches, less a margin (XF_DIFF_MIN_HW, XF_DIFF_MIN_XDP override them).
diff_floors()
{
	case $1 in
	xdp) echo "${XF_DIFF_MIN_HW:-85} ${XF_DIFF_MIN_XDP:-45}" ;;
	*) echo "${XF_DIFF_MIN_HW:-75} ${XF_DIFF_MIN_XDP:-38}" ;;
	esac
}

# Where test_20 leaves "<seed> <hook> <cases>" of a run without
# difference, for test_21's control (the guest's /tmp lasts one boot).
DIFF_CONTROL=/tmp/xdp_flow_diff_control

# diff_run <hook> [difftest.py run args]: a differential run on the lanes
# of diff_setup, with the floors of <hook> (xdp or tc: the hook the A
# devices got). Its output goes to the log as diagnostics; DIFF_LAST is
# its last line ("cases N, differences D, rules in_hw ..."), DIFF_OUT all
# of it. Returns
# difftest.py's status (0: no difference, no software hit, floors met).
diff_run()
{
	local hook=$1 floors out rc

	shift
	read -r -a floors <<<"$(diff_floors "$hook")"
	out=$(python3 "$XF_ROOT/selftests/diff/difftest.py" run \
		--lanes "$LANES" --min-rules-hw "${floors[0]}" \
		--min-xdp-packets "${floors[1]}" "$@" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /; s/^# # /# /'
	DIFF_OUT=$out
	DIFF_LAST=$(echo "$out" | tail -n 1)
	return $rc
}

# diff_reload <description> [module params]: the module again (with
# other parameters, such as another build of the helper), on the lanes of
# diff_setup, the A devices enabled again. Returns non-zero on failure.
diff_reload()
{
	xf_unload || return 1
	xf_load "${@:2}" || return 1
	xf_wait_helper || { xf_err "$1: the helper did not come up"; return 1; }
	diff_enable_lanes "$LANES" || { xf_err "$1: cannot enable the A devices"; return 1; }
}

# diff_enable_lanes <lanes>: offload enabled on the A device of each lane,
# each with a fresh clsact (a module is offered no rule of a block bound
# before it loaded; difftest.py makes a new one per batch anyway). Where
# the kernel has flow-offload-xdp, a device keeps the feature on across a
# module reload and the module enables it again as it loads (switch
# flow-offload-xdp): disabled first, so that each lane starts afresh with
# the tests' hook.
diff_enable_lanes()
{
	local i on

	on=" $(xf_status_get '.devices[].dev' | tr '\n' ' ') "
	for ((i = 0; i < $1; i++)); do
		if [[ "$on" == *" xda$i "* ]]; then
			"$XF_CLI" disable dev "xda$i" ||
				{ xf_err "cannot disable xda$i"; return 1; }
		fi
		tc qdisc del dev "xda$i" clsact 2>/dev/null
		xf_enable_dev "xda$i" && wait_dev_attached "xda$i" 20 &&
			tc qdisc add dev "xda$i" clsact ||
			{ xf_err "cannot enable xda$i"; return 1; }
	done
}

# diff_cleanup <lanes>: for the EXIT trap of the differential tests.
diff_cleanup()
{
	python3 "$XF_ROOT/selftests/diff/difftest.py" cleanup --lanes "$1" \
		>/dev/null 2>&1
	xf_unload >/dev/null 2>&1
}

# ---- an exception over an offloaded drop (test_28, test_29) ----
# The drop: xfv0 ingress pref 100, dst_ip 10.0.2.1; the exception: pref 1,
# UDP to 10.0.2.1 port XF_EXC_PORT, action pass.
XF_EXC_PORT=4000

# exc_expect_xdp <n>: XDP acts for the device: <n> frames to another port
# are dropped there; <n> to the exception's port get through (TC passes
# them), and the drop counts none of them.
exc_expect_xdp()
{
	send_expect xfa 10.0.2.1 "$1" $((XF_EXC_PORT + 1)) -- \
		udp:xfb/veth_b+0 hw:xfv0/100+"$1"
	send_expect xfa 10.0.2.1 "$1" $XF_EXC_PORT -- udp:xfb/veth_b+"$1" \
		pk:xfv0/1+"$1" pk:xfv0/100+0
}

# exc_expect_stack <n>: the device's frames go to the stack (a rule XDP
# has not got waits): <n> frames to the exception's port get through, <n>
# to another port are dropped by TC, none by XDP.
exc_expect_stack()
{
	send_expect xfa 10.0.2.1 "$1" $XF_EXC_PORT -- udp:xfb/veth_b+"$1" \
		pk:xfv0/1+"$1" pk:xfv0/100+0
	send_expect xfa 10.0.2.1 "$1" $((XF_EXC_PORT + 1)) -- \
		udp:xfb/veth_b+0 pk:xfv0/100+"$1" hw:xfv0/100+0
}

# ---- the helper's trust and lifecycle (test_25, test_26, test_27) ----

# xf_enable_default <dev>: enable offload on <dev> with the default hook
# (plain `xdp-flow enable dev <dev>`, i.e. hook auto: tc on a veth where
# the kernel has tcx, xdp elsewhere), wait until it is attached (or idle),
# then add its clsact qdisc.
xf_enable_default()
{
	"$XF_CLI" enable dev "$1" || return 1
	wait_dev_attached "$1" 10 || return 1
	tc qdisc add dev "$1" clsact
}

# proc_alive <pid>: the process exists and is not a zombie.
proc_alive()
{
	local st

	st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# proc_state <pid>: the State letter of a process (R, S, T, Z...), or
# "gone".
proc_state()
{
	local st

	st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	echo "${st:-gone}"
}

# xf_helper_state: helper_state of `xdp-flow status` (running, starting,
# stopped).
xf_helper_state()
{
	xf_status_get .helper_state
}

# wait_helper_state <state> [timeout_s]
wait_helper_state()
{
	local end=$((SECONDS + ${2:-10}))

	until [ "$(xf_helper_state)" = "$1" ]; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}

# wait_new_helper <old pid> [timeout_s]: wait until a helper other than
# <old pid> runs (helper_state running); prints its pid.
wait_new_helper()
{
	local old=$1 end=$((SECONDS + ${2:-30})) js st pid

	while :; do
		js=$(timeout 20 "$XF_CLI" -j status 2>/dev/null)
		st=$(echo "$js" | jq -r '.helper_state // empty' 2>/dev/null)
		pid=$(echo "$js" | jq -r '.helper_pid // 0' 2>/dev/null)
		if [ "$st" = running ] && [ "${pid:-0}" -gt 0 ] &&
		   [ "$pid" != "$old" ]; then
			echo "$pid"
			return 0
		fi
		if [ $SECONDS -ge $end ]; then
			xf_err "no new helper after ${2:-30} s (state '$st', pid '$pid', old $old)"
			return 1
		fi
		sleep 0.1
	done
}

# bpf_obj_count <prog|map|link>: how many BPF objects of that kind exist.
bpf_obj_count()
{
	local js

	js=$(bpftool -j "$1" show 2>/dev/null) || return 1
	[ -n "$js" ] || js='[]'
	echo "$js" | jq length
}

# xf_bpf_progs: "id type name" of every BPF program of xdp_flow's datapath
# (named xdp_flow or xdp_flow_tc), loaded or attached anywhere.
xf_bpf_progs()
{
	bpftool -j prog show 2>/dev/null |
		jq -r '.[]? | select(.name == "xdp_flow" or .name == "xdp_flow_tc") |
			"\(.id) \(.type) \(.name)"'
}

# xf_bpf_links: "link <id> type <type> prog <id>" of every BPF link whose
# program is one of xdp_flow's (an XDP link, or a tcx link: bpftool 7.1
# predates tcx and prints its type as a number; the program is sched_cls).
xf_bpf_links()
{
	local ids

	ids=$(xf_bpf_progs | awk '{ print $1 }' | paste -sd, -)
	[ -n "$ids" ] || return 0
	bpftool -j link show 2>/dev/null |
		jq -r --arg ids "$ids" '($ids | split(",") | map(tonumber)) as $ours |
			.[]? | select(.prog_id as $p | $ours | index($p)) |
			"link \(.id) type \(.type) prog \(.prog_id)"'
}

# nl_generic_ports <pid>: the generic netlink ports (portids) of the
# sockets a process holds: /proc/<pid>/fd gives the sockets' inodes,
# /proc/net/netlink the protocol (16: NETLINK_GENERIC), port and inode of
# each netlink socket.
nl_generic_ports()
{
	local fd l inodes=" "

	for fd in /proc/"$1"/fd/*; do
		l=$(readlink "$fd" 2>/dev/null) || continue
		case $l in
		socket:\[*\]) l=${l#socket:[}; inodes+="${l%]} " ;;
		esac
	done
	[ "$inodes" != " " ] || return 1
	awk -v inodes="$inodes" \
		'NR > 1 && $2 == 16 && index(inodes, " " $NF " ") { print $3 }' \
		/proc/net/netlink
}
