# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the guest acceptance tests (test_1*.sh): reading what tc, ip
# and xdp-flow report. Sourced after selftests/lib.sh and
# selftests/guest/lib.sh. Every reader prints a number or a word on stdout,
# and fails (non-zero, message on stderr) when the thing it reads is absent,
# so that a test never compares against an empty string by accident.

XF_CLI=${XF_CLI:-$XF_ROOT/tools/xdp-flow/xdp-flow}

# Packets that arrive at a device are counted by a software flower rule on
# its ingress (pref XF_COUNT_PREF) matching UDP only: rx_packets would also
# count ARP, IPv6 router solicitations and MLD reports, and tests assert
# exact counts.
XF_COUNT_PREF=100

xf_err()
{
	echo "# $*" >&2
}

# xf_nsexec <ns|""> cmd...: run in a namespace, or in the root one.
xf_nsexec()
{
	local ns=$1

	shift
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$@"
	else
		"$@"
	fi
}

# udp_counter_add <ns> <dev>: count the UDP packets that reach <dev>.
udp_counter_add()
{
	local ns=$1 dev=$2

	xf_nsexec "$ns" tc qdisc add dev "$dev" clsact 2>/dev/null
	xf_nsexec "$ns" tc filter add dev "$dev" ingress pref $XF_COUNT_PREF \
		protocol ip flower ip_proto udp action pass
}

# tc_filter_json <ns> <dev> <pref>: the JSON object of the filter (the
# entry with options, not the chain head).
tc_filter_json()
{
	local ns=$1 dev=$2 pref=$3 out

	# A stats request that hangs in the module must fail the check, not
	# the whole test by its timeout.
	out=$(xf_nsexec "$ns" timeout 20 tc -s -j filter show dev "$dev" ingress pref "$pref" |
	      jq -c '[.[] | select(.options != null)] | .[0] // empty')
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
	local ns=$1 dev=$2 pref=$3 field=$4 js val

	js=$(tc_filter_json "$ns" "$dev" "$pref") || return 1
	case $field in
	hw_*|sw_*)
		val=$(echo "$js" | jq -r ".options.actions[0].stats |
			if . == null or .packets == null then empty
			else (.$field // 0) end") ;;
	*)
		val=$(echo "$js" | jq -r ".options.actions[0].stats.$field // empty") ;;
	esac
	if [ -z "$val" ]; then
		xf_err "filter pref $pref on $dev has no stats field '$field': $js"
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

	js=$(timeout 20 "$XF_CLI" -j status) || return 1
	echo "$js" | jq -r "$1"
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
# is attached to it, and that is success too.
wait_dev_attached()
{
	local dev=$1 end=$((SECONDS + ${2:-10})) st

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

	js=$(timeout 20 "$XF_CLI" -j show dev "$dev") || return 1
	n=$(echo "$js" | jq "[.[] | select(.prio == $prio)] | length")
	if [ "$n" != 1 ]; then
		xf_err "xdp-flow show dev $dev lists $n rules with prio $prio: $js"
		return 1
	fi
	echo "$js" | jq -c ".[] | select(.prio == $prio)"
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

# helper_pids: pids of helper processes (the helper names itself
# xdp_flow_umh, whichever binary it was started from).
helper_pids()
{
	pgrep -x xdp_flow_umh
}

# xf_test_setup [module params]: the module with its helper running, the
# standard topology, neighbours resolved, UDP counters on veth_a, veth_b
# and veth_c. Logs one test line; returns non-zero when anything failed.
xf_test_setup()
{
	RET=0
	xf_load "$@"
	check_err $? "xf_load failed"
	if [ $RET -eq 0 ]; then
		xf_wait_helper 20
		check_err $? "the helper did not come up"
	fi
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

# xf_enable_veth0: enable offload on veth0 and add its clsact qdisc (after
# enabling, so that the module binds the new block).
xf_enable_veth0()
{
	xf_enable_dev veth0 || return 1
	wait_dev_attached veth0 10 || return 1
	tc qdisc add dev veth0 clsact
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

# diff_setup <lanes> <description> [module params]: the module and the
# lanes of the differential test, the A device of each enabled. Logs one
# test line; returns non-zero when anything failed.
diff_setup()
{
	local lanes=$1 what=$2 i

	shift 2
	RET=0
	xf_load "$@"
	check_err $? "xf_load failed"
	if [ $RET -eq 0 ]; then
		xf_wait_helper 20
		check_err $? "the helper did not come up"
	fi
	if [ $RET -eq 0 ]; then
		python3 "$XF_ROOT/selftests/diff/difftest.py" setup --lanes "$lanes"
		check_err $? "difftest.py setup failed"
	fi
	for ((i = 0; i < lanes && RET == 0; i++)); do
		xf_enable_dev "xda$i" && wait_dev_attached "xda$i" 20
		check_err $? "cannot enable xda$i"
	done
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
# its last line ("cases N, differences D, rules in_hw ..."). Returns
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
	DIFF_LAST=$(echo "$out" | tail -n 1)
	return $rc
}

# diff_reload <description> [module params]: the module again (with
# other parameters, such as another build of the helper), on the lanes of
# diff_setup, the A devices enabled again. Returns non-zero on failure.
diff_reload()
{
	local i

	xf_unload || return 1
	xf_load "${@:2}" || return 1
	xf_wait_helper 20 || { xf_err "$1: the helper did not come up"; return 1; }
	for ((i = 0; i < LANES; i++)); do
		# A module offered no rule of a block bound before it loaded:
		# a fresh clsact (difftest.py makes one per batch anyway).
		tc qdisc del dev "xda$i" clsact 2>/dev/null
		xf_enable_dev "xda$i" && wait_dev_attached "xda$i" 20 &&
			tc qdisc add dev "xda$i" clsact ||
			{ xf_err "$1: cannot enable xda$i"; return 1; }
	done
}

# diff_cleanup <lanes>: for the EXIT trap of the differential tests.
diff_cleanup()
{
	python3 "$XF_ROOT/selftests/diff/difftest.py" cleanup --lanes "$1" \
		>/dev/null 2>&1
	xf_unload >/dev/null 2>&1
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
