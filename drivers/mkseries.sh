#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Writes the whole patch series, as netdev takes it, into OUT:
#
#   drivers/mkseries.sh SOURCE OUT
#
# SOURCE is Debian's linux-source tarball (linux-source-7.3.tar.xz) or an
# unpacked tree of it. Patches 1 and 2 are drivers/patches/*.patch;
# patches 3 to 6, which add net/xdp_flow/ to the tree, are made here from
# the module's and the helper's sources as they are in this checkout (so
# they are never out of date, and never kept twice), with the in-tree
# glue in the top-level Kconfig and their messages in
# drivers/intree/000[3-6].msg.
set -euo pipefail

die() { echo "mkseries: $*" >&2; exit 1; }

[ $# -eq 2 ] || die "usage: $0 SOURCE OUT"
src=$1
out=$2
top=$(cd "$(dirname "$0")/.." && pwd)
patches=("$top"/drivers/patches/*.patch)
[ -e "${patches[0]}" ] || die "no patches in $top/drivers/patches"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Patch 3 is the first patch's author's, and signed off by them.
author=$(sed -n 's/^From: //p' "${patches[0]}" | head -n 1)
[ -n "$author" ] || die "${patches[0]} has no From: line"
git=(git -C "$tmp/linux" -c "user.name=${author% <*}"
     -c "user.email=$(sed 's/.*<\(.*\)>$/\1/' <<<"$author")"
     -c commit.gpgsign=false)

# Only the files the series touches: the base commit holds them as the
# tree has them, so that each patch's index line names the tree's blob.
mapfile -t files < <({ sed -n 's|^diff --git a/\([^ ]*\) .*|\1|p' "${patches[@]}"
		       printf '%s\n' net/Kconfig net/Makefile MAINTAINERS \
			      Documentation/networking/index.rst; } | sort -u)
mkdir -p "$tmp/linux"
if [ -d "$src" ]; then
	for f in "${files[@]}"; do
		[ -f "$src/$f" ] || die "$src has no $f"
		mkdir -p "$tmp/linux/$(dirname "$f")"
		cp "$src/$f" "$tmp/linux/$f"
	done
else
	# Debian names the top directory as the tarball.
	base=$(basename "$src" .tar.xz)
	tar -xJf "$src" -C "$tmp" "${files[@]/#/$base/}" ||
		die "$src lacks a file the series touches"
	cp -r "$tmp/$base/." "$tmp/linux/"
fi
"${git[@]}" init -q
"${git[@]}" add -A
"${git[@]}" commit -q -m base
"${git[@]}" am -q "${patches[@]}" || die "drivers/patches do not apply to $src"

# Patches 3 to 6 add net/xdp_flow/ to the tree, one part each: the uapi
# header (with the MAINTAINERS entry), the BPF datapath, the helper (both
# under net/xdp_flow/umh/), and the module with what builds and wires it
# all in, and its documentation. Files are copied from this checkout, the
# helper's without its out-of-tree Makefile and README.
L=$tmp/linux
date=$(sed -n 's/^Date: //p' "${patches[-1]}" | head -n 1)
# The datapath: its program and its headers (git's patterns, not the
# shell's; the skeletons the build makes there are not tracked).
DATAPATH=(umh/xdp_flow.bpf.c 'umh/xdp_flow_*.h')

# intree_commit <message>: commit the tree's changes as the next patch.
NINTREE=0
intree_commit() {
	"${git[@]}" add -A
	GIT_AUTHOR_DATE=$date "${git[@]}" commit -q -s -F "$top/drivers/intree/$1"
	NINTREE=$((NINTREE + 1))
}

# copy <from> <to> <file>...: tracked files of this checkout into the tree.
copy() {
	local from=$1 to=$2 f

	shift 2
	for f in "$@"; do
		mkdir -p "$(dirname "$L/$to${f#"$from"}")"
		cp "$top/$f" "$L/$to${f#"$from"}"
	done
}

tracked() { (cd "$top" && git ls-files -- "$@"); }

mapfile -t f < <(tracked include/uapi/linux/xdp_flow.h)
copy "" "" "${f[@]}"
grep -q '^XDP SOCKETS (AF_XDP)$' "$L/MAINTAINERS" ||
	die "MAINTAINERS: no XDP SOCKETS entry to put ours before"
entry=$(printf '%s\n' "XDP FLOW OFFLOAD (xdp_flow)" "M:	$author" \
	"L:	netdev@vger.kernel.org" "L:	bpf@vger.kernel.org" "S:	Maintained" \
	"F:	Documentation/networking/xdp_flow.rst" \
	"F:	include/uapi/linux/xdp_flow.h" "F:	net/xdp_flow/" "")
# $(...) took the entry's last newline: the blank line after it is printed.
awk -v entry="$entry" '/^XDP SOCKETS \(AF_XDP\)$/ { print entry; print "" } { print }' \
	"$L/MAINTAINERS" >"$tmp/MAINTAINERS" && mv "$tmp/MAINTAINERS" "$L/MAINTAINERS"
intree_commit 0003.msg

mapfile -t f < <(tracked "${DATAPATH[@]}")
copy umh/ net/xdp_flow/umh/ "${f[@]}"
intree_commit 0004.msg

mapfile -t f < <(tracked 'umh/*.c' 'umh/*.h' | grep -vxF -f <(tracked "${DATAPATH[@]}"))
copy umh/ net/xdp_flow/umh/ "${f[@]}"
intree_commit 0005.msg

mapfile -t f < <(tracked net/xdp_flow)
copy "" "" "${f[@]}"
cp "$top/Kconfig" "$L/net/xdp_flow/Kconfig"
grep -q '^source "net/xdp/Kconfig"$' "$L/net/Kconfig" ||
	die "net/Kconfig: no 'source \"net/xdp/Kconfig\"' to put ours after"
sed -i '/^source "net\/xdp\/Kconfig"$/a source "net/xdp_flow/Kconfig"' "$L/net/Kconfig"
grep -q '^obj-$(CONFIG_XDP_SOCKETS)' "$L/net/Makefile" ||
	die "net/Makefile: no CONFIG_XDP_SOCKETS line to put ours after"
sed -i '/^obj-$(CONFIG_XDP_SOCKETS)/a obj-$(CONFIG_XDP_FLOW)\t\t+= xdp_flow/' "$L/net/Makefile"
# The design document, in the networking book's list after its XDP pages.
copy "" "" Documentation/networking/xdp_flow.rst
idx=$L/Documentation/networking/index.rst
grep -q '^   xdp-rx-metadata$' "$idx" ||
	die "Documentation/networking/index.rst: no xdp-rx-metadata to put ours after"
awk '{ print } /^   xdp-rx-metadata$/ { print "   xdp_flow" }' "$idx" >"$tmp/index.rst" &&
	mv "$tmp/index.rst" "$idx"
intree_commit 0006.msg

mkdir -p "$out"
rm -f "$out"/*.patch
"${git[@]}" format-patch -q -n -o "$(cd "$out" && pwd)" HEAD~$((${#patches[@]} + NINTREE))
ls "$out"/*.patch
