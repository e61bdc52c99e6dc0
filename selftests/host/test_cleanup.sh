#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What a helper leaves behind, and one helper at a time (no module):
#
#   - --cleanup with nothing pinned says so and succeeds;
#   - a second helper waits for the pin directory's lock, loading and
#     recovering nothing until the first is gone, then takes over its links;
#   - SIGKILL leaves the datapath on the devices (XDP, and tcx where the
#     kernel has it); --cleanup detaches it and removes every pin, quickly,
#     and after 3 s even while a hung helper still holds the lock;
#   - started as the module starts it (exec of /proc/self/fd/N, fds 0-2
#     closed), the helper names itself and keeps fds 0-2 on /dev/null.
#
# The helpers run in namespace xfc (nsenter: the mount namespace, and so
# /sys/fs/bpf, stays the host's) on the veth pairs xfc_x0/xfc_x1 (XDP) and
# xfc_t0/xfc_t1 (tc). A pin directory that exists before the test may be a
# real helper's: then the test skips rather than touch it.

source "$(dirname "$0")/../lib.sh"

UMH_BIN="$XF_ROOT/umh/xdp_flow_umh"
PIN=/sys/fs/bpf/xdp_flow
NS=xfc
WAIT_LINE="waiting for another helper to release $PIN"
TMP=
PIDS=()		# helpers and lock holders, killed on exit
PIN_OURS=

require_root
require_cmd nsenter
require_cmd bpftool
require_cmd jq
require_cmd flock

if grep -qw xdp_flow /proc/modules 2>/dev/null; then
	log_skip "helper cleanup and pin lock" "xdp_flow is loaded here"
	exit $ksft_skip
fi
if [ -e "$PIN" ]; then
	log_skip "helper cleanup and pin lock" "$PIN exists (a helper's?)"
	exit $ksft_skip
fi
PIN_OURS=1

cleanup()
{
	local p

	for p in "${PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if [ -n "$PIN_OURS" ] && [ -e "$PIN" ]; then
		"$UMH_BIN" --cleanup --log=stderr >/dev/null 2>&1
		ns_cleanup
		rm -rf "$PIN"
	fi
	ns_cleanup
	[ -n "$TMP" ] && rm -rf "$TMP"
}
trap cleanup EXIT

now_ms()
{
	echo $(($(date +%s%N) / 1000000))
}

# progs: how many programs of ours are loaded.
progs()
{
	bpftool -j prog show |
		jq '[.[] | select(.name | startswith("xdp_flow"))] | length'
}

# links <xdp|tcx>: how many links of that type run a program of ours.
links()
{
	local ours type=6

	[ "$1" = tcx ] && type=11
	ours=$(bpftool -j prog show |
		jq -c '[.[] | select(.name | startswith("xdp_flow")) | .id]')
	bpftool -j link show | jq --argjson ours "$ours" --arg t "$1" \
		--argjson n "$type" '[.[] | select((.type == $t or .type == $n)
		and (.prog_id as $id | $ours | index($id)))] | length'
}

setup()
{
	local d

	ns_create "$NS" || return 1
	ip -n "$NS" link add xfc_x0 type veth peer name xfc_x1 &&
	ip -n "$NS" link add xfc_t0 type veth peer name xfc_t1 || return 1
	for d in xfc_x0 xfc_x1 xfc_t0 xfc_t1; do
		ip -n "$NS" link set dev "$d" up || return 1
	done
	# The helper would mount it too.
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
}

xdp_on()
{
	ip -n "$NS" -d link show dev "$1" | grep -q "prog/xdp"
}

ifindex()
{
	ip netns exec "$NS" cat "/sys/class/net/$1/ifindex"
}

# lock_hold: hold the pin directory's lock from a process of ours (a hung
# helper, as far as the lock goes); its pid in HOLDER.
lock_hold()
{
	mkdir -p -m 0700 "$PIN" || return 1	# as the helper makes it
	( exec 8<"$PIN" && flock -x 8 && exec sleep 60 ) &
	HOLDER=$!
	PIDS+=("$HOLDER")
	# Held once flock has let go of its fd 8 copy and sleep runs.
	wait_for 5 grep -q '^sleep' "/proc/$HOLDER/comm" 2>/dev/null
}

lock_release()
{
	kill -9 "$HOLDER" 2>/dev/null
	wait "$HOLDER" 2>/dev/null
}

# kmsg_has <text>: the kernel log has <text> since $MARK.
kmsg_has()
{
	dmesg_since "$MARK" 2>/dev/null | grep -qF "$1"
}

# umh <request>: one request to helper A; its reply in $REPLY.
umh()
{
	REPLY=
	echo "$*" >&"${A[1]}" || return 1
	read -r -t 10 REPLY <&"${A[0]}" || return 1
	[[ $REPLY == ok* ]]
}

TMP=$(mktemp -d /tmp/xfc.XXXXXX)
TCX=
kver=$(uname -r)
[ "$(printf '%s\n' 6.6 "${kver%%-*}" | sort -V | head -n 1)" = 6.6 ] && TCX=1

RET=0
setup
check_err $? "setup failed"
log_test "veth pairs in namespace $NS, bpffs mounted"
[ "$RET" -eq 0 ] || exit 1
IFX=$(ifindex xfc_x0)
IFT=$(ifindex xfc_t0)

RET=0
out=$("$UMH_BIN" --cleanup --log=stderr 2>&1)
check_err $? "exit status $?: $out"
grep -q "nothing pinned" <<<"$out"
check_err $? "does not say so: $out"
log_test "--cleanup with nothing pinned: exit 0, \"nothing pinned\""

RET=0
coproc A { exec nsenter --net="/run/netns/$NS" "$UMH_BIN" --driver \
	--log=stderr 2>"$TMP/a.log"; }
PIDS+=("$A_PID")
umh attach xfc_x0
check_err $? "attach xfc_x0: $REPLY"
if [ -n "$TCX" ]; then
	umh attach xfc_t0 tc
	check_err $? "attach xfc_t0 tc: $REPLY"
fi
umh add id=1 prio=1 dev=xfc_x0 dst_ip=10.99.9.1 action=drop
check_err $? "add: $REPLY"
xdp_on xfc_x0
check_err $? "no XDP program on xfc_x0"
[ -z "$TCX" ] || [ "$(links tcx)" -eq 1 ]
check_err $? "no tcx link of ours"
[ -e "$PIN/link_$IFX" ] && { [ -z "$TCX" ] || [ -e "$PIN/link_$IFT" ]; }
check_err $? "links not pinned: $(ls "$PIN" 2>&1)"
log_test "helper A attaches: XDP on xfc_x0${TCX:+, tcx on xfc_t0}, pinned"

RET=0
progs_before=$(progs)
mkfifo "$TMP/b_in"
exec 7<>"$TMP/b_in"	# a writer: B reads, and runs, until killed
t_b=$(now_ms)
nsenter --net="/run/netns/$NS" "$UMH_BIN" --driver --log=stderr \
	<"$TMP/b_in" >"$TMP/b.out" 2>"$TMP/b.log" &
B_PID=$!
PIDS+=("$B_PID")
wait_for 5 grep -qF "$WAIT_LINE" "$TMP/b.log"
check_err $? "no \"$WAIT_LINE\": $(cat "$TMP/b.log")"
sleep 1
kill -0 "$B_PID" 2>/dev/null
check_err $? "B exited while A runs: $(cat "$TMP/b.log")"
! grep -qE "started|kept the link|recovered|cannot" "$TMP/b.log"
check_err $? "B went on while A runs: $(cat "$TMP/b.log")"
[ "$(progs)" -eq "$progs_before" ]
check_err $? "B loaded programs while A runs ($progs_before before, $(progs) now)"
t_kill=$(now_ms)
kill -9 "$A_PID"
wait "$A_PID" 2>/dev/null
wait_for 5 grep -q "started" "$TMP/b.log"
check_err $? "B did not start after A was killed: $(cat "$TMP/b.log")"
t_started=$(now_ms)
nr_kept=$(grep -c "kept the link of ifindex" "$TMP/b.log")
[ "$nr_kept" -eq $((TCX ? 2 : 1)) ]
check_err $? "B took over $nr_kept links: $(cat "$TMP/b.log")"
log_info "B waited $((t_kill - t_b)) ms while A ran, started $((t_started - t_kill)) ms after A was killed"
log_test "a second helper waits for the pin lock, loads nothing, then takes over"

RET=0
kill -9 "$B_PID"
wait "$B_PID" 2>/dev/null
xdp_on xfc_x0
check_err $? "XDP program gone with the helper"
[ -z "$TCX" ] || [ "$(links tcx)" -eq 1 ]
check_err $? "tcx link gone with the helper"
for p in "link_$IFX" ${TCX:+"link_$IFT"} xf_rules xf_rule_defs xf_masks; do
	[ -e "$PIN/$p" ]
	check_err $? "$PIN/$p gone with the helper"
done
log_test "SIGKILL: the datapath stays attached and pinned"

RET=0
t0=$(now_ms)
out=$("$UMH_BIN" --cleanup --log=stderr 2>&1)
rc=$?
t=$(($(now_ms) - t0))
log_info "--cleanup took $t ms"
[ "$rc" -eq 0 ]
check_err $? "exit status $rc: $out"
grep -q "detached the datapath from ifindex $IFX" <<<"$out"
check_err $? "xfc_x0 (ifindex $IFX) not detached: $out"
[ -z "$TCX" ] || grep -q "detached the datapath from ifindex $IFT" <<<"$out"
check_err $? "xfc_t0 (ifindex $IFT) not detached: $out"
grep -qE "cleanup: detached $((TCX ? 2 : 1)) links, removed [0-9]+ pins" <<<"$out"
check_err $? "no summary: $out"
! xdp_on xfc_x0
check_err $? "XDP program still on xfc_x0"
[ "$(links xdp)" -eq 0 ] && [ "$(links tcx)" -eq 0 ]
check_err $? "links of ours left: $(bpftool link show 2>&1)"
[ ! -e "$PIN" ]
check_err $? "$PIN left: $(ls "$PIN" 2>&1)"
wait_for 2 test "$(progs)" -eq 0
check_err $? "$(progs) programs of ours still loaded"
[ "$t" -lt 2000 ]
check_err $? "took $t ms"
log_test "--cleanup after SIGKILL: nothing attached, nothing pinned, exit 0"

RET=0
lock_hold
check_err $? "cannot hold the lock of $PIN"
# Under a name the helper pins a map under: --cleanup removes no other.
bpftool map create "$PIN/xf_gate" type array key 4 value 4 entries 1 \
	name xf_gate
check_err $? "cannot pin a map"
t0=$(now_ms)
out=$("$UMH_BIN" --cleanup --log=stderr 2>&1)
rc=$?
t=$(($(now_ms) - t0))
log_info "--cleanup with the lock held took $t ms"
[ "$rc" -eq 0 ]
check_err $? "exit status $rc: $out"
grep -q "still holds" <<<"$out"
check_err $? "does not say the lock is held: $out"
[ ! -e "$PIN" ]
check_err $? "$PIN left: $(ls "$PIN" 2>&1)"
[ "$t" -ge 2500 ] && [ "$t" -lt 6000 ]
check_err $? "took $t ms (expected about 3000)"
lock_release
log_test "--cleanup while a hung helper holds the lock: goes on after 3 s"

RET=0
lock_hold
check_err $? "cannot hold the lock of $PIN"
MARK=$(dmesg_mark "helper as the module starts it")
# As call_usermodehelper starts it: exec of /proc/self/fd/N, no fds 0-2
# (in this namespace: it attaches nothing, and nsenter could leave an fd).
/proc/self/fd/9 --driver --log=kmsg 9<"$UMH_BIN" <&- >&- 2>&- &
C_PID=$!
PIDS+=("$C_PID")
wait_for 5 kmsg_has "xdp_flow_umh: $WAIT_LINE"
check_err $? "no \"$WAIT_LINE\" in the kernel log"
comm=$(cat "/proc/$C_PID/comm" 2>&1)
[ "$comm" = xdp_flow_umh ]
check_err $? "comm is $comm"
for fd in 0 1 2; do
	target=$(readlink "/proc/$C_PID/fd/$fd" 2>&1)
	[ "$target" = /dev/null ]
	check_err $? "fd $fd is $target"
done
lock_release
wait_for 5 kmsg_has "xdp_flow_umh: started (pid $C_PID, test driver)"
check_err $? "no \"started\" in the kernel log once the lock was free"
wait "$C_PID"	# stdin is /dev/null: it ends at once
rc=$?
[ "$rc" -eq 0 ]
check_err $? "exit status $rc"
out=$("$UMH_BIN" --cleanup --log=stderr 2>&1)
check_err $? "--cleanup: $out"
[ ! -e "$PIN" ]
check_err $? "$PIN left: $(ls "$PIN" 2>&1)"
log_test "started with no fds 0-2 as /proc/self/fd/N: comm xdp_flow_umh, fds 0-2 on /dev/null"

exit "$EXIT_STATUS"
