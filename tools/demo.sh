#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: prepare this machine (selftests/vm/setup.sh), build for the
# Debian 6.12 guest kernel, boot it and run selftests/guest/demo.sh there.
# Env: XF_DEMO_SERIES (default 6.12; also 6.1, or "newest": the newest
#      kernel Debian 13 and its backports offer, 7.3 today),
#      XF_GUEST_TIMEOUT (see run-guest.sh).

set -uo pipefail
XF_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$XF_TOP" || exit 1
series=${XF_DEMO_SERIES:-6.12}

if [ ! -f selftests/guest/demo.sh ]; then
	echo "demo: selftests/guest/demo.sh does not exist (yet): nothing to show" >&2
	exit 1
fi
bash selftests/vm/setup.sh "$series" </dev/null || { echo "demo: setup failed" >&2; exit 1; }
if [ "$series" = newest ]; then
	series=$(readlink .cache/kernels/newest) || { echo "demo: no newest kernel" >&2; exit 1; }
	echo "demo: the newest kernel: $series"
fi
bash selftests/vm/build.sh "$series" </dev/null || { echo "demo: build failed" >&2; exit 1; }
# as selftests/guest/run.sh does: bpffs where the helper pins
exec bash selftests/vm/run-guest.sh "$series" bash -c \
	'mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	 exec bash selftests/guest/demo.sh'
