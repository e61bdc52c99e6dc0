#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run make in a guest kernel series' build tree (prepared by
# selftests/vm/setup.sh), with the compiler that kernel was built with:
#   - Debian 12's kernels (6.1, 6.12): here, with this machine's gcc;
#   - newer kernels (Debian 13's, built with gcc 14 and pahole 1.30): in
#     the Debian 13 build root named by the series' env (BUILDROOT), with
#     the repository bound at its own path there, so that M= and every
#     other path under the repository means the same inside and out.
#
# Usage: selftests/vm/kmake.sh <series> [make arguments...]
#        (runs make -C $KDIR <make arguments>)
#        selftests/vm/kmake.sh --run <series> <command> [arguments...]
#        (runs the command there, with the series' KVER and KDIR in its
#        environment)

set -euo pipefail

XF_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

usage() {
	echo "usage: $0 <series> [make arguments...]" >&2
	echo "       $0 --run <series> <command> [arguments...]" >&2
	exit 2
}
run=0
if [ "${1:-}" = --run ]; then
	run=1
	shift
	[ $# -ge 2 ] || usage
fi
[ $# -ge 1 ] || usage
envf=$XF_TOP/.cache/kernels/$1/env
shift
if [ ! -f "$envf" ]; then
	echo "kmake: no kernel for that series ($envf missing): run selftests/vm/setup.sh first" >&2
	exit 2
fi
BUILDROOT=
# shellcheck disable=SC1090
. "$envf"

if [ $run = 0 ]; then
	set -- make -C "$KDIR" "$@"
fi
if [ -z "$BUILDROOT" ]; then
	KVER=$KVER KDIR=$KDIR exec "$@"
fi

# The mounts live in a mount namespace of their own: they go when make
# ends, however it ends. objtool reads /proc.
mkdir -p "$BUILDROOT$XF_TOP"
export KVER KDIR
exec unshare --mount --propagation private bash -c '
	set -e
	root=$1 top=$2
	shift 2
	mount -t proc proc "$root/proc"
	mount --bind "$top" "$root$top"
	exec chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		LC_ALL=C.UTF-8 KVER="$KVER" KDIR="$KDIR" "$@"' \
	kmake "$BUILDROOT" "$XF_TOP" "$@"
