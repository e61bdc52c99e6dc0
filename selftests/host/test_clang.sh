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

# clang_flags: what umh/Makefile compiles the datapath with.
CFLAGS=(-target bpf -O2 -g -Wall -Wextra -Wno-unused-parameter)

TMP=$(mktemp -d)
RET=0
clang "${CFLAGS[@]}" -I"$XF_ROOT/include" \
	-I"/usr/include/$(gcc -dumpmachine)" \
	-c "$XF_ROOT/umh/xdp_flow.bpf.c" -o "$TMP/host.bpf.o"
check_err $? "clang $(clang -dumpversion) cannot compile umh/xdp_flow.bpf.c"
log_test "clang $(clang -dumpversion) (this machine's) compiles the datapath"
[ $RET -eq 0 ] && load "clang $(clang -dumpversion)'s build" "$TMP/host.bpf.o"

if [ ! -x "$BR/usr/bin/clang" ]; then
	log_skip "Debian 13's clang compiles the datapath and its programs load" \
		"no Debian 13 build root with clang at $BR (selftests/vm/setup.sh newest)"
	exit "$EXIT_STATUS"
fi
# The sources inside the build root, for its compiler.
rm -rf "$TMP"
TMP=$(mktemp -d "$BR/tmp/xf_clang.XXXXXX")
cp -r "$XF_ROOT/umh" "$XF_ROOT/include" "$TMP/"
ver=$(chroot "$BR" clang -dumpversion)
RET=0
chroot "$BR" clang "${CFLAGS[@]}" -I"${TMP#"$BR"}/include" \
	-I/usr/include/x86_64-linux-gnu \
	-c "${TMP#"$BR"}/umh/xdp_flow.bpf.c" -o "${TMP#"$BR"}/br.bpf.o"
check_err $? "Debian 13's clang $ver cannot compile umh/xdp_flow.bpf.c"
log_test "clang $ver (Debian 13's) compiles the datapath"
[ $RET -eq 0 ] && load "clang $ver's build" "$TMP/br.bpf.o"

exit "$EXIT_STATUS"
