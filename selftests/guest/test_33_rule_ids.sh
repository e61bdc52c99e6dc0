#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Rule ids run out before the tables do: with max_rules=2048 (the least;
# the top 1024 ids are the shields'), a prio-100 drop and 1023 fillers take
# every rule id. The next filler and a prio-1 pass exception then find no
# id: they wait as for a full table, the device's frames go to the stack
# from prio 1 on, and the exception's packets get through as TC alone lets
# them. Once the fillers go, the waiting rules get ids and XDP acts again.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=20
PORT=$XF_EXC_PORT
RULES=2048
FILL=$((RULES - 1024 - 1))
TMP=$(mktemp -d)

trap 'xf_test_cleanup; rm -rf "$TMP"' EXIT

xf_test_setup max_rules=$RULES || exit 1

# xf_dev_json <dev>: the device's object in xdp-flow status -j.
xf_dev_json()
{
	"$XF_CLI" -j status | jq -ce --arg d "$1" '.devices[] | select(.dev == $d)'
}

RET=0
mark=$(dmesg_mark "test_33")
xf_enable_xfv0
check_err $? "xdp-flow enable dev xfv0 failed or the device never got attached"
[ "$(xf_status_get .max_rules)" = $RULES ]
check_err $? "xdp-flow status says max_rules $(xf_status_get .max_rules), not $RULES"
tc filter add dev xfv0 ingress pref 100 protocol ip flower dst_ip 10.0.2.1 \
	action drop
check_err $? "tc filter add pref 100 failed"
awk -v n="$FILL" 'BEGIN { for (i = 0; i < n; i++)
	printf "filter add dev xfv0 ingress pref 200 protocol ip flower dst_ip 10.98.%d.%d action drop\n",
		int(i / 256), i % 256 }' >"$TMP/fill"
tc -b "$TMP/fill"
check_err $? "tc -b of $FILL fillers failed"
in_hw=$(tc -j filter show dev xfv0 ingress pref 200 |
	jq '[.[] | select(.options.in_hw == true)] | length')
[ "$in_hw" = $FILL ] && [ "$(tc_hw_state "" xfv0 100)" = in_hw ]
check_err $? "$in_hw of $FILL fillers in_hw"
ids=$(xf_status_get .rule_ids)
[ "$ids" = $((FILL + 2)) ]
check_err $? "$ids rule ids in use, not $((FILL + 2)) (the rules and a shield)"
send_expect xfa 10.0.2.1 $N $PORT -- hw:xfv0/100+$N udp:xfb/veth_b+0
log_test "max_rules=$RULES: a drop and $FILL fillers take every rule id, and run in XDP"

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
js=$(xf_dev_json xfv0)
[ "$(echo "$js" | jq .waiting)" = 0 ]
check_err $? "rules still wait after the fillers went: $js"
[ "$(tc_hw_state "" xfv0 1)" = in_hw ] && [ "$(tc_hw_state "" xfv0 201)" = in_hw ]
check_err $? "the waiting rules are not in_hw once ids are free"
exc_expect_xdp $N
bad=$(dmesg_bad_since "$mark")
[ -z "$bad" ]
check_err $? "kernel log: $bad"
log_test "with ids free again the waiting rules are in, the drop acts in XDP again; kernel log clean"

exit $EXIT_STATUS
