#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build xdp_flow for guest kernel series (as prepared by selftests/vm/setup.sh):
#   - user space once, in the tree: `make umh cli` at the top level (and
#     `make -C umh mutants`, `make fuzz`: test builds and programs);
#   - the module per series, in a copy of net/xdp_flow/ and include/ under
#     .cache/build/<series>/ (same relative layout, so the module's
#     -I../../include works and two kernels never share object files),
#     with the compiler the kernel was built with (selftests/vm/kmake.sh).
# Output: .cache/build/<series>/net/xdp_flow/xdp_flow.ko, also installed as
# updates/xdp_flow.ko in the series' module tree (.cache/kernels/<series>/
# root/lib/modules/<kver>, the guest's /lib/modules/<kver>); and dkms's
# build of it in .cache/dkms/<series> (build_dkms).
#
# Usage: selftests/vm/build.sh [series...]     (no series: user space only)
# Env:   XF_SKIP_USER=1  do not build user space
#        XF_DKMS_SERIES  the series dkms builds for (test_38_dkms), of those
#                        given (default 6.12: Debian 12's own kernel)
#        XF_VERBOSE=1    show the whole make output, not only its tail on errors
# Exits non-zero if any part failed to build (all parts are attempted).

set -uo pipefail

XF_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
JOBS=$(nproc 2>/dev/null || echo 2)
XF_DKMS_SERIES=${XF_DKMS_SERIES-6.12}


msg() { echo "build: $*" >&2; }
# glibc's NSS warning for a static link, as umh/Makefile spells it.
NSS_WARNING=$(sed -n 's/^NSS_WARNING := //p' "$XF_TOP/umh/Makefile")
: "${NSS_WARNING:?umh/Makefile defines no NSS_WARNING}"

failed=0

# Run a make command with its output in a log; show the tail on failure (or
# all of it with XF_VERBOSE=1), and a count of compiler warnings otherwise.
run_make() {
	local what=$1 log=$2 rc nwarn
	shift 2
	if [ "${XF_VERBOSE:-0}" = 1 ]; then
		"$@" 2>&1 | tee "$log" >&2
		rc=${PIPESTATUS[0]}
	else
		"$@" >"$log" 2>&1
		rc=$?
	fi
	if [ "$rc" -ne 0 ]; then
		[ "${XF_VERBOSE:-0}" = 1 ] || tail -n 40 "$log" >&2
		msg "FAILED: $what (rc $rc, log: $log)"
		return 1
	fi
	# Not counted: glibc's warning that libnl's getaddrinfo() and
	# getprotoby*() need NSS at run time, in code the static helper never
	# runs (umh/Makefile drops it too; kbuild's link of it shows it).
	nwarn=$(grep 'warning:' "$log" | grep -vc "$NSS_WARNING")
	if [ "$nwarn" -gt 0 ]; then
		msg "$what: $nwarn compiler warning(s):"
		grep 'warning:' "$log" | grep -v "$NSS_WARNING" | head -n 20 >&2
	fi
	msg "$what: ok"
}

build_user() {
	local logdir=$XF_TOP/.cache/build
	mkdir -p "$logdir"
	if [ -f "$XF_TOP/umh/Makefile" ]; then
		run_make "user space: umh" "$logdir/umh.log" make -C "$XF_TOP" -j"$JOBS" umh ||
			failed=1
		# the deliberately wrong datapaths of test_21_diff_mutants
		run_make "user space: umh (mutant test builds)" \
			"$logdir/umh-mutants.log" make -C "$XF_TOP/umh" -j"$JOBS" mutants ||
			failed=1
		# test_44_fuzz's helper that damages some of its replies
		run_make "user space: umh (reply mangling test build)" \
			"$logdir/umh-mangle.log" make -C "$XF_TOP/umh" -j"$JOBS" mangle ||
			failed=1
	else
		msg "umh/Makefile does not exist (yet): helper not built"
	fi
	if [ -f "$XF_TOP/tools/xdp-flow/Makefile" ]; then
		run_make "user space: cli" "$logdir/cli.log" make -C "$XF_TOP" -j"$JOBS" cli ||
			failed=1
	else
		msg "tools/xdp-flow/Makefile does not exist (yet): CLI not built"
	fi
	# test_44_fuzz's generic netlink fuzzer
	run_make "user space: fuzz_genl" "$logdir/fuzz.log" make -C "$XF_TOP" fuzz ||
		failed=1
	# The tests' Python modules compiled here: in a guest the repository
	# is read-only, and each import would compile them anew.
	# Debian's python3, the one the guests run.
	/usr/bin/python3 -m compileall -q "$XF_TOP/selftests" "$XF_TOP/bench" >/dev/null ||
		msg "python3 -m compileall failed: the guests compile the tests' modules at each import"
}

build_module() {
	local series=$1 envf=$XF_TOP/.cache/kernels/$1/env
	local dst=$XF_TOP/.cache/build/$1

	if [ ! -f "$envf" ]; then
		msg "no kernel for series $series: run selftests/vm/setup.sh $series first"
		failed=1
		return
	fi
	if [ ! -f "$XF_TOP/net/xdp_flow/Makefile" ] && [ ! -f "$XF_TOP/net/xdp_flow/Kbuild" ]; then
		msg "net/xdp_flow/ has no Makefile (yet): module not built for $series"
		return
	fi
	(
		# shellcheck disable=SC1090
		. "$envf"
		mkdir -p "$dst/net/xdp_flow" "$dst/include"
		# Copy sources only (keep the copy's objects; mtimes are kept, so
		# make rebuilds only what changed; vanished sources go away).
		local excl=(--exclude='*.o' --exclude='*.ko' --exclude='*.mod'
			    --exclude='*.mod.c' --exclude='*.cmd' --exclude='*.order'
			    --exclude=Module.symvers --exclude='.tmp_versions/')
		rsync -a --delete "${excl[@]}" "$XF_TOP/net/xdp_flow/" "$dst/net/xdp_flow/" &&
		rsync -a --delete "${excl[@]}" "$XF_TOP/include/" "$dst/include/" ||
			{ msg "copying sources to $dst failed"; exit 1; }
		rm -f "$dst/net/xdp_flow/xdp_flow.ko"
		run_make "module for $series ($KVER)" "$dst/module.log" \
			bash "$XF_TOP/selftests/vm/kmake.sh" "$series" \
			M="$dst/net/xdp_flow" -j"$JOBS" \
			XDP_FLOW_UMH="$XF_TOP/umh/xdp_flow_umh" modules || exit 1
		[ -f "$dst/net/xdp_flow/xdp_flow.ko" ] ||
			{ msg "make succeeded but $dst/net/xdp_flow/xdp_flow.ko is missing"; exit 1; }
		msg "$dst/net/xdp_flow/xdp_flow.ko"
		# Installed into the guest kernel's module tree, as users
		# install it, so that `modprobe xdp_flow` finds it in the guest.
		install -D -m 0644 "$dst/net/xdp_flow/xdp_flow.ko" \
			"$ROOT/lib/modules/$KVER/updates/xdp_flow.ko" &&
			depmod -b "$ROOT" "$KVER" ||
			{ msg "installing xdp_flow.ko into $ROOT/lib/modules/$KVER failed"; exit 1; }
		msg "installed: $ROOT/lib/modules/$KVER/updates/xdp_flow.ko"
	) || failed=1
}

# The patched kernel gets the module as the series' patches 3 to 6 build
# it: in the kernel's tree, by kbuild, its helper included
# (drivers/mkseries.sh makes them from this checkout). The tree keeps the
# copy it has applied, to take it out again when the next one differs.
build_intree() {
	local envf=$XF_TOP/.cache/kernels/patched/env
	local out=$XF_TOP/.cache/build/patched-series

	if [ ! -f "$envf" ]; then
		msg "no kernel for series patched: run selftests/vm/setup.sh patched first"
		failed=1
		return
	fi
	(
		SOURCE=
		# shellcheck disable=SC1090
		. "$envf"
		local tree=$BUILDROOT$KDIR new old ko
		[ -n "$SOURCE" ] ||
			{ msg "$envf names no SOURCE: run selftests/vm/setup.sh patched again"; exit 1; }
		bash "$XF_TOP/drivers/mkseries.sh" "$SOURCE" "$out" >"$out.log" 2>&1 ||
			{ cat "$out.log" >&2; msg "drivers/mkseries.sh failed"; exit 1; }
		# Patches 3 to 6 add net/xdp_flow/, each file in one of them:
		# applied and taken out as one.
		new=$out/intree.patch
		cat "$out"/000[3-9]-*.patch >"$new" ||
			{ msg "drivers/mkseries.sh wrote no patch 3 to 6 into $out"; exit 1; }
		old=$tree/xdp_flow-intree.patch
		if ! cmp -s "$new" "$old"; then
			if [ -f "$old" ]; then
				patch -d "$tree" -p1 -R -s <"$old" >/dev/null ||
					{ msg "cannot take the previous patches 3 to 6 out of $tree"; exit 1; }
				rm -f "$old"
			fi
			patch -d "$tree" -p1 -s <"$new" ||
				{ msg "$(basename "$new") does not apply to $tree"; exit 1; }
			cp "$new" "$old"
		fi
		if ! grep -qx 'CONFIG_XDP_FLOW=m' "$tree/.config"; then
			"$tree/scripts/config" --file "$tree/.config" -m XDP_FLOW &&
			bash "$XF_TOP/selftests/vm/kmake.sh" patched -s olddefconfig ||
				{ msg "configuring XDP_FLOW in $tree failed"; exit 1; }
			grep -qx 'CONFIG_XDP_FLOW=m' "$tree/.config" ||
				{ msg "Kconfig refused XDP_FLOW=m in $tree (clang, bpftool, libbpf, libnl in the build root?)"; exit 1; }
		fi
		ko=$tree/net/xdp_flow/xdp_flow.ko
		rm -f "$ko"
		run_make "module for patched ($KVER), in-tree" "$out/module.log" \
			bash "$XF_TOP/selftests/vm/kmake.sh" patched -j"$JOBS" \
			net/xdp_flow/xdp_flow.ko || exit 1
		[ -f "$ko" ] || { msg "make succeeded but $ko is missing"; exit 1; }
		# Where the kernel's own modules are, and nothing in updates/
		# to take precedence.
		rm -f "$ROOT/lib/modules/$KVER/updates/xdp_flow.ko"
		install -D -m 0644 "$ko" "$ROOT/lib/modules/$KVER/kernel/net/xdp_flow/xdp_flow.ko" &&
			depmod -b "$ROOT" "$KVER" ||
			{ msg "installing xdp_flow.ko into $ROOT/lib/modules/$KVER failed"; exit 1; }
		msg "installed: $ROOT/lib/modules/$KVER/kernel/net/xdp_flow/xdp_flow.ko"
	) || failed=1
}

# build_dkms <series>: what `make dkms` does on a user's machine, up to the
# build, for the series' kernel with its compiler (kmake.sh --run):
# `make dkms-src` into .cache/dkms/<series>/src, then `dkms add` and
# `dkms build` with their tree in .cache/dkms/<series>/tree. The guest's
# test_38_dkms runs `dkms install` from there.
build_dkms() {
	local series=$1 t=$XF_TOP/.cache/dkms/$1 ver

	[ -f "$XF_TOP/.cache/kernels/$series/env" ] || return
	ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$XF_TOP/dkms.conf")
	rm -rf "$t" && mkdir -p "$t/tree" "$t/src" &&
		make -s -C "$XF_TOP" dkms-src DKMS_SRC="$t/src/xdp_flow-$ver" ||
		{ msg "FAILED: dkms sources for $series in $t"; failed=1; return; }
	# As from a shell, not from make test's make (the Makefile's dkms
	# target says why).
	# shellcheck disable=SC2016
	run_make "dkms build for $series" "$t/dkms.log" \
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		bash "$XF_TOP/selftests/vm/kmake.sh" --run "$series" sh -c '
			dkms add -m xdp_flow -v "$1" --dkmstree "$2/tree" \
				--sourcetree "$2/src" &&
			dkms build -m xdp_flow -v "$1" -k "$KVER" \
				--kernelsourcedir "$KDIR" --dkmstree "$2/tree" \
				--sourcetree "$2/src"' sh "$ver" "$t" || failed=1
}

[ "${XF_SKIP_USER:-0}" = 1 ] || build_user
for s in "$@"; do
	if [ "$s" = patched ]; then
		build_intree
	else
		build_module "$s"
	fi
	case " $XF_DKMS_SERIES " in *" $s "*) build_dkms "$s" ;; esac
done
exit $failed
