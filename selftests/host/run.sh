#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host tests of the helper and its XDP program (no module, no guest):
#   test_prog      packet fixtures through BPF_PROG_TEST_RUN
#   test_veth.sh   the helper driven directly, real packets over veth (with
#                  each hook: XDP, and TC through tcx where the kernel has it)
#   test_genl.sh   the generic netlink transport without a module, and who
#                  may send to the helper's socket (test_netlink)
#   test_cleanup.sh  --cleanup, the pin directory's lock, and the helper
#                  started as the module starts it (no fds 0-2)
#   test_pin_trust.sh  a pin directory that is not the helper's own (too
#                  open, another owner, a symlink, links of another
#                  program in it): used for nothing, deleted by nothing
#   test_clang.sh  the datapath built by Debian 12's and Debian 13's clang
#                  (the build root's): both load on this machine's kernel
#   xdp-flow CLI   tools/xdp-flow/tests: arguments, exit codes, and the
#                  output of crafted module replies (make -C tools/xdp-flow
#                  check)
#   test_oracle.py the expected frames of targeted.py's rewrite cases:
#                  scapy's against difftest's builder's (no root needed)
#   test_docs.py   the documentation: links resolve, the rST pages convert
#                  without warnings, README.md links to every page and
#                  names no commit or date (no root needed)
#   bench_dp       bench/host's datapath benchmark, briefly: it builds, its
#                  references load, and its frames change (its warm-up
#                  checks that the flows hit as many rules as they should)
# Builds umh/ first. Exits non-zero if any test failed.

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
rc=0

if [ "$(id -u)" -ne 0 ]; then
	echo "ok - host tests # SKIP needs root"
	exit 4
fi

make -s -C "$ROOT/umh" && make -s -C "$HERE" || {
	echo "not ok - build umh and the host tests"
	exit 1
}
echo "# built umh and the host tests"

run()
{
	local name=$1

	shift
	echo "# $name"
	"$@"
	local err=$?
	# 4 is kselftest's "skipped".
	if [ "$err" -ne 0 ] && [ "$err" -ne 4 ]; then
		echo "not ok - $name (exit status $err)"
		rc=1
	fi
}

run test_prog "$HERE/test_prog" "$@"
run test_veth.sh bash "$HERE/test_veth.sh"
# The TC hook attaches through tcx: Linux 6.6 and later.
kver=$(uname -r)
if [ "$(printf '%s\n' 6.6 "${kver%%-*}" | sort -V | head -n 1)" = 6.6 ]; then
	XF_HOOK=tc run "test_veth.sh (tc hook)" bash "$HERE/test_veth.sh"
else
	echo "ok - test_veth.sh (tc hook) # SKIP kernel $kver has no tcx (6.6+)"
fi
[ -f "$HERE/test_genl.sh" ] && run test_genl.sh bash "$HERE/test_genl.sh"
run test_cleanup.sh bash "$HERE/test_cleanup.sh"
run test_pin_trust.sh bash "$HERE/test_pin_trust.sh"
run test_clang.sh bash "$HERE/test_clang.sh"
run "xdp-flow CLI" make -s -C "$ROOT/tools/xdp-flow" check
run test_oracle.py /usr/bin/python3 "$HERE/test_oracle.py"
run test_docs.py /usr/bin/python3 "$HERE/test_docs.py"

bench_smoke()
{
	local out

	make -s -C "$ROOT/bench/host" bench_dp || return 1
	out=$("$ROOT/bench/host/bench_dp" --quick --masks 1 2>&1 >/dev/null) || {
		echo "$out" | tail -5 | sed 's/^/# /'
		return 1
	}
	echo "ok - bench_dp --quick --masks 1: references loaded, frames drawn from many flows"
}
run bench_dp bench_smoke
exit $rc
