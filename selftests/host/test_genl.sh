#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The helper as the module starts it (generic netlink, --log=kmsg), on a
# host without the module: it must fail cleanly, say why in the kernel log,
# and leave nothing behind. And test_netlink: only the kernel gets through
# to the helper's socket. (With the module, see selftests/guest.)

source "$(dirname "$0")/../lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
UMH_BIN="$XF_ROOT/umh/xdp_flow_umh"

require_root

if grep -qw xdp_flow /proc/modules 2>/dev/null; then
	log_skip "helper without the module" "xdp_flow is loaded here"
	exit $ksft_skip
fi

RET=0
pinned_before=$([ -e /sys/fs/bpf/xdp_flow ] && echo yes)
err=$(timeout 10 "$UMH_BIN" --log=stderr 2>&1 </dev/null)
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]
check_err $? "exit status $rc"
grep -q "family xdp_flow not found" <<<"$err"
check_err $? "no reason given: $err"
[ -n "$pinned_before" ] || [ ! -e /sys/fs/bpf/xdp_flow ]
check_err $? "a failed start left /sys/fs/bpf/xdp_flow"
log_test "no module: the helper exits non-zero and says why"

RET=0
mark=$(dmesg_mark "helper without the module")
timeout 10 "$UMH_BIN" --log=kmsg </dev/null >/dev/null 2>&1
# The kernel log can show a record a moment late.
for _ in $(seq 20); do
	out=$(dmesg_since "$mark")
	grep -q "xdp_flow_umh: generic netlink family xdp_flow not found" \
		<<<"$out" && break
	sleep 0.1
done
grep -q "xdp_flow_umh: generic netlink family xdp_flow not found" <<<"$out"
check_err $? "no line in the kernel log"
! kernel_bad <<<"$out" >/dev/null
check_err $? "the kernel log shows words the guest tests fail on"
log_test "--log=kmsg writes its lines to the kernel log"

RET=0
timeout 5 "$UMH_BIN" --log=bogus </dev/null >/dev/null 2>&1
[ $? -eq 2 ]
check_err $? "bad option accepted"
log_test "bad arguments: usage, exit status 2"

# Forged messages, connect() and multicast, in a namespace of their own.
if ! command -v ethtool >/dev/null; then
	log_skip "only the kernel reaches the helper's socket" "no ethtool"
	exit "$EXIT_STATUS"
fi
ns_cleanup_trap
RET=0
ns_create xfg &&
	ip -n xfg link add xfg_v0 type veth peer name xfg_v1 &&
	ip -n xfg link set dev xfg_v0 up
check_err $? "cannot set up namespace xfg"
err=$(mktemp /tmp/xfg.XXXXXX)
ip netns exec xfg "$HERE/test_netlink" xfg_v0 2>"$err"
check_err $? "test_netlink failed: $(cat "$err")"
nr=$(grep -c "ignored a message from port [0-9]* (cmd 2): not from the kernel" "$err")
[ "$nr" -eq 20 ] && grep -q "further messages not from the kernel are not logged" "$err"
check_err $? "$nr lines for 25 forged messages, expected 20 and one more: $(cat "$err")"
rm -f "$err"
log_test "forged messages: the first 20 logged, then one line"

exit "$EXIT_STATUS"
