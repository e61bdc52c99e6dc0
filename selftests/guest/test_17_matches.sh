#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Each offloaded flower match on its own, with a known frame in and the
# expected frame out (selftests/diff/targeted.py): the rule is in_hw, the
# frame that meets it leaves by the redirect target byte for byte, counted
# as one hardware packet, and the frame that differs in that field goes up
# the stack.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

trap 'diff_cleanup 1' EXIT

diff_setup 1 "module, helper" || exit 1
XF_DEV_HOOK=$(xf_dev_hook xda0) python3 "$XF_ROOT/selftests/diff/targeted.py"
