#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Nothing XDP does depends on a rule change no helper has seen. With the
# helper down (killed, and the next one held back by a wrapper), a prio-1
# pass added over an offloaded prio-100 drop lets its packets through at
# once, as TC alone does: the module closes its gate in the XDP program's
# maps and every frame goes to the stack, where TC has the new rule;
# xdp-flow status and the kernel log say so. Once a helper has replayed
# the rules the gate opens, and the drop runs in XDP again.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=40
PORT=$XF_EXC_PORT
TMP=$(mktemp -d)

trap 'xf_test_cleanup; rm -rf "$TMP"' EXIT

# The module starts this instead of its own helper: it waits while the
# hold file exists, then becomes the helper.
wrapper=$(xf_held_umh "$TMP") || exit 1

xf_test_setup umh_path="$wrapper" || exit 1

RET=0
xf_check_enable_xfv0
tc filter add dev xfv0 ingress pref 100 protocol ip flower dst_ip 10.0.2.1 \
	action drop
check_err $? "tc filter add pref 100 failed"
send_expect xfa 10.0.2.1 $N $PORT -- hw:xfv0/100+$N udp:xfb/veth_b+0
[ "$(xf_status_get .to_stack)" = false ]
check_err $? "status says that frames go to the stack"
log_test "prio 100 drop of 10.0.2.1 runs in XDP"

RET=0
mark=$(dmesg_mark)
touch "$TMP/hold"
kill -9 "$(xf_status_get .helper_pid)"
check_err $? "cannot kill the helper"
wait_helper_state starting 10
check_err $? "the helper is $(xf_helper_state), not starting, after the kill"
tc filter add dev xfv0 ingress pref 1 protocol ip flower ip_proto udp \
	dst_ip 10.0.2.1 dst_port $PORT action pass
check_err $? "tc filter add pref 1 failed while the helper is down"
[ "$(xf_status_get .to_stack)" = true ]
check_err $? "status does not say that frames go to the stack: $(xdp-flow status)"
xdp-flow status | grep -q "every frame goes to the stack"
check_err $? "xdp-flow status prints no line about it"
dmesg_since "$mark" | grep -q "a rule change reached no helper"
check_err $? "no kernel log line says that a change reached no helper"
log_test "with the helper down a new rule closes the gate; status and kernel log say so"

RET=0
exc_expect_stack $N
log_test "helper down: the new prio-1 pass lets its $N packets through, the drop acts in TC"

RET=0
rm -f "$TMP/hold"
wait_helper_state running "$(xf_helper_wait_min 30)"
check_err $? "no helper after the hold went: $(xf_helper_state)"
end=$((SECONDS + 20))
until [ "$(xf_status_get .to_stack)" = false ] || [ $SECONDS -ge $end ]; do
	sleep 0.2
done
[ "$(xf_status_get .to_stack)" = false ]
check_err $? "the gate is still closed once a helper runs"
dmesg_since "$mark" | grep -q "the helper has every rule again"
check_err $? "no kernel log line says that the gate opened"
exc_expect_xdp $N
log_test "a new helper replays the rules and opens the gate: the drop runs in XDP again"

RET=0
bad=$(dmesg_bad_since "$mark")
[ -z "$bad" ]
check_err $? "kernel log: $bad"
log_test "kernel log clean"

exit $EXIT_STATUS
