#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module as dkms installs it. `make dkms` on a user's machine is
# `make dkms-src`, `dkms add` and `dkms install`; selftests/vm/build.sh did
# the first steps for this kernel up to `dkms build` (in
# .cache/dkms/<series>, with the compiler the kernel was built with).
# Here `dkms install` puts that build into this kernel's module tree
# (updates/dkms), the rig's own xdp_flow.ko is taken out of it, and
# `modprobe xdp_flow` loads dkms's module, whose embedded helper comes up
# and runs a drop rule in the datapath (hardware counters).
# The guest's module tree is the host's, read-only: a tree on a tmpfs with
# the modules the test loads takes its place (and what dkms writes), and
# goes at the end.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=30
KVER=$(uname -r)
T=$XF_ROOT/.cache/dkms/$XF_SERIES
VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$XF_ROOT/dkms.conf")
W=$(mktemp -d /tmp/xf_dkms.XXXXXX)
MODLINK=/lib/modules/$KVER
MODDIR=$(readlink -f "$MODLINK")

cleanup()
{
	xf_test_cleanup
	ln -sfn "$MODDIR" "$MODLINK"
	mountpoint -q "$W" && umount "$W"
	rm -rf "$W"
}
trap cleanup EXIT

# selftests/vm/build.sh runs dkms for XF_DKMS_SERIES only (time).
if [ ! -d "$T" ]; then
	log_skip "dkms install, then modprobe and a rule offloaded" \
		"dkms built for other series than $XF_SERIES (XF_DKMS_SERIES)"
	exit "$EXIT_STATUS"
fi

RET=0
command -v dkms >/dev/null
check_err $? "no dkms command (selftests/vm/setup.sh installs it)"
[ -n "$VERSION" ] && [ -d "$T/tree/xdp_flow/$VERSION/$KVER" ]
check_err $? "no dkms build of xdp_flow $VERSION for $KVER in $T (selftests/vm/build.sh $XF_SERIES)"
# mod_tree <dir>: a module tree for this kernel in <dir> with the modules
# this test loads (and what they need), the rig's xdp_flow.ko left out.
# dkms install runs depmod over the tree, which reads every module in it:
# over Debian's whole tree (4,000 compressed modules read over 9p) that
# took 90 s of this test's 190 in the emulated guest.
mod_tree()
{
	local m rel

	mkdir -p "$1" || return 1
	for m in modules.order modules.builtin modules.builtin.modinfo; do
		[ -e "$MODDIR/$m" ] && { cp "$MODDIR/$m" "$1/" || return 1; }
	done
	# xdp_flow: what the rig's module needs, dkms's will need it too
	for m in $(modprobe --show-depends -a xdp_flow cls_flower act_gact \
			act_mirred sch_ingress veth | awk '$1 == "insmod" { print $2 }'); do
		m=$(readlink -f "$m")
		rel=${m#"$MODDIR"/}
		case $rel in
		/*|updates/xdp_flow.ko*) continue ;;
		esac
		mkdir -p "$1/${rel%/*}" && cp "$m" "$1/$rel" || return 1
	done
}

if [ $RET -eq 0 ]; then
	# dkms writes into its tree (a copy of the rig's) and the module
	# tree: both on a tmpfs, the module tree with only what this test
	# loads (mod_tree).
	mount -t tmpfs tmpfs "$W" &&
		cp -a "$T/tree" "$W/tree" &&
		mod_tree "$W/modules" &&
		ln -sfn "$W/modules" "$MODLINK"
	check_err $? "cannot make a writable module tree in $W"
fi
log_setup "setup: dkms's build of xdp_flow $VERSION for $KVER, a writable module tree"
[ $RET -eq 0 ] || exit 1

RET=0
out=$(dkms install -m xdp_flow -v "$VERSION" -k "$KVER" \
	--dkmstree "$W/tree" --sourcetree "$T/src" 2>&1)
check_err $? "dkms install failed: $(echo "$out" | tail -n 5)"
f=$(modinfo -F filename xdp_flow 2>/dev/null)
[ "$f" = "$MODLINK/updates/dkms/xdp_flow.ko" ] ||
	[ "$f" = "$MODLINK/updates/dkms/xdp_flow.ko.xz" ] ||
	[ "$f" = "$MODLINK/updates/dkms/xdp_flow.ko.zst" ]
check_err $? "modprobe would load '$f', not dkms's updates/dkms/xdp_flow.ko"
st=$(dkms status -m xdp_flow -v "$VERSION" -k "$KVER" --dkmstree "$W/tree" 2>&1)
[[ "$st" == *installed* ]]
check_err $? "dkms status: '$st', not installed"
log_test "dkms install: xdp_flow $VERSION installed for $KVER under updates/dkms ($st)"
[ $RET -eq 0 ] || exit 1

RET=0
xf_test_setup || exit 1
xf_enable_xfv0 &&
	tc filter add dev xfv0 ingress pref 1 protocol ip flower \
		dst_ip 10.0.2.1 action drop
check_err $? "cannot enable xfv0 or add the drop rule"
st=$(tc_hw_state "" xfv0 1)
[ "$st" = in_hw ]
check_err $? "the rule shows $st, not in_hw"
send_expect xfa 10.0.2.1 $N -- hw:xfv0/1+$N udp:xfb/veth_b+0
log_test "modprobe xdp_flow loads dkms's module; its helper runs a drop rule in the datapath ($N hardware packets, none delivered)"

exit $EXIT_STATUS
