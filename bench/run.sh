#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: every benchmark in one run, then one results table.
#   1. selftests/vm/setup.sh and build.sh for the guest kernel (packages,
#      kernel, module, helper), bench/ programs, matplotlib in the venv;
#   2. the host: bench/host/bench_dp, the datapath's cost through
#      BPF_PROG_TEST_RUN on the real CPU; bench/host/bench_miss.sh, the
#      miss path (traffic no rule matches, over veth, xdp_flow's hooks
#      against nothing attached); bench/host/bench_peer.sh, the kernel's
#      two paths into a container's veth;
#   3. one guest boot: bench/guest_bench.py, the seed scenario, the
#      control plane and the miss path, all configurations in the same
#      boot;
#   4. bench/report.py: results.md, results.csv and PNG plots.
# Results go to bench/results/ (not committed; the README carries the
# table of the last run that was recorded).
#
# Env: XF_BENCH_SERIES  guest kernel (default 6.12)
#      XF_BENCH_QUICK=1 fewer repetitions (a smoke run, not for figures)
#      XF_BENCH_HOST=0 / XF_BENCH_GUEST=0  skip a half

set -uo pipefail
XF_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$XF_TOP" || exit 1
series=${XF_BENCH_SERIES:-6.12}
out=$XF_TOP/bench/results
quick=${XF_BENCH_QUICK:-0}
rc=0

msg() { echo "bench: $*" >&2; }

bash selftests/vm/setup.sh "$series" </dev/null || { msg "setup failed"; exit 1; }
bash selftests/vm/build.sh "$series" </dev/null || { msg "build failed"; exit 1; }
make -s -C bench/host && make -s -C bench || { msg "cannot build bench/"; exit 1; }
venv=$XF_TOP/.cache/venv
if ! "$venv/bin/python3" -c 'import matplotlib' 2>/dev/null; then
	msg "installing matplotlib into $venv"
	"$venv/bin/pip" install -q matplotlib </dev/null ||
		msg "no matplotlib: the report comes without plots"
fi

rm -rf "$out"
mkdir -p "$out" || exit 1

if [ "${XF_BENCH_HOST:-1}" = 1 ]; then
	msg "host: datapath cost (bench_dp)"
	args=()
	[ "$quick" = 1 ] && args+=(--quick)
	bench/host/bench_dp "${args[@]}" >"$out/host.csv" || { msg "bench_dp failed"; rc=1; }
	msg "host: the miss path (bench_miss.sh)"
	XF_BENCH_QUICK=$quick bash bench/host/bench_miss.sh "$out" </dev/null ||
		{ msg "bench_miss.sh failed"; rc=1; }
	msg "host: the two paths into a container's veth (bench_peer.sh)"
	XF_BENCH_QUICK=$quick bash bench/host/bench_peer.sh "$out" </dev/null ||
		{ msg "bench_peer.sh failed"; rc=1; }
fi

if [ "${XF_BENCH_GUEST:-1}" = 1 ]; then
	msg "guest $series: seed scenario and control plane (guest_bench.py)"
	mkdir -p "$out/guest"
	XF_RESULTS=$out/guest XF_BENCH_QUICK=$quick \
		bash selftests/vm/run-guest.sh "$series" bash -c \
		'mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
		 exec .cache/venv/bin/python3 bench/guest_bench.py "$XF_RESULTS"' ||
		{ msg "the guest benchmark failed"; rc=1; }
	cp "$out"/guest/*.csv "$out"/ 2>/dev/null
fi

. .cache/kernels/"$series"/env
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
machine="Machine: $cpu, $(nproc) CPUs; host kernel $(uname -r) (datapath figures);
guest kernel $KVER under QEMU TCG emulation, 2 vCPUs (guest figures: compare
only as ratios within this run). $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD)."
"$venv/bin/python3" bench/report.py "$out" "$machine" || rc=1
msg "results in $out (results.md, results.csv, *.png)"
exit $rc
