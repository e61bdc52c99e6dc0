# SPDX-License-Identifier: GPL-2.0
# The helper's objects that other builds link too (selftests/host,
# bench/host): the flow tables, the XDP flow table, attaching, loading the
# datapath, logging. net/xdp_flow/Makefile lists the helper's objects for
# the in-tree build itself.
UMH_TABLE_OBJS := table.o table_check.o table_ranges.o table_masks.o \
		  table_flows.o table_counters.o table_conns.o \
		  table_publish.o table_sync.o
UMH_LIB_OBJS := $(UMH_TABLE_OBJS) ftab.o attach.o bpf.o log.o
