#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The helper's life, from the module's side:
#  1. No helper file on the system (tmpfs over $XF_ROOT/umh and
#     /usr/local/sbin): the module starts the helper it carries; its exe is
#     no file anyone can open; a drop rule is offloaded and counts.
#  2. The helper SIGSTOPped with rules offloaded, then rmmod: returns within
#     10 s and leaves no XDP or tcx program, no pin, no helper.
#  3. A helper slower to start than the HELLO timeout (a wrapper that
#     sleeps 8 s on its first run): it is killed and never becomes the
#     helper, a second one takes over, never two at once.
#  4. Cycles of load, enable (default hook), drop and redirect rules,
#     traffic, unload: BPF programs, maps and links back to where they
#     started, no kernel warning. 5 on each kernel by default (a cycle
#     takes about 10 s in an emulated guest); XF_LIFECYCLES=50 for more.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=10
CYCLES=${XF_LIFECYCLES:-$(xf_share 5)}
PIN_DIR=/sys/fs/bpf/xdp_flow
RMMOD_MAX_MS=10000

require_cmd bpftool

TMP=$(mktemp -d /tmp/xf_life.XXXXXX)
HIDDEN=()
STOPPED=

unhide()
{
	local d

	for d in "${HIDDEN[@]}"; do
		umount "$d" 2>/dev/null
	done
	HIDDEN=()
}

cleanup()
{
	[ -n "$STOPPED" ] && kill -KILL "$STOPPED" 2>/dev/null
	xf_test_cleanup
	unhide
	rm -rf "$TMP"
}
trap cleanup EXIT

now_ms()
{
	echo $(($(date +%s%N) / 1000000))
}

# ---- 1: no helper file anywhere ----
RET=0
for d in "$XF_ROOT/umh" /usr/local/sbin; do
	[ -d "$d" ] || continue
	mount -t tmpfs -o size=1m,mode=0755 xf_hidden "$d"
	check_err $? "cannot mount a tmpfs over $d"
	HIDDEN+=("$d")
done
found=$(command -v xdp_flow_umh; ls "$XF_UMH" 2>/dev/null)
[ -z "$found" ]
check_err $? "a helper file is still visible: $found"
log_test "helper files hidden (tmpfs over ${HIDDEN[*]})"
[ $RET -eq 0 ] || exit 1

xf_test_setup || exit 1

RET=0
pid=$(xf_status_get .helper_pid)
[ "$(xf_helper_state)" = running ] && [ "${pid:-0}" -gt 0 ]
check_err $? "no running helper (state $(xf_helper_state), pid '$pid')"
exe=$(readlink "/proc/$pid/exe")
check_err $? "cannot read /proc/$pid/exe"
comm=$(cat "/proc/$pid/comm" 2>/dev/null)
[ "$comm" = xdp_flow_umh ]
check_err $? "the helper's name is '$comm', not xdp_flow_umh"
# "/name (deleted)" or "/memfd:name (deleted)": no path to open
[ -n "$exe" ] && [ ! -e "$exe" ] && [ ! -e "${exe% (deleted)}" ]
check_err $? "the helper runs from a file that exists: $exe"
case $exe in
"$XF_ROOT"/*|/usr/*|/sbin/*|/bin/*|/lib/*)
	check_err 1 "the helper's exe is $exe" ;;
esac
[ "$(pgrep -x xdp_flow_umh | tr '\n' ' ')" = "$pid " ]
check_err $? "helper processes: $(pgrep -x xdp_flow_umh | tr '\n' ' '), not just $pid"
xf_enable_default xfv0
check_err $? "xdp-flow enable dev xfv0 (default hook) failed or xfv0 never got attached"
tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add failed"
[ "$(tc_hw_state "" xfv0 1)" = in_hw ]
check_err $? "the drop rule is not in_hw"
b0=$(udp_count xfb veth_b)
send_udp xfa 10.0.2.1 $N
check_err $? "send_udp failed"
hw=$(wait_value $N 5 tc_stat "" xfv0 1 hw_packets)
[ "$hw" = $N ]
check_err $? "the drop rule has $hw hardware packets, not $N"
settle
[ "$(tc_stat "" xfv0 1 sw_packets)" = 0 ] && [ "$(udp_count xfb veth_b)" = "$b0" ]
check_err $? "dropped packets were seen in software or at veth_b"
hook=$(xf_dev_hook xfv0)
log_test "no helper file: the module's own helper runs (pid $pid, exe '$exe'), drop offloaded (hook $hook, $hw hw packets)"

# ---- 2: rmmod with the helper stopped ----
RET=0
tc filter add dev xfv0 ingress pref 2 protocol ip flower dst_ip 10.0.3.1 \
	action mirred egress redirect dev xfv1
check_err $? "tc filter add failed"
[ "$(tc_hw_state "" xfv0 2)" = in_hw ]
check_err $? "the redirect rule is not in_hw"
progs_before=$(xf_bpf_progs | wc -l)
links_before=$(xf_bpf_links | wc -l)
pins_before=$(find "$PIN_DIR" -mindepth 1 2>/dev/null | wc -l)
[ "$progs_before" -gt 0 ] && [ "$links_before" -gt 0 ] && [ "$pins_before" -gt 0 ]
check_err $? "before rmmod: $progs_before programs, $links_before links, $pins_before pins of ours: nothing to check"
kill -STOP "$pid"
check_err $? "kill -STOP $pid failed"
STOPPED=$pid
sleep 0.2
st=$(proc_state "$pid")
[ "$st" = T ]
check_err $? "the helper's state is $st after SIGSTOP, not T"
mark=$(dmesg_mark "test_26 rmmod stopped")
t0=$(now_ms)
timeout 60 rmmod xdp_flow
rc=$?
t=$(($(now_ms) - t0))
check_err $rc "rmmod xdp_flow failed (status $rc) after $t ms"
[ $t -le $RMMOD_MAX_MS ]
check_err $? "rmmod took $t ms (at most $RMMOD_MAX_MS)"
[ ! -e /sys/module/xdp_flow ]
check_err $? "the module is still loaded"
progs=$(xdp_progs_anywhere)
[ -z "$progs" ]
check_err $? "XDP programs left on: $progs"
left=$(xf_bpf_progs | tr '\n' ';')
[ -z "$left" ]
check_err $? "programs of ours still loaded: $left"
left=$(xf_bpf_links | tr '\n' ';')
[ -z "$left" ]
check_err $? "links of ours left: $left"
left=$(bpftool -j net show 2>/dev/null | jq -c '[.[]? | (.xdp // [])[], (.tc // [])[]]')
[ "$left" = "[]" ] || [ -z "$left" ]
check_err $? "bpftool net show lists: $left"
[ ! -e "$PIN_DIR" ]
check_err $? "$PIN_DIR still exists: $(ls -A "$PIN_DIR" 2>/dev/null | tr '\n' ' ')"
gone_ms=
for i in $(seq 0 20); do
	[ -e "/proc/$pid" ] || { gone_ms=$((i * 100)); break; }
	sleep 0.1
done
[ "$gone_ms" = 0 ]
check_err $? "the stopped helper $pid ($(proc_state "$pid")) outlived rmmod${gone_ms:+ by $gone_ms ms}"
[ -n "$gone_ms" ] && STOPPED=
left=$(pgrep -x xdp_flow_umh | tr '\n' ' ')
[ -z "$left" ]
check_err $? "helper processes left: $left"
bad=$(dmesg_bad_since "$mark")
[ -z "$bad" ]
check_err $? "kernel warnings: $bad"
log_test "rmmod with the helper SIGSTOPped: returned in $t ms; no XDP/tcx program, link, pin or helper left"

tc qdisc del dev xfv0 clsact 2>/dev/null
unhide

# ---- 3: a helper slower than the HELLO timeout ----
RET=0
wrapper=$TMP/slow_umh
cat >"$wrapper" <<EOF
#!/bin/sh
# test_26: the first run is slower than the HELLO timeout
echo \$\$ >>"$TMP/pids"
if mkdir "$TMP/first" 2>/dev/null; then
	sleep 8
fi
exec "$XF_UMH" "\$@"
EOF
chmod 755 "$wrapper"
: >"$TMP/pids"
[ -x "$XF_UMH" ]
check_err $? "no helper binary at $XF_UMH to wrap"
# Samples every 0.2 s, in one process (a shell loop of pgrep, cat and the
# CLI takes over a second a round in an emulated guest): the live wrapper
# runs and xdp_flow_umh processes, and every second xdp-flow status.
cat >"$TMP/sampler.py" <<'EOF'
import json, os, subprocess, sys, time

pidlog, cli, dur, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
t0 = time.monotonic()


def ms():
    return int((time.monotonic() - t0) * 1000)


def state(p):
    try:
        with open("/proc/%d/status" % p) as f:
            for line in f:
                if line.startswith("State:"):
                    return line.split()[1]
    except OSError:
        pass
    return None


def alive(p):
    return state(p) not in (None, "Z", "X")


def comm(p):
    try:
        with open("/proc/%d/comm" % p) as f:
            return f.read().strip()
    except OSError:
        return None


def helpers():
    return {int(d) for d in os.listdir("/proc")
            if d.isdigit() and comm(int(d)) == "xdp_flow_umh"}


r = {"max_alive": 0, "crowd": [], "first": None, "first_seen": None,
     "first_gone": None, "first_helper": [], "running_at": None,
     "running_pid": None, "samples": 0}
last_status = None
open(out + ".ready", "w").close()
while ms() < dur * 1000:
    now = ms()
    try:
        with open(pidlog) as f:
            pids = [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        pids = []
    if pids and r["first"] is None:
        r["first"], r["first_seen"] = pids[0], now
    live = {p for p in pids if alive(p)} | helpers()
    r["max_alive"] = max(r["max_alive"], len(live))
    if len(live) > 1:
        r["crowd"].append("%d ms: %s" % (now, sorted(live)))
    first = r["first"]
    if first is not None and r["first_gone"] is None:
        if not alive(first):
            r["first_gone"] = now
        elif comm(first) == "xdp_flow_umh":
            r["first_helper"].append("its name is xdp_flow_umh at %d ms" % now)
    if last_status is None or time.monotonic() - last_status >= 1.0:
        last_status = time.monotonic()
        try:
            js = json.loads(subprocess.run([cli, "-j", "status"],
                                           capture_output=True,
                                           timeout=20).stdout)
        except Exception:
            js = {}
        if js.get("helper_state") == "running":
            if first is not None and js.get("helper_pid") == first:
                r["first_helper"].append("registered at %d ms" % now)
            if r["running_at"] is None:
                r["running_at"], r["running_pid"] = now, js.get("helper_pid")
    r["samples"] += 1
    # done 3 s after the first run is gone and a helper runs (a third run
    # would start within that: the second has registered)
    if r["first_gone"] is not None and r["running_at"] is not None and \
            now >= max(r["first_gone"], r["running_at"]) + 3000:
        break
    time.sleep(0.2)
with open(out, "w") as f:
    json.dump(r, f)
EOF
mark=$(dmesg_mark "test_26 slow helper")
"$XF_PYTHON" "$TMP/sampler.py" "$TMP/pids" "$XF_CLI" 20 "$TMP/sampled.json" &
sampler=$!
# python takes a while to start in an emulated guest
for _ in $(seq 300); do
	[ -e "$TMP/sampled.json.ready" ] && break
	sleep 0.1
done
if [ $RET -eq 0 ]; then
	xf_load umh_path="$wrapper"
	check_err $? "insmod umh_path=$wrapper failed"
fi
wait $sampler
check_err $? "the sampler failed"
read -r max_alive first first_seen first_gone running_at running_pid samples < <(
	jq -r '[.max_alive, .first, .first_seen, .first_gone, .running_at,
		.running_pid, .samples] | map(. // "-") | @tsv' "$TMP/sampled.json")
crowd=$(jq -r '.crowd | join("; ")' "$TMP/sampled.json")
first_helper=$(jq -r '.first_helper | join("; ")' "$TMP/sampled.json")
mapfile -t started <"$TMP/pids"
second=${started[1]:-}
log_info "wrapper runs ${started[*]}; $samples samples: the first seen at $first_seen ms, gone at $first_gone ms; a helper running at $running_at ms (pid $running_pid)"
[ "${max_alive:-2}" -le 1 ]
check_err $? "more than one helper alive at once: $crowd"
[ "$first_gone" != - ]
check_err $? "the slow first helper (pid $first) was never killed"
lived=$((${first_gone/-/0} - ${first_seen/-/0}))
[ "$first_gone" != - ] && [ $lived -lt 8000 ]
check_err $? "the slow first helper lived $lived ms: not killed before its 8 s were up"
[ -z "$first_helper" ]
check_err $? "the slow first run became the helper: $first_helper"
[ ${#started[@]} = 2 ]
check_err $? "the wrapper ran ${#started[@]} times (${started[*]}), not twice"
pids=$(pgrep -x xdp_flow_umh | tr '\n' ' ')
[ -n "$second" ] && [ "$pids" = "$second " ]
check_err $? "helper processes '$pids', not just the second run $second"
# The sampler's 20 s may end before the second run is up (the patched
# kernel's slow start-up).
xf_wait_helper >/dev/null
[ "$(xf_helper_state)" = running ] && [ "$(xf_status_get .helper_pid)" = "$second" ]
check_err $? "status: helper $(xf_helper_state), pid $(xf_status_get .helper_pid), not running as $second"
dmesg_since "$mark" | grep -F "pid $first " | sed 's/^/# dmesg: /'
log_test "a helper slower than the HELLO timeout: killed after $lived ms, never two at once, pid $second took over"
xf_unload
check_err $? "rmmod failed"

# ---- 4: load, enable, rules, traffic, unload ----

# One exec of python for both destinations.
send_two()
{
	ip netns exec xfa "$XF_PYTHON" -c '
import socket, sys
n = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for dst in ("10.0.2.1", "10.0.3.1"):
    for i in range(n):
        s.sendto(b"x" * 18, (dst, 9))
' "$1"
}

# cycle_counters: "<in_hw of pref 1> <hw packets of pref 1> <in_hw of 2>
# <hw packets of 2>" from one tc dump.
cycle_counters()
{
	timeout 20 tc -s -j filter show dev xfv0 ingress | jq -r '
		[.[] | select(.options != null)] as $f |
		[1, 2] | map(. as $p | $f[] | select(.pref == $p) |
			"\(.options.in_hw // false) \(.options.actions[0].stats.hw_packets // 0)") |
		join(" ")'
}

# cycle_enable: xdp-flow enable dev xfv0. Where the kernel has
# flow-offload-xdp, that enable turns the feature on, the feature outlives
# the module, and each load enables xfv0 by it again: then xfv0 may be
# enabled already, by that switch.
cycle_enable()
{
	"$XF_CLI" enable dev xfv0 2>/dev/null && return 0
	[ "$(xf_dev_switch xfv0)" = flow-offload-xdp ]
}

# one_cycle <i>: fails with a message on stderr.
one_cycle()
{
	local i=$1 c b0 b1 end

	xf_load || { xf_err "cycle $i: modprobe failed"; return 1; }
	xf_wait_helper || { xf_err "cycle $i: no helper"; return 1; }
	if ! { cycle_enable && wait_dev_attached xfv0 10 &&
	       tc qdisc add dev xfv0 clsact; }; then
		xf_err "cycle $i: cannot enable xfv0"
		return 1
	fi
	tc -batch - <<EOF || { xf_err "cycle $i: tc filter add failed"; return 1; }
filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
filter add dev xfv0 ingress pref 2 protocol ip flower dst_ip 10.0.3.1 action mirred egress redirect dev xfv1
EOF
	b0=$(udp_count xfb veth_b) || return 1
	send_two $N || { xf_err "cycle $i: sending failed"; return 1; }
	end=$((SECONDS + 5))
	while c=$(cycle_counters) && [ "$c" != "true $N true $N" ] &&
	      [ $SECONDS -lt $end ]; do
		sleep 0.1
	done
	[ "$c" = "true $N true $N" ] ||
		{ xf_err "cycle $i: in_hw and hw packets of the drop and redirect rules: '$c', not 'true $N true $N'"; return 1; }
	b1=$(udp_count xfb veth_b)
	[ "$b1" = $((b0 + N)) ] ||
		{ xf_err "cycle $i: veth_b received $((b1 - b0)) redirected packets, not $N"; return 1; }
	[ "$i" = 1 ] && bpf_counts >"$TMP/loaded"
	rmmod xdp_flow || { xf_err "cycle $i: rmmod failed"; return 1; }
	tc qdisc del dev xfv0 clsact ||
		{ xf_err "cycle $i: tc qdisc del failed"; return 1; }
	c=$(pgrep -x xdp_flow_umh | tr '\n' ' ')
	[ -z "$c" ] || { xf_err "cycle $i: helpers left after rmmod: $c"; return 1; }
	[ ! -e "$PIN_DIR" ] ||
		{ xf_err "cycle $i: $PIN_DIR left after rmmod"; return 1; }
}

bpf_counts()
{
	echo "$(bpf_obj_count prog) $(bpf_obj_count map) $(bpf_obj_count link)"
}

# bpf_counts_settled: bpf_counts once no program of ours is left and two
# readings 0.5 s apart agree (the kernel frees BPF objects a little after
# their last user let go).
bpf_counts_settled()
{
	local a b

	for _ in $(seq 20); do
		a=$(bpf_counts)
		sleep 0.5
		b=$(bpf_counts)
		[ "$a" = "$b" ] && [ -z "$(xf_bpf_progs)" ] && break
	done
	echo "$b"
}

RET=0
mark=$(dmesg_mark "test_26 cycles")
xf_modprobe_deps
before=$(bpf_counts_settled)
t0=$(now_ms)
errf=$TMP/cycle.err
for ((i = 1; i <= CYCLES; i++)); do
	if ! one_cycle "$i" 2>"$errf"; then
		check_err 1 "$(tr '\n' ' ' <"$errf")"
		break
	fi
done
done_cycles=$((i - 1))
t=$(($(now_ms) - t0))
if [ -e /sys/module/xdp_flow ]; then
	xf_unload
	tc qdisc del dev xfv0 clsact 2>/dev/null
fi
after=$(bpf_counts_settled)
[[ "$before" =~ ^[0-9]+\ [0-9]+\ [0-9]+$ ]]
check_err $? "cannot count BPF objects with bpftool: '$before'"
[ "$after" = "$before" ]
check_err $? "BPF programs, maps, links: $before before, $after after"
bad=$(dmesg_bad_since "$mark")
[ -z "$bad" ]
check_err $? "kernel warnings: $(echo "$bad" | head -n 3 | tr '\n' ' ')"
log_info "$done_cycles cycles in $((t / 1000)) s ($((t / (done_cycles > 0 ? done_cycles : 1))) ms each); BPF programs, maps, links: $before before, $(cat "$TMP/loaded" 2>/dev/null) while loaded (cycle 1), $after after"
log_test "$done_cycles of $CYCLES cycles of load, enable, drop + redirect in hardware, unload in $((t / 1000)) s; BPF objects back to '$before'; no kernel warning"

exit $EXIT_STATUS
