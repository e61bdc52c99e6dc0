#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The datapath as each clang users build it with compiles it, and the
# verifier of this machine's kernel takes both its programs:
#
#   - this machine's clang (Debian 12's), which builds what the tests run;
#   - Debian 13's, in the build root selftests/vm/setup.sh makes for the
#     newest kernel (make dkms and the in-tree build use it there).
#
# Each clang optimises differently: clang 19 dropped tests it proved
# redundant but the verifier needs (a bound already implied, a callback's
# 0/1 return, a NULL test after a load), and the helper then could not
# load its program at all, while clang 14's build passed every test.

source "$(dirname "$0")/../lib.sh"

BR=${XF_BUILDROOT:-/var/cache/xdp_flow/trixie-root}
TMP=

cleanup()
{
	[ -z "$TMP" ] || rm -rf "$TMP"
}
trap cleanup EXIT

require_root
require_cmd bpftool

# load <description> <object>: both programs through the verifier, in a
# bpffs of their own (libbpf pins the maps by name at the bpffs root).
load()
{
	local what=$1 obj=$2 out

	RET=0
	out=$(unshare --mount --propagation private sh -c '
		mount -t bpf bpf /sys/fs/bpf && mkdir /sys/fs/bpf/t &&
		bpftool prog loadall "$1" /sys/fs/bpf/t &&
		test -e /sys/fs/bpf/t/xdp_flow && test -e /sys/fs/bpf/t/xdp_flow_tc' \
		sh "$obj" 2>&1)
	check_err $? "the verifier refused it: $(grep -E 'invalid|refus|should have|R[0-9]+ |failed' <<<"$out" | tail -n 4 | tr '\n' ' ')"
	log_test "$what: xdp_flow and xdp_flow_tc load on $(uname -r)"
}

# compile <root> <dir>: umh/Makefile's rule for the datapath, on a copy of
# its sources (no build products) in <root><dir>, run in <root> ("" or the
# build root); prints clang's version.
compile()
{
	local root=$1 dir=$2 f

	(cd "$XF_ROOT" && git ls-files umh include) | while read -r f; do
		mkdir -p "$root$dir/$(dirname "$f")" && cp "$XF_ROOT/$f" "$root$dir/$f"
	done
	if [ -n "$root" ]; then
		chroot "$root" clang -dumpversion &&
			chroot "$root" make -s -C "$dir/umh" xdp_flow.bpf.o
	else
		clang -dumpversion && make -s -C "$dir/umh" xdp_flow.bpf.o
	fi
}

TMP=$(mktemp -d)
RET=0
compile "" "$TMP" >"$TMP/out" 2>"$TMP/err"
check_err $? "this machine's clang cannot compile umh/xdp_flow.bpf.c: $(tail -n 3 "$TMP/err")"
ver=$(head -n 1 "$TMP/out")
log_test "clang $ver (this machine's) compiles the datapath"
[ $RET -eq 0 ] && load "clang $ver's build" "$TMP/umh/xdp_flow.bpf.o"

if [ ! -x "$BR/usr/bin/clang" ]; then
	log_skip "Debian 13's clang compiles the datapath and its programs load" \
		"no Debian 13 build root with clang at $BR (selftests/vm/setup.sh newest)"
	exit "$EXIT_STATUS"
fi
rm -rf "$TMP"
TMP=$(mktemp -d "$BR/tmp/xf_clang.XXXXXX")
RET=0
compile "$BR" "${TMP#"$BR"}" >"$TMP/out" 2>"$TMP/err"
check_err $? "Debian 13's clang cannot compile umh/xdp_flow.bpf.c: $(tail -n 3 "$TMP/err")"
ver=$(head -n 1 "$TMP/out")
log_test "clang $ver (Debian 13's) compiles the datapath"
[ $RET -eq 0 ] && load "clang $ver's build" "$TMP/umh/xdp_flow.bpf.o"

exit "$EXIT_STATUS"
