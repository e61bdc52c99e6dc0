// SPDX-License-Identifier: GPL-2.0
/*
 * The flow tables: a rule's port ranges as masked entries, one per
 * combination of the prefixes that cover them (rule_expand()); a rule
 * without ranges has one entry, its key and mask.
 *
 * Owns: nothing of the tables' state.
 * May call: nothing of the other table files.
 */
#include <arpa/inet.h>
#include <errno.h>

#include "tables.h"

#define RANGE_MAX_PREFIXES	32	/* a 16-bit range needs at most 30 */

/* The masked ports (value, mask) that together cover exactly @r. */
static unsigned int range_cover(const struct xdp_flow_port_range *r,
				__u16 *val, __u16 *mask)
{
	__u32 lo = r->min, hi = r->max;
	unsigned int n = 0, bits;

	while (lo <= hi && n < RANGE_MAX_PREFIXES) {
		bits = lo ? __builtin_ctz(lo) : 16;
		while (bits && lo + (1u << bits) - 1 > hi)
			bits--;
		val[n] = lo;
		mask[n] = (__u16)(0xffffu << bits);
		n++;
		lo += 1u << bits;
	}
	return n;
}

/*
 * The flow entries of @r: its key and mask, or for port ranges one per
 * combination of the prefixes covering them. Returns how many, or -E2BIG
 * beyond XDP_FLOW_MAX_RULE_ENTRIES.
 */
int rule_expand(const struct xdp_flow_rule *r, struct texp *out)
{
	__u16 sv[RANGE_MAX_PREFIXES] = {}, sm[RANGE_MAX_PREFIXES] = {};
	__u16 dv[RANGE_MAX_PREFIXES] = {}, dm[RANGE_MAX_PREFIXES] = {};
	unsigned int ns = 1, nd = 1, i, j, n = 0;

	if (r->l4_src_range.max)
		ns = range_cover(&r->l4_src_range, sv, sm);
	if (r->l4_dst_range.max)
		nd = range_cover(&r->l4_dst_range, dv, dm);
	if (ns * nd > XDP_FLOW_MAX_RULE_ENTRIES)
		return -E2BIG;
	for (i = 0; i < ns; i++) {
		for (j = 0; j < nd; j++, n++) {
			out[n].key = r->key;
			out[n].mask = r->mask;
			if (r->l4_src_range.max) {
				out[n].key.l4_src = htons(sv[i]);
				out[n].mask.l4_src = htons(sm[i]);
			}
			if (r->l4_dst_range.max) {
				out[n].key.l4_dst = htons(dv[j]);
				out[n].mask.l4_dst = htons(dm[j]);
			}
		}
	}
	return n;
}
