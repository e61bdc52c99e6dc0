# SPDX-License-Identifier: GPL-2.0
#
# Common helpers of every xdp_flow test script, on the host or in a guest.
# Source it first:  source "$XF_ROOT/selftests/lib.sh"
#
# Output is kselftest/TAP-like, one line per check group:
#     ok - description
#     not ok - description # reason
#     ok - description # SKIP reason
# Lines starting with '#' are diagnostics. Usage, as in the kernel's
# tools/testing/selftests/net/forwarding/lib.sh:
#
#     RET=0
#     some_command
#     check_err $? "some_command failed"
#     other_command_that_must_fail
#     check_fail $? "other_command succeeded"
#     log_test "what this group checks"
#     ...
#     exit $EXIT_STATUS
#
# check_err/check_fail keep the first failure (RET and its message);
# log_test prints the line and, on failure, sets EXIT_STATUS=1 (it leaves RET
# alone, so `log_test ...; return $RET` works). An EXIT trap installed here
# also turns a failed check into a non-zero exit status when the script ends
# with a plain `exit` or falls off its end.

# The repository root, wherever the script was started from.
if [ -z "${XF_ROOT:-}" ]; then
	XF_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fi
export XF_ROOT

RET=0
RETMSG=
EXIT_STATUS=0
XF_NUM_OK=0
XF_NUM_FAIL=0
XF_NUM_SKIP=0
# Exit status a test uses to say it skipped as a whole (kselftest's ksft_skip).
ksft_skip=4

# check_err <status> [reason]: fail the current group if <status> != 0.
check_err()
{
	local err=$1 msg=${2:-}

	if [ "$RET" -eq 0 ] && [ "$err" -ne 0 ]; then
		RET=$err
		RETMSG=$msg
	fi
}

# check_fail <status> [reason]: fail the current group if <status> == 0
# (for things that must not succeed).
check_fail()
{
	local err=$1 msg=${2:-}

	if [ "$RET" -eq 0 ] && [ "$err" -eq 0 ]; then
		RET=1
		RETMSG=$msg
	fi
}

# check_err_fail <should_fail> <status> [reason]: check_fail if should_fail
# is 1, check_err otherwise.
check_err_fail()
{
	if [ "$1" -eq 1 ]; then
		check_fail "$2" "${3:-}"
	else
		check_err "$2" "${3:-}"
	fi
}

# log_test <description>: report the group checked since RET was last 0.
# Returns 1 if it failed.
log_test()
{
	local desc=$1

	if [ "$RET" -ne 0 ]; then
		EXIT_STATUS=1
		XF_NUM_FAIL=$((XF_NUM_FAIL + 1))
		echo "not ok - $desc${RETMSG:+ # $RETMSG}"
		RETMSG=
		return 1
	fi
	XF_NUM_OK=$((XF_NUM_OK + 1))
	echo "ok - $desc"
	RETMSG=
	return 0
}

# log_setup <description>: like log_test for a step that only prepares
# the checks (modules, devices, rules): a failure is a failed test, and
# success a diagnostic line, not a pass.
log_setup()
{
	if [ "$RET" -ne 0 ]; then
		log_test "$1"
		return 1
	fi
	echo "# $1: done"
	RETMSG=
	return 0
}

# log_skip <description> <reason>: a check that could not run here.
log_skip()
{
	XF_NUM_SKIP=$((XF_NUM_SKIP + 1))
	echo "ok - $1 # SKIP ${2:-}"
}

# log_info <text>: a diagnostic line.
log_info()
{
	echo "# $*"
}

# require_cmd <cmd> [description]: skip the whole test if cmd is missing.
require_cmd()
{
	if ! command -v "$1" >/dev/null 2>&1; then
		log_skip "${2:-$(basename "$0")}" "$1 not installed"
		exit $ksft_skip
	fi
}

# require_root [description]
require_root()
{
	if [ "$(id -u)" -ne 0 ]; then
		log_skip "${1:-$(basename "$0")}" "needs root"
		exit $ksft_skip
	fi
}

# The kernel log lines every test fails on, in one place (grep -E):
# warnings, BUGs, oopses and their traces, refcount_t and sanitizer
# reports, lockdep's circular dependencies, RCU stalls, hung tasks.
XF_KERNEL_BAD_RE='\bWARNING\b|\bBUG\b|Oops|Call Trace|general protection|refcount_t|KASAN|UBSAN|possible circular locking|detected stalls? on CPU|self-detected stall|blocked for more than'

# Warnings of the kernel's own that are known false positives, matched on
# the line after a report's "cut here" (grep -E): left out by kernel_bad,
# the whole report. One a line, with the kernels that have it:
# - FORTIFY_SOURCE's memcpy check on a Geneve device's receive of
#   metadata with options (ip_tunnel_info_opts_set(), the options after
#   struct ip_tunnel_info): Linux 6.12; 6.14 made them a flexible array,
#   options[] __counted_by(options_len).
XF_KERNEL_KNOWN_RE='memcpy: detected field-spanning write \(size [0-9]+\) of single field "_Generic\(info, .*" at include/net/ip_tunnels\.h:[0-9]+ \(size 0\)$'

# kernel_bad: the lines of stdin (a kernel log) that XF_KERNEL_BAD_RE
# matches, but in the reports XF_KERNEL_KNOWN_RE names; status 0 when
# there are any.
kernel_bad()
{
	awk -v known="$XF_KERNEL_KNOWN_RE" '
		/-+\[ cut here \]-+/ { held = $0; n = 1; next }
		n == 1 { n = 2; if ($0 ~ known) { skip = 1; next } print held }
		skip { if (/---\[ end trace/) skip = 0; next }
		{ print }' | grep -E "$XF_KERNEL_BAD_RE"
}

# wait_for <seconds> <command...>: poll until the command succeeds.
wait_for()
{
	local i n=$(($1 * 10))

	shift
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}

# dmesg_mark [label]: write a unique line (with the label) into the kernel
# log and print it, for dmesg_since. A line count is no mark: once the ring
# buffer is full, every new line pushes an old one out and the count stops
# moving.
dmesg_mark()
{
	local m="xdp_flow-selftest-mark ${1:+$1 }$$-$RANDOM-$(date +%s%N)"

	echo "$m" >/dev/kmsg
	echo "$m"
}

# dmesg_since <mark>: the kernel log after the mark; all of it, with a
# note on stderr, if the mark has left the ring buffer.
dmesg_since()
{
	local log n

	log=$(dmesg)
	n=$(echo "$log" | grep -n -F -m1 -- "$1" | cut -d: -f1)
	if [ -z "$n" ]; then
		echo "# dmesg_since: mark $1 is gone from the kernel log" >&2
		n=0
	fi
	echo "$log" | tail -n +"$((n + 1))"
}

# Network namespaces the test created, deleted by ns_cleanup.
XF_NS_LIST=()

# ns_create <name>...: create namespaces (deleting stale ones of the same
# name first), bring their lo up, and remember them for ns_cleanup.
ns_create()
{
	local ns

	for ns in "$@"; do
		ip netns del "$ns" 2>/dev/null
		ip netns add "$ns" || return 1
		ip -n "$ns" link set dev lo up || return 1
		XF_NS_LIST+=("$ns")
	done
}

# ns_register <name>...: have ns_cleanup delete namespaces made elsewhere.
ns_register()
{
	XF_NS_LIST+=("$@")
}

# ns_cleanup: delete every namespace created with ns_create/ns_register.
ns_cleanup()
{
	local ns

	for ns in "${XF_NS_LIST[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	XF_NS_LIST=()
	return 0
}

# ns_cleanup_trap [cmd...]: on exit, run cmd (if given) then ns_cleanup.
ns_cleanup_trap()
{
	local extra=""

	[ $# -gt 0 ] && extra="$*; "
	# shellcheck disable=SC2064
	trap "${extra}ns_cleanup" EXIT
}

# On exit, a failed check makes the status non-zero even if the script
# forgot to `exit $EXIT_STATUS`. Scripts may install their own EXIT trap;
# `exit $EXIT_STATUS` is then what counts.
__xf_lib_exit()
{
	local rc=$?

	if [ $rc -eq 0 ] && [ "$EXIT_STATUS" -ne 0 ]; then
		exit "$EXIT_STATUS"
	fi
	exit $rc
}
trap __xf_lib_exit EXIT
