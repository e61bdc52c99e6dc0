#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Only the helper the module started speaks for it, and only the kernel
# speaks to the helper. An impostor with CAP_NET_ADMIN (python3 + pyroute2,
# selftests/guest/impostor.py):
#  - sends HELLO naming a victim process (XDP_FLOW_ATTR_PID) in a tight loop
#    while the real helper is SIGKILLed 4 times (XF_TRUST_KILLS; the module
#    restarts the helper after 10, 20, ... 320 ms; more, up to 5 s apart,
#    which would only add time), and after the module gave
#    up on a helper that cannot start: every HELLO is refused with EPERM,
#    the victim lives, the impostor never becomes the helper;
#  - sends RULE_ADD, RULE_DEL, STATS_GET and SHUTDOWN to the helper's
#    netlink port, and a REPLY to the kernel: refused or ignored (the
#    family has no REPLY operation: the helper replies on the socket the
#    module gave it); the helper runs on, the rules stay offloaded, nothing
#    the impostor sent acts.
# Offload is enabled with the default hook (plain `xdp-flow enable`).

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=20
KILLS=${XF_TRUST_KILLS:-$(xf_share 4)}
IMPOSTOR=$XF_ROOT/selftests/guest/impostor.py

# (find_spec: importing pyroute2 takes seconds in an emulated guest)
if ! "$XF_PYTHON" -c 'import importlib.util, sys
sys.exit(importlib.util.find_spec("pyroute2") is None)' 2>/dev/null; then
	log_skip "$(basename "$0")" "python3-pyroute2 is not installed"
	exit $ksft_skip
fi

TMP=$(mktemp -d /tmp/xf_trust.XXXXXX)
VICTIM=
IMP=

cleanup()
{
	[ -n "$IMP" ] && kill "$IMP" 2>/dev/null
	[ -n "$VICTIM" ] && kill "$VICTIM" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
	xf_test_cleanup
}
trap cleanup EXIT

# impostor_start <out> <victim pid>: HELLO in a loop (nice: the helpers
# being restarted need the CPU more); sets IMP.
impostor_start()
{
	rm -f "$TMP/stop" "$1" "$1.ready"
	nice -n 10 "$XF_PYTHON" "$IMPOSTOR" hello --pid "$2" --stop "$TMP/stop" \
		--out "$1" 2>"$1.err" &
	IMP=$!
	for _ in $(seq 600); do
		[ -e "$1.ready" ] && return 0
		proc_alive "$IMP" || break
		sleep 0.1
	done
	xf_err "the impostor did not start: $(cat "$1.err")"
	return 1
}

# impostor_stop <out>: stop the loop, wait for its summary.
impostor_stop()
{
	: >"$TMP/stop"
	wait "$IMP"
	local rc=$?

	IMP=
	if [ $rc -ne 0 ] || [ ! -s "$1" ]; then
		xf_err "the impostor failed (status $rc): $(cat "$1.err" 2>/dev/null)"
		return 1
	fi
}

# check_hellos <out>: every HELLO refused with EPERM; sets HELLOS_SENT.
check_hellos()
{
	local js=$1 sent acc other

	sent=$(jq -r .sent "$js") && acc=$(jq -r .accepted "$js") &&
		other=$(jq -c '.errors | del(.EPERM)' "$js")
	check_err $? "cannot read the impostor's summary"
	[ "${sent:-0}" -gt 0 ]
	check_err $? "the impostor sent no HELLO"
	[ "$acc" = 0 ]
	check_err $? "$acc of $sent HELLOs from the impostor were accepted"
	[ "$other" = "{}" ]
	check_err $? "HELLOs refused with something else than EPERM: $other"
	HELLOS_SENT=$sent
}

# victim_ok: the victim still runs (not killed, not a zombie, not stopped).
victim_ok()
{
	local st

	st=$(proc_state "$VICTIM")
	[ "$st" = S ] || [ "$st" = R ]
	check_err $? "the victim (pid $VICTIM) is $st"
}

# send_both <n>: n packets to the drop rule's and to the redirect rule's
# address.
send_both()
{
	send_udp xfa 10.0.2.1 "$1" && send_udp xfa 10.0.3.1 "$1"
}

# check_offloaded <hw1 before> <hw2 before> <veth_b before>: both rules
# in_hw, and N more packets each counted in hardware (none in software),
# the redirected ones arrived at veth_b.
check_offloaded()
{
	local h1=$1 h2=$2 b0=$3 v1 v2 s1 s2 b1

	[ "$(tc_hw_state "" xfv0 1)" = in_hw ] && [ "$(tc_hw_state "" xfv0 2)" = in_hw ]
	check_err $? "the rules are not in_hw"
	send_both $N
	check_err $? "send_udp failed"
	v1=$(wait_value $((h1 + N)) 5 tc_stat "" xfv0 1 hw_packets)
	v2=$(wait_value $((h2 + N)) 5 tc_stat "" xfv0 2 hw_packets)
	b1=$(wait_value $((b0 + N)) 5 udp_count xfb veth_b)
	settle
	[ "$(tc_stat "" xfv0 1 hw_packets)" = $((h1 + N)) ] &&
		[ "$(tc_stat "" xfv0 2 hw_packets)" = $((h2 + N)) ]
	check_err $? "hardware packets moved by $((v1 - h1)) and $((v2 - h2)), not $N"
	s1=$(tc_stat "" xfv0 1 sw_packets) && s2=$(tc_stat "" xfv0 2 sw_packets)
	[ "$s1" = 0 ] && [ "$s2" = 0 ]
	check_err $? "packets handled in software: $s1 (drop) and $s2 (redirect)"
	[ "$(udp_count xfb veth_b)" = $((b0 + N)) ]
	check_err $? "veth_b received $((b1 - b0)) packets, not the $N redirected"
}

# ---- 1: the module gave up on its helper ----
RET=0
HELLOS_SENT=
sleep 1000 &
VICTIM=$!
mark=$(dmesg_mark "test_25 gave up")
xf_load umh_path=/nonexistent
check_err $? "insmod with umh_path=/nonexistent failed"
if [ $RET -eq 0 ]; then
	wait_helper_state stopped 60
	check_err $? "helper_state is '$(xf_helper_state)', not stopped, 60 s after loading with umh_path=/nonexistent"
fi
if [ $RET -eq 0 ]; then
	impostor_start "$TMP/gaveup.json" "$VICTIM"
	check_err $? "the impostor did not start"
	states=
	for _ in $(seq 20); do
		states+=" $(xf_helper_state)"
		sleep 0.1
	done
	impostor_stop "$TMP/gaveup.json"
	check_err $? "the impostor did not finish"
fi
if [ $RET -eq 0 ]; then
	check_hellos "$TMP/gaveup.json"
	[ "$(echo "$states" | tr ' ' '\n' | sort -u | tr -d '\n')" = stopped ]
	check_err $? "helper_state while the impostor ran:$states"
	[ "$(xf_helper_state)" = stopped ]
	check_err $? "helper_state is '$(xf_helper_state)' after the impostor, not stopped"
	hp=$(xf_status_get .helper_pid)
	[ "${hp:-0}" = 0 ] || { [ "$hp" != "$VICTIM" ] && [ "$hp" != "$(jq -r .pid "$TMP/gaveup.json")" ]; }
	check_err $? "helper_pid is $hp (victim $VICTIM)"
	victim_ok
	imp_pid=$(jq -r .pid "$TMP/gaveup.json")
	dmesg_since "$mark" | grep -q "xdp_flow: HELLO from pid $imp_pid refused: not the helper the module started"
	check_err $? "no 'HELLO from pid $imp_pid refused' line in the kernel log"
fi
log_test "the module gave up on its helper: ${HELLOS_SENT:-0} HELLOs naming pid $VICTIM all refused (EPERM), victim alive, state stays stopped"
xf_unload
check_err $? "rmmod failed"

# ---- 2: HELLOs while the helper is killed and restarted ----
xf_test_setup || exit 1

RET=0
xf_enable_default xfv0
check_err $? "xdp-flow enable dev xfv0 (default hook) failed or xfv0 never got attached"
tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop &&
	tc filter add dev xfv0 ingress pref 2 protocol ip flower dst_ip 10.0.3.1 \
		action mirred egress redirect dev xfv1
check_err $? "tc filter add failed"
hook=$(xf_dev_hook xfv0)
check_offloaded 0 0 "$(udp_count xfb veth_b)"
pid=$(xf_status_get .helper_pid)
[ "$(xf_helper_state)" = running ] && [ "${pid:-0}" -gt 0 ]
check_err $? "no running helper (pid '$pid')"
log_setup "setup: drop and redirect offloaded on xfv0 (hook $hook), helper pid $pid"
[ $RET -eq 0 ] || exit 1

RET=0
HELLOS_SENT=
mark=$(dmesg_mark "test_25 kills")
impostor_start "$TMP/kills.json" "$VICTIM"
check_err $? "the impostor did not start"
imp_pid=$IMP
seen=" "
bad_pid=
start=$SECONDS
# a restart (longer on a slow kernel: XF_HELPER_WAIT)
wait_s=$(xf_helper_wait_min 40)
for ((k = 1; k <= KILLS && RET == 0; k++)); do
	kill -KILL "$pid"
	check_err $? "kill -KILL $pid (round $k) failed"
	new=
	end=$((SECONDS + wait_s))
	while [ $SECONDS -lt $end ]; do
		js=$(timeout 20 "$XF_CLI" -j status 2>/dev/null)
		st=$(echo "$js" | jq -r '.helper_state // empty')
		hp=$(echo "$js" | jq -r '.helper_pid // 0')
		if [ "$hp" = "$imp_pid" ] || [ "$hp" = "$VICTIM" ]; then
			bad_pid="$hp (round $k, state $st)"
		fi
		if [ "$st" = running ] && [ "${hp:-0}" -gt 0 ] && [ "$hp" != "$pid" ]; then
			new=$hp
			break
		fi
		sleep 0.1
	done
	[ -n "$new" ]
	check_err $? "round $k: no new helper within $wait_s s after killing $pid"
	[ -z "$bad_pid" ]
	check_err $? "helper_pid in xdp-flow status was the impostor's or the victim's: $bad_pid"
	proc_alive "$VICTIM"
	check_err $? "round $k: the victim (pid $VICTIM) is gone"
	proc_alive "$imp_pid"
	check_err $? "round $k: the impostor died"
	[ "$(pgrep -x xdp_flow_umh | tr '\n' ' ')" = "$new " ]
	check_err $? "round $k: helper processes '$(pgrep -x xdp_flow_umh | tr '\n' ' ')', not just $new"
	seen+="$new "
	pid=$new
done
impostor_stop "$TMP/kills.json"
check_err $? "the impostor did not finish"
[ $RET -eq 0 ] && check_hellos "$TMP/kills.json"
victim_ok
case $seen in *" $imp_pid "*|*" $VICTIM "*)
	check_err 1 "the impostor or the victim became the helper: $seen" ;;
esac
dmesg_since "$mark" | grep -q "xdp_flow: HELLO from pid $imp_pid refused: not the helper the module started"
check_err $? "no 'HELLO from pid $imp_pid refused' line in the kernel log"
log_test "$((k - 1)) helper kills in $((SECONDS - start)) s with an impostor sending HELLO naming pid $VICTIM: ${HELLOS_SENT:-0} HELLOs all refused (EPERM), victim alive"

RET=0
wait_dev_attached xfv0 10
check_err $? "xfv0 is not attached after the restarts"
h1=$(tc_stat "" xfv0 1 hw_packets) && h2=$(tc_stat "" xfv0 2 hw_packets)
check_err $? "cannot read the counters"
check_offloaded "$h1" "$h2" "$(udp_count xfb veth_b)"
log_test "after the kills both rules are in_hw and act in the datapath (hardware counters +$N each, none in software)"

# ---- 3: forged requests to the helper, a forged REPLY to the module ----
RET=0
pid=$(xf_status_get .helper_pid)
ports=$(nl_generic_ports "$pid" | sort -u)
[ -n "$ports" ]
check_err $? "no generic netlink socket in /proc/$pid/fd"
ifindex=$(cat /sys/class/net/xfv0/ifindex)
# The rule the impostor tries to add: drop 10.0.3.1 on xfv0, ahead of
# the redirect (prio 1). Built from the uapi header by the C compiler.
cat >"$TMP/rule.c" <<'EOF'
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/xdp_flow.h>

int main(int argc, char **argv)
{
	struct xdp_flow_rule r;

	memset(&r, 0, sizeof(r));
	r.id = 4000;
	r.order = (1ULL << 32) | 1;
	r.cookie = 0x1badc0de;
	r.key.ifindex = atoi(argv[1]);
	r.mask.ifindex = ~0U;
	r.key.n_proto = htons(0x0800);
	r.mask.n_proto = 0xffff;
	inet_pton(AF_INET, argv[2], &r.key.ip_dst[0]);
	r.mask.ip_dst[0] = 0xffffffff;
	r.nr_actions = 1;
	r.actions[0].id = XDP_FLOW_ACTION_DROP;
	return fwrite(&r, sizeof(r), 1, stdout) == 1 ? 0 : 1;
}
EOF
rule_arg=()
if cc -I"$XF_ROOT/include/uapi" -o "$TMP/rule" "$TMP/rule.c" 2>"$TMP/cc.err" &&
   "$TMP/rule" "$ifindex" 10.0.3.1 >"$TMP/rule.bin"; then
	rule_arg=(--rule "$TMP/rule.bin")
else
	log_info "no forged RULE_ADD (cannot build the rule: $(head -n 3 "$TMP/cc.err"))"
fi
mark=$(dmesg_mark "test_25 forge")
port_args=()
for p in $ports; do
	port_args+=(--port "$p")
done
if [ $RET -eq 0 ]; then
	"$XF_PYTHON" "$IMPOSTOR" forge "${port_args[@]}" "${rule_arg[@]}" \
		--out "$TMP/forge.json" 2>"$TMP/forge.err"
	check_err $? "impostor.py forge failed: $(tail -n 3 "$TMP/forge.err")"
fi
results=$(jq -c .results "$TMP/forge.json" 2>/dev/null)
reply=$(jq -r .reply "$TMP/forge.json" 2>/dev/null)
log_info "helper pid $pid, ports $(echo "$ports" | tr '\n' ' '): sends $results, REPLY to the module: $reply"
# (Python names errno 95 ENOTSUP.)
[ "$reply" = EOPNOTSUPP ] || [ "$reply" = ENOTSUP ]
check_err $? "a forged REPLY got '$reply' from the module, not EOPNOTSUPP"
# Refused by the kernel (the helper's socket is connected to it), or
# delivered and dropped by the helper, which then says so.
nsent=$(jq -r '.results.sent // 0' "$TMP/forge.json" 2>/dev/null)
nother=$(jq -r '[.results | to_entries[] | select(.key != "sent" and .key != "ECONNREFUSED")] | length' "$TMP/forge.json" 2>/dev/null)
[ "$nother" = 0 ]
check_err $? "sends failed otherwise than with ECONNREFUSED: $results"
sleep 1
if [ "${nsent:-0}" -gt 0 ]; then
	dmesg_since "$mark" | grep -Eq 'xdp_flow_umh: ignored a message from port [0-9]+ \(cmd [0-9]+\): not from the kernel'
	check_err $? "$nsent forged messages reached the helper, which did not log ignoring them"
fi
[ "$(xf_helper_state)" = running ] && [ "$(xf_status_get .helper_pid)" = "$pid" ] &&
	proc_alive "$pid"
check_err $? "the helper changed: state $(xf_helper_state), pid $(xf_status_get .helper_pid), was $pid"
[ "$(pgrep -x xdp_flow_umh | tr '\n' ' ')" = "$pid " ]
check_err $? "helper processes: $(pgrep -x xdp_flow_umh | tr '\n' ' '), not just $pid"
[ -n "$(ls -A /sys/fs/bpf/xdp_flow 2>/dev/null)" ]
check_err $? "nothing pinned under /sys/fs/bpf/xdp_flow any more (a SHUTDOWN acted?)"
h1=$(tc_stat "" xfv0 1 hw_packets) && h2=$(tc_stat "" xfv0 2 hw_packets)
check_err $? "cannot read the counters"
# the forged drop of 10.0.3.1 would keep these from veth_b
check_offloaded "$h1" "$h2" "$(udp_count xfb veth_b)"
shown=$(timeout 20 "$XF_CLI" -j show dev xfv0 | jq -c '[.[] | .prio] | sort')
[ "$shown" = "[1,2]" ]
check_err $? "xdp-flow show lists the rules of prios $shown, not [1,2]"
log_test "forged RULE_ADD/RULE_DEL/STATS_GET/SHUTDOWN to the helper's port ($results) and a forged REPLY ($reply): same helper, rules offloaded and counting, nothing forged acts"

exit $EXIT_STATUS
