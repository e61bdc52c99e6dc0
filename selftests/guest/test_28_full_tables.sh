#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Full tables change speed, never outcome. Rules the helper has no room
# for (here: more distinct masks than the XDP tables hold) wait, and from
# the first of them on the device's frames go to the stack (its shield):
# an offloaded rule of an earlier prio still acts in XDP, a later one
# never acts before a waiting rule. A prio-1 exception that waits over an
# offloaded prio-100 drop lets its packets through, as TC alone does;
# xdp-flow status and the kernel log say that rules wait. Once rules are
# deleted the waiting ones go in, and XDP acts again on the whole device.
# Then rule ids run out before the tables do (max_rules at its least,
# 2048, of which the top 1024 are the shields'): the same holds.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=40
PORT=$XF_EXC_PORT
# The tables get room for MASKS masks (module parameter max_masks; 255 by
# default, which only takes longer to fill), and more rules of distinct
# masks than that: distinct src/dst prefix lengths.
MASKS=16
FILL=24
# Rule ids: module parameter max_rules, the top 1024 the shields'.
RULES=2048

xf_test_begin max_masks=$MASKS max_rules=$RULES

# xf_dev_json <dev>: the device's object in xdp-flow status -j.
xf_dev_json()
{
	xdp-flow -j status | jq -ce --arg d "$1" '.devices[] | select(.dev == $d)'
}

RET=0
xf_check_enable_xfv0
tc filter add dev xfv0 ingress pref 100 protocol ip flower dst_ip 10.0.2.1 \
	action drop
check_err $? "tc filter add pref 100 failed"
[ "$(tc_hw_state "" xfv0 100)" = in_hw ]
check_err $? "the prio-100 drop is not in_hw"
send_expect xfa 10.0.2.1 $N $PORT -- hw:xfv0/100+$N udp:xfb/veth_b+0
log_test "prio 100 drop of 10.0.2.1 runs in XDP"

RET=0
mark=$(dmesg_mark)
batch=$(mktemp)
n=0
for s in $(seq 8 32); do
	for d in $(seq 8 32); do
		[ $n -lt $FILL ] || break 2
		echo "filter add dev xfv0 ingress pref 200 protocol ip flower src_ip 10.99.0.0/$s dst_ip 10.98.0.0/$d action drop"
		n=$((n + 1))
	done
done >"$batch"
tc -b "$batch"
check_err $? "tc -b of $FILL rules of distinct masks failed"
rm -f "$batch"
in_hw=$(tc -j filter show dev xfv0 ingress pref 200 |
	jq '[.[] | select(.options.in_hw == true)] | length')
total=$(tc -j filter show dev xfv0 ingress pref 200 |
	jq '[.[] | select(.options != null)] | length')
# One mask is the prio-100 rule's.
[ "$total" = $FILL ] && [ "$in_hw" = $((MASKS - 1)) ]
check_err $? "of $total prio-200 rules $in_hw are in_hw, not $((MASKS - 1))"
js=$(xf_dev_json xfv0)
check_err $? "xdp-flow status -j does not list xfv0"
[ "$(echo "$js" | jq .waiting)" = $((FILL - in_hw)) ] &&
	[ "$(echo "$js" | jq .to_stack_from_prio)" = 200 ]
check_err $? "status does not say that $((FILL - in_hw)) rules wait from prio 200: $js"
xdp-flow status | grep -q "wait for room in the XDP tables: frames go to the stack from prio 200 on"
check_err $? "xdp-flow status does not say that rules wait: $(xdp-flow status)"
dmesg_since "$mark" | grep -q "rules wait for room in the XDP tables"
check_err $? "no kernel log line says that rules wait"
send_expect xfa 10.0.2.1 $N $PORT -- hw:xfv0/100+$N udp:xfb/veth_b+0
log_test "$in_hw of $FILL rules fit, the rest wait from prio 200; prio 100 still acts in XDP"

RET=0
out=$(tc filter add dev xfv0 ingress pref 1 protocol ip flower verbose \
	ip_proto udp dst_ip 10.0.2.1 dst_port $PORT action pass 2>&1)
check_err $? "tc filter add pref 1 failed: $out"
[ "$(tc_hw_state "" xfv0 1)" = not_in_hw ]
check_err $? "the exception is in_hw though the masks are full"
echo "$out" | grep -q "mask table full"
check_err $? "tc does not say why the exception is not offloaded: $out"
[ "$(xf_dev_json xfv0 | jq .to_stack_from_prio)" = 1 ]
check_err $? "the device's frames do not go to the stack from prio 1: $(xf_dev_json xfv0)"
rule=$(xf_rule_json xfv0 1)
[ "$(echo "$rule" | jq -r '[.waiting, .why] | @tsv')" = "$(printf 'true\tno room in the XDP tables')" ]
check_err $? "xdp-flow show does not list the exception as waiting for room: $rule"
exc_expect_stack $N
log_test "a prio-1 pass that waits over the offloaded drop lets its $N packets through, as TC does; the drop acts in TC meanwhile"

RET=0
tc filter del dev xfv0 ingress pref 200
check_err $? "tc filter del pref 200 failed"
js=$(xf_dev_json xfv0)
[ "$(echo "$js" | jq .waiting)" = 0 ]
check_err $? "rules still wait after the fillers went: $js"
rule=$(xf_rule_json xfv0 1)
[ "$(echo "$rule" | jq -r .waiting)" = false ]
check_err $? "xdp-flow show still lists the exception as waiting: $rule"
dmesg_since "$mark" | grep -q "no rule waits for room any more"
check_err $? "no kernel log line says that no rule waits any more"
exc_expect_xdp $N
log_test "with room again the exception is in and the drop acts in XDP again"

# ---- rule ids run out ----
RET=0
tc filter del dev xfv0 ingress pref 1
check_err $? "tc filter del pref 1 failed"
[ "$(xf_status_get .max_rules)" = $RULES ]
check_err $? "xdp-flow status says max_rules $(xf_status_get .max_rules), not $RULES"
# The prio-100 drop and the device's shield hold one id each.
ids=$(xf_status_get .rule_ids)
fill=$((RULES - 1024 - 1))
awk -v n="$fill" 'BEGIN { for (i = 0; i < n; i++)
	printf "filter add dev xfv0 ingress pref 200 protocol ip flower dst_ip 10.98.%d.%d action drop\n",
		int(i / 256), i % 256 }' >"$batch"
tc -b "$batch"
check_err $? "tc -b of $fill rules failed"
rm -f "$batch"
in_hw=$(tc -j filter show dev xfv0 ingress pref 200 |
	jq '[.[] | select(.options.in_hw == true)] | length')
[ "$in_hw" = $fill ]
check_err $? "$in_hw of $fill rules in_hw ($ids rule ids were in use before)"
[ "$(xf_status_get .rule_ids)" = $((fill + 2)) ]
check_err $? "$(xf_status_get .rule_ids) rule ids in use, not $((fill + 2))"
send_expect xfa 10.0.2.1 $N $PORT -- hw:xfv0/100+$N udp:xfb/veth_b+0
log_test "max_rules=$RULES: the drop and $fill more rules take every rule id, and run in XDP"

RET=0
tc filter add dev xfv0 ingress pref 201 protocol ip flower dst_ip 10.97.0.1 \
	action drop
check_err $? "tc filter add pref 201 failed"
[ "$(tc_hw_state "" xfv0 201)" = not_in_hw ]
check_err $? "a rule is in_hw though no rule id is free"
tc filter add dev xfv0 ingress pref 1 protocol ip flower ip_proto udp \
	dst_ip 10.0.2.1 dst_port $PORT action pass
check_err $? "tc filter add pref 1 failed"
js=$(xf_dev_json xfv0)
[ "$(echo "$js" | jq .waiting)" = 2 ] && [ "$(echo "$js" | jq .to_stack_from_prio)" = 1 ]
check_err $? "status does not say that 2 rules wait, frames to the stack from prio 1: $js"
exc_expect_stack $N
log_test "no free rule id: the new rules wait, the prio-1 pass lets its $N packets through, the drop acts in TC"

RET=0
tc filter del dev xfv0 ingress pref 200
check_err $? "tc filter del pref 200 failed"
[ "$(xf_dev_json xfv0 | jq .waiting)" = 0 ]
check_err $? "rules still wait after ids came free: $(xf_dev_json xfv0)"
# TC was told they are not in hardware, and runs them: they go in as
# software rules, which hand their frames to TC (xdp-flow show).
for p in 1 201; do
	rule=$(xf_rule_json xfv0 $p)
	[ "$(echo "$rule" | jq -r '[.waiting, .software, (.id != null)] | @tsv')" = "$(printf 'false\ttrue\ttrue')" ]
	check_err $? "the prio $p rule has no id or no place in XDP once ids are free: $rule"
done
exc_expect_xdp $N
log_test "with ids free again the waiting rules are in XDP (as the software rules TC was told of), the drop acts in XDP again"

RET=0
bad=$(dmesg_bad_since "$mark")
[ -z "$bad" ]
check_err $? "kernel log: $bad"
log_test "kernel log clean"

exit $EXIT_STATUS
