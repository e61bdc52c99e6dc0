# SPDX-License-Identifier: GPL-2.0
#
# What a kernel version has, for the harness on the host (selftests/run.sh,
# by the version of a series' kernel) and in the guest
# (selftests/guest/run.sh, by uname -r) alike.

# kver_has_tcx <version>: true when the kernel has tcx (6.6 on), which
# xdp_flow's TC hook attaches through (and which auto picks on a veth).
kver_has_tcx()
{
	[ "$(printf '%s\n' 6.6 "${1%%-*}" | sort -V | head -n 1)" = 6.6 ]
}
