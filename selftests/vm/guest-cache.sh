#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs INSIDE a guest booted by selftests/vm/run-guest.sh, first thing
# (sourced, from the repository's root): serves the host's /usr and this
# repository from the guest's page cache.
#
# virtme-ng mounts the host's root over 9p without a cache: every exec,
# every open and stat of a file under /usr is a round trip to QEMU, and
# under emulation the tests' thousands of short processes (ip, tc, python3,
# the xdp-flow command) spend much of their time there (python3 -c "import
# socket" 2.2 s against 1.2 s cached, `ip -V` 0.40 s against 0.26 s, in a
# 6.12 guest on 6 December 2026). run-guest.sh exports /usr a second time,
# read-only, as 9p tag xfusr; mounted here with cache=loose, and a
# throwaway overlay of it put over the directories the tests read, so
# that they stay writable as virtme-ng's own overlays leave them. The
# repository comes as tag xfrepo, mounted over its own path with the
# results folder (XF_RESULTS, the guest's one writable 9p mount) moved
# back on top of it. The host changes neither while a guest runs
# (setup.sh's packages and build.sh's binaries come first), which is what
# cache=loose assumes.
#
# Best effort: where anything fails, the guest goes on uncached, with a
# line saying so.

XF_CACHE_TAG=xfusr
XF_CACHE_DIRS="bin sbin lib/x86_64-linux-gnu share $(cd /usr && echo lib/python3*)"

xf_cache_usr()
{
	local lower=/run/xf-usr up=/run/xf-usr-up d n=0

	xf_has_tag "$XF_CACHE_TAG" || return 0
	mkdir -p "$lower" "$up" &&
	mount -t tmpfs xf-usr-up "$up" &&
	mount -t 9p -o ro,trans=virtio,version=9p2000.L,access=any,msize=524288,cache=loose \
		"$XF_CACHE_TAG" "$lower" || {
		echo "# guest-cache: cannot mount $XF_CACHE_TAG: /usr stays uncached"
		return 0
	}
	for d in $XF_CACHE_DIRS; do
		[ -d "$lower/$d" ] && [ -d "/usr/$d" ] || continue
		mkdir -p "$up/$d/u" "$up/$d/w" &&
		mount -t overlay "xf-usr-$n" \
			-o "lowerdir=$lower/$d,upperdir=$up/$d/u,workdir=$up/$d/w" \
			"/usr/$d" ||
			echo "# guest-cache: /usr/$d stays uncached"
		n=$((n + 1))
	done
}

xf_has_tag()
{
	grep -qxF "$1" /sys/bus/virtio/drivers/9pnet_virtio/*/mount_tag 2>/dev/null
}

xf_cache_repo()
{
	local res=/run/xf-res

	xf_has_tag xfrepo && [ -n "${XF_ROOT:-}" ] || return 0
	if [ -n "${XF_RESULTS:-}" ] && mountpoint -q "$XF_RESULTS"; then
		mkdir -p "$res" && mount --move "$XF_RESULTS" "$res" || {
			echo "# guest-cache: cannot move $XF_RESULTS: the repository stays uncached"
			return 0
		}
	else
		res=
	fi
	mount -t 9p -o ro,trans=virtio,version=9p2000.L,access=any,msize=524288,cache=loose \
		xfrepo "$XF_ROOT" ||
		echo "# guest-cache: cannot mount xfrepo: the repository stays uncached"
	if [ -n "$res" ] && ! mount --move "$res" "$XF_RESULTS"; then
		echo "# guest-cache: cannot move the results back to $XF_RESULTS"
		return 1
	fi
	# the cached view from here on
	cd "$XF_ROOT" || return 1
}

xf_cache_usr
xf_cache_repo
