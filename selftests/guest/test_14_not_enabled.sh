#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Nothing is offloaded on a device where offload is not enabled: rules show
# not_in_hw, no XDP program appears, and the rules work in software. Checked
# on xfv0 before it is enabled, and on xfv2 while xfv0 is enabled. Enabling
# xfv2 then offloads the rule it already had. Only enabled devices' rules
# hold rule ids, and only they cost a full record in the module: of the
# rules of a device that is not enabled, the module keeps their place in
# TC's order (the slab caches' object counts show which record each has).

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=50

xf_test_begin

RET=0
tc qdisc add dev xfv0 clsact
check_err $? "tc qdisc add failed"
tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add failed"
st=$(tc_hw_state "" xfv0 1)
[ "$st" = not_in_hw ]
check_err $? "the rule on xfv0 shows $st before enable"
id=$(xdp_prog_id "" xfv0)
[ "$id" = 0 ]
check_err $? "xfv0 has XDP program $id before enable"
log_test "xfv0 not enabled: the rule is not_in_hw, no XDP program"

RET=0
send_expect xfa 10.0.2.1 $N -- pk:xfv0/1=$N hw:xfv0/1=0 udp:xfb/veth_b+0
log_test "xfv0 not enabled: the rule drops in software ($N packets, 0 in hardware)"

RET=0
tc qdisc del dev xfv0 clsact
check_err $? "tc qdisc del failed"
xf_check_enable_xfv0
tc qdisc add dev xfv2 clsact
check_err $? "tc qdisc add failed"
tc filter add dev xfv2 ingress pref 1 protocol ip flower dst_ip 10.0.1.1 action drop
check_err $? "tc filter add failed"
st=$(tc_hw_state "" xfv2 1)
[ "$st" = not_in_hw ]
check_err $? "the rule on xfv2 shows $st"
id=$(xdp_prog_id "" xfv2)
[ "$id" = 0 ]
check_err $? "xfv2 has XDP program $id"
st=$(xf_dev_state xfv2)
[ "$st" = none ]
check_err $? "xdp-flow status lists xfv2 as $st"
n=$("$XF_CLI" -j show | jq '[.[] | select(.dev == "xfv2")] | length')
[ "$n" = 0 ]
check_err $? "xdp-flow show lists $n rules of xfv2"
ids=$(xf_status_get .rule_ids)
[ "$ids" = 1 ]
check_err $? "$ids rule ids in use, not 1 (xfv0's shield): xfv2's rule took one"
log_test "xfv0 enabled, xfv2 not: xfv2's rule is not_in_hw, no XDP program on xfv2, no rule id"

RET=0
send_expect xfc 10.0.1.1 $N -- pk:xfv2/1=$N hw:xfv2/1=0 udp:xfa/veth_a+0
log_test "xfv2's rule drops in software ($N packets, 0 in hardware)"

RET=0
tc filter add dev xfv2 ingress pref 2 protocol ip flower dst_ip 10.0.1.1 \
	action skbedit priority 5
check_err $? "tc filter add pref 2 failed"
xf_enable_dev xfv2 && wait_dev_attached xfv2 10
check_err $? "xdp-flow enable dev xfv2 failed, or it never got attached"
st=$(tc_hw_state "" xfv2 1)
[ "$st" = in_hw ]
check_err $? "xfv2's rule shows $st once xfv2 is enabled, not in_hw"
st=$(tc_hw_state "" xfv2 2)
[ "$st" != in_hw ]
check_err $? "the skbedit rule XDP cannot execute shows in_hw"
send_expect xfc 10.0.1.1 $N -- hw:xfv2/1+$N pk:xfv2/1+$N udp:xfa/veth_a+0
log_test "enabling xfv2 offloads the rule it had: in_hw, $N packets dropped in XDP"

RET=0
ids=$(xf_status_get .rule_ids)
[ "$ids" = 4 ]
check_err $? "$ids rule ids in use with xfv2 enabled, not 4 (two shields, xfv2's two rules)"
"$XF_CLI" disable dev xfv2 >/dev/null
check_err $? "xdp-flow disable dev xfv2 failed"
ids=$(xf_status_get .rule_ids)
[ "$ids" = 1 ]
check_err $? "$ids rule ids in use after xfv2 was disabled, not 1"
send_expect xfc 10.0.1.1 $N -- hw:xfv2/1+0 pk:xfv2/1+$N udp:xfa/veth_a+0
log_test "rule ids: only enabled devices' rules and shields hold one (4 with xfv2, 1 after its disable, its rule in software again)"

# slab_objects <cache>: objects in use in a slab cache (or in the cache it
# was merged with: the checks below allow for others' objects there). The
# shrink first flushes the CPUs' slabs, whose free objects count as used.
slab_objects()
{
	local d=/sys/kernel/slab/$1

	[ -r "$d/objects" ] || return 1
	echo 1 >"$d/shrink" 2>/dev/null
	cut -d' ' -f1 "$d/objects"
}

# in_hw_count <dev> <pref>: rules of <pref> on <dev> that TC shows in_hw.
in_hw_count()
{
	tc -j filter show dev "$1" ingress pref "$2" |
		jq '[.[] | select(.options.in_hw == true)] | length'
}

# counter_chunks: the helper's maps of counters (chunks of 1024 rule ids).
counter_chunks()
{
	bpftool -j map show | jq '[.[] | select(.name == "xf_counters_c")] | length'
}

M=2000
if ! e0=$(slab_objects xdp_flow_entry) || ! p0=$(slab_objects xdp_flow_place); then
	log_skip "rules of a device not enabled keep a place only" \
		"no /sys/kernel/slab/*/objects in this kernel"
	exit $EXIT_STATUS
fi

RET=0
batch=$(mktemp)
for ((i = 0; i < M; i++)); do
	echo "filter add dev xfv2 ingress pref 100 protocol ip flower dst_ip 10.9.$((i / 250)).$((i % 250 + 1)) action drop"
done >"$batch"
tc -b "$batch"
check_err $? "tc -b of $M rules on xfv2 failed"
rm -f "$batch"
e1=$(slab_objects xdp_flow_entry)
p1=$(slab_objects xdp_flow_place)
[ $((p1 - p0)) -ge $((M * 9 / 10)) ] && [ $((e1 - e0)) -lt $((M / 10)) ]
check_err $? "$M rules on xfv2, not enabled: $((p1 - p0)) more places, $((e1 - e0)) more entries"
log_test "xfv2 not enabled: its $M rules cost a place each ($((p1 - p0)) places, $((e1 - e0)) entries more)"

RET=0
xf_enable_dev xfv2 && wait_dev_attached xfv2 30
check_err $? "xdp-flow enable dev xfv2 failed, or it never got attached"
n=$(in_hw_count xfv2 100)
[ "$n" = $M ]
check_err $? "$n of the $M rules in_hw after enable"
e2=$(slab_objects xdp_flow_entry)
p2=$(slab_objects xdp_flow_place)
[ $((e2 - e1)) -ge $((M * 9 / 10)) ] && [ $((p1 - p2)) -ge $((M * 9 / 10)) ]
check_err $? "enabled: $((e2 - e1)) more entries, $((p1 - p2)) fewer places"
send_expect xfc 10.0.1.1 $N -- hw:xfv2/1+$N udp:xfa/veth_a+0
log_test "enabling xfv2 makes each place a full rule: $n in_hw, the prio 1 drop in XDP"

RET=0
# Per-CPU counters for the rule ids in use, not for max_rules: a chunk of
# 1024 ids each, at most twice the chunks the rules use plus one once the
# helper had a quiet second; the shields' ids are in the top chunk.
ids=$(xf_status_get .rule_ids)
max=$(xf_status_get .max_rules)
c=$(counter_chunks)
[ "$c" -ge 2 ] && [ "$c" -le $(( 2 * (ids / 1024 + 2) + 1 )) ]
check_err $? "$c counter chunks for $ids rule ids in use"
log_test "counters: $c chunks of 1024 ids per CPU for $ids rule ids in use (max_rules $max)"

RET=0
"$XF_CLI" disable dev xfv2 >/dev/null
check_err $? "xdp-flow disable dev xfv2 failed"
n=$(in_hw_count xfv2 100)
[ "$n" = 0 ]
check_err $? "$n rules still in_hw after disable"
e3=$(slab_objects xdp_flow_entry)
p3=$(slab_objects xdp_flow_place)
[ $((e2 - e3)) -ge $((M * 9 / 10)) ] && [ $((p3 - p2)) -ge $((M * 9 / 10)) ]
check_err $? "disabled: $((e2 - e3)) fewer entries, $((p3 - p2)) more places"
tc filter del dev xfv2 ingress pref 100
check_err $? "tc filter del pref 100 failed"
p4=$(slab_objects xdp_flow_place)
[ $((p3 - p4)) -ge $((M * 9 / 10)) ]
check_err $? "$((p3 - p4)) fewer places after the $M rules were deleted"
# xfv0's shield is left: its chunk and at most two more, after a quiet second.
end=$((SECONDS + 5))
while [ "$(counter_chunks)" -gt 3 ] && [ $SECONDS -lt $end ]; do
	sleep 0.2
done
c=$(counter_chunks)
[ "$c" -le 3 ]
check_err $? "$c counter chunks a while after the rules went, not 3 at most"
send_expect xfc 10.0.1.1 $N -- hw:xfv2/1+0 pk:xfv2/1+$N udp:xfa/veth_a+0
log_test "disabling xfv2 keeps a place of each rule again; deleting the rules frees them and their counters"

exit $EXIT_STATUS
