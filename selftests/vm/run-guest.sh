#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a Debian guest kernel (prepared by selftests/vm/setup.sh) with
# virtme-ng, run one command in it as root with the repository root as the
# working directory, and exit with that command's exit code.
#
# Usage: selftests/vm/run-guest.sh <series> <command> [args...]
#        e.g. selftests/vm/run-guest.sh 6.12 selftests/guest/run.sh
#
# The guest's root is the host's file system (read-only, with a throwaway
# overlay); $XF_RESULTS (default .cache/results/<series>) is writable and
# shared with the host.
#
# Env: XF_GUEST_TIMEOUT  seconds before the guest is killed (default 4500;
#                        28800 for the patched kernel)
#      XF_GUEST_MEM      guest memory (default 2G)
#      XF_GUEST_CPUS     guest CPUs (default 2)
#      XF_GUEST_THREADS  multi (default): QEMU emulates each guest CPU on
#                        a host thread of its own; single: all of them on
#                        one (selftests/run.sh's choice when it boots
#                        guests side by side)
#      XF_VNG_OPTS       extra vng options (word-split)
#      XF_RESULTS        results folder shared with the guest
#      XF_GUEST_CACHE    1 (default): the guest reads /usr through a cache
#                        (selftests/vm/guest-cache.sh); 0: uncached
#      CI and the tests' XF_* knobs (XF_FILTER, XF_DIFF_CASES, ...): passed
#      into the guest

set -uo pipefail

XF_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

usage() { echo "usage: $0 <series> <command> [args...]" >&2; exit 2; }
[ $# -ge 2 ] || usage
series=$1
shift

envf=$XF_TOP/.cache/kernels/$series/env
if [ ! -f "$envf" ]; then
	echo "run-guest: no kernel for series '$series' ($envf missing):" \
	     "run selftests/vm/setup.sh $series first" >&2
	exit 2
fi
# shellcheck disable=SC1090
. "$envf"
VENV=$XF_TOP/.cache/venv
if [ ! -x "$VENV/bin/vng" ]; then
	echo "run-guest: no virtme-ng in $VENV: run selftests/vm/setup.sh first" >&2
	exit 2
fi
export PATH=$VENV/bin:$PATH

results=${XF_RESULTS:-$XF_TOP/.cache/results/$series}
mkdir -p "$results"
results=$(cd "$results" && pwd)

# Hardware the emulated machine offers but the tests never use: not loading
# these modules saves seconds of (emulated) boot time.
BLACKLIST=kvm_amd,kvm_intel,kvm,ccp,irqbypass,sr_mod,cdrom,sg,ahci,libahci
BLACKLIST+=,libata,scsi_mod,iTCO_wdt,iTCO_vendor_support,intel_pmc_bxt
BLACKLIST+=,i6300esb,watchdog,evdev,psmouse,serio_raw,pcspkr,i2c_i801
BLACKLIST+=,i2c_smbus,lpc_ich,button,floppy,parport_pc,ppdev,joydev,snd_pcsp
BLACKLIST+=,bochs,drm_vram_helper,crct10dif_pclmul,crc32_pclmul
BLACKLIST+=,ghash_clmulni_intel,sha512_ssse3,sha256_ssse3,sha1_ssse3
BLACKLIST+=,aesni_intel,powernow_k8

# The command run in the guest goes into a script in the shared results
# folder: the kernel command line (which carries vng's --exec) is short and
# mangles some quoting.
q() { printf '%q' "$1"; }

# /usr and the repository a second time, for selftests/vm/guest-cache.sh
# to mount with a cache (XF_GUEST_CACHE=0: not).
cache=${XF_GUEST_CACHE:-1}
cache_opts=()
[ "$cache" = 1 ] && cache_opts=(
	--qemu-opt=-fsdev
	--qemu-opt=local,id=xfusr,path=/usr,security_model=none,readonly=on,multidevs=remap
	--qemu-opt=-device --qemu-opt=virtio-9p-pci,fsdev=xfusr,mount_tag=xfusr
	--qemu-opt=-fsdev
	--qemu-opt=local,id=xfrepo,path=$XF_TOP,security_model=none,readonly=on,multidevs=remap
	--qemu-opt=-device --qemu-opt=virtio-9p-pci,fsdev=xfrepo,mount_tag=xfrepo)

script=$(mktemp "$results/.guest-cmd.XXXXXX")
# The guest creates this first: it tells a guest that never ran the
# command from one whose command failed.
started=$script.started
trap 'rm -f "$script" "$started"' EXIT
{
	echo ": > $(q "$started")"
	echo "export XF_SERIES=$(q "$series") XF_RESULTS=$(q "$results")" \
	     "XF_ROOT=$(q "$XF_TOP") XF_KVER=$(q "$KVER")"
	# CI, and every XF_* knob of the tests (XF_FILTER, XF_DIFF_CASES, ...)
	# but those set above and the host's own paths.
	for v in CI $(compgen -e XF_); do
		case $v in
		XF_SERIES|XF_RESULTS|XF_ROOT|XF_KVER|XF_TOP|XF_KO|XF_UMH|XF_CLI) continue ;;
		esac
		[ -n "${!v+x}" ] && echo "export $v=$(q "${!v}")"
	done
	echo "cd $(q "$XF_TOP") || exit 125"
	[ "$cache" = 1 ] && echo "source selftests/vm/guest-cache.sh || exit 125"
	printf 'exec'
	for a in "$@"; do
		printf ' %s' "$(q "$a")"
	done
	echo
} >"$script"
gcmd="bash $(q "$script")"

# The patched kernel's debug options (KASAN, lockdep, kmemleak) make its
# tests about nine times slower under emulation: its whole suite takes
# hours. The others: three guests side by side took 48 minutes for the
# suite in one CI run and would have taken about 68 in a later one
# (stopped at 55, with some 800 s of tests left on 7.3): the
# emulation's pace varies by day. 75 leaves CI's 90 the set-up and a
# margin.
default_timeout=4500
[ "$series" = patched ] && default_timeout=28800
timeout_s=${XF_GUEST_TIMEOUT:-$default_timeout}
# shellcheck disable=SC2206
extra=(${XF_VNG_OPTS:-})
case ${XF_GUEST_THREADS:-multi} in
multi) ;;
single) extra+=(--qemu-opt=-accel --qemu-opt=tcg,thread=single) ;;
*) echo "run-guest: XF_GUEST_THREADS is multi or single" >&2; exit 2 ;;
esac
# The patched kernel boots with 4-level paging. QEMU's "-cpu max" offers
# LA57, and while the boot CPU's features are detected again
# (identify_cpu() clears them, so pgtable_l5_enabled() is false for a
# moment), KASAN took an interrupt's access to a 5-level direct-map
# address for a wild one: a report at boot (seen on 28 November 2026),
# which turns lockdep off for the whole run. kasan_multi_shot: every KASAN
# report is printed, not only the first.
[ "$series" = patched ] && extra+=(-a "no5lvl kasan_multi_shot")

# stdin from /dev/null: no terminal is needed (or used) in the guest, and
# timeout(1) runs its child outside the terminal's foreground group.
boot()
{
	timeout -k 20 "$timeout_s" \
		vng --run "$VMLINUZ" --force-9p --disable-kvm \
		    -m "${XF_GUEST_MEM:-2G}" --cpus "${XF_GUEST_CPUS:-2}" \
		    --cwd "$XF_TOP" --rwdir="$results" \
		    -a "modprobe.blacklist=$BLACKLIST" -a log_buf_len=16M \
		    "${cache_opts[@]}" "${extra[@]}" \
		    --exec "$gcmd" </dev/null 2>&1 | cat
	return "${PIPESTATUS[0]}"
}

boot
rc=$?
if [ "$rc" = 255 ] && [ ! -e "$started" ]; then
	# Seen once in many boots: vng gave up before the guest ran anything.
	echo "run-guest: vng failed (rc 255) before the guest started; booting again" >&2
	boot
	rc=$?
fi

case $rc in
124|137)
	echo "run-guest: guest $series ($KVER) did not finish within ${timeout_s}s, killed" >&2
	rc=124 ;;
255)
	echo "run-guest: vng failed (rc 255): guest $series ($KVER) did not boot?" >&2 ;;
esac
exit "$rc"
