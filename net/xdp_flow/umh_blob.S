/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user-mode helper, statically linked, carried in the module. Init data:
 * xdp_flow_helper_init() copies it into a shmem file, then it is freed.
 */
	.section .init.rodata, "a"
	.global xdp_flow_umh_start
xdp_flow_umh_start:
	.incbin XDP_FLOW_UMH
	.global xdp_flow_umh_end
xdp_flow_umh_end:
