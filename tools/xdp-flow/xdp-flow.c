// SPDX-License-Identifier: GPL-2.0
/*
 * xdp-flow: control and inspect the xdp_flow module.
 *
 *   xdp-flow [-j [-p]] enable dev DEV [native|generic]
 *   xdp-flow [-j [-p]] disable dev DEV
 *   xdp-flow [-j [-p]] status
 *   xdp-flow [-j [-p]] show [dev DEV]
 *   xdp-flow wait [timeout SECONDS]
 *
 * It speaks the module's generic netlink family (include/uapi/linux/
 * xdp_flow.h) through libnl-genl. See README.rst, its manual page
 * xdp-flow(8), for the output formats.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>

#include <uapi/linux/xdp_flow.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define EXIT_USAGE 2

static const char *prog = "xdp-flow";
static bool json;
static bool pretty;

/* ---------------------------------------------------------------------
 * A small JSON writer in the spirit of iproute2's json_print.
 */

#define JW_MAX_DEPTH 16

static struct {
	int depth;
	bool first[JW_MAX_DEPTH];
	bool after_key;
} jw;

static void jw_indent(void)
{
	int i;

	if (!pretty)
		return;
	putchar('\n');
	for (i = 0; i < jw.depth; i++)
		fputs("    ", stdout);
}

/* Before any value or key: the separator and, when pretty, the newline. */
static void jw_sep(void)
{
	if (jw.after_key) {
		jw.after_key = false;
		return;
	}
	if (jw.depth > 0) {
		if (!jw.first[jw.depth])
			putchar(',');
		jw.first[jw.depth] = false;
		jw_indent();
	}
}

static void jw_str_raw(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c == '\n')
			fputs("\\n", stdout);
		else if (c == '\t')
			fputs("\\t", stdout);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void jw_open(char c)
{
	jw_sep();
	putchar(c);
	if (jw.depth + 1 < JW_MAX_DEPTH)
		jw.depth++;
	jw.first[jw.depth] = true;
}

static void jw_close(char c)
{
	bool empty = jw.first[jw.depth];

	jw.depth--;
	if (!empty)
		jw_indent();
	putchar(c);
	if (jw.depth == 0)
		putchar('\n');
}

static void jw_key(const char *k)
{
	jw_sep();
	jw_str_raw(k);
	fputs(pretty ? ": " : ":", stdout);
	jw.after_key = true;
}

static void jw_obj_open(const char *k)
{
	if (k)
		jw_key(k);
	jw_open('{');
}

static void jw_arr_open(const char *k)
{
	if (k)
		jw_key(k);
	jw_open('[');
}

static void jw_obj_close(void) { jw_close('}'); }
static void jw_arr_close(void) { jw_close(']'); }

static void jw_string(const char *k, const char *v)
{
	if (k)
		jw_key(k);
	jw_sep();
	jw_str_raw(v);
}

static void jw_u64(const char *k, uint64_t v)
{
	if (k)
		jw_key(k);
	jw_sep();
	printf("%" PRIu64, v);
}

static void jw_s64(const char *k, int64_t v)
{
	if (k)
		jw_key(k);
	jw_sep();
	printf("%" PRId64, v);
}

static void jw_bool(const char *k, bool v)
{
	jw_key(k);
	jw_sep();
	fputs(v ? "true" : "false", stdout);
}

static void jw_null(const char *k)
{
	jw_key(k);
	jw_sep();
	fputs("null", stdout);
}

/* ---------------------------------------------------------------------
 * Errors and usage.
 */

static void __attribute__((format(printf, 1, 2))) err_msg(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [OPTIONS] COMMAND\n"
		"\n"
		"Commands:\n"
		"  enable dev DEV [hook xdp|tc|auto] [native|generic]\n"
		"                                   offload DEV's TC rules: in XDP, or at TC\n"
		"                                   ingress (tcx); auto (the default) picks\n"
		"                                   tc where frames arrive as skbs anyway\n"
		"  disable dev DEV                  stop offloading; rules stay in software\n"
		"  status                           helper state and enabled devices\n"
		"  show [dev DEV]                   offloaded rules with their counters\n"
		"  wait [timeout SECONDS]           until the helper has done every rule\n"
		"                                   change TC made (default 10 s)\n"
		"\n"
		"Options:\n"
		"  -j, --json     JSON output\n"
		"  -p, --pretty   indented JSON (with -j)\n"
		"  -h, --help     this text\n",
		prog);
}

static int __attribute__((format(printf, 1, 2))) usage_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s -h' for more information.\n", prog);
	return EXIT_USAGE;
}

/* ---------------------------------------------------------------------
 * Generic netlink plumbing.
 */

struct xf_ctx {
	struct nl_sock *sk;
	int family;
};

/* State of one request: its outcome and the kernel's extack message. */
struct xf_req {
	bool done;
	int error;			/* 0 or a negative errno */
	char extack[256];
	int (*handler)(struct nlattr **tb, void *arg);
	void *arg;
	int handler_err;		/* first error a handler returned */
};

static void xf_extack_parse(struct nlmsghdr *nlh, size_t hlen, struct xf_req *req)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t plen = nlmsg_datalen(nlh);
	struct nlattr *attrs;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	hlen = NLMSG_ALIGN(hlen);
	if (plen <= hlen)
		return;
	attrs = (struct nlattr *)((char *)nlmsg_data(nlh) + hlen);
	if (nla_parse(tb, NLMSGERR_ATTR_MAX, attrs, plen - hlen, NULL) < 0)
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		nla_strlcpy(req->extack, tb[NLMSGERR_ATTR_MSG], sizeof(req->extack));
}

/* Every message passes here first: grab errors and extack messages from
 * NLMSG_ERROR and NLMSG_DONE (libnl does not look at the latter's error).
 */
static int xf_cb_msg_in(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct xf_req *req = arg;

	if (nlh->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr *e = nlmsg_data(nlh);
		size_t hlen = sizeof(*e);

		if (nlmsg_datalen(nlh) < (int)sizeof(*e))
			return NL_OK;
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			hlen += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
		xf_extack_parse(nlh, hlen, req);
	} else if (nlh->nlmsg_type == NLMSG_DONE) {
		int err;

		if (nlmsg_datalen(nlh) >= (int)sizeof(int)) {
			memcpy(&err, nlmsg_data(nlh), sizeof(err));
			if (err < 0 && !req->error)
				req->error = err;
			xf_extack_parse(nlh, sizeof(int), req);
		}
	}
	return NL_OK;
}

static int xf_cb_err(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct xf_req *req = arg;

	(void)nla;
	req->error = e->error < 0 ? e->error : -e->error;
	req->done = true;
	return NL_STOP;
}

static int xf_cb_finish(struct nl_msg *msg, void *arg)
{
	struct xf_req *req = arg;

	(void)msg;
	req->done = true;
	return NL_STOP;
}

static int xf_cb_valid(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[XDP_FLOW_ATTR_MAX + 1];
	struct xf_req *req = arg;
	int err;

	err = genlmsg_parse(nlmsg_hdr(msg), 0, tb, XDP_FLOW_ATTR_MAX, NULL);
	if (err < 0) {
		if (!req->handler_err)
			req->handler_err = -EBADMSG;
		return NL_SKIP;
	}
	if (req->handler) {
		err = req->handler(tb, req->arg);
		if (err < 0 && !req->handler_err)
			req->handler_err = err;
	}
	return NL_OK;
}

static int xf_open(struct xf_ctx *ctx)
{
	int one = 1, err;

	ctx->sk = nl_socket_alloc();
	if (!ctx->sk) {
		err_msg("out of memory");
		return -1;
	}
	err = genl_connect(ctx->sk);
	if (err < 0) {
		err_msg("cannot open a generic netlink socket: %s", nl_geterror(err));
		return -1;
	}
	/* Best effort: older kernels simply send no extack. */
	setsockopt(nl_socket_get_fd(ctx->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	setsockopt(nl_socket_get_fd(ctx->sk), SOL_NETLINK, NETLINK_CAP_ACK,
		   &one, sizeof(one));

	ctx->family = genl_ctrl_resolve(ctx->sk, XDP_FLOW_GENL_NAME);
	if (ctx->family < 0) {
		if (ctx->family == -NLE_OBJ_NOTFOUND)
			err_msg("the xdp_flow module is not loaded (modprobe xdp_flow)");
		else
			err_msg("cannot resolve the generic netlink family %s: %s",
				XDP_FLOW_GENL_NAME, nl_geterror(ctx->family));
		return -1;
	}
	return 0;
}

static void xf_close(struct xf_ctx *ctx)
{
	nl_socket_free(ctx->sk);
}

/* Send @cmd (a dump when @dump) with an optional IFINDEX and XDP_MODE,
 * feed every reply to @handler, wait for the ack or the end of the dump.
 * Returns 0 or a negative errno; @req holds the extack message.
 */
static int xf_request(struct xf_ctx *ctx, uint8_t cmd, bool dump,
		      int ifindex, int xdp_mode, struct xf_req *req)
{
	struct nl_msg *msg;
	struct nl_cb *cb;
	int err;

	msg = nlmsg_alloc();
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!msg || !cb) {
		err = -ENOMEM;
		goto out;
	}
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, ctx->family, 0,
			 dump ? NLM_F_DUMP : 0, cmd, XDP_FLOW_GENL_VERSION)) {
		err = -ENOMEM;
		goto out;
	}
	if (ifindex > 0 && nla_put_u32(msg, XDP_FLOW_ATTR_IFINDEX, ifindex) < 0) {
		err = -EMSGSIZE;
		goto out;
	}
	if (xdp_mode >= 0 && nla_put_u32(msg, XDP_FLOW_ATTR_XDP_MODE, xdp_mode) < 0) {
		err = -EMSGSIZE;
		goto out;
	}

	nl_cb_set(cb, NL_CB_MSG_IN, NL_CB_CUSTOM, xf_cb_msg_in, req);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, xf_cb_valid, req);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, xf_cb_finish, req);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, xf_cb_finish, req);
	nl_cb_err(cb, NL_CB_CUSTOM, xf_cb_err, req);

	err = nl_send_auto(ctx->sk, msg);
	if (err < 0) {
		snprintf(req->extack, sizeof(req->extack), "sending: %s", nl_geterror(err));
		err = -EIO;
		goto out;
	}
	while (!req->done) {
		err = nl_recvmsgs(ctx->sk, cb);
		/* An error message stops libnl with its own error code: the
		 * errno the kernel sent is in @req.
		 */
		if (req->done)
			break;
		if (err < 0) {
			/* libnl's own errors (interrupted dump, bad sequence) */
			if (!req->extack[0])
				snprintf(req->extack, sizeof(req->extack),
					 "receiving: %s", nl_geterror(err));
			err = err == -NLE_DUMP_INTR ? -EINTR : -EIO;
			goto out;
		}
	}
	err = req->error ? req->error : req->handler_err;
out:
	nl_cb_put(cb);
	nlmsg_free(msg);
	return err;
}

static void xf_report(const char *what, int err, const struct xf_req *req)
{
	if (req->extack[0])
		err_msg("%s: %s: %s", what, strerror(-err), req->extack);
	else if (err == -EPERM)
		err_msg("%s: %s (xdp-flow needs CAP_NET_ADMIN)", what, strerror(-err));
	else
		err_msg("%s: %s", what, strerror(-err));
}

/* ---------------------------------------------------------------------
 * Names.
 */

static const char *xdp_mode_name(uint32_t mode)
{
	switch (mode) {
	case XDP_FLOW_XDP_MODE_NATIVE:	return "native";
	case XDP_FLOW_XDP_MODE_GENERIC:	return "generic";
	case XDP_FLOW_XDP_MODE_TC:	return "tcx";
	default:			return "unknown";
	}
}

static const char *hook_name(uint32_t mode)
{
	switch (mode) {
	case XDP_FLOW_XDP_MODE_NATIVE:
	case XDP_FLOW_XDP_MODE_GENERIC:	return "xdp";
	case XDP_FLOW_XDP_MODE_TC:	return "tc";
	default:			return "unknown";
	}
}

static const char *dev_state_name(uint32_t state)
{
	switch (state) {
	case XDP_FLOW_DEV_STATE_ATTACHING:	return "attaching";
	case XDP_FLOW_DEV_STATE_ATTACHED:	return "attached";
	case XDP_FLOW_DEV_STATE_ERROR:		return "error";
	case XDP_FLOW_DEV_STATE_IDLE:		return "idle";
	default:				return "unknown";
	}
}

static const char *helper_state_name(uint32_t state)
{
	switch (state) {
	case XDP_FLOW_HELPER_STOPPED:	return "stopped";
	case XDP_FLOW_HELPER_STARTING:	return "starting";
	case XDP_FLOW_HELPER_RUNNING:	return "running";
	default:			return "unknown";
	}
}

/*
 * A device name for display; "ifN" when it has gone away. The last one is
 * kept: a dump lists many rules of one device.
 */
static const char *dev_name(uint32_t ifindex, char *buf, size_t len)
{
	static char name[IF_NAMESIZE + 16];
	static uint32_t cached;

	if (!ifindex || ifindex != cached) {
		char n[IF_NAMESIZE];

		if (ifindex && if_indextoname(ifindex, n))
			snprintf(name, sizeof(name), "%s", n);
		else
			snprintf(name, sizeof(name), "if%u", ifindex);
		cached = ifindex;
	}
	snprintf(buf, len, "%s", name);
	return buf;
}

static int dev_index(const char *name)
{
	unsigned int idx = if_nametoindex(name);

	if (!idx) {
		err_msg("unknown device '%s'", name);
		return -1;
	}
	return (int)idx;
}

/* ---------------------------------------------------------------------
 * enable / disable
 */

static int cmd_dev_enable(struct xf_ctx *ctx, const char *dev, int ifindex,
			  int mode, bool enable)
{
	struct xf_req req = { 0 };
	char what[64];
	int err;

	err = xf_request(ctx, enable ? XDP_FLOW_CMD_DEV_ENABLE : XDP_FLOW_CMD_DEV_DISABLE,
			 false, ifindex, enable ? mode : -1, &req);
	if (err) {
		snprintf(what, sizeof(what), "%s dev %s", enable ? "enable" : "disable", dev);
		xf_report(what, err, &req);
		return 1;
	}
	if (req.extack[0])	/* a warning that came with success */
		fprintf(stderr, "Warning: %s\n", req.extack);
	return 0;
}

/* ---------------------------------------------------------------------
 * status
 */

struct status {
	bool have;
	bool to_stack;
	uint32_t helper_state, helper_pid, helper_restarts, rule_count;
	uint32_t rule_ids, in_flight, max_rules;
};

static uint32_t attr_u32(struct nlattr **tb, int type, uint32_t dflt)
{
	return tb[type] && nla_len(tb[type]) >= 4 ? nla_get_u32(tb[type]) : dflt;
}

static int status_handler(struct nlattr **tb, void *arg)
{
	struct status *st = arg;

	st->have = true;
	st->helper_state = attr_u32(tb, XDP_FLOW_ATTR_HELPER_STATE, UINT32_MAX);
	st->helper_pid = attr_u32(tb, XDP_FLOW_ATTR_HELPER_PID, 0);
	st->helper_restarts = attr_u32(tb, XDP_FLOW_ATTR_HELPER_RESTARTS, 0);
	st->rule_count = attr_u32(tb, XDP_FLOW_ATTR_RULE_COUNT, 0);
	st->rule_ids = attr_u32(tb, XDP_FLOW_ATTR_RULE_IDS, 0);
	st->in_flight = attr_u32(tb, XDP_FLOW_ATTR_IN_FLIGHT, 0);
	st->max_rules = attr_u32(tb, XDP_FLOW_ATTR_MAX_RULES, 0);
	st->to_stack = tb[XDP_FLOW_ATTR_TO_STACK] != NULL;
	return 0;
}

/* What turned offload on, as `xdp-flow status` names it. */
static const char *switch_name(uint32_t via)
{
	switch (via) {
	case XDP_FLOW_SWITCH_GENL:		return "xdp-flow";
	case XDP_FLOW_SWITCH_HW_TC:		return "hw-tc-offload";
	case XDP_FLOW_SWITCH_FLOW_OFFLOAD_XDP:	return "flow-offload-xdp";
	}
	return "unknown";
}

/* A prio as DEV_GET sends it: TC's, or an nftables chain's priority. */
static const char *prio_word(uint32_t prio)
{
	return prio >= XDP_FLOW_ORDER_NFT_BASE ? "nftables chain priority" :
						 "prio";
}

static uint32_t prio_value(uint32_t prio)
{
	return prio >= XDP_FLOW_ORDER_NFT_BASE ?
	       prio - XDP_FLOW_ORDER_NFT_BASE : prio;
}

static int dev_handler(struct nlattr **tb, void *arg)
{
	uint32_t ifindex, state, mode, rules, waiting, shield_prio, via;
	uint32_t all_prio, all_before;
	char name[IF_NAMESIZE + 16];
	char msg[256] = "", why[256] = "", all_kind[16] = "";
	int32_t error = 0;

	(void)arg;
	if (!tb[XDP_FLOW_ATTR_IFINDEX])
		return -EBADMSG;
	ifindex = nla_get_u32(tb[XDP_FLOW_ATTR_IFINDEX]);
	state = attr_u32(tb, XDP_FLOW_ATTR_DEV_STATE, UINT32_MAX);
	mode = attr_u32(tb, XDP_FLOW_ATTR_XDP_MODE, UINT32_MAX);
	rules = attr_u32(tb, XDP_FLOW_ATTR_RULE_COUNT, 0);
	waiting = attr_u32(tb, XDP_FLOW_ATTR_WAITING, 0);
	shield_prio = attr_u32(tb, XDP_FLOW_ATTR_SHIELD_PRIO, 0);
	via = attr_u32(tb, XDP_FLOW_ATTR_SWITCH, XDP_FLOW_SWITCH_GENL);
	if (tb[XDP_FLOW_ATTR_ERROR])
		error = (int32_t)nla_get_u32(tb[XDP_FLOW_ATTR_ERROR]);
	if (tb[XDP_FLOW_ATTR_MSG])
		nla_strlcpy(msg, tb[XDP_FLOW_ATTR_MSG], sizeof(msg));
	if (tb[XDP_FLOW_ATTR_HOOK_WHY])
		nla_strlcpy(why, tb[XDP_FLOW_ATTR_HOOK_WHY], sizeof(why));
	if (tb[XDP_FLOW_ATTR_ALL_KIND])
		nla_strlcpy(all_kind, tb[XDP_FLOW_ATTR_ALL_KIND],
			    sizeof(all_kind));
	all_prio = attr_u32(tb, XDP_FLOW_ATTR_ALL_PRIO, 0);
	all_before = attr_u32(tb, XDP_FLOW_ATTR_ALL_BEFORE, 0);
	dev_name(ifindex, name, sizeof(name));

	if (json) {
		jw_obj_open(NULL);
		jw_string("dev", name);
		jw_u64("ifindex", ifindex);
		jw_string("state", dev_state_name(state));
		jw_string("hook", hook_name(mode));
		jw_string("xdp_mode", xdp_mode_name(mode));
		if (why[0])
			jw_string("hook_why", why);
		jw_string("switch", switch_name(via));
		jw_u64("rule_count", rules);
		jw_u64("waiting", waiting);
		if (waiting)
			jw_u64("to_stack_from_prio", shield_prio);
		if (all_kind[0]) {
			jw_u64("all_to_stack_prio", all_prio);
			jw_string("all_to_stack_kind", all_kind);
			jw_u64("all_to_stack_after", all_before);
		}
		if (error || msg[0]) {
			jw_s64("error_code", error);
			jw_string("error", msg[0] ? msg : strerror(error < 0 ? -error : error));
		}
		jw_obj_close();
		return 0;
	}
	printf("  %s (ifindex %u): %s, hook %s", name, ifindex,
	       dev_state_name(state), hook_name(mode));
	if (mode != XDP_FLOW_XDP_MODE_TC)
		printf(" (%s)", xdp_mode_name(mode));
	printf(", %u rule%s\n", rules, rules == 1 ? "" : "s");
	if (via == XDP_FLOW_SWITCH_GENL)
		printf("    switched on by: xdp-flow enable\n");
	else
		printf("    switched on by: ethtool %s\n", switch_name(via));
	if (why[0])
		printf("    hook: %s\n", why);
	if (waiting)
		printf("    %u rule%s wait%s for room in the XDP tables: frames go to the stack from %s %u on\n",
		       waiting, waiting == 1 ? "" : "s", waiting == 1 ? "s" : "",
		       prio_word(shield_prio), prio_value(shield_prio));
	if (all_kind[0] && !all_before)
		printf("    nothing runs in XDP: a %s rule at %s %u comes first, and XDP hands every frame to the stack for it\n",
		       all_kind, prio_word(all_prio), prio_value(all_prio));
	else if (all_kind[0])
		printf("    a %s rule at %s %u hands every frame that reaches it to the stack (XDP does not run it); %u offloaded rule%s before it\n",
		       all_kind, prio_word(all_prio), prio_value(all_prio),
		       all_before, all_before == 1 ? " comes" : "s come");
	if (error || msg[0])
		printf("    error: %s%s%s\n", msg, msg[0] && error ? ": " : "",
		       error ? strerror(error < 0 ? -error : error) : "");
	return 0;
}

/* Fills @st from STATUS_GET; returns 0, or 1 after saying why not. */
static int status_get(struct xf_ctx *ctx, const char *what, struct status *st)
{
	struct xf_req req = { 0 };
	int err;

	memset(st, 0, sizeof(*st));
	req.handler = status_handler;
	req.arg = st;
	err = xf_request(ctx, XDP_FLOW_CMD_STATUS_GET, false, 0, -1, &req);
	if (err) {
		xf_report(what, err, &req);
		return 1;
	}
	if (!st->have) {
		err_msg("%s: the module sent no status", what);
		return 1;
	}
	return 0;
}

static int cmd_status(struct xf_ctx *ctx)
{
	struct xf_req req = { 0 };
	struct status st;
	int err;

	if (status_get(ctx, "status", &st))
		return 1;

	if (json) {
		jw_obj_open(NULL);
		jw_string("helper_state", helper_state_name(st.helper_state));
		jw_u64("helper_pid", st.helper_pid);
		jw_u64("helper_restarts", st.helper_restarts);
		jw_u64("rule_count", st.rule_count);
		jw_u64("rule_ids", st.rule_ids);
		jw_u64("in_flight", st.in_flight);
		jw_u64("max_rules", st.max_rules);
		jw_bool("to_stack", st.to_stack);
		jw_arr_open("devices");
	} else {
		printf("helper: %s", helper_state_name(st.helper_state));
		if (st.helper_pid)
			printf(", pid %u", st.helper_pid);
		printf(", %u restart%s\n", st.helper_restarts,
		       st.helper_restarts == 1 ? "" : "s");
		printf("rules: %u in XDP; rule ids: %u of %u in use\n",
		       st.rule_count, st.rule_ids, st.max_rules);
		if (st.in_flight)
			printf("rule changes in flight: %u (what they may match goes to the stack until the helper has done them)\n",
			       st.in_flight);
		if (st.to_stack)
			printf("datapath: every frame goes to the stack until a helper has replayed the rules\n");
		printf("devices:\n");
	}

	memset(&req, 0, sizeof(req));
	req.handler = dev_handler;
	err = xf_request(ctx, XDP_FLOW_CMD_DEV_GET, true, 0, -1, &req);

	if (json) {
		jw_arr_close();
		jw_obj_close();
	}
	fflush(stdout);
	if (err) {
		xf_report("status: device list", err, &req);
		return 1;
	}
	return 0;
}

/* ---------------------------------------------------------------------
 * show: keys printed the way `tc filter show` prints flower keys.
 */

/* One key field: the text line, and its JSON member. */
static void key_str(const char *name, const char *val)
{
	if (json)
		jw_string(name, val);
	else
		printf("  %s %s\n", name, val);
}

static void key_num(const char *name, uint32_t val, uint32_t mask, uint32_t full)
{
	char mname[64];

	if (json) {
		jw_u64(name, val);
		if (mask != full) {
			snprintf(mname, sizeof(mname), "%s_mask", name);
			jw_u64(mname, mask);
		}
		return;
	}
	if (mask == full)
		printf("  %s %u\n", name, val);
	else
		printf("  %s %u/0x%x\n", name, val, mask);
}

static void key_hex(const char *name, uint32_t val, uint32_t mask)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%x/0x%x", val, mask);
	key_str(name, buf);
}

static bool mem_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		if (*b++)
			return false;
	return true;
}

static void key_mac(const char *name, const uint8_t *v, const uint8_t *m)
{
	static const uint8_t full[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	char buf[64];
	int n;

	if (mem_zero(m, 6))
		return;
	n = snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x",
		     v[0], v[1], v[2], v[3], v[4], v[5]);
	if (memcmp(m, full, 6))
		snprintf(buf + n, sizeof(buf) - n, "/%02x:%02x:%02x:%02x:%02x:%02x",
			 m[0], m[1], m[2], m[3], m[4], m[5]);
	key_str(name, buf);
}

/* A Geneve option's data length, from its TLV header at @t. */
static unsigned int geneve_tlv_len(const uint8_t *t)
{
	return (t[3] & 0x1f) * 4;
}

/*
 * The Geneve option at @t with @n bytes of data as tc prints it,
 * "class:type:data", after a comma unless @first, at @p; returns the end.
 */
static char *put_geneve_tlv(char *p, bool first, const uint8_t *t,
			    unsigned int n)
{
	unsigned int j;

	p += sprintf(p, "%s%02x%02x:%02x:", first ? "" : ",", t[0], t[1], t[2]);
	for (j = 0; j < n; j++)
		p += sprintf(p, "%02x", t[4 + j]);
	return p;
}

/*
 * Geneve option matches as tc prints them, "class:type:data" a TLV,
 * comma-separated, then "/" and the mask's; the TLVs walked by the key's
 * length fields within the bytes the key holds. Bytes that do not make
 * whole TLVs are printed as hex ("0x<key>/0x<mask>").
 */
static void key_geneve_opts(const struct xdp_flow_key *k,
			    const struct xdp_flow_key *m)
{
	const uint8_t *d = k->enc_opts, *dm = m->enc_opts;
	char kb[4 * XDP_FLOW_ENC_OPTS_LEN], mb[sizeof(kb)];
	char buf[2 * sizeof(kb) + 16], *p = kb, *q = mb;
	unsigned int off = 0, n, j, len = XDP_FLOW_ENC_OPTS_LEN;

	if (!m->enc_opt_len && mem_zero(dm, len))
		return;
	while (!mem_zero(dm + off, len - off) && off + 4 <= len) {
		n = geneve_tlv_len(d + off);
		if (off + 4 + n > len)
			break;
		p = put_geneve_tlv(p, p == kb, d + off, n);
		q = put_geneve_tlv(q, q == mb, dm + off, n);
		off += 4 + n;
	}
	if (!mem_zero(dm + off, len - off) || p == kb) {
		p = buf + sprintf(buf, "0x");
		for (j = 0; j < len; j++)
			p += sprintf(p, "%02x", d[j]);
		p += sprintf(p, "/0x");
		for (j = 0; j < len; j++)
			p += sprintf(p, "%02x", dm[j]);
	} else {
		snprintf(buf, sizeof(buf), "%s/%s", kb, mb);
	}
	key_str("geneve_opts", buf);
}

/* Prefix length of a contiguous mask, -1 if not contiguous. */
static int mask_prefix(const uint8_t *m, int len)
{
	int i, bits = 0;
	bool ended = false;

	for (i = 0; i < len * 8; i++) {
		bool set = m[i / 8] & (0x80 >> (i % 8));

		if (set && ended)
			return -1;
		if (set)
			bits++;
		else
			ended = true;
	}
	return bits;
}

/* IPv4 "10.0.0.0/24", full masks without the prefix in text, with it in
 * JSON ("10.0.2.1/32"); a non-contiguous mask as address/mask.
 */
static void key_ip(const char *name, const __be32 *v, const __be32 *m, bool v6)
{
	char addr[INET6_ADDRSTRLEN], mask[INET6_ADDRSTRLEN], buf[2 * INET6_ADDRSTRLEN + 2];
	int len = v6 ? 16 : 4, plen;

	if (mem_zero(m, len))
		return;
	inet_ntop(v6 ? AF_INET6 : AF_INET, v, addr, sizeof(addr));
	plen = mask_prefix((const uint8_t *)m, len);
	if (plen < 0) {
		inet_ntop(v6 ? AF_INET6 : AF_INET, m, mask, sizeof(mask));
		snprintf(buf, sizeof(buf), "%s/%s", addr, mask);
	} else if (plen == len * 8 && !json) {
		snprintf(buf, sizeof(buf), "%s", addr);
	} else {
		snprintf(buf, sizeof(buf), "%s/%d", addr, plen);
	}
	key_str(name, buf);
}

static void ethertype_name(uint16_t t, char *buf, size_t len)
{
	switch (t) {
	case 0x0800: snprintf(buf, len, "ipv4"); break;
	case 0x86dd: snprintf(buf, len, "ipv6"); break;
	case 0x0806: snprintf(buf, len, "arp"); break;
	case 0x8035: snprintf(buf, len, "rarp"); break;
	case 0x8100: snprintf(buf, len, "802.1Q"); break;
	case 0x88a8: snprintf(buf, len, "802.1ad"); break;
	case 0x8847: snprintf(buf, len, "mpls_uc"); break;
	case 0x8848: snprintf(buf, len, "mpls_mc"); break;
	default:     snprintf(buf, len, "0x%04x", t); break;
	}
}

static void key_ethertype(const char *name, __be16 v, __be16 m)
{
	char buf[32];

	if (!m)
		return;
	if (m != 0xffff) {
		key_hex(name, ntohs(v), ntohs(m));
		return;
	}
	ethertype_name(ntohs(v), buf, sizeof(buf));
	key_str(name, buf);
}

static void key_vlan(const char *id_name, const char *prio_name, __be16 v, __be16 m)
{
	uint16_t tci = ntohs(v), mask = ntohs(m);

	if (mask & 0x0fff)
		key_num(id_name, tci & 0x0fff, mask & 0x0fff, 0x0fff);
	if (mask & 0xe000)
		key_num(prio_name, tci >> 13, mask >> 13, 0x7);
}

/* A port range as tc prints it: "dst_port 1000-2000". */
static void key_range(const char *name, const struct xdp_flow_port_range *r)
{
	char buf[64];

	if (json) {
		snprintf(buf, sizeof(buf), "%s_min", name);
		jw_u64(buf, r->min);
		snprintf(buf, sizeof(buf), "%s_max", name);
		jw_u64(buf, r->max);
		return;
	}
	printf("  %s %u-%u\n", name, r->min, r->max);
}

static void print_key(const struct xdp_flow_rule *r)
{
	const struct xdp_flow_key *k = &r->key, *m = &r->mask;
	uint16_t proto = m->n_proto ? ntohs(k->n_proto & m->n_proto) : 0;
	bool arp = proto == 0x0806 || proto == 0x8035;
	bool v6 = proto == 0x86dd;
	bool icmp = false;
	char buf[64];

	/* An IPv4 rule uses the first word of the addresses only; should
	 * the rest be matched (or no EtherType be given), print all 16 bytes
	 * rather than hide what the rule really matches.
	 */
	if (!mem_zero(&m->ip_src[1], 12) || !mem_zero(&m->ip_dst[1], 12))
		v6 = true;

	if (json)
		jw_obj_open("key");

	/* Like flower: eth_type is the outer protocol, then each tag's
	 * fields and the protocol after it.
	 */
	/* A TPID matched as 0 means "no tag", which is how a rule for an
	 * untagged protocol (flower's eth_type) reads: print no tag fields.
	 */
	if ((m->vlan_tpid && k->vlan_tpid) || m->vlan_tci) {
		key_ethertype("eth_type", k->vlan_tpid, m->vlan_tpid);
		key_vlan("vlan_id", "vlan_prio", k->vlan_tci, m->vlan_tci);
		if ((m->cvlan_tpid && k->cvlan_tpid) || m->cvlan_tci) {
			key_ethertype("vlan_ethtype", k->cvlan_tpid, m->cvlan_tpid);
			key_vlan("cvlan_id", "cvlan_prio", k->cvlan_tci, m->cvlan_tci);
			key_ethertype("cvlan_ethtype", k->n_proto, m->n_proto);
		} else {
			key_ethertype("vlan_ethtype", k->n_proto, m->n_proto);
		}
	} else {
		key_ethertype("eth_type", k->n_proto, m->n_proto);
	}
	key_mac("dst_mac", k->eth_dst, m->eth_dst);
	key_mac("src_mac", k->eth_src, m->eth_src);
	/* A PPPoE session, as flower names it (none matched: no field). */
	if (m->ppp_proto && k->ppp_proto) {
		key_num("pppoe_sid", ntohs(k->pppoe_sid), ntohs(m->pppoe_sid),
			0xffff);
		if (k->ppp_proto == htons(0x0021) || k->ppp_proto == htons(0x0057))
			key_str("ppp_proto", k->ppp_proto == htons(0x0021) ?
				"ip" : "ipv6");
		else
			key_hex("ppp_proto", ntohs(k->ppp_proto),
				ntohs(m->ppp_proto));
	}

	if (m->ip_proto) {
		if (arp) {
			uint8_t op = k->ip_proto;

			if (m->ip_proto == 0xff && (op == 1 || op == 2))
				key_str("arp_op", op == 1 ? "request" : "reply");
			else
				key_num("arp_op", op, m->ip_proto, 0xff);
		} else if (m->ip_proto == 0xff) {
			switch (k->ip_proto) {
			case IPPROTO_TCP:    key_str("ip_proto", "tcp"); break;
			case IPPROTO_UDP:    key_str("ip_proto", "udp"); break;
			case IPPROTO_SCTP:   key_str("ip_proto", "sctp"); break;
			case IPPROTO_ICMP:   key_str("ip_proto", "icmp"); icmp = true; break;
			case IPPROTO_ICMPV6: key_str("ip_proto", "icmpv6"); icmp = true; break;
			default:             key_num("ip_proto", k->ip_proto, 0xff, 0xff); break;
			}
		} else {
			key_num("ip_proto", k->ip_proto, m->ip_proto, 0xff);
		}
	}

	if (arp) {
		key_ip("arp_sip", k->ip_src, m->ip_src, false);
		key_ip("arp_tip", k->ip_dst, m->ip_dst, false);
		key_mac("arp_sha", k->arp_sha, m->arp_sha);
		key_mac("arp_tha", k->arp_tha, m->arp_tha);
	} else {
		key_ip("src_ip", k->ip_src, m->ip_src, v6);
		key_ip("dst_ip", k->ip_dst, m->ip_dst, v6);
	}

	if (m->ip_tos)
		key_hex("ip_tos", k->ip_tos, m->ip_tos);
	if (m->ip_ttl)
		key_num("ip_ttl", k->ip_ttl, m->ip_ttl, 0xff);
	if (m->ip_frag) {
		buf[0] = '\0';
		if (m->ip_frag & XDP_FLOW_FRAG_IS)
			strcat(buf, k->ip_frag & XDP_FLOW_FRAG_IS ? "frag" : "nofrag");
		if (m->ip_frag & XDP_FLOW_FRAG_FIRST) {
			if (buf[0])
				strcat(buf, "/");
			strcat(buf, k->ip_frag & XDP_FLOW_FRAG_FIRST ?
			       "firstfrag" : "nofirstfrag");
		}
		if (buf[0])
			key_str("ip_flags", buf);
	}
	if (m->tcp_flags)
		key_hex("tcp_flags", ntohs(k->tcp_flags), ntohs(m->tcp_flags));

	if (icmp) {
		if (m->l4_src)
			key_num(v6 ? "icmpv6_type" : "icmp_type", ntohs(k->l4_src),
				ntohs(m->l4_src), 0xff);
		if (m->l4_dst)
			key_num(v6 ? "icmpv6_code" : "icmp_code", ntohs(k->l4_dst),
				ntohs(m->l4_dst), 0xff);
	} else {
		if (m->l4_src)
			key_num("src_port", ntohs(k->l4_src), ntohs(m->l4_src), 0xffff);
		else if (r->l4_src_range.max)
			key_range("src_port", &r->l4_src_range);
		if (m->l4_dst)
			key_num("dst_port", ntohs(k->l4_dst), ntohs(m->l4_dst), 0xffff);
		else if (r->l4_dst_range.max)
			key_range("dst_port", &r->l4_dst_range);
	}

	/* The tunnel metadata, as flower names it: an outer IPv6 address is
	 * the rule's, whole (the key has its digest).
	 */
	if (k->enc_addr == XDP_FLOW_ENC_IPV6) {
		static const __be32 all[4] = { ~0U, ~0U, ~0U, ~0U };

		if (m->enc_src)
			key_ip("enc_src_ip", (const __be32 *)r->enc6.src, all,
			       true);
		if (m->enc_dst)
			key_ip("enc_dst_ip", (const __be32 *)r->enc6.dst, all,
			       true);
	} else {
		key_ip("enc_src_ip", &k->enc_src, &m->enc_src, false);
		key_ip("enc_dst_ip", &k->enc_dst, &m->enc_dst, false);
	}
	if (m->enc_key_id)
		key_num("enc_key_id", ntohl(k->enc_key_id), ntohl(m->enc_key_id),
			0xffffffff);
	if (m->enc_tos)
		key_hex("enc_tos", k->enc_tos, m->enc_tos);
	if (m->enc_ttl)
		key_num("enc_ttl", k->enc_ttl, m->enc_ttl, 0xff);
	key_geneve_opts(k, m);

	if (json)
		jw_obj_close();
}

static const char *const hdr_names[__XDP_FLOW_HDR_MAX] = {
	[XDP_FLOW_HDR_ETH] = "eth",
	[XDP_FLOW_HDR_IP4] = "ip4",
	[XDP_FLOW_HDR_IP6] = "ip6",
	[XDP_FLOW_HDR_TCP] = "tcp",
	[XDP_FLOW_HDR_UDP] = "udp",
};

/* As tc prints a pedit key: the word in network order, bits kept in mask. */
static void print_mangle(uint32_t i, const struct xdp_flow_action *a)
{
	const char *cmd = a->id == XDP_FLOW_ACTION_ADD ? "add" : "set";
	const char *hdr = a->mangle.htype < __XDP_FLOW_HDR_MAX ?
			  hdr_names[a->mangle.htype] : "?";
	uint32_t val = ntohl(a->mangle.val), mask = ntohl(a->mangle.mask);

	if (json) {
		jw_obj_open(NULL);
		jw_string("kind", "pedit");
		jw_string("cmd", cmd);
		jw_string("htype", hdr);
		jw_u64("offset", a->mangle.offset);
		jw_u64("val", val);
		jw_u64("mask", mask);
		jw_obj_close();
	} else {
		printf("  action order %u: pedit %s %s+%u val %08x mask %08x\n",
		       i + 1, cmd, hdr, a->mangle.offset, val, mask);
	}
}

/* As tc prints tunnel_key set. */
static void print_tunnel(uint32_t i, const struct xdp_flow_action *a)
{
	char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];
	bool csum = a->tunnel.flags & XDP_FLOW_TUN_CSUM;
	bool df = a->tunnel.flags & XDP_FLOW_TUN_DF;

	inet_ntop(AF_INET, &a->tunnel.src, src, sizeof(src));
	inet_ntop(AF_INET, &a->tunnel.dst, dst, sizeof(dst));
	if (json) {
		jw_obj_open(NULL);
		jw_string("kind", "tunnel_set");
		jw_string("src_ip", src);
		jw_string("dst_ip", dst);
		jw_u64("key_id", a->tunnel.id);
		jw_u64("tos", a->tunnel.tos);
		jw_u64("ttl", a->tunnel.ttl);
		jw_bool("csum", csum);
		jw_bool("nofrag", df);
		jw_obj_close();
		return;
	}
	printf("  action order %u: tunnel_key set src_ip %s dst_ip %s key_id %u tos 0x%x ttl %u %s%s\n",
	       i + 1, src, dst, a->tunnel.id, a->tunnel.tos, a->tunnel.ttl,
	       csum ? "csum" : "nocsum", df ? " nofrag" : "");
}

/* Geneve options as tc prints them: class:type:data, comma-separated. */
static void print_tun_opts(uint32_t i, const struct xdp_flow_action *a)
{
	const uint8_t *d = a->tun_opts.data;
	unsigned int off = 0, n, len = a->tun_opts.len;
	char buf[3 * XDP_FLOW_TUN_OPTS_MAX + 16], *p = buf;

	if (len > XDP_FLOW_TUN_OPTS_MAX)
		len = XDP_FLOW_TUN_OPTS_MAX;
	buf[0] = '\0';
	while (off + 4 <= len) {
		n = geneve_tlv_len(d + off);
		if (off + 4 + n > len)
			break;
		p = put_geneve_tlv(p, p == buf, d + off, n);
		off += 4 + n;
	}
	if (json) {
		jw_obj_open(NULL);
		jw_string("kind", "tunnel_opts");
		jw_string("geneve_opts", buf);
		jw_obj_close();
		return;
	}
	printf("  action order %u: tunnel_key geneve_opts %s\n", i + 1, buf);
}

static void print_csum(uint32_t i, const struct xdp_flow_action *a)
{
	static const struct {
		uint32_t flag;
		const char *name;
	} f[] = {
		{ XDP_FLOW_CSUM_IPV4HDR, "iph" },
		{ XDP_FLOW_CSUM_ICMP, "icmp" },
		{ XDP_FLOW_CSUM_TCP, "tcp" },
		{ XDP_FLOW_CSUM_UDP, "udp" },
	};
	unsigned int j, n = 0;

	if (json) {
		jw_obj_open(NULL);
		jw_string("kind", "csum");
		jw_arr_open("update");
	} else {
		printf("  action order %u: csum", i + 1);
	}
	for (j = 0; j < sizeof(f) / sizeof(f[0]); j++) {
		if (!(a->csum_flags & f[j].flag))
			continue;
		if (json)
			jw_string(NULL, f[j].name);
		else
			printf("%s%s", n++ ? " and " : " ", f[j].name);
	}
	if (json) {
		jw_arr_close();
		jw_obj_close();
	} else {
		printf("\n");
	}
}

static void print_vlan(uint32_t i, const struct xdp_flow_action *a)
{
	const char *op = a->id == XDP_FLOW_ACTION_VLAN_PUSH ? "push" :
			 a->id == XDP_FLOW_ACTION_VLAN_POP ? "pop" : "modify";
	const char *proto = ntohs(a->vlan.proto) == 0x88a8 ? "802.1ad" : "802.1Q";
	unsigned int id = a->vlan.tci & 0xfff, prio = a->vlan.tci >> 13;

	if (json) {
		jw_obj_open(NULL);
		jw_string("kind", "vlan");
		jw_string("op", op);
		if (a->id != XDP_FLOW_ACTION_VLAN_POP) {
			jw_u64("id", id);
			jw_string("protocol", proto);
			jw_u64("priority", prio);
		}
		jw_obj_close();
	} else if (a->id == XDP_FLOW_ACTION_VLAN_POP) {
		printf("  action order %u: vlan pop\n", i + 1);
	} else {
		printf("  action order %u: vlan %s id %u protocol %s priority %u\n",
		       i + 1, op, id, proto, prio);
	}
}

static void print_pppoe(uint32_t i, const struct xdp_flow_action *a)
{
	bool push = a->id == XDP_FLOW_ACTION_PPPOE_PUSH;

	if (json) {
		jw_obj_open(NULL);
		jw_string("kind", "pppoe");
		jw_string("op", push ? "push" : "pop");
		if (push)
			jw_u64("sid", ntohs(a->pppoe_sid));
		jw_obj_close();
	} else if (push) {
		printf("  action order %u: pppoe push sid %u\n", i + 1,
		       ntohs(a->pppoe_sid));
	} else {
		printf("  action order %u: pppoe pop\n", i + 1);
	}
}

/* A flowtable's forwarding: route (with the MACs), NAT of ports or
 * addresses.
 */
static void print_ft(uint32_t i, const struct xdp_flow_action *a,
		     bool v6)
{
	char addr[INET6_ADDRSTRLEN], mac[2][18];
	const __u8 *m[2] = { a->ft_route.eth_dst, a->ft_route.eth_src };
	const char *what;
	int k;

	switch (a->id) {
	case XDP_FLOW_ACTION_FT_ROUTE:
		for (k = 0; k < 2; k++)
			snprintf(mac[k], sizeof(mac[k]),
				 "%02x:%02x:%02x:%02x:%02x:%02x", m[k][0],
				 m[k][1], m[k][2], m[k][3], m[k][4], m[k][5]);
		if (json) {
			jw_obj_open(NULL);
			jw_string("kind", "ft_route");
			jw_u64("mtu", a->ft_route.mtu);
			jw_string("dst_mac", mac[0]);
			jw_string("src_mac", mac[1]);
			jw_obj_close();
		} else {
			printf("  action order %u: flowtable route mtu %u dst_mac %s src_mac %s\n",
			       i + 1, a->ft_route.mtu, mac[0], mac[1]);
		}
		return;
	case XDP_FLOW_ACTION_FT_PORTS:
		if (json) {
			jw_obj_open(NULL);
			jw_string("kind", "ft_ports");
			if (a->ft_ports.which & XDP_FLOW_FT_SPORT)
				jw_u64("src_port", ntohs(a->ft_ports.src));
			if (a->ft_ports.which & XDP_FLOW_FT_DPORT)
				jw_u64("dst_port", ntohs(a->ft_ports.dst));
			jw_obj_close();
			return;
		}
		printf("  action order %u: flowtable nat", i + 1);
		if (a->ft_ports.which & XDP_FLOW_FT_SPORT)
			printf(" src_port %u", ntohs(a->ft_ports.src));
		if (a->ft_ports.which & XDP_FLOW_FT_DPORT)
			printf(" dst_port %u", ntohs(a->ft_ports.dst));
		printf("\n");
		return;
	}
	inet_ntop(v6 ? AF_INET6 : AF_INET, a->ft_addr, addr, sizeof(addr));
	what = a->id == XDP_FLOW_ACTION_FT_SRC_ADDR ? "src_ip" : "dst_ip";
	if (json) {
		jw_obj_open(NULL);
		jw_string("kind", "ft_nat");
		jw_string(what, addr);
		jw_obj_close();
	} else {
		printf("  action order %u: flowtable nat %s %s\n", i + 1, what,
		       addr);
	}
}

static void print_actions(const struct xdp_flow_rule *r)
{
	char name[IF_NAMESIZE + 16];
	uint32_t i, n = r->nr_actions;
	const char *kind;

	if (n > XDP_FLOW_MAX_ACTIONS)
		n = XDP_FLOW_MAX_ACTIONS;
	if (json)
		jw_arr_open("actions");
	for (i = 0; i < n; i++) {
		const struct xdp_flow_action *a = &r->actions[i];

		switch (a->id) {
		case XDP_FLOW_ACTION_DROP:
			if (json) {
				jw_obj_open(NULL);
				jw_string("kind", "drop");
				jw_obj_close();
			} else {
				printf("  action order %u: drop\n", i + 1);
			}
			break;
		case XDP_FLOW_ACTION_PASS:
			if (json) {
				jw_obj_open(NULL);
				jw_string("kind", "pass");
				jw_obj_close();
			} else {
				printf("  action order %u: pass\n", i + 1);
			}
			break;
		case XDP_FLOW_ACTION_REDIRECT:
		case XDP_FLOW_ACTION_MIRROR:
		case XDP_FLOW_ACTION_REDIRECT_INGRESS:
		case XDP_FLOW_ACTION_MIRROR_INGRESS:
			kind = a->id == XDP_FLOW_ACTION_MIRROR ? "mirror" :
			       a->id == XDP_FLOW_ACTION_REDIRECT ? "redirect" :
			       a->id == XDP_FLOW_ACTION_MIRROR_INGRESS ?
			       "mirror_ingress" : "redirect_ingress";
			dev_name(a->ifindex, name, sizeof(name));
			if (json) {
				jw_obj_open(NULL);
				jw_string("kind", kind);
				jw_string("dev", name);
				jw_u64("ifindex", a->ifindex);
				jw_obj_close();
			} else {
				printf("  action order %u: %.*s%s dev %s\n", i + 1,
				       (int)strcspn(kind, "_"), kind,
				       strchr(kind, '_') ? " ingress" : "", name);
			}
			break;
		case XDP_FLOW_ACTION_GOTO:
			if (json) {
				jw_obj_open(NULL);
				jw_string("kind", "goto");
				jw_u64("chain", a->chain);
				jw_obj_close();
			} else {
				printf("  action order %u: goto chain %u\n", i + 1,
				       a->chain);
			}
			break;
		case XDP_FLOW_ACTION_PTYPE:
			kind = a->ptype == 0 ? "host" : a->ptype == 1 ? "broadcast" :
			       a->ptype == 2 ? "multicast" : a->ptype == 3 ?
			       "otherhost" : "unknown";
			if (json) {
				jw_obj_open(NULL);
				jw_string("kind", "ptype");
				jw_string("type", kind);
				jw_obj_close();
			} else {
				printf("  action order %u: skbedit ptype %s\n", i + 1,
				       kind);
			}
			break;
		case XDP_FLOW_ACTION_MANGLE:
		case XDP_FLOW_ACTION_ADD:
			print_mangle(i, a);
			break;
		case XDP_FLOW_ACTION_CSUM:
			print_csum(i, a);
			break;
		case XDP_FLOW_ACTION_TUNNEL_SET:
			print_tunnel(i, a);
			break;
		case XDP_FLOW_ACTION_TUNNEL_OPTS:
			print_tun_opts(i, a);
			break;
		case XDP_FLOW_ACTION_TUNNEL_UNSET:
			if (json) {
				jw_obj_open(NULL);
				jw_string("kind", "tunnel_unset");
				jw_obj_close();
			} else {
				printf("  action order %u: tunnel_key unset\n",
				       i + 1);
			}
			break;
		case XDP_FLOW_ACTION_VLAN_PUSH:
		case XDP_FLOW_ACTION_VLAN_POP:
		case XDP_FLOW_ACTION_VLAN_MODIFY:
			print_vlan(i, a);
			break;
		case XDP_FLOW_ACTION_PPPOE_PUSH:
		case XDP_FLOW_ACTION_PPPOE_POP:
			print_pppoe(i, a);
			break;
		case XDP_FLOW_ACTION_FT_ROUTE:
		case XDP_FLOW_ACTION_FT_PORTS:
		case XDP_FLOW_ACTION_FT_SRC_ADDR:
		case XDP_FLOW_ACTION_FT_DST_ADDR:
			print_ft(i, a, r->key.n_proto == htons(0x86dd));
			break;
		default:
			if (json) {
				jw_obj_open(NULL);
				jw_string("kind", "unknown");
				jw_u64("id", a->id);
				jw_obj_close();
			} else {
				printf("  action order %u: unknown (%u)\n", i + 1, a->id);
			}
			break;
		}
	}
	if (json)
		jw_arr_close();
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void print_stats(const struct xdp_flow_stats *s)
{
	uint64_t now = now_ns(), ago = 0;

	if (s && s->lastused_ns)
		ago = now > s->lastused_ns ? now - s->lastused_ns : 0;

	if (json) {
		jw_obj_open("stats");
		jw_u64("packets", s ? s->packets : 0);
		jw_u64("bytes", s ? s->bytes : 0);
		if (s && s->lastused_ns)
			jw_u64("lastused_ms_ago", ago / 1000000);
		else
			jw_null("lastused_ms_ago");
		jw_obj_close();
		return;
	}
	if (!s) {
		printf("  no counters\n");
		return;
	}
	printf("  Sent hardware %" PRIu64 " bytes %" PRIu64 " pkt\n",
	       (uint64_t)s->bytes, (uint64_t)s->packets);
	if (s->lastused_ns)
		printf("  used %" PRIu64 "s\n", (uint64_t)(ago / 1000000000ull));
	else
		printf("  used never\n");
}

static int rule_handler(struct nlattr **tb, void *arg)
{
	const struct xdp_flow_stats *stats = NULL;
	struct xdp_flow_rule r;
	char name[IF_NAMESIZE + 16], why[256] = "";
	const char *state, *reason;
	uint32_t ifindex;
	bool software, nft, ft, waiting, in_flight;
	uint64_t prio;

	(void)arg;
	if (!tb[XDP_FLOW_ATTR_RULE] || nla_len(tb[XDP_FLOW_ATTR_RULE]) < (int)sizeof(r))
		return -EBADMSG;
	memcpy(&r, nla_data(tb[XDP_FLOW_ATTR_RULE]), sizeof(r));

	if (tb[XDP_FLOW_ATTR_STATS]) {
		const struct xdp_flow_stats *s = nla_data(tb[XDP_FLOW_ATTR_STATS]);
		int i, n = nla_len(tb[XDP_FLOW_ATTR_STATS]) / (int)sizeof(*s);

		/* One entry per rule; pick ours should there be more. */
		for (i = 0; i < n; i++)
			if (s[i].id == r.id)
				stats = &s[i];
		if (!stats && n == 1)
			stats = s;
	}

	ifindex = attr_u32(tb, XDP_FLOW_ATTR_IFINDEX, r.key.ifindex);
	dev_name(ifindex, name, sizeof(name));
	software = r.flags & XDP_FLOW_RULE_F_SOFTWARE;
	nft = r.flags & XDP_FLOW_RULE_F_NFTABLES;
	ft = r.flags & XDP_FLOW_RULE_F_FLOWTABLE;
	waiting = attr_u32(tb, XDP_FLOW_ATTR_WAITING, 0);
	in_flight = attr_u32(tb, XDP_FLOW_ATTR_IN_FLIGHT, 0);
	state = waiting ? "waiting" : in_flight ? "in_flight" :
		software ? "software" : "in_xdp";
	if (tb[XDP_FLOW_ATTR_MSG])
		nla_strlcpy(why, tb[XDP_FLOW_ATTR_MSG], sizeof(why));
	/* The module's messages start with its name, as TC prints them. */
	reason = strncmp(why, "xdp_flow: ", 10) ? why : why + 10;
	/* nftables rules come after TC's (see struct xdp_flow_rule). */
	prio = (r.order >> 32) - (nft || ft ? XDP_FLOW_ORDER_NFT_BASE : 0);

	if (json) {
		char cookie[32];

		snprintf(cookie, sizeof(cookie), "0x%" PRIx64, (uint64_t)r.cookie);
		jw_obj_open(NULL);
		jw_string("dev", name);
		jw_u64("ifindex", ifindex);
		/* A rule that waits for a free id has none yet. */
		if (r.id != UINT32_MAX)
			jw_u64("id", r.id);
		jw_u64("chain", r.chain);
		jw_string("source", ft ? "flowtable" : nft ? "nftables" : "tc");
		jw_u64("prio", prio);
		jw_string("cookie", cookie);
		jw_bool("software", software);
		jw_bool("waiting", waiting);
		jw_bool("in_flight", in_flight);
		if (reason[0])
			jw_string("why", reason);
		print_key(&r);
		print_actions(&r);
		print_stats(stats);
		jw_obj_close();
		return 0;
	}
	printf("dev %s ", name);
	if (ft)
		printf("flowtable");
	else if (nft)
		printf("nftables");
	else
		printf("chain %u", r.chain);
	printf(" prio %" PRIu64 " cookie 0x%" PRIx64, prio, (uint64_t)r.cookie);
	if (r.id != UINT32_MAX)
		printf(" id %u", r.id);
	printf(" %s\n", state);
	if (reason[0])
		printf("  why: %s\n", reason);
	print_key(&r);
	print_actions(&r);
	print_stats(stats);
	return 0;
}

/*
 * wait: until no rule change is in flight. TC's `tc filter add` returns
 * once XDP can no longer act against the change; the helper puts the rule
 * into XDP a moment later. Scripts that must see a rule act in XDP (its
 * hardware counters move) wait for that here.
 */
static int cmd_wait(struct xf_ctx *ctx, unsigned int timeout_s)
{
	struct timespec start, now, pause = { 0, 2 * 1000 * 1000 };
	struct status st;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (status_get(ctx, "wait", &st))
			return 1;
		if (!st.in_flight)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= (time_t)timeout_s) {
			err_msg("wait: %u rule change%s still in flight after %u s",
				st.in_flight, st.in_flight == 1 ? "" : "s",
				timeout_s);
			return 1;
		}
		nanosleep(&pause, NULL);
	}
}

static int cmd_show(struct xf_ctx *ctx, int ifindex)
{
	struct xf_req req = { 0 };
	int err;

	req.handler = rule_handler;
	if (json)
		jw_arr_open(NULL);
	err = xf_request(ctx, XDP_FLOW_CMD_RULE_GET, true, ifindex, -1, &req);
	if (json)
		jw_arr_close();
	fflush(stdout);
	if (err) {
		xf_report("show", err, &req);
		return 1;
	}
	return 0;
}

/* ---------------------------------------------------------------------
 * Command line.
 */

static bool is_cmd(const char *arg, const char *cmd)
{
	/* ip-style abbreviations: "sh" for show, "st" for status, ... */
	return arg[0] && strlen(arg) <= strlen(cmd) && !strncmp(arg, cmd, strlen(arg));
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json",   no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "help",   no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd, *dev = NULL;
	int mode = XDP_FLOW_XDP_MODE_AUTO;
	const char *hook = NULL;
	struct xf_ctx ctx = { 0 };
	int c, ret, ifindex = 0;
	unsigned int timeout_s = 10;
	bool have_timeout = false;
	enum { ENABLE, DISABLE, STATUS, SHOW, WAIT } what;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jph", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'p':
			pretty = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			if (optopt)
				return usage_err("invalid option -- '%c'", optopt);
			return usage_err("invalid option '%s'", argv[optind - 1]);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return usage_err("no command given");
	cmd = argv[0];
	argc--;
	argv++;

	if (!strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	} else if (is_cmd(cmd, "enable") && strlen(cmd) >= 2) {
		what = ENABLE;
	} else if (is_cmd(cmd, "disable") && strlen(cmd) >= 2) {
		what = DISABLE;
	} else if (is_cmd(cmd, "status") && strlen(cmd) >= 2) {
		what = STATUS;
	} else if (is_cmd(cmd, "show") && strlen(cmd) >= 2) {
		what = SHOW;
	} else if (!strcmp(cmd, "wait")) {
		what = WAIT;
	} else {
		return usage_err("unknown command '%s'", cmd);
	}

	while (argc > 0) {
		if (what == WAIT && !strcmp(argv[0], "timeout")) {
			char *end;
			unsigned long v;

			if (argc < 2)
				return usage_err("'timeout' needs a number of seconds");
			if (have_timeout)
				return usage_err("'timeout' given twice");
			errno = 0;
			v = strtoul(argv[1], &end, 10);
			if (errno || end == argv[1] || *end || v > 3600 ||
			    argv[1][0] == '-')
				return usage_err("invalid timeout '%s' (0-3600 seconds)", argv[1]);
			timeout_s = v;
			have_timeout = true;
			argc -= 2;
			argv += 2;
		} else if (!strcmp(argv[0], "dev") && what != STATUS &&
			   what != WAIT) {
			if (argc < 2)
				return usage_err("'dev' needs a device name");
			if (dev)
				return usage_err("'dev' given twice");
			if (!argv[1][0] || strlen(argv[1]) >= IF_NAMESIZE)
				return usage_err("invalid device name '%s'", argv[1]);
			dev = argv[1];
			argc -= 2;
			argv += 2;
		} else if (what == ENABLE && !strcmp(argv[0], "hook")) {
			if (argc < 2)
				return usage_err("'hook' needs xdp, tc or auto");
			if (hook)
				return usage_err("'hook' given twice");
			hook = argv[1];
			if (strcmp(hook, "xdp") && strcmp(hook, "tc") &&
			    strcmp(hook, "auto"))
				return usage_err("unknown hook '%s' (xdp, tc or auto)", hook);
			argc -= 2;
			argv += 2;
		} else if (what == ENABLE && !strcmp(argv[0], "generic")) {
			mode = XDP_FLOW_XDP_MODE_GENERIC;
			argc--;
			argv++;
		} else if (what == ENABLE && !strcmp(argv[0], "native")) {
			mode = XDP_FLOW_XDP_MODE_NATIVE;
			argc--;
			argv++;
		} else {
			return usage_err("unexpected argument '%s' to '%s'", argv[0], cmd);
		}
	}
	if ((what == ENABLE || what == DISABLE) && !dev)
		return usage_err("'%s' needs 'dev DEV'", cmd);
	/* native and generic are XDP's modes: they imply hook xdp. */
	if (hook && mode != XDP_FLOW_XDP_MODE_AUTO && strcmp(hook, "xdp"))
		return usage_err("'native' and 'generic' go with hook xdp only");
	if (hook && !strcmp(hook, "tc"))
		mode = XDP_FLOW_XDP_MODE_TC;
	else if (hook && !strcmp(hook, "xdp") && mode == XDP_FLOW_XDP_MODE_AUTO)
		mode = XDP_FLOW_XDP_MODE_NATIVE;
	if (pretty && !json)
		pretty = false;

	/* An unknown device is the user's error, whether or not the module
	 * is there.
	 */
	if (dev) {
		ifindex = dev_index(dev);
		if (ifindex < 0)
			return 1;
	}

	if (xf_open(&ctx) < 0) {
		if (ctx.sk)
			xf_close(&ctx);
		return 1;
	}
	switch (what) {
	case ENABLE:
		ret = cmd_dev_enable(&ctx, dev, ifindex, mode, true);
		break;
	case DISABLE:
		ret = cmd_dev_enable(&ctx, dev, ifindex, -1, false);
		break;
	case STATUS:
		ret = cmd_status(&ctx);
		break;
	case WAIT:
		ret = cmd_wait(&ctx, timeout_s);
		break;
	case SHOW:
	default:
		ret = cmd_show(&ctx, ifindex);
		break;
	}
	xf_close(&ctx);
	if (fflush(stdout) == EOF && !ret) {
		err_msg("write error: %s", strerror(errno));
		ret = 1;
	}
	return ret;
}
