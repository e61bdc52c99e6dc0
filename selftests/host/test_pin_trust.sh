#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The pin directory is trusted only if it is the helper's own (no module):
#
#   1. /sys/fs/bpf/xdp_flow made beforehand with mode 0777, or owned by
#      another uid: the helper says so and pins nothing in it, the datapath
#      still works (unpinned), and --cleanup deletes nothing in it;
#   2. /sys/fs/bpf/xdp_flow a symlink to another application's directory
#      (a map named as one of ours, and a pinned XDP link named link_N of
#      the device it runs on): the helper neither pins there nor takes the
#      link, and --cleanup deletes nothing there;
#   3. a real 0700 directory of root's holding link_N entries that are not
#      ours: a pin of another program's XDP link (that program named as
#      ours, "xdp_flow", but with another tag and none of our maps), and a
#      symlink to another's: the helper takes over neither, SYNC and
#      --cleanup leave them, and the programs stay attached.
#
# The helper runs in namespace xfp (nsenter: the mount namespace, and so
# /sys/fs/bpf, stays the host's) on veth pairs of the test's own: xfp_b0
# for the helper, whose peer xfp_b1 is in namespace xfq; xfp_a0 and xfp_c0
# for the other application's programs. A pin directory that exists before
# the test may be a real helper's: then the test skips rather than touch it.

source "$(dirname "$0")/../lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
UMH_BIN="$XF_ROOT/umh/xdp_flow_umh"
FOREIGN="$HERE/foreign_link"
PIN=/sys/fs/bpf/xdp_flow
VICTIM=/sys/fs/bpf/xf_victim
NS=xfp
NS_PEER=xfq
TMP=
UMH_PID=
PIN_OURS=

require_root
require_cmd nsenter
require_cmd bpftool
require_cmd jq
require_cmd ping

if grep -qw xdp_flow /proc/modules 2>/dev/null; then
	log_skip "pin directory trust" "xdp_flow is loaded here"
	exit $ksft_skip
fi
if [ -e "$PIN" ] || [ -L "$PIN" ] || [ -e "$VICTIM" ]; then
	log_skip "pin directory trust" "$PIN or $VICTIM exists (a helper's?)"
	exit $ksft_skip
fi
if [ ! -x "$FOREIGN" ]; then
	log_skip "pin directory trust" "$FOREIGN not built (make -C selftests/host)"
	exit $ksft_skip
fi
PIN_OURS=1

umh_stop()
{
	if [ -n "$UMH_PID" ]; then
		kill -9 "$UMH_PID" 2>/dev/null
		wait "$UMH_PID" 2>/dev/null
	fi
	UMH_PID=
}

# pins_clear: remove whatever the test (or a helper) left at $PIN and
# $VICTIM. Links whose devices are gone are dead; pins hold nothing else.
pins_clear()
{
	[ -n "$PIN_OURS" ] || return 0
	if [ -L "$PIN" ]; then
		rm -f "$PIN"
	elif [ -e "$PIN" ]; then
		rm -rf "$PIN"
	fi
	rm -rf "$VICTIM"
}

cleanup()
{
	umh_stop
	ns_cleanup
	pins_clear
	[ -n "$TMP" ] && rm -rf "$TMP"
}
trap cleanup EXIT

setup()
{
	local d

	ns_create "$NS" "$NS_PEER" || return 1
	ip -n "$NS" link add xfp_b0 type veth peer name xfp_b1 \
		netns "$NS_PEER" &&
	ip -n "$NS" link add xfp_a0 type veth peer name xfp_a1 &&
	ip -n "$NS" link add xfp_c0 type veth peer name xfp_c1 || return 1
	for d in xfp_b0 xfp_a0 xfp_a1 xfp_c0 xfp_c1; do
		ip -n "$NS" link set dev "$d" up || return 1
	done
	ip -n "$NS_PEER" link set dev xfp_b1 up &&
	ip -n "$NS" addr add 10.99.7.1/24 dev xfp_b0 &&
	ip -n "$NS_PEER" addr add 10.99.7.2/24 dev xfp_b1 || return 1
	# The helper would mount it too.
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
}

ifindex()
{
	ip netns exec "$NS" cat "/sys/class/net/$1/ifindex"
}

# xdp_prog <dev>: the id of the XDP program on <dev> (empty: none).
xdp_prog()
{
	ip -n "$NS" -j -d link show dev "$1" |
		jq -r '.[0].xdp.prog.id // .[0].xdp.attached[0].prog.id // empty'
}

# foreign <dev> <pin> [<name>]: another application's XDP program on <dev>,
# its link pinned at <pin>; prints the program's id.
foreign()
{
	nsenter --net="/run/netns/$NS" "$FOREIGN" "$@"
}

# listing <dir>: what is in <dir>, names and inode numbers, for comparing.
listing()
{
	ls -lain "$1" 2>&1 | awk 'NR > 1 { print $1, $2, $4, $NF }'
}

# umh_start: the helper in $NS, driven through coproc H; its log in
# $TMP/umh.log.
umh_start()
{
	: >"$TMP/umh.log"
	coproc H { exec nsenter --net="/run/netns/$NS" "$UMH_BIN" --driver \
		--log=stderr 2>"$TMP/umh.log"; }
	UMH_PID=$H_PID
}

# umh <request>: one request to the helper; its reply in $REPLY.
umh()
{
	REPLY=
	echo "$*" >&"${H[1]}" || return 1
	read -r -t 20 REPLY <&"${H[0]}" || return 1
	[[ $REPLY == ok* ]]
}

log_has()
{
	grep -qF -- "$1" "$TMP/umh.log"
}

# ping_peer: can xfq reach xdp_b0's address (through the XDP program)?
ping_peer()
{
	ip netns exec "$NS_PEER" ping -q -c 2 -i 0.2 -W 1 10.99.7.1 \
		>/dev/null 2>&1
}

# start_attach_sync: a helper that attaches to xfp_b0, is told which rules
# it holds (SYNC: none, so it detaches what it did not replay) and
# attaches again (after SYNC's detaching: the same worker).
start_attach_sync()
{
	umh_start
	umh attach xfp_b0
	check_err $? "attach xfp_b0: $REPLY"
	umh sync
	check_err $? "sync: $REPLY"
	umh attach xfp_b0
	check_err $? "attach xfp_b0 after sync: $REPLY"
}

# cleanup_refused <why>: --cleanup refuses $PIN, exits non-zero and says
# "$PIN: <why>"; its output in $out, its status in $rc.
cleanup_refused()
{
	out=$("$UMH_BIN" --cleanup --log=stderr 2>&1)
	rc=$?
	[ "$rc" -ne 0 ]
	check_err $? "--cleanup exit status 0 with $PIN left: $out"
	grep -qF "$PIN: $1" <<<"$out"
	check_err $? "--cleanup does not say why: $out"
}

# refused_dir_case <how>: case 1 with $PIN already made by setup code.
# The helper runs, drops with a rule, exits; --cleanup leaves the map.
refused_dir_case()
{
	local what=$1 want=$2 before after

	RET=0
	bpftool map create "$PIN/foo" type array key 4 value 4 entries 1 \
		name foo
	check_err $? "cannot pin a map of our own in $PIN"
	before=$(listing "$PIN")
	umh_start
	umh attach xfp_b0
	check_err $? "attach xfp_b0: $REPLY"
	wait_for 5 log_has started
	check_err $? "the helper did not start: $(cat "$TMP/umh.log")"
	log_has "$PIN: $want"
	check_err $? "no \"$PIN: $want\" in its log: $(cat "$TMP/umh.log")"
	[ -n "$(xdp_prog xfp_b0)" ]
	check_err $? "no XDP program on xfp_b0"
	ping_peer
	check_err $? "no ping through xfp_b0 before the rule"
	umh add id=1 prio=1 dev=xfp_b0 dst_ip=10.99.7.1 action=drop
	check_err $? "add: $REPLY"
	! ping_peer
	check_err $? "the drop rule does not drop"
	umh stats id=1
	check_err $? "stats: $REPLY"
	[[ $REPLY =~ packets=([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]
	check_err $? "the rule counted nothing: $REPLY"
	after=$(listing "$PIN")
	[ "$before" = "$after" ]
	check_err $? "the helper changed $PIN: $(ls -A "$PIN" | tr '\n' ' ')"
	log_test "$what: the helper refuses it, pins nothing in it, the datapath works"

	RET=0
	umh_stop
	wait_for 5 test -z "$(xdp_prog xfp_b0)"
	check_err $? "the unpinned program outlived the helper on xfp_b0"
	cleanup_refused "$want"
	[ -e "$PIN/foo" ]
	check_err $? "--cleanup removed $PIN/foo: $out"
	after=$(listing "$PIN")
	[ "$before" = "$after" ]
	check_err $? "--cleanup changed $PIN: $(ls -A "$PIN" 2>&1 | tr '\n' ' ')"
	log_test "$what: --cleanup deletes nothing in it, exit status $rc"
}

TMP=$(mktemp -d /tmp/xfp.XXXXXX)

RET=0
setup
check_err $? "setup failed"
log_setup "veth pairs in namespaces $NS and $NS_PEER, bpffs mounted"
[ "$RET" -eq 0 ] || exit 1
IFA=$(ifindex xfp_a0)
IFC=$(ifindex xfp_c0)

# 1. Made beforehand, by someone else or too open.
mkdir -m 0777 "$PIN" && chmod 0777 "$PIN"
refused_dir_case "$PIN with mode 0777" "mode 0777"
pins_clear

mkdir -m 0700 "$PIN" && chown 65534 "$PIN"
refused_dir_case "$PIN owned by uid 65534" "owned by uid 65534"
pins_clear

# 2. A symlink to another application's directory.
RET=0
mkdir -m 0700 "$VICTIM" &&
	bpftool map create "$VICTIM/xf_rules" type array key 4 value 4 \
		entries 1 name xf_rules
check_err $? "cannot pin a map in $VICTIM"
idA=$(foreign xfp_a0 "$VICTIM/link_$IFA")
check_err $? "cannot attach another program to xfp_a0"
ln -s "$VICTIM" "$PIN"
check_err $? "cannot make $PIN a symlink"
log_setup "$PIN -> $VICTIM: xf_rules, link_$IFA (xfp_a0's program $idA)"
before=$(listing "$VICTIM")

RET=0
start_attach_sync
log_has "$PIN: is a symlink"
check_err $? "no \"$PIN: is a symlink\" in its log: $(cat "$TMP/umh.log")"
! log_has "kept the link of ifindex $IFA"
check_err $? "the helper took over xfp_a0's link"
[ "$(xdp_prog xfp_a0)" = "$idA" ]
check_err $? "xfp_a0 runs program $(xdp_prog xfp_a0), not $idA"
[ -n "$(xdp_prog xfp_b0)" ]
check_err $? "no XDP program on xfp_b0"
after=$(listing "$VICTIM")
[ "$before" = "$after" ]
check_err $? "the helper changed $VICTIM: $(ls -A "$VICTIM" | tr '\n' ' ')"
log_test "$PIN a symlink: the helper pins nothing there and leaves the link"

RET=0
umh_stop
cleanup_refused "is a symlink"
[ -L "$PIN" ]
check_err $? "--cleanup removed the symlink $PIN"
after=$(listing "$VICTIM")
[ "$before" = "$after" ]
check_err $? "--cleanup changed $VICTIM: $(ls -A "$VICTIM" 2>&1 | tr '\n' ' ')"
[ "$(xdp_prog xfp_a0)" = "$idA" ]
check_err $? "xfp_a0 runs program $(xdp_prog xfp_a0), not $idA"
log_test "$PIN a symlink: --cleanup deletes nothing there, exit status $rc"
rm -f "$PIN"

# 3. Our own directory, with links of other programs in it: xfp_a0's
# (named xdp_flow) pinned there, xfp_c0's pinned in $VICTIM and symlinked.
pins_clear
RET=0
wait_for 5 test -z "$(xdp_prog xfp_a0)"
check_err $? "xfp_a0 keeps program $(xdp_prog xfp_a0) with its pins gone"
mkdir -m 0700 "$PIN" && mkdir -m 0700 "$VICTIM"
check_err $? "cannot make $PIN and $VICTIM"
idA=$(foreign xfp_a0 "$PIN/link_$IFA" xdp_flow)
check_err $? "cannot attach another program to xfp_a0"
idC=$(foreign xfp_c0 "$VICTIM/link_$IFC")
check_err $? "cannot attach another program to xfp_c0"
ln -s "$VICTIM/link_$IFC" "$PIN/link_$IFC"
check_err $? "cannot make $PIN/link_$IFC a symlink"
log_setup "$PIN: link_$IFA (program $idA, named xdp_flow), link_$IFC -> $VICTIM (program $idC)"
before=$(listing "$VICTIM")

RET=0
start_attach_sync
! log_has "kept the link of ifindex $IFA" &&
	! log_has "kept the link of ifindex $IFC"
check_err $? "the helper took over a link not its own: $(cat "$TMP/umh.log")"
[ "$(xdp_prog xfp_a0)" = "$idA" ] && [ "$(xdp_prog xfp_c0)" = "$idC" ]
check_err $? "xfp_a0 runs $(xdp_prog xfp_a0) (not $idA), xfp_c0 $(xdp_prog xfp_c0) (not $idC)"
[ -e "$PIN/link_$IFA" ] && [ -L "$PIN/link_$IFC" ]
check_err $? "the helper removed a pin not its own: $(ls -A "$PIN" | tr '\n' ' ')"
[ -e "$PIN/link_$(ifindex xfp_b0)" ]
check_err $? "the helper did not pin its own link in $PIN"
after=$(listing "$VICTIM")
[ "$before" = "$after" ]
check_err $? "the helper changed $VICTIM: $(ls -A "$VICTIM" | tr '\n' ' ')"
log_test "$PIN with links of another program: not taken over, not detached by SYNC"

RET=0
umh_stop
out=$("$UMH_BIN" --cleanup --log=stderr 2>&1)
rc=$?
[ "$(xdp_prog xfp_a0)" = "$idA" ] && [ "$(xdp_prog xfp_c0)" = "$idC" ]
check_err $? "xfp_a0 runs $(xdp_prog xfp_a0) (not $idA), xfp_c0 $(xdp_prog xfp_c0) (not $idC): $out"
[ -e "$PIN/link_$IFA" ] && [ -L "$PIN/link_$IFC" ]
check_err $? "--cleanup removed a pin not its own: $(ls -A "$PIN" 2>&1 | tr '\n' ' ')"
[ -z "$(xdp_prog xfp_b0)" ]
check_err $? "--cleanup left the helper's program on xfp_b0: $out"
[ -z "$(ls -A "$PIN" | grep -v "^link_\($IFA\|$IFC\)\$")" ]
check_err $? "--cleanup left pins of the helper's: $(ls -A "$PIN" | tr '\n' ' ')"
after=$(listing "$VICTIM")
[ "$before" = "$after" ]
check_err $? "--cleanup changed $VICTIM: $(ls -A "$VICTIM" 2>&1 | tr '\n' ' ')"
[ "$rc" -ne 0 ]
check_err $? "--cleanup exit status 0 with $PIN left: $out"
log_test "$PIN with links of another program: --cleanup removes only the helper's, exit status $rc"

exit "$EXIT_STATUS"
