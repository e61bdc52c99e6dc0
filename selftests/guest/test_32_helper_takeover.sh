#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A helper that works is never killed for being slow. A new helper first
# takes over the pinned state the last one left (every rule, flow entry and
# mask); with many rules on a slow machine that outlasts the module's wait
# for HELLO. The helper reports progress meanwhile, and the module waits on:
# here each step of the takeover is made 4 ms longer (--step-delay-us), so
# that the takeover of R rules takes far longer than the 5 s the module
# waits for HELLO without a report. The new helper registers at its first
# try and the rules run in XDP again.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=20
R=${XF_TAKEOVER_RULES:-1000}
TMP=$(mktemp -d)

trap 'xf_test_cleanup; rm -rf "$TMP"' EXIT

wrapper=$TMP/slow_umh
cat >"$wrapper" <<EOF
#!/bin/sh
exec "$XF_UMH" --step-delay-us=4000 "\$@"
EOF
chmod 755 "$wrapper"

xf_test_setup umh_path="$wrapper" || exit 1

RET=0
xf_check_enable_xfv0
awk -v n="$R" 'BEGIN { for (i = 0; i < n; i++)
	printf "filter add dev xfv0 ingress pref 10 protocol ip flower dst_ip 10.%d.%d.%d action drop\n",
		100 + int(i / 65536), int(i / 256) % 256, i % 256 }' >"$TMP/rules"
tc -b "$TMP/rules"
check_err $? "tc -b of $R rules failed"
tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add failed"
n=$(xf_status_get ".devices[] | select(.dev == \"xfv0\") | .rule_count")
[ "$n" = $((R + 1)) ]
check_err $? "xdp-flow status counts $n rules on xfv0, not $((R + 1))"
send_expect xfa 10.0.2.1 $N -- hw:xfv0/1=$N
# A dump of that many takes many messages: each rule once, none left out.
n=$("$XF_CLI" -j show dev xfv0 | jq '[.[].cookie] | unique | length')
[ "$n" = $((R + 1)) ]
check_err $? "xdp-flow show lists $n distinct rules, not $((R + 1))"
log_test "$((R + 1)) rules in XDP, xdp-flow show lists each once"
[ $RET -eq 0 ] || exit 1

RET=0
pid=$(xf_status_get .helper_pid)
restarts=$(xf_status_get .helper_restarts)
mark=$(dmesg_mark "test_32")
t0=$SECONDS
kill -KILL "$pid"
check_err $? "cannot kill the helper"
new=$(wait_new_helper "$pid" 120)
check_err $? "no new helper within 120 s"
took=$((SECONDS - t0))
log=$(dmesg_since "$mark")
! grep -q "did not register in time" <<<"$log"
check_err $? "the module killed a helper that was taking over the state: $(grep "register in time" <<<"$log")"
grep -q "recovered $((R + 1)) rules" <<<"$log"
check_err $? "the new helper did not recover $((R + 1)) rules: $(grep xdp_flow_umh <<<"$log" | tail -n 3)"
[ "$(xf_status_get .helper_restarts)" = $((restarts + 1)) ]
check_err $? "helper restarts $restarts -> $(xf_status_get .helper_restarts), not one more"
log_test "a takeover of $((R + 1)) rules that outlasts the HELLO timeout (${took} s): the helper reports progress and is not killed"

RET=0
wait_dev_attached xfv0 10
check_err $? "xfv0 is not attached after the restart"
[ "$(tc_hw_state "" xfv0 1)" = in_hw ]
check_err $? "the prio-1 rule is not in_hw after the restart"
send_expect xfa 10.0.2.1 $N -- hw:xfv0/1=$((2 * N))
bad=$(dmesg_bad_since "$mark")
[ -z "$bad" ]
check_err $? "kernel log: $bad"
log_test "the rules run in XDP again ($N more hardware packets), kernel log clean"

exit $EXIT_STATUS
