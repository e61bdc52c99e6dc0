#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The datapath survives the control plane: 16 SIGKILLs of the helper under
# continuous offloaded traffic, with drop rules added and deleted between
# the kills (right before a kill, while the helper is down, at the same
# time as the kill), some helpers killed before they registered.
#  - The stream (UDP with a sequence number, xfa -> 10.0.2.1, redirected
#    from xfv0 to xfv1 by an offloaded rule) all arrives at veth_b, and the
#    rule counts every packet. It reaches TC's software path only while a
#    rule change has reached no helper (the module's gate is closed: every
#    frame goes to the stack, and the kernel log says so); the rest, at
#    least half, XDP handles. The largest gap between consecutive arrivals
#    (kernel timestamps) is reported.
#  - Every rule added at the moment of a kill or while no helper runs is
#    in_hw (the next helper gets it in the replay), not left in software.
#  - Afterwards: one helper process, running; every live rule in_hw, its
#    outcome and counters those of TC; no deleted rule acts; xdp-flow show
#    lists exactly the live rules.
# Offload is enabled with the default hook (plain `xdp-flow enable`).
#
# Env: XF_KILLS (default 8; about 5 s each in an emulated guest),
#      XF_KILL_SEED (default 27), XF_PPS (500)

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

KILLS=${XF_KILLS:-$(xf_share 8)}
# the module's back-off and a start-up: 60 s, or longer where a helper
# takes longer to come up (XF_HELPER_WAIT, the patched kernel: a restart
# took 72 s there)
RESTART_WAIT=$(xf_helper_wait_min 60)
SEED=${XF_KILL_SEED:-27}
PPS=${XF_PPS:-500}
M=5			# packets per address in the final checks
REDIR_PREF=10
DPORT=5001
# Let a helper live this long every LIVE_EVERY rounds: the module resets
# its restart back-off (10 ms doubling to 5 s) for a helper that lived 10 s.
LIVE_EVERY=8
LIVE_S=10.5

require_cmd tcpdump

TMP=$(mktemp -d /tmp/xf_kills.XXXXXX)
SENDER=
DUMPER=

cleanup()
{
	[ -n "$SENDER" ] && kill "$SENDER" 2>/dev/null
	[ -n "$DUMPER" ] && kill "$DUMPER" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
	xf_test_cleanup
}
trap cleanup EXIT

now_ms()
{
	echo $(($(date +%s%N) / 1000000))
}

pref_of() { echo $((1000 + $1)); }
addr_of() { echo "10.0.3.$((100 + $1))"; }

# A rule added in round k is deleted in round k + 1, unless kept.
kept() { [ $(($1 % 10)) -eq 0 ]; }

# tc_change <k>: add the drop rule of round k, delete the one of round
# k - 1 (unless kept); one tc process.
declare -A LIVE=()
DELETED=()
tc_change()
{
	local k=$1 p=$(($1 - 1))

	{
		echo "filter add dev xfv0 ingress pref $(pref_of "$k") protocol ip flower dst_ip $(addr_of "$k") action drop"
		if [ $p -ge 1 ] && ! kept $p; then
			echo "filter del dev xfv0 ingress pref $(pref_of $p)"
		fi
	} | tc -force -batch - 2>>"$TMP/tc.err"
}

# Book-keeping of tc_change, in the test's own shell (tc_change may run in
# the background).
tc_changed()
{
	local k=$1 p=$(($1 - 1))

	LIVE[$k]=1
	if [ $p -ge 1 ] && ! kept $p; then
		unset "LIVE[$p]"
		DELETED+=("$p")
	fi
}

# check_added <k> <mode>: the rule added in round k is in_hw. TC sets the
# flag once, from what the offload driver said when the rule was added;
# a rule the module kept in software here would stay there.
check_added()
{
	local st

	st=$(tc_hw_state "" xfv0 "$(pref_of "$1")")
	[ "$st" = in_hw ] || NOT_IN_HW+=("pref $(pref_of "$1") (round $1, $2): $st")
}

# The sniper: SIGKILLs the next helper process as soon as it has its name
# (the helper sets it first thing), long before it can have said HELLO;
# writes its pid to argv[1]. Polls /proc every 5 ms: a shell loop of pgrep
# is far too slow for that in an emulated guest.
SNIPER='
import os, signal, sys, time
out = sys.argv[1]


def helpers():
    r = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/comm" % d) as f:
                    if f.read().strip() == "xdp_flow_umh":
                        r.add(int(d))
            except OSError:
                pass
    return r


old = helpers()
open(out + ".ready", "w").close()
end = time.monotonic() + 30
while time.monotonic() < end:
    for p in helpers() - old:
        os.kill(p, signal.SIGKILL)
        with open(out, "w") as f:
            f.write("%d\n" % p)
        sys.exit(0)
    time.sleep(0.005)
sys.exit(1)
'

# send_to <addr>...: M UDP packets from xfa to each address, one python.
send_to()
{
	ip netns exec xfa "$XF_PYTHON" -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
n = int(sys.argv[1])
for i, dst in enumerate(sys.argv[2:]):
    for _ in range(n):
        s.sendto(b"x" * 18, (dst, 9))
    if i % 8 == 7:
        time.sleep(0.002)
' "$M" "$@"
}

# rule_stats: "pref in_hw packets hw_packets" for every rule on xfv0.
rule_stats()
{
	timeout 30 tc -s -j filter show dev xfv0 ingress | jq -r '
		.[] | select(.options != null) |
		"\(.pref) \(.options.in_hw // false) \(.options.actions[0].stats.packets // 0) \(.options.actions[0].stats.hw_packets // 0)"'
}

xf_test_setup || exit 1

RET=0
xf_enable_default xfv0
check_err $? "xdp-flow enable dev xfv0 (default hook) failed or xfv0 never got attached"
# neighbours for the drop rules' addresses, so that packets to a deleted
# rule's address reach veth_c
for ((k = 1; k <= KILLS; k++)); do
	echo "neigh replace $(addr_of $k) lladdr $XF_MAC_VETH_C dev xfv2 nud permanent"
done | ip -batch -
check_err $? "cannot add the neighbour entries"
tc filter add dev xfv0 ingress pref $REDIR_PREF protocol ip flower dst_ip 10.0.2.1 \
	ip_proto udp dst_port $DPORT action mirred egress redirect dev xfv1
check_err $? "tc filter add (redirect) failed"
[ "$(tc_hw_state "" xfv0 $REDIR_PREF)" = in_hw ]
check_err $? "the redirect rule is not in_hw"
hook=$(xf_dev_hook xfv0)
log_setup "setup: redirect of UDP to 10.0.2.1:$DPORT offloaded on xfv0 (hook $hook)"
[ $RET -eq 0 ] || exit 1

# ---- the stream ----
RET=0
b0=$(udp_count xfb veth_b)
ip netns exec xfb tcpdump -i veth_b -n -Z root -s 64 -B 8192 -U -w "$TMP/rx.pcap" \
	"udp dst port $DPORT" 2>"$TMP/tcpdump.err" &
DUMPER=$!
for _ in $(seq 100); do
	grep -q "listening on" "$TMP/tcpdump.err" 2>/dev/null && break
	sleep 0.1
done
grep -q "listening on" "$TMP/tcpdump.err"
check_err $? "tcpdump did not start: $(cat "$TMP/tcpdump.err")"
ip netns exec xfa "$XF_PYTHON" -c '
import json, os, socket, struct, sys, time
dst, port, pps, stop, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
iv = 1.0 / pps
seq = 0
t0 = last = time.monotonic()
maxgap = 0.0
while True:
    now = time.monotonic()
    due = t0 + seq * iv
    if now < due:
        time.sleep(due - now)
        now = time.monotonic()
    elif now - due > 0.2:
        t0 = now - seq * iv	# fell behind (not scheduled): no burst
    s.sendto(struct.pack("!Q", seq) + b"x" * 10, (dst, port))
    if seq:
        maxgap = max(maxgap, now - last)
    last = now
    seq += 1
    if seq % 50 == 0 and os.path.exists(stop):
        break
with open(out, "w") as f:
    json.dump({"sent": seq, "max_send_gap_ms": round(maxgap * 1000, 1)}, f)
' 10.0.2.1 $DPORT "$PPS" "$TMP/stop" "$TMP/sender.json" 2>"$TMP/sender.err" &
SENDER=$!
# python takes seconds to start in a busy emulated guest
c=$(wait_value $((b0 + PPS)) 30 udp_count xfb veth_b)
check_err $? "the stream does not arrive at veth_b (its counter: $b0, then $c after 30 s)"
log_test "a stream of $PPS UDP packets/s through the offloaded redirect"
[ $RET -eq 0 ] || exit 1

# ---- the kills ----
RET=0
RANDOM=$SEED
pid=$(xf_status_get .helper_pid)
prev=
kills=0
declare -A MODES=()
SNIPED=()
NOT_IN_HW=()
since_live=0
last_mode=
mark=$(dmesg_mark "test_27 kills")
t0=$(now_ms)
for ((k = 1; kills < KILLS && RET == 0; k++)); do
	r=$((RANDOM % 10))
	if [ $r -le 3 ]; then
		mode=after	# tc change, then the kill right away
	elif [ $r -le 5 ]; then
		mode=down	# the kill, then the tc change while no helper runs
	elif [ $r -le 8 ]; then
		mode=race	# tc change and kill at the same time
	else
		mode=starting	# kill, then kill the next one before its HELLO
	fi
	# Never twice in a row: each helper killed before its HELLO counts
	# towards the module giving up (8 in a row); and two kills in one.
	if [ "$mode" = starting ] &&
	   { [ "$last_mode" = starting ] || [ $((KILLS - kills)) -lt 2 ]; }; then
		mode=after
	fi
	if [ -z "$prev" ]; then
		target=$pid
	else
		target=$(wait_new_helper "$prev" "$RESTART_WAIT")
		check_err $? "round $k: no new helper running within $RESTART_WAIT s of killing $prev"
		if [ $since_live -ge $LIVE_EVERY ]; then
			sleep "$LIVE_S"
			since_live=0
		fi
	fi
	since_live=$((since_live + 1))
	[ $RET -eq 0 ] || break
	case $mode in
	after)
		tc_change "$k"
		tc_changed "$k"
		kill -KILL "$target" && kills=$((kills + 1))
		;;
	down)
		kill -KILL "$target" && kills=$((kills + 1))
		# until the module noticed
		for _ in $(seq 30); do
			[ "$(xf_status_get .helper_pid)" != "$target" ] && break
			[ "$(xf_helper_state)" != running ] && break
			sleep 0.1
		done
		tc_change "$k"
		tc_changed "$k"
		check_added "$k" "$mode"
		;;
	race)
		tc_change "$k" &
		# at a random moment of the change: tc takes some 10 to 100 ms
		# to start in an emulated guest, then waits for the helper
		sleep "0.$(printf %03d $((RANDOM % 250)))"
		kill -KILL "$target" && kills=$((kills + 1))
		wait $!
		tc_changed "$k"
		check_added "$k" "$mode"
		;;
	starting)
		rm -f "$TMP/sniped" "$TMP/sniped.ready"
		"$XF_PYTHON" -c "$SNIPER" "$TMP/sniped" &
		sniper=$!
		for _ in $(seq 200); do
			[ -e "$TMP/sniped.ready" ] && break
			sleep 0.05
		done
		tc_change "$k"
		tc_changed "$k"
		kill -KILL "$target" && kills=$((kills + 1))
		wait $sniper
		check_err $? "round $k: no new helper process to kill within 30 s of killing $target"
		if [ -s "$TMP/sniped" ]; then
			target=$(cat "$TMP/sniped")
			kills=$((kills + 1))
			SNIPED+=("$target")
		fi
		;;
	esac
	MODES[$mode]=$((${MODES[$mode]:-0} + 1))
	last_mode=$mode
	prev=$target
done
t_kills=$((($(now_ms) - t0) / 1000))
modes=$(for m in "${!MODES[@]}"; do echo -n "$m ${MODES[$m]}, "; done)
log=$(dmesg_since "$mark")
unregistered=0
for p in "${SNIPED[@]}"; do
	grep -q "xdp_flow: helper pid $p registered" <<<"$log" ||
		unregistered=$((unregistered + 1))
done
log_info "$kills kills in $((k - 1)) rounds, $t_kills s (seed $SEED): ${modes%, }; ${#SNIPED[@]} helpers killed right after they started, $unregistered of them before they registered"
pid=$(wait_new_helper "$prev" "$RESTART_WAIT")
check_err $? "no helper running after the last kill"
wait_dev_attached xfv0 20
check_err $? "xfv0 is not attached after the kills"
[ "$kills" -ge "$KILLS" ]
check_err $? "$kills kills, not $KILLS"
[ ! -s "$TMP/tc.err" ]
check_err $? "tc failed: $(head -n 3 "$TMP/tc.err" | tr '\n' ' ')"
[ ${#NOT_IN_HW[@]} = 0 ]
check_err $? "rules added while a helper was being killed or was down went to software: ${NOT_IN_HW[*]}"
log_test "$kills helper SIGKILLs in $t_kills s with rules added and deleted in between"

# ---- the stream, over all the kills ----
RET=0
: >"$TMP/stop"
wait "$SENDER"
check_err $? "the sender failed: $(cat "$TMP/sender.err")"
SENDER=
sent=$(jq -r .sent "$TMP/sender.json")
send_gap=$(jq -r .max_send_gap_ms "$TMP/sender.json")
settle
b1=$(wait_value $((b0 + sent)) 10 udp_count xfb veth_b)
kill -INT "$DUMPER"
wait "$DUMPER"
DUMPER=
gaps=$("$XF_PYTHON" -c '
import struct, sys
data = open(sys.argv[1], "rb").read()
magic = struct.unpack_from("<I", data, 0)[0]
nano = magic == 0xa1b23c4d
off, prev, n, maxgap, at, seqs = 24, None, 0, 0, 0, set()
while off + 16 <= len(data):
    sec, frac, incl, _ = struct.unpack_from("<IIII", data, off)
    t = sec + frac / (1e9 if nano else 1e6)
    pkt = data[off + 16:off + 16 + incl]
    off += 16 + incl
    if len(pkt) >= 50:
        seqs.add(struct.unpack_from("!Q", pkt, 42)[0])
    if prev is not None and t - prev > maxgap:
        maxgap, at = t - prev, n
    prev = t
    n += 1
print(n, len(seqs), round(maxgap * 1000, 1), at)
' "$TMP/rx.pcap")
read -r captured unique max_gap gap_at <<<"$gaps"
log_info "sent $sent (largest gap in sending ${send_gap} ms), veth_b counted $((b1 - b0)), captured $captured ($unique distinct)"
read -r pk hw sw < <(echo "$(tc_stat "" xfv0 $REDIR_PREF packets) $(tc_stat "" xfv0 $REDIR_PREF hw_packets) $(tc_stat "" xfv0 $REDIR_PREF sw_packets)")
log_info "redirect rule: packets $pk, hardware $hw, software $sw"
[ "$sent" -gt 0 ] && [ "$b1" = $((b0 + sent)) ]
check_err $? "veth_b counted $((b1 - b0)) of the $sent packets sent"
closed=$(dmesg_since "$mark" | grep -c "a rule change reached no helper")
[ "$pk" = "$sent" ] && [ $((hw + sw)) = "$pk" ]
check_err $? "the redirect rule counted $pk packets ($hw hardware, $sw software), not the $sent sent"
[ "$sw" = 0 ] || [ "$closed" -gt 0 ]
check_err $? "the redirect rule handled $sw packets in software though no rule change ever waited for a helper: the datapath missed them"
[ $((hw * 2)) -ge "$sent" ]
check_err $? "XDP handled only $hw of the $sent packets"
[ "$unique" = "$sent" ]
check_err $? "tcpdump at veth_b saw $unique distinct packets of the $sent sent"
log_test "the stream through all kills: $sent packets, all arrived; $hw in hardware, $sw in software while the gate was closed ($closed times) # largest gap $max_gap ms (at packet $gap_at; sending: $send_gap ms)"

# ---- afterwards ----
RET=0
pids=$(pgrep -x xdp_flow_umh | tr '\n' ' ')
[ "$pids" = "$pid " ]
check_err $? "helper processes: '$pids', not just $pid"
[ "$(xf_helper_state)" = running ] && [ "$(xf_status_get .helper_pid)" = "$pid" ]
check_err $? "status: helper $(xf_helper_state), pid $(xf_status_get .helper_pid), not running as $pid"
live=$(for k in "${!LIVE[@]}"; do echo "$k"; done | sort -n)
want=$( (echo $REDIR_PREF; for k in $live; do pref_of "$k"; done) | sort -n | paste -sd, -)
shown=$(timeout 20 "$XF_CLI" -j show dev xfv0 | jq -r '[.[] | .prio] | sort | map(tostring) | join(",")')
[ "$shown" = "$want" ]
check_err $? "xdp-flow show lists prios $shown, not the live $want"
shown_sw=$(timeout 20 "$XF_CLI" -j show dev xfv0 | jq -r '[.[] | select(.software != false) | .prio] | map(tostring) | join(",")')
[ -z "$shown_sw" ]
check_err $? "rules in software per xdp-flow show: $shown_sw"
rule_stats >"$TMP/st0"
check_err $? "cannot read the rules' counters"
tcprefs=$(awk '{ print $1 }' "$TMP/st0" | sort -n | paste -sd, -)
[ "$tcprefs" = "$want" ]
check_err $? "tc lists prefs $tcprefs on xfv0, not the live $want"
notin=$(awk '$2 != "true" { print $1 }' "$TMP/st0" | paste -sd, -)
[ -z "$notin" ]
check_err $? "rules not in_hw: $notin"
log_test "one helper (pid $pid) running; the $(echo "$live" | wc -w) live drop rules and the redirect in_hw, xdp-flow show lists exactly them"

RET=0
c0=$(udp_count xfc veth_c)
addrs=()
for k in $live; do
	addrs+=("$(addr_of "$k")")
done
send_to "${addrs[@]}"
check_err $? "send_udp failed"
settle
rule_stats >"$TMP/st1"
bad=$(for k in $live; do
	p=$(pref_of "$k")
	read -r _ _ pk0 hw0 < <(grep "^$p " "$TMP/st0")
	read -r _ _ pk1 hw1 < <(grep "^$p " "$TMP/st1")
	if [ $((hw1 - hw0)) != $M ] || [ $((pk1 - pk0)) != $M ]; then
		echo -n "pref $p: packets +$((pk1 - pk0)), hardware +$((hw1 - hw0)); "
	fi
done)
[ -z "$bad" ]
check_err $? "live rules did not count $M packets each in hardware: $bad"
c1=$(udp_count xfc veth_c)
[ "$c1" = "$c0" ]
check_err $? "$((c1 - c0)) packets to live drop rules' addresses reached veth_c"
log_test "every live drop rule drops in hardware: +$M hardware packets each, nothing at veth_c"

RET=0
addrs=()
for k in "${DELETED[@]}"; do
	addrs+=("$(addr_of "$k")")
done
send_to "${addrs[@]}"
check_err $? "send_udp failed"
want_c=$((c1 + ${#DELETED[@]} * M))
c2=$(wait_value "$want_c" 10 udp_count xfc veth_c)
settle
c2=$(udp_count xfc veth_c)
[ "$c2" = "$want_c" ]
check_err $? "veth_c received $((c2 - c1)) of the $((${#DELETED[@]} * M)) packets sent to deleted rules' addresses"
rule_stats >"$TMP/st2"
moved=$(join <(sort "$TMP/st1") <(sort "$TMP/st2") |
	awk '$3 != $6 || $4 != $7 { printf "pref %s: %s -> %s; ", $1, $3, $6 }')
# the redirect rule only sees the stream, which has stopped
[ -z "$moved" ]
check_err $? "rules counted packets sent to deleted rules' addresses: $moved"
log_test "no deleted rule acts: the packets to all ${#DELETED[@]} deleted rules' addresses arrive at veth_c, no rule counts them"

exit $EXIT_STATUS
