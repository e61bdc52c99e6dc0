#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prepare this (Debian 12) machine for building xdp_flow and testing it in
# guests booted from Debian's own kernels:
#   - installs the Debian packages the build and the tests need,
#   - creates a venv with virtme-ng in .cache/venv,
#   - fetches and extracts the 6.1 and 6.12 guest kernels (image, modules,
#     headers, kbuild) into .cache/kernels/<series>/ and writes
#     .cache/kernels/<series>/env (KVER, KDIR, ROOT, VMLINUZ);
#   - for newer kernels (series "newest", or one named like "7.3"): makes a
#     Debian 13 build root with debootstrap, outside the checkout
#     ($XF_BUILDROOT), whose gcc 14 and pahole are what Debian builds
#     those kernels with; resolves the newest amd64 kernel that Debian 13
#     and its backports offer (or the newest of the series named), fetches
#     its image and modules into .cache/kernels/<series>/ and installs its
#     headers into the build root (env: KDIR inside it, BUILDROOT). The
#     series "newest" is also .cache/kernels/newest, a link to it.
#     selftests/vm/kmake.sh builds against any series.
#
# Idempotent; takes about a second when everything is already in place (a
# few more with "newest": the build root's package lists are refreshed).
# Usage: selftests/vm/setup.sh [series...]      (default: 6.1 6.12)
# Env:   XF_SKIP_APT=1      do not install Debian packages
#        XF_SKIP_MODCHECK=1 do not build the throwaway test module
#        XF_BUILDROOT=dir   the Debian 13 build root
#                           (default /var/cache/xdp_flow/trixie-root)

set -euo pipefail

XF_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=$XF_TOP/.cache
export DEBIAN_FRONTEND=noninteractive
APT_OPTS=(-y -q -o DPkg::Lock::Timeout=600 -o Dpkg::Options::=--force-confdef
	  -o Dpkg::Options::=--force-confold)

PACKAGES=(clang llvm libbpf-dev bpftool libnl-3-dev libnl-genl-3-dev libelf-dev
	  zlib1g-dev pkg-config make gcc qemu-system-x86 udev dwarves iproute2
	  ethtool python3-venv busybox-static iperf3 nftables openvswitch-switch
	  tcpdump sparse kmod rsync jq iputils-ping python3-scapy conntrack
	  python3-pyroute2 debootstrap dkms ppp pppoe python3-docutils)

# The Debian 13 build root, and the series used when the newest cannot
# be resolved (no mirror) and none was fetched before.
BR=${XF_BUILDROOT:-/var/cache/xdp_flow/trixie-root}
BR_SUITE=trixie
BR_MIRROR=http://deb.debian.org/debian
BR_PKGS=gcc-14,make,libc6-dev,libelf-dev,dwarves,kmod
# Installed into it afterwards (the root is not made again for them):
# what the helper is built with on Debian 13 (selftests/host/test_clang.sh,
# make dkms for its kernels, the patched kernel's in-tree build).
BR_HELPER_PKGS=(clang llvm bpftool libbpf-dev libnl-3-dev libnl-genl-3-dev
		libelf-dev zlib1g-dev libzstd-dev pkgconf)
BR_DKMS_PKGS=(dkms "${BR_HELPER_PKGS[@]}")
# Debian 13's libelf.a (elfutils 0.192) lacks eu_search_tree_init(), so a
# static helper does not link against it; trixie-backports has a fixed one.
BR_ELFUTILS_MIN=0.193
NEWEST_FALLBACK=7.3

# Debian's container images switch apt's binary cache off, which makes every
# apt-cache call parse all package lists (~0.5 s): keep one of our own.
acache() {
	mkdir -p "$CACHE/apt"
	apt-cache -o Dir::Cache::pkgcache="$CACHE/apt/pkgcache.bin" \
		  -o Dir::Cache::srcpkgcache="$CACHE/apt/srcpkgcache.bin" "$@"
}

msg() { echo "setup: $*" >&2; }
die() { echo "setup: error: $*" >&2; exit 1; }

if [ "$(id -u)" -ne 0 ]; then
	die "must run as root (installs packages, runs depmod on the cache)"
fi

APT_UPDATED=0
apt_update_once() {
	if [ "$APT_UPDATED" = 0 ]; then
		msg "apt-get update"
		apt-get -q -o DPkg::Lock::Timeout=600 update >/dev/null
		APT_UPDATED=1
	fi
}

is_installed() {
	[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

# apt-cache knows a version that could be installed
apt_has() {
	local cand
	cand=$(acache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')
	[ -n "$cand" ] && [ "$cand" != "(none)" ]
}

install_packages() {
	local p missing=() avail=()

	for p in "${PACKAGES[@]}"; do
		is_installed "$p" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0

	msg "missing packages: ${missing[*]}"
	apt_update_once
	for p in "${missing[@]}"; do
		if apt_has "$p"; then
			avail+=("$p")
		else
			msg "warning: package $p is not known to apt, skipping it"
		fi
	done
	[ ${#avail[@]} -eq 0 ] && return 0

	# Service start-ups (openvswitch) are pointless here and may fail
	# without an init system: forbid them during the install only.
	local policy=/usr/sbin/policy-rc.d made_policy=0
	if [ ! -e $policy ]; then
		printf '#!/bin/sh\nexit 101\n' >$policy
		chmod 755 $policy
		made_policy=1
	fi
	msg "apt-get install ${avail[*]}"
	local rc=0
	apt-get "${APT_OPTS[@]}" install --no-install-recommends "${avail[@]}" \
		</dev/null >/tmp/xf-apt-install.log 2>&1 || rc=$?
	[ $made_policy = 1 ] && rm -f $policy
	if [ $rc -ne 0 ]; then
		tail -n 30 /tmp/xf-apt-install.log >&2
		die "apt-get install failed (rc $rc), full log: /tmp/xf-apt-install.log"
	fi
}

setup_venv() {
	local venv=$CACHE/venv
	if [ -x "$venv/bin/vng" ] && [ -x "$venv/bin/virtme-run" ]; then
		return 0
	fi
	msg "creating venv with virtme-ng in $venv"
	rm -rf "$venv"
	mkdir -p "$CACHE"
	# Debian's python (python3-venv), not whatever python3 is first on PATH
	/usr/bin/python3 -m venv "$venv"
	"$venv/bin/pip" install -q --disable-pip-version-check virtme-ng </dev/null \
		|| die "pip install virtme-ng failed"
	[ -x "$venv/bin/vng" ] || die "virtme-ng installed but no vng in $venv/bin"
}

# Print the names of the packages making up one kernel series, one a line:
# image, headers (arch), headers (common), kbuild; first line is KVER.
resolve_series() {
	local series=$1 img kver hdr deps common kbuild

	case $series in
	6.1)
		img=$(acache depends linux-image-amd64 2>/dev/null |
		      awk '/Depends: linux-image-/ {print $2; exit}')
		[ -n "$img" ] || return 1
		kver=${img#linux-image-}
		;;
	6.12)
		img=$(acache pkgnames linux-image-6.12. 2>/dev/null |
		      grep -E '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' |
		      sort -V | tail -n 1)
		[ -n "$img" ] || return 1
		kver=${img#linux-image-}
		kver=${kver%-unsigned}
		;;
	*)
		return 1 ;;
	esac
	hdr=linux-headers-$kver
	apt_has "$hdr" || return 1
	deps=$(acache depends "$hdr" 2>/dev/null | awk '/Depends:/ {print $2}')
	common=$(echo "$deps" | grep -E '^linux-headers-.*-common(-rt)?$' | head -n 1)
	kbuild=$(echo "$deps" | grep -E '^linux-kbuild-' | head -n 1)
	[ -n "$common" ] && [ -n "$kbuild" ] || return 1
	printf '%s\n' "$kver" "$img" "$hdr" "$common" "$kbuild"
}

fetch_series() {
	local series=$1 dir=$CACHE/kernels/$1 names kver pkgs tmp p v deb
	local envf=$dir/env

	if ! names=$(resolve_series "$series"); then
		apt_update_once
		names=$(resolve_series "$series") ||
			die "cannot resolve the Debian packages of kernel series $series"
	fi
	kver=$(echo "$names" | head -n 1)
	mapfile -t pkgs < <(echo "$names" | tail -n +2)

	# versions of the packages: the stamp that says the cache is current
	local stamp=""
	for p in "${pkgs[@]}"; do
		v=$(acache policy "$p" | awk '/Candidate:/ {print $2}')
		stamp+="$p=$v "
	done

	if [ -f "$envf" ] && [ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$stamp" ]; then
		# shellcheck disable=SC1090,SC2153
		. "$envf"
		# shellcheck disable=SC2153
		if [ -f "$VMLINUZ" ] && [ -f "$KDIR/Makefile" ] &&
		   [ -f "$ROOT/lib/modules/$KVER/modules.dep" ]; then
			msg "kernel $series: $KVER (cached)"
			return 0
		fi
	fi

	msg "kernel $series: fetching ${pkgs[*]}"
	tmp=$CACHE/kernels/.$series.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp/debs" "$tmp/root"
	if ! (cd "$tmp/debs" && apt-get -q -o APT::Sandbox::User=root download "${pkgs[@]}" </dev/null >/dev/null); then
		# stale package lists name versions the mirror no longer has
		[ "$APT_UPDATED" = 1 ] && die "apt-get download ${pkgs[*]} failed"
		apt_update_once
		rm -rf "$tmp"
		fetch_series "$series"
		return
	fi
	for deb in "$tmp"/debs/*.deb; do
		dpkg -x "$deb" "$tmp/root"
	done
	rm -rf "$tmp/debs"

	local root=$dir/root
	local kdir=$root/usr/src/linux-headers-$kver
	local vmlinuz=$root/boot/vmlinuz-$kver
	[ -f "$tmp/root/boot/vmlinuz-$kver" ] || die "no vmlinuz-$kver in ${pkgs[0]}"
	[ -f "$tmp/root/usr/src/linux-headers-$kver/Makefile" ] ||
		die "no headers Makefile for $kver"

	# Move into place first: the fixes below must name the final paths.
	rm -rf "$dir"
	mkdir -p "$dir"
	mv "$tmp/root" "$root"
	rm -rf "$tmp"

	# Fix 1: the arch headers' Makefile includes the common headers by an
	# absolute /usr/src path: point it at the extracted copy.
	sed -i "s|^\(include[[:space:]]\+\)/usr/src/|\1$root/usr/src/|" "$kdir/Makefile"
	grep -q "$root/usr/src/" "$kdir/Makefile" ||
		die "could not fix the include in $kdir/Makefile"
	# Absolute symlinks (scripts, tools -> /usr/lib/linux-kbuild-...) would
	# point at the host: rewrite them to point into the extracted tree.
	local l t
	while IFS= read -r -d '' l; do
		t=$(readlink "$l")
		case $t in
		/usr/*|/lib/*) ln -sfn "$root$t" "$l" ;;
		esac
	done < <(find "$root/usr/src" "$root/usr/lib" -type l -print0 2>/dev/null)

	# Fix 2: the image ships no modules.dep.
	depmod -b "$root" "$kver"

	cat >"$envf" <<EOF
# written by selftests/vm/setup.sh
KVER='$kver'
KDIR='$kdir'
ROOT='$root'
VMLINUZ='$vmlinuz'
EOF
	echo "$stamp" >"$dir/stamp"
	msg "kernel $series: $kver ready in $dir"
}

# ---- Kernels from Debian 13, built in a Debian 13 root

# The build root: made once (about 40 s), and again when what it should
# hold changes.
make_buildroot() {
	local want="$BR_SUITE $BR_MIRROR $BR_PKGS" tmp=$BR.tmp

	if [ -f "$BR/.xdp_flow-stamp" ] &&
	   [ "$(cat "$BR/.xdp_flow-stamp")" = "$want" ]; then
		return 0
	fi
	msg "Debian 13 build root: debootstrap $BR_SUITE into $BR"
	rm -rf "$tmp"
	mkdir -p "$(dirname "$BR")"
	if ! debootstrap --variant=minbase --include="$BR_PKGS" "$BR_SUITE" \
			 "$tmp" "$BR_MIRROR" >"$CACHE/debootstrap.log" 2>&1; then
		tail -n 20 "$CACHE/debootstrap.log" >&2
		die "debootstrap $BR_SUITE failed (log: $CACHE/debootstrap.log)"
	fi
	echo "deb $BR_MIRROR $BR_SUITE-backports main" \
		>"$tmp/etc/apt/sources.list.d/backports.list"
	echo "$want" >"$tmp/.xdp_flow-stamp"
	rm -rf "$BR"
	mv "$tmp" "$BR"
	BR_UPDATED=0
}

# Runs a command in the build root, with none of this shell's environment.
br() {
	chroot "$BR" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 "$@"
}

BR_UPDATED=0
br_update_once() {
	[ "$BR_UPDATED" = 1 ] && return 0
	msg "apt-get update in the Debian 13 build root"
	br apt-get -q -o DPkg::Lock::Timeout=600 update \
		>"$CACHE/br-update.log" 2>&1 || return 1
	BR_UPDATED=1
}

# The newest amd64 kernel version in the build root's package lists of
# series $1 ("newest": of any series), e.g. 7.3.4+deb13-amd64.
br_kver() {
	local re

	if [ "$1" = newest ]; then
		re='[0-9]+\.[0-9]+'
	else
		re=${1//./\\.}
	fi
	br apt-cache pkgnames linux-image- 2>/dev/null |
		sed -nE "s/^linux-image-(${re}\.[0-9]+\+deb[0-9]+-amd64)\$/\1/p" |
		sort -V | tail -n 1
}

br_version() {
	br apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}'
}

br_installed() {
	[ "$(br dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

# br_install_missing <what> <package>...: the packages the build root
# lacks, installed (log: .cache/br-install.log).
br_install_missing() {
	local what=$1 p
	local -a missing=()

	shift
	for p in "$@"; do
		br_installed "$p" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	msg "build root: installing ${missing[*]} ($what)"
	br_update_once ||
		die "apt-get update failed in the build root (log: $CACHE/br-update.log)"
	br apt-get -y -q -o DPkg::Lock::Timeout=600 install \
		--no-install-recommends "${missing[@]}" \
		>"$CACHE/br-install.log" 2>&1 ||
		{ tail -n 20 "$CACHE/br-install.log" >&2
		  die "installing ${missing[*]} in $BR failed (log: $CACHE/br-install.log)"; }
}

# br_static_libelf: a libelf.a in the build root that links statically.
br_static_libelf() {
	br dpkg --compare-versions \
		"$(br dpkg-query -W -f='${Version}' libelf-dev 2>/dev/null)" \
		ge "$BR_ELFUTILS_MIN" && return 0
	msg "build root: libelf-dev >= $BR_ELFUTILS_MIN from trixie-backports (the helper links statically)"
	br apt-get -y -q -o DPkg::Lock::Timeout=600 install \
		--no-install-recommends -t trixie-backports libelf-dev \
		>"$CACHE/br-install.log" 2>&1 ||
		{ tail -n 20 "$CACHE/br-install.log" >&2
		  die "installing libelf-dev from trixie-backports in $BR failed"; }
}

fetch_trixie() {
	local series=$1 kver name dir root envf stamp p v deb tmp hdr
	local -a pkgs

	make_buildroot
	if ! br_update_once; then
		msg "warning: apt-get update failed in the build root (log: $CACHE/br-update.log)"
		if [ "$series" = newest ] && [ -f "$CACHE/kernels/newest/env" ]; then
			msg "kernel newest: $(readlink "$CACHE/kernels/newest"), as fetched before"
			return 0
		fi
	fi
	kver=$(br_kver "$series")
	if [ -z "$kver" ] && [ "$series" = newest ]; then
		msg "warning: no kernel in the build root's lists: trying $NEWEST_FALLBACK"
		kver=$(br_kver "$NEWEST_FALLBACK")
	fi
	[ -n "$kver" ] || die "Debian 13 offers no amd64 kernel of series $series"
	name=${kver%%+*}
	name=${name%.*}
	dir=$CACHE/kernels/$name
	root=$dir/root
	envf=$dir/env

	# Debian 13's kernels come as an image, its modules and its base
	# files (config, System.map, modules.builtin); the headers go into
	# the build root.
	pkgs=("linux-binary-$kver" "linux-modules-$kver" "linux-base-$kver")
	hdr=linux-headers-$kver
	stamp=""
	for p in "${pkgs[@]}" "$hdr"; do
		v=$(br_version "$p")
		[ -n "$v" ] && [ "$v" != "(none)" ] ||
			die "kernel $name: Debian 13 has no package $p"
		stamp+="$p=$v "
	done

	if ! br_installed "$hdr"; then
		msg "kernel $name: installing $hdr in the build root"
		if ! br apt-get -y -q -o DPkg::Lock::Timeout=600 install \
				--no-install-recommends "$hdr" \
				>"$CACHE/br-headers.log" 2>&1; then
			tail -n 20 "$CACHE/br-headers.log" >&2
			die "installing $hdr in $BR failed"
		fi
	fi

	br_install_missing "make dkms" "${BR_DKMS_PKGS[@]}"
	br_static_libelf

	if [ -f "$envf" ] && [ "$(cat "$dir/stamp" 2>/dev/null)" = "$stamp" ] &&
	   [ -f "$root/lib/modules/$kver/modules.dep" ] &&
	   [ -f "$root/lib/modules/$kver/vmlinuz" ]; then
		msg "kernel $name: $kver (cached)"
	else
		msg "kernel $name: fetching ${pkgs[*]}"
		tmp=$CACHE/kernels/.$name.tmp
		rm -rf "$tmp" "$BR/var/cache/xdp_flow-debs"
		mkdir -p "$tmp/root" "$BR/var/cache/xdp_flow-debs"
		# shellcheck disable=SC2016
		if ! br sh -c 'cd /var/cache/xdp_flow-debs &&
			       apt-get -q -o APT::Sandbox::User=root download "$@"' \
				sh "${pkgs[@]}" >"$CACHE/br-download.log" 2>&1; then
			tail -n 20 "$CACHE/br-download.log" >&2
			die "downloading ${pkgs[*]} failed"
		fi
		for deb in "$BR"/var/cache/xdp_flow-debs/*.deb; do
			dpkg -x "$deb" "$tmp/root"
		done
		rm -rf "$BR/var/cache/xdp_flow-debs"
		# The modules are in usr/lib/modules; virtme-ng and Debian
		# 12's kmod look in lib/modules: a merged /usr.
		ln -s usr/lib "$tmp/root/lib"
		[ -f "$tmp/root/lib/modules/$kver/vmlinuz" ] ||
			die "no vmlinuz in linux-binary-$kver"
		rm -rf "$dir"
		mkdir -p "$dir"
		mv "$tmp/root" "$root"
		rm -rf "$tmp"
		depmod -b "$root" "$kver"
		cat >"$envf" <<EOF
# written by selftests/vm/setup.sh
KVER='$kver'
KDIR='/usr/src/linux-headers-$kver'
BUILDROOT='$BR'
ROOT='$root'
VMLINUZ='$root/lib/modules/$kver/vmlinuz'
EOF
		echo "$stamp" >"$dir/stamp"
		msg "kernel $name: $kver ready in $dir (modules built in $BR)"
	fi
	if [ "$series" = newest ]; then
		ln -sfn "$name" "$CACHE/kernels/newest"
		msg "kernel newest: $name"
	fi
}

# The patched kernel: Debian's newest linux-source with the series under
# drivers/patches and the configuration in selftests/vm/patched.config,
# built in the Debian 13 build root and kept there, under build/, keyed by
# the source, the patches, the configuration and this recipe; built again
# only when one of them changes. Its image and modules are copied into
# .cache/kernels/patched/root/lib/modules/<kver>, laid out as Debian's
# kernels are here, so that everything else takes it like them.
PATCHED_RECIPE=1
PATCHED_PKGS=(gcc bc bison flex libssl-dev cpio xz-utils python3 patch
	      "${BR_HELPER_PKGS[@]}")

# Runs a command in the build root with /proc mounted (objtool reads it),
# in a mount namespace of its own.
pbr() {
	# shellcheck disable=SC2016
	unshare --mount --propagation private bash -c '
		set -e
		root=$1
		shift
		mount -t proc proc "$root/proc"
		exec chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			LC_ALL=C.UTF-8 "$@"' pbr "$BR" "$@"
}

build_patched() {
	local src srcver key dir b envf kver p line opt val
	local frag=$XF_TOP/selftests/vm/patched.config
	local -a missing

	make_buildroot
	br_update_once ||
		msg "warning: apt-get update failed in the build root (log: $CACHE/br-update.log)"
	src=$(br apt-cache pkgnames linux-source- 2>/dev/null |
	      grep -E '^linux-source-[0-9]+\.[0-9]+$' | sort -V | tail -n 1)
	[ -n "$src" ] || src=linux-source-$NEWEST_FALLBACK
	srcver=$(br_version "$src")
	[ -n "$srcver" ] && [ "$srcver" != "(none)" ] ||
		die "patched kernel: Debian 13 has no $src"
	key=$( { echo "$PATCHED_RECIPE $src $srcver"
		 cat "$XF_TOP"/drivers/patches/*.patch "$frag"; } |
	       sha256sum | cut -c1-16)
	b=/build/patched-$key
	dir=$BR$b
	envf=$CACHE/kernels/patched/env
	# The module and its helper are built in the kernel's tree too.
	br_install_missing "the patched kernel's build" "$src" "${PATCHED_PKGS[@]}"
	br_static_libelf
	if [ -f "$dir/done" ]; then
		kver=$(cat "$dir/done")
		msg "kernel patched: $kver (cached in $dir)"
	else
		msg "kernel patched: $src $srcver with drivers/patches, in $dir"
		rm -rf "$BR"/build/patched-*
		mkdir -p "$dir"
		tar -C "$dir" -xf "$BR/usr/src/$src.tar.xz" ||
			die "cannot unpack $src"
		mv "$dir/$src" "$dir/linux"
		for p in "$XF_TOP"/drivers/patches/*.patch; do
			patch -d "$dir/linux" -p1 -s <"$p" ||
				die "patched kernel: $(basename "$p") does not apply to $src $srcver"
		done
		cp "$frag" "$dir/patched.config"
		pbr make -C "$b/linux" -s x86_64_defconfig &&
		pbr sh -c "cd $b/linux && scripts/kconfig/merge_config.sh -m .config $b/patched.config >/dev/null" &&
		pbr make -C "$b/linux" -s olddefconfig ||
			die "patched kernel: configuration failed"
		missing=()
		while IFS= read -r line; do
			case $line in CONFIG_*=*) ;; *) continue ;; esac
			opt=${line%%=*}
			val=${line#*=}
			if [ "$val" = n ]; then
				! grep -q "^$opt=" "$dir/linux/.config" || missing+=("$line")
			else
				grep -qx "$line" "$dir/linux/.config" || missing+=("$line")
			fi
		done <"$frag"
		[ ${#missing[@]} -eq 0 ] ||
			die "patched kernel: Kconfig did not keep ${missing[*]} (selftests/vm/patched.config)"
		msg "kernel patched: make bzImage modules -j$(nproc) (long; cached afterwards)"
		if ! pbr make -C "$b/linux" -j"$(nproc)" bzImage modules \
				>"$CACHE/patched-build.log" 2>&1; then
			tail -n 30 "$CACHE/patched-build.log" >&2
			die "patched kernel: build failed (log: $CACHE/patched-build.log)"
		fi
		kver=$(pbr make -C "$b/linux" -s kernelrelease)
		pbr make -C "$b/linux" -s INSTALL_MOD_PATH="$b/root" \
			INSTALL_MOD_STRIP=1 modules_install >/dev/null ||
			die "patched kernel: modules_install failed"
		cp "$dir/linux/arch/x86/boot/bzImage" \
			"$dir/root/lib/modules/$kver/vmlinuz"
		echo "$kver" >"$dir/done"
		msg "kernel patched: $kver built"
	fi
	# The guests do not see /var/cache: the image and the modules go
	# into the checkout's cache, as Debian's kernels do.
	mkdir -p "$CACHE/kernels/patched/root"
	rsync -a --delete "$dir/root/" "$CACHE/kernels/patched/root/" ||
		die "patched kernel: cannot copy its modules into $CACHE/kernels/patched"
	cat >"$envf.tmp" <<EOF
# written by selftests/vm/setup.sh
KVER='$kver'
KDIR='$b/linux'
BUILDROOT='$BR'
SOURCE='$BR/usr/src/$src.tar.xz'
ROOT='$CACHE/kernels/patched/root'
VMLINUZ='$CACHE/kernels/patched/root/lib/modules/$kver/vmlinuz'
EOF
	mv "$envf.tmp" "$envf"
}

# Build a throwaway module against the series' headers.
check_module_build() {
	local series=$1 dir=$CACHE/kernels/$1
	[ -f "$dir/modcheck.ok" ] && [ "$dir/modcheck.ok" -nt "$dir/env" ] && return 0
	# shellcheck disable=SC1091
	. "$dir/env"
	local m
	# under the repository: kmake.sh shows it to the build root
	mkdir -p "$CACHE/tmp"
	m=$(mktemp -d "$CACHE/tmp/xf-hello.XXXXXX")
	cat >"$m/hello.c" <<'EOF'
#include <linux/module.h>
#include <linux/init.h>
static int __init hello_init(void) { return 0; }
static void __exit hello_exit(void) { }
module_init(hello_init);
module_exit(hello_exit);
MODULE_LICENSE("GPL");
EOF
	echo 'obj-m := hello.o' >"$m/Makefile"
	if ! bash "$XF_TOP/selftests/vm/kmake.sh" "$series" M="$m" modules \
			>"$m/build.log" 2>&1 ||
	   [ ! -f "$m/hello.ko" ]; then
		tail -n 30 "$m/build.log" >&2
		die "test module does not build against $KVER (log: $m/build.log)"
	fi
	rm -rf "$m"
	touch "$dir/modcheck.ok"
	msg "kernel $series: out-of-tree module builds"
}

main() {
	local series=("$@")
	[ ${#series[@]} -eq 0 ] && series=(6.1 6.12)

	[ "${XF_SKIP_APT:-0}" = 1 ] || install_packages
	setup_venv
	mkdir -p "$CACHE/kernels"
	local s
	for s in "${series[@]}"; do
		case $s in
		6.1|6.12) fetch_series "$s" ;;
		patched) build_patched ;;
		*) fetch_trixie "$s" ;;
		esac
		[ "${XF_SKIP_MODCHECK:-0}" = 1 ] || check_module_build "$s"
	done
}

main "$@"
