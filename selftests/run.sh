#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole xdp_flow test suite (`make test`):
#   1. selftests/vm/setup.sh   packages, virtme-ng, the Debian guest kernels
#   2. selftests/vm/build.sh   user space, and the module for each kernel
#   3. selftests/host/run.sh   host tests (helper + XDP program, no module)
#   4. selftests/guest/run.sh  in a 6.12 guest, a 6.1 guest and a guest
#                              of the newest kernel Debian offers (7.3
#                              today; "newest" in XF_SERIES), side by side
# Every `ok`/`not ok` line is shown as it comes, prefixed by where it ran
# ([host], [6.12], [6.1], [7.3]), and again in a summary at the end, which lists
# the failures once more and closes with exactly one line
# "N passed, N failed, N skipped".
# Exits non-zero if anything failed, a guest did not boot or finish, no
# test ran at all, or a test was skipped that selftests/skips.allow does
# not allow.
#
# Env (for developers):
#   XF_SERIES="6.12"     guest kernels to run (default "6.12 6.1 newest";
#                        "" = none; a Debian 13 series such as "7.2" too)
#   XF_FILTER=regex      only guest tests whose file name matches
#   XF_HOST=0            skip the host tests
#   XF_SKIP_SETUP=1      skip setup.sh (and XF_SKIP_APT=1: no apt in setup.sh)
#   XF_SKIP_BUILD=1      skip build.sh
#   XF_LANES=n           guests booted at once (default 3)
#   XF_TEST_TIMEOUT=s    per guest test (default 1200)
#   XF_GUEST_TIMEOUT=s   per guest boot (default 4500; patched: 28800)

set -u
XF_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=selftests/kver.sh
source "$XF_TOP/selftests/kver.sh"
cd "$XF_TOP" || exit 1

SERIES=${XF_SERIES-6.12 6.1 newest}
RESULTS=$XF_TOP/.cache/results
mkdir -p "$RESULTS"
SUMMARY=$RESULTS/summary.txt
: >"$SUMMARY.tmp"

n_pass=0
n_fail=0
n_skip=0
t_start=$(date +%s)

# record <where> <line>: count and keep a result line.
record()
{
	local where=$1 line=$2

	case $line in
	"not ok"*) n_fail=$((n_fail + 1)) ;;
	"ok"*"# SKIP"*|"ok"*"# skip"*) n_skip=$((n_skip + 1)) ;;
	"ok"*) n_pass=$((n_pass + 1)) ;;
	*) return ;;
	esac
	echo "[$where] $line" >>"$SUMMARY.tmp"
}

# fail <where> <description>: a failure of the rig itself.
fail()
{
	echo "[$1] not ok - $2"
	record "$1" "not ok - $2"
}

# record_log <where> <file>: record the file's result lines. Sets
# GOT_RESULTS (lines seen), GOT_FAIL (not ok lines seen) and GOT_GUEST
# (whether selftests/guest/run.sh's first line "# guest kernel" came).
record_log()
{
	local where=$1 line

	GOT_RESULTS=0
	GOT_FAIL=0
	GOT_GUEST=0
	while IFS= read -r line; do
		case $line in
		"ok - "*|"not ok - "*|"ok "[0-9]*|"not ok "[0-9]*)
			record "$where" "$line"
			GOT_RESULTS=$((GOT_RESULTS + 1))
			case $line in "not ok"*) GOT_FAIL=$((GOT_FAIL + 1)) ;; esac
			;;
		"# guest kernel "*)
			GOT_GUEST=1
			;;
		esac
	done <"$2"
}

# collect <where> cmd...: run cmd, show its output prefixed with [where],
# record its result lines (record_log). Returns cmd's status.
collect()
{
	local where=$1 rc f
	shift

	f=$(mktemp)
	"$@" </dev/null 2>&1 | tr -d '\r' | tee "$f" | sed -u "s/^/[$where] /"
	rc=${PIPESTATUS[0]}
	record_log "$where" "$f"
	rm -f "$f"
	return "$rc"
}

phase()
{
	echo "# ==== $* ($(($(date +%s) - t_start)) s)"
}

# check_skips: every skip must match a line of selftests/skips.allow (an
# extended regex per line, matched against "[where] ok - ... # SKIP ...",
# its reason in a comment above it); any other skip is a failure.
check_skips()
{
	local allow=$XF_TOP/selftests/skips.allow pats line
	local -a skips

	mapfile -t skips < <(grep -E '^\[[^]]*\] ok .*# (SKIP|skip)' "$SUMMARY.tmp")
	[ ${#skips[@]} -gt 0 ] || return 0
	pats=$(mktemp)
	grep -Ev '^[[:space:]]*(#|$)' "$allow" 2>/dev/null >"$pats"
	for line in "${skips[@]}"; do
		if [ ! -s "$pats" ] || ! grep -Eq -f "$pats" <<<"$line"; then
			fail "${line%%]*}" "a skip not on selftests/skips.allow: ${line#*] }"
		fi
	done
	rm -f "$pats"
}

finish()
{
	local total

	check_skips
	total=$((n_pass + n_fail + n_skip))
	local rc=0

	phase "summary"
	cat "$SUMMARY.tmp"
	if [ "$total" -eq 0 ]; then
		echo "# no test ran"
		rc=1
	fi
	if [ "$n_fail" -ne 0 ]; then
		# Again just before the count: a log's tail names what failed.
		echo "# the $n_fail that failed:"
		grep -F "] not ok" "$SUMMARY.tmp" | sed 's/^/#   /'
		rc=1
	fi
	echo "$n_pass passed, $n_fail failed, $n_skip skipped" | tee -a "$SUMMARY.tmp"
	mv -f "$SUMMARY.tmp" "$SUMMARY"
	exit $rc
}

# 1. set-up
if [ "${XF_SKIP_SETUP:-0}" != 1 ]; then
	phase "setup"
	# shellcheck disable=SC2086
	if ! bash selftests/vm/setup.sh $SERIES </dev/null; then
		fail host "setup: selftests/vm/setup.sh failed"
		finish
	fi
fi

# "newest" names the series setup.sh resolved (.cache/kernels/newest).
resolved=
for s in $SERIES; do
	if [ "$s" = newest ]; then
		s=$(readlink .cache/kernels/newest 2>/dev/null) || {
			fail host "setup: no newest kernel (.cache/kernels/newest)"
			finish
		}
	fi
	resolved+="$s "
done
SERIES=${resolved% }

# 2. build
if [ "${XF_SKIP_BUILD:-0}" != 1 ]; then
	phase "build"
	# shellcheck disable=SC2086
	if bash selftests/vm/build.sh $SERIES </dev/null; then
		echo "# build: user space and module for ${SERIES:-no kernel}: ok"
	else
		fail host "build: selftests/vm/build.sh $SERIES failed (see above)"
	fi
fi

# 3. host tests
if [ "${XF_HOST:-1}" != 0 ]; then
	if [ -f selftests/host/run.sh ]; then
		phase "host tests"
		collect host bash selftests/host/run.sh
		rc=$?
		if [ $rc -ne 0 ] && [ "$GOT_FAIL" -eq 0 ]; then
			fail host "selftests/host/run.sh exited with status $rc"
		elif [ $rc -eq 0 ] && [ "$GOT_RESULTS" -eq 0 ]; then
			fail host "selftests/host/run.sh reported no result"
		fi
	else
		echo "# no selftests/host/run.sh: no host tests"
	fi
fi

# 4. guests, each with its share of the robustness loops (xf_share in
# selftests/guest/lib.sh). The second pass of selftests/guest/run.sh (the
# differential test with the hook auto does not pick: xdp on a kernel with
# tcx) runs on the first such kernel of the run only: the others run the
# xdp hook where their tests name it, and 6.1 all of them with it.
#
# XF_LANES guests run at once (default 3: all of them). A guest's tests
# are shell scripts, one step after the other: alone, an emulated guest
# leaves much of this 2-CPU machine idle (`top` shows its QEMU at about
# one CPU). Side by side, each guest's CPUs
# are emulated on one host thread (XF_GUEST_THREADS=single in
# selftests/vm/run-guest.sh): with a thread per guest CPU, three guests'
# six threads on two CPUs waited for each other and each guest took 2.7
# times as long as alone; with one thread each, 1.8 times (test_10 to
# test_18, 6 December), so three kernels take about 60% of the time they
# take one after the other. Each guest's lines are shown as they come,
# prefixed with its series; the results are recorded in the order of
# XF_SERIES.

# guest_job <series> <share> <hook pass>: boot one guest; its output goes
# to .cache/results/<series>.log, its exit status to <that>.rc.
guest_job()
{
	local s=$1 log=$RESULTS/$1.log

	XF_SHARE=$2 XF_HOOK_PASS=$3 XF_GUEST_THREADS=$threads XF_SIDE_BY_SIDE=$side \
		bash selftests/vm/run-guest.sh "$s" selftests/guest/run.sh \
		</dev/null 2>&1 | tr -d '\r' | tee "$log" | sed -u "s/^/[$s] /"
	echo "${PIPESTATUS[0]}" >"$log.rc"
	echo "# ==== guest $s done ($(($(date +%s) - t_start)) s)"
}

# guest_result <series>: record what the guest's log says.
guest_result()
{
	local s=$1 log=$RESULTS/$1.log rc

	rc=$(cat "$log.rc" 2>/dev/null) || rc=1
	record_log "$s" "$log"
	if [ "$GOT_GUEST" -eq 0 ]; then
		fail "$s" "guest $s did not boot or did not start selftests/guest/run.sh (rc $rc)"
	elif [ "$rc" -eq 124 ]; then
		fail "$s" "guest $s did not finish in time (XF_GUEST_TIMEOUT, selftests/vm/run-guest.sh)"
	elif [ "$rc" -ne 0 ] && [ "$GOT_FAIL" -eq 0 ]; then
		fail "$s" "guest $s: selftests/guest/run.sh exited with status $rc"
	fi
}

n_series=$(echo $SERIES | wc -w)
lanes=${XF_LANES:-3}
[[ "$lanes" =~ ^[1-9][0-9]*$ ]] || lanes=3
# Side by side, the guests' tests stretch their waits (XF_PACE in
# selftests/guest/lib.sh).
side=0
[ "$lanes" -gt 1 ] && [ "$n_series" -gt 1 ] && side=1
threads=${XF_GUEST_THREADS:-multi}
[ $side = 1 ] && threads=${XF_GUEST_THREADS:-single}
k=0
tcx_done=0
running=0
for s in $SERIES; do
	hook_pass=${XF_HOOK_PASS-}
	# the series' kernel version (setup.sh wrote it), else its name
	kver=$(. "$XF_TOP/.cache/kernels/$s/env" 2>/dev/null; echo "${KVER:-$s}")
	if kver_has_tcx "$kver"; then
		[ $tcx_done = 1 ] && [ -z "${XF_HOOK_PASS+x}" ] && hook_pass=none
		tcx_done=1
	fi
	if [ "$running" -ge "$lanes" ]; then
		wait -n
		running=$((running - 1))
	fi
	rm -f "$RESULTS/$s.log" "$RESULTS/$s.log.rc"
	phase "guest $s"
	guest_job "$s" "$k/$n_series" "$hook_pass" &
	running=$((running + 1))
	k=$((k + 1))
done
wait
for s in $SERIES; do
	guest_result "$s"
done

finish
