#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs INSIDE a guest (see selftests/vm/run-guest.sh): every
# selftests/guest/test_*.sh in name order, each with a timeout, with its
# `ok`/`not ok` lines prefixed by the test's name. A test also fails when the
# kernel log gained a line XF_KERNEL_BAD_RE (selftests/lib.sh) matches while
# it ran. Does not load the module: tests do (xf_load). The same scripts
# run under a kernel tree's kselftest harness (selftests/guest/Makefile).
#
# Usage: selftests/guest/run.sh [filter]
#   filter (or $XF_FILTER): extended regex matched against the test file
#   names, e.g. "test_00|test_1[01]"
# Env: XF_TEST_TIMEOUT  seconds per test (default: selftests/guest/settings)
#      XF_RESULTS       folder for the kernel log, a summary and the results
#                       as they come, progress.txt (optional)
#      XF_KMEMLEAK=1    the kmemleak scan at the end (patched kernel) also
#                       after a filtered run
#      XF_HOOK_PASS     the tests that run again with each hook that `auto`
#                       does not pick on a veth here (xdp on 6.6+, where
#                       auto picks tc; none on older kernels, which have
#                       no tc hook): an extended regex, default the
#                       differential test (the others run with xdp where
#                       auto picks it: on 6.1); "none" for none
#
# The first pass runs every test with the hook users get (XF_HOOK=auto:
# `xdp-flow enable` without a hook); tests whose subject is a hook name
# it themselves. The second pass names its results "<test>[<hook>]" and
# runs a quarter of the differential cases.

set -u

XF_ROOT=${XF_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
cd "$XF_ROOT" || exit 1
export XF_ROOT
# python3 and friends from Debian first, whatever the host's PATH had; the
# repository's xdp-flow command, as users have theirs, on PATH
export PATH=$XF_ROOT/tools/xdp-flow:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
# the defaults of XF_SERIES, XF_KO, XF_UMH and XF_CLI (exported)
source "$XF_ROOT/selftests/guest/lib.sh"
source "$XF_ROOT/selftests/kver.sh"

filter=${1:-${XF_FILTER:-}}
# the kselftest settings file: one timeout for both harnesses
test_timeout=${XF_TEST_TIMEOUT:-$(sed -n 's/^timeout=//p' selftests/guest/settings)}
test_timeout=${test_timeout:-1200}
# a slower kernel (lib.sh's XF_PACE): longer
[ -z "${XF_TEST_TIMEOUT:-}" ] && test_timeout=$((test_timeout * XF_PACE))

echo "# guest kernel $(uname -r) (series $XF_SERIES), $(nproc) CPUs"
echo "# module: $(modinfo -F filename xdp_flow 2>/dev/null || echo "none installed, $XF_KO"), command: $XF_CLI"
for f in "$XF_KO" "$XF_UMH" "$XF_CLI"; do
	[ -e "$f" ] || echo "# note: $f does not exist"
done

# hang_report <name>: what every process waits on, and the kernel stacks
# of blocked tasks, before a test that hangs is killed.
hang_report()
{
	echo "# $1 is about to time out; processes (pid stat wchan args):"
	ps -eo pid,stat,wchan:32,args 2>/dev/null | grep -v ' \[' | sed 's/^/# ps: /'
	echo w >/proc/sysrq-trigger 2>/dev/null
	sleep 1
	dmesg | tail -n 80 | sed 's/^/# dmesg: /'
}

hook_pass=${XF_HOOK_PASS:-'test_20_'}
kver=$(uname -r)
has_tcx=0
kver_has_tcx "$kver" && has_tcx=1
# What auto picks on a veth (see xdp_flow_auto_hook()), and so the other
# hook of this kernel, if it has one.
if [ $has_tcx = 1 ]; then
	other_hooks=xdp
else
	other_hooks=
fi

# Entries "<file> <hook>".
tests=()
for hook in auto $other_hooks; do
	for t in selftests/guest/test_*.sh; do
		[ -f "$t" ] || continue
		# bash's ERE, as grep -E's: no process per test
		if [ -n "$filter" ] && ! [[ "${t##*/}" =~ $filter ]]; then
			continue
		fi
		if [ $hook != auto ] && ! [[ "${t##*/}" =~ $hook_pass ]]; then
			continue
		fi
		tests+=("$t $hook")
	done
done
if [ ${#tests[@]} -eq 0 ]; then
	echo "not ok - guest $XF_SERIES: no test matches '${filter}'"
	exit 1
fi

n_ok=0
n_fail=0
n_skip=0

# Pass a test's output through; prefix its result lines with its name and
# count them. Prints "<ok> <fail> <skip>" to fd 3. In progress.txt each
# result line starts with the seconds since the test started: where a
# test spends its time.
relay()
{
	local name=$1 line ok=0 fail=0 skip=0 t0=$SECONDS

	while IFS= read -r line; do
		case $line in
		"not ok - "*)
			fail=$((fail + 1))
			line="not ok - $name: ${line#not ok - }" ;;
		"ok - "*" # SKIP"*)
			skip=$((skip + 1))
			line="ok - $name: ${line#ok - }" ;;
		"ok - "*)
			ok=$((ok + 1))
			line="ok - $name: ${line#ok - }" ;;
		esac
		printf '%s\n' "$line"
		case $line in
		*"ok - "*) printf '[%3d s] %s\n' $((SECONDS - t0)) "$line" >&4 ;;
		esac
	done
	echo "$ok $fail $skip" >&3
}

# say <line>: a line of the results, on the console and in progress.txt.
say()
{
	printf '%s\n' "$*"
	printf '%s\n' "$*" >&4
}

# Whatever a test left behind must not break the next one.
after_test()
{
	local name=$1 ns

	for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^xf/ {print $1}'); do
		echo "# $name left netns $ns behind; deleting it"
		ip netns del "$ns"
	done
	if [ -d /sys/module/xdp_flow ]; then
		echo "# $name left xdp_flow loaded; removing it"
		rmmod xdp_flow 2>&1 | sed 's/^/# /'
	fi
}

if [ $has_tcx = 0 ]; then
	echo "# kernel $kver has no tcx: no tc hook, auto picks xdp; no second pass"
fi

# The results as they come, in XF_RESULTS/progress.txt: the console
# reaches the host in large chunks, and a long run (the patched kernel's)
# would otherwise show nothing for an hour.
if [ -n "${XF_RESULTS:-}" ] && [ -d "$XF_RESULTS" ] && [ -w "$XF_RESULTS" ]; then
	exec 4>"$XF_RESULTS/progress.txt"
else
	exec 4>/dev/null
fi

# A debug kernel (one with lockdep: the patched one) must have its checks
# on when the tests start: a report while it booted turns lockdep off for
# good, and would leave every test's "kernel log clean" blind to what it
# checks. Its boot log must be clean, and lockdep still on at the end.
lockdep_on()
{
	grep -Eq '^[[:space:]]*debug_locks:[[:space:]]+1$' /proc/lockdep_stats
}
if [ -r /proc/lockdep_stats ]; then
	bad=$(dmesg | kernel_bad)
	if [ -n "$bad" ] || ! lockdep_on; then
		echo "$bad" | head -n 40 | sed 's/^/# dmesg: /' | tee /dev/fd/4
		say "not ok - boot: the debug kernel reported before the first test, or its lockdep is off"
		n_fail=$((n_fail + 1))
	fi
fi

for entry in "${tests[@]}"; do
	t=${entry% *}
	hook=${entry##* }
	name=$(basename "$t" .sh)
	[ $hook = auto ] || name="${name}[$hook]"
	echo "# ---- $name ($XF_SERIES)"
	mark=$(dmesg_mark "---- $name")
	start=$(date +%s)
	cnt=$(mktemp)
	(sleep $((test_timeout > 60 ? test_timeout - 30 : test_timeout)) &&
		hang_report "$name") 3>&- 4>&- &
	watchdog=$!
	# The differential cases: 200, the first 134 with three kernels (each
	# the same: test_21's control takes them, and its mutants need up to
	# about 150).
	cases=$(xf_share 400)
	cases=${XF_DIFF_CASES:-$((cases < 200 ? cases : 200))}
	first=${XF_DIFF_FIRST:-0}
	# The second pass runs a quarter of the differential cases.
	[ $hook = auto ] || cases=$((cases / 4))
	XF_HOOK=$hook XF_DIFF_CASES=$cases XF_DIFF_FIRST=$first \
		timeout -k 10 "$test_timeout" bash "$t" </dev/null 2>&1 3>&- 4>&- |
		relay "$name" 3>"$cnt"
	rc=${PIPESTATUS[0]}
	kill "$watchdog" 2>/dev/null
	wait "$watchdog" 2>/dev/null
	read -r ok fail skip <"$cnt"
	rm -f "$cnt"
	ok=${ok:-0} fail=${fail:-0} skip=${skip:-0}

	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		say "not ok - $name: timed out after ${test_timeout}s"
		fail=$((fail + 1))
	elif [ "$rc" = 4 ] && [ $((ok + fail + skip)) -eq 0 ]; then
		say "ok - $name # SKIP (exit status 4)"
		skip=$((skip + 1))
	elif [ "$rc" != 0 ] && [ "$fail" -eq 0 ]; then
		say "not ok - $name: exited with status $rc"
		fail=$((fail + 1))
	elif [ "$rc" = 0 ] && [ $((ok + fail + skip)) -eq 0 ]; then
		say "not ok - $name: reported no result"
		fail=$((fail + 1))
	fi

	# The hang report's own stack dump (sysrq w) is no crash: what the
	# kernel logged from there on is left out (the test timed out anyway).
	bad=$(dmesg_since "$mark" |
	      sed '/sysrq: Show Blocked State/,$d' | kernel_bad)
	if [ -n "$bad" ]; then
		echo "$bad" | head -n 40 | sed 's/^/# dmesg: /' | tee /dev/fd/4
		say "not ok - $name: the kernel log shows warnings or crashes"
		fail=$((fail + 1))
	fi
	after_test "$name"

	say "# $name: $ok ok, $fail failed, $skip skipped, $(($(date +%s) - start)) s"
	n_ok=$((n_ok + ok))
	n_fail=$((n_fail + fail))
	n_skip=$((n_skip + skip))
done

# Under kmemleak (the patched kernel): a scan once every test is done.
# Two scans: an object is reported once it looked unreferenced twice.
kml=/sys/kernel/debug/kmemleak
[ -e /sys/kernel/debug/kmemleak ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
if [ -w $kml ] && { [ -z "$filter" ] || [ "${XF_KMEMLEAK:-0}" = 1 ]; }; then
	echo scan >$kml && sleep 5 && echo scan >$kml
	leaks=$(grep -c '^unreferenced object' $kml)
	if [ "$leaks" = 0 ]; then
		say "ok - kmemleak: no suspected leak once every test is done"
		n_ok=$((n_ok + 1))
	else
		head -n 80 $kml | sed 's/^/# kmemleak: /' | tee /dev/fd/4
		say "not ok - kmemleak: $leaks suspected leaks once every test is done"
		n_fail=$((n_fail + 1))
	fi
fi

if [ -r /proc/lockdep_stats ]; then
	if lockdep_on; then
		say "ok - lockdep: on from the boot to the last test"
		n_ok=$((n_ok + 1))
	else
		say "not ok - lockdep: it turned itself off during the tests"
		n_fail=$((n_fail + 1))
	fi
fi

summary="# totals for $XF_SERIES ($(uname -r)): passed $n_ok, failed $n_fail, skipped $n_skip"
say "$summary"
if [ -n "${XF_RESULTS:-}" ] && [ -d "$XF_RESULTS" ] && [ -w "$XF_RESULTS" ]; then
	dmesg >"$XF_RESULTS/dmesg.txt" 2>/dev/null
	say "$summary" >"$XF_RESULTS/summary.txt"
fi
[ "$n_fail" -eq 0 ]
