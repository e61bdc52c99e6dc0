#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A profile of `tc -b` adding 10,000 flower rules to a device with offload
# enabled, in random and in ascending prio order (perf record -a -g, every
# CPU). Run it in a guest:
#
#   XF_RESULTS=/tmp/prof bash selftests/vm/run-guest.sh 6.12 \
#           bash bench/profile_rate.sh
#
# It writes perf.<order>.txt (the top symbols with call chains, then the
# share of each command) into $XF_RESULTS. A diagnostic, not a benchmark:
# perf slows the run down, so its times are not the rate section's.
XF_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$XF_ROOT" || exit 1
export PATH=$XF_ROOT/tools/xdp-flow:$PATH
source selftests/lib.sh
source selftests/guest/lib.sh
source selftests/guest/offload_lib.sh
require_cmd perf
OUT=${XF_RESULTS:-/tmp}
N=${XF_PROFILE_RULES:-10000}

xf_load || { echo "cannot load the module" >&2; exit 1; }
xf_wait_helper 30
ip link add pa type veth peer name pb || exit 1
ip link set pa up
ip link set pb up
for order in random asc; do
	xdp-flow enable dev pa || exit 1
	tc qdisc add dev pa clsact || exit 1
	case $order in
	asc) seq 1 "$N" ;;
	random) seq 1 "$N" | shuf --random-source=<(yes 42) ;;
	esac | awk '{ i = NR - 1; printf "filter add dev pa ingress pref %d protocol ip flower dst_ip 10.%d.%d.%d action drop\n", $1, 100 + int(i / 65536), int(i / 256) % 256, i % 256 }' >"$OUT/rules"
	t0=$EPOCHREALTIME
	perf record -a -g -e cpu-clock -F 499 -o "$OUT/perf.$order.data" -- \
		tc -b "$OUT/rules" >/dev/null 2>&1
	t1=$EPOCHREALTIME
	echo "$order: tc -b took $(echo "$t1 - $t0" | bc) s under perf"
	xdp-flow wait timeout 600
	{
		perf report -i "$OUT/perf.$order.data" --no-children \
			--sort comm,sym --stdio 2>/dev/null | grep -v '^#' |
			grep -v '^$' | head -60
		perf report -i "$OUT/perf.$order.data" --no-children \
			--sort comm --stdio 2>/dev/null | grep -v '^#' |
			grep -v '^$' | head -15
	} >"$OUT/perf.$order.txt"
	rm -f "$OUT/perf.$order.data"
	tc qdisc del dev pa clsact
	xdp-flow disable dev pa
	sleep 2
done
ip link del pa
xf_unload
