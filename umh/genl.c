// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink transport (libnl-genl): HELLO to the module, then
 * serve its requests until SHUTDOWN, answering each with one REPLY, which
 * goes on the descriptor the module gave (--reply-fd), not over genetlink.
 *
 * The request loop gathers its replies and writes them together, several
 * REPLY messages in one write, once no request is left to read (or the
 * batch is full, or before a progress report or a request other than a
 * rule change): a burst of posted rule
 * changes then costs one write and one wake-up of the module per batch,
 * not per change. While the batch holds only answers to posted changes,
 * which nobody waits for, the loop waits for more requests before it
 * writes them, and answers those in the same batch, until the oldest
 * answer has waited UMH_HOLD_US: a slow stream of changes (tc -b adding
 * one rule after another) then wakes the module once per batch too. (A
 * timed sleep instead of the wait, which would spare the sender the
 * wake-up per request, made tc -b slower in descending prio order in
 * the emulated guests: each of those adds waits for an expedited RCU
 * grace period, which a helper woken at random times delays.)
 *
 * The attach worker writes its replies from its own thread at once;
 * every genetlink send holds send_lock. The helper also
 * listens to the genl controller's notifications, to notice when the
 * family (the module) goes.
 *
 * Only the kernel may talk to the helper: the socket is connected to it from
 * the start, so the kernel refuses other senders' unicasts to our port, and
 * whatever arrives from a port other than 0 all the same (queued before the
 * connect) is dropped unread.
 */
#define _GNU_SOURCE	/* ppoll() */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "umh.h"

/* Enough for the counters of every rule in one REPLY. */
#define SOCK_BUF_SIZE	(8 << 20)
/* Whole entries per STATS attribute (nla_len is 16 bits). */
#define STATS_PER_ATTR	((0xffff - NLA_HDRLEN) / sizeof(struct xdp_flow_stats))
/* A flood of forged messages must not flood the kernel log. */
#define FORGED_LOG_MAX	20
/*
 * Replies gathered for one write: a full batch goes at once, so that the
 * module hears of posted changes steadily. Well under what the module
 * reads in one go (XDP_FLOW_REPLY_MAX there); a larger reply goes alone.
 */
#define BATCH_BYTES	16384
#define BATCH_REPLIES	32
/*
 * How long the loop holds an answer to a posted change at most: the rule
 * acts in XDP once its answer is in (until then its frames go to the
 * stack), so this is what a stream of rule changes gains in fewer
 * wake-ups of the module, paid by each change in up to as much more time
 * to act in XDP.
 */
#define UMH_HOLD_US	4000
/* A request is about 1 KiB; the controller's notifications can be more. */
#define RECV_BUF_SIZE	65536

struct genl {
	struct nl_sock *sk;
	int family;
	int reply_fd;
	pthread_t loop;			/* the request loop's thread */
	char batch[BATCH_BYTES];	/* its replies not written yet */
	size_t batch_len;
	unsigned int batch_n;
	bool batch_urgent;		/* someone waits for an answer in it */
	long long batch_since_us;	/* when its first answer came */
	bool posted;			/* the request being served is */
	pthread_mutex_t send_lock;
	__u32 hello_seq;
	bool hello_acked;
	bool family_gone;
	int fatal;
};

static struct nla_policy policy[XDP_FLOW_ATTR_MAX + 1] = {
	[XDP_FLOW_ATTR_IFINDEX]	= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_XDP_MODE] = { .type = NLA_U32 },
	[XDP_FLOW_ATTR_RULE]	= { .type = NLA_UNSPEC,
				    .minlen = sizeof(struct xdp_flow_rule) },
	[XDP_FLOW_ATTR_RULE_ID]	= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_SEQ]	= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_POSTED]	= { .type = NLA_FLAG },
};

/* Builds @r as a REPLY of @family. Returns the message, or NULL. */
static struct nl_msg *reply_build(int family, const struct umh_reply *r)
{
	size_t size = 256 + r->nr_stats * sizeof(*r->stats) +
		      (r->nr_stats / STATS_PER_ATTR + 1) * NLA_HDRLEN;
	struct nl_msg *msg;
	size_t done, n;
	int err = -NLE_NOMEM;

	msg = nlmsg_alloc_size(size);
	if (!msg)
		goto fail;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0,
			 XDP_FLOW_CMD_REPLY, XDP_FLOW_GENL_VERSION))
		goto fail;
	if (nla_put_u32(msg, XDP_FLOW_ATTR_SEQ, r->seq) ||
	    (r->progress ? nla_put_flag(msg, XDP_FLOW_ATTR_PROGRESS) :
	     nla_put_u32(msg, XDP_FLOW_ATTR_ERROR, (__u32)r->err)))
		goto fail;
	if (r->msg[0] && nla_put_string(msg, XDP_FLOW_ATTR_MSG, r->msg))
		goto fail;
	if (r->room && nla_put(msg, XDP_FLOW_ATTR_ROOM, sizeof(*r->room),
			       r->room))
		goto fail;
	for (done = 0; done < r->nr_stats; done += n) {
		n = r->nr_stats - done;
		if (n > STATS_PER_ATTR)
			n = STATS_PER_ATTR;
		if (nla_put(msg, XDP_FLOW_ATTR_STATS, n * sizeof(*r->stats),
			    &r->stats[done]))
			goto fail;
	}
	return msg;
fail:
	pr_err("cannot send the reply to seq %u: %s", r->seq,
	       nl_geterror(err));
	nlmsg_free(msg);
	return NULL;
}

/*
 * Replies go on the module's own descriptor, not over genetlink: the
 * module may wait for one holding locks that genetlink's receive path
 * would need. One write is one datagram: one or more whole messages, each
 * at an NLMSG_ALIGNTO boundary.
 */
#ifdef XDP_FLOW_UMH_MANGLE
/*
 * A test build (make -C umh mangle: xdp_flow_umh_mangle, for
 * selftests/guest/test_44_fuzz.sh), never installed: while the file
 * XDP_FLOW_UMH_MANGLE names exists, about one reply datagram in
 * MANGLE_ONE_IN goes out damaged, chosen by a generator of fixed seed
 * (XDP_FLOW_UMH_MANGLE_SEED): random bytes, cut short, a wrong SEQ, wrong
 * lengths of ROOM, STATS or MSG, a wrong ERROR, a wrong nlmsg_len, sent
 * twice, or not at all. The module must stay memory-safe and, where an
 * answer is lost, restart the helper.
 */
#include <fcntl.h>

#ifndef XDP_FLOW_UMH_MANGLE_SEED
#define XDP_FLOW_UMH_MANGLE_SEED	47
#endif
#define MANGLE_ONE_IN	4

static pthread_mutex_t mangle_lock = PTHREAD_MUTEX_INITIALIZER;
static __u64 mangle_state = XDP_FLOW_UMH_MANGLE_SEED;
static unsigned char mangle_buf[2 * 65536];

static __u32 mangle_rnd(__u32 n)
{
	mangle_state ^= mangle_state >> 12;
	mangle_state ^= mangle_state << 25;
	mangle_state ^= mangle_state >> 27;
	return n ? (__u32)((mangle_state * 0x2545F4914F6CDD1DULL) >> 32) % n : 0;
}

/* Each attribute of type @type in the messages of @buf, @len bytes. */
#define for_each_reply_attr(nlh, a, rem, buf, len)			\
	for (nlh = (void *)(buf); nlmsg_ok(nlh, len);			\
	     nlh = nlmsg_next(nlh, &len))				\
		nlmsg_for_each_attr(a, nlh, GENL_HDRLEN, rem)

/* Damages the copy @b of a datagram of @len bytes; returns its new length. */
static size_t mangle(unsigned char *b, size_t len, unsigned int kind)
{
	struct nlmsghdr *nlh;
	struct nlattr *a;
	int rem, l;
	size_t i;

	switch (kind) {
	case 0:	/* random bytes */
		len = mangle_rnd(len + 64);
		for (i = 0; i < len; i++)
			b[i] = mangle_rnd(256);
		break;
	case 1:	/* cut short */
		len = mangle_rnd(len);
		break;
	case 2:	/* a wrong SEQ */
		l = len;
		for_each_reply_attr(nlh, a, rem, b, l)
			if (nla_type(a) == XDP_FLOW_ATTR_SEQ && nla_len(a) == 4)
				*(__u32 *)nla_data(a) += mangle_rnd(3) ?
					1 + mangle_rnd(8) : -*(__u32 *)nla_data(a);
		break;
	case 3:	/* wrong lengths of ROOM, STATS, MSG */
		l = len;
		for_each_reply_attr(nlh, a, rem, b, l)
			if (nla_type(a) == XDP_FLOW_ATTR_ROOM ||
			    nla_type(a) == XDP_FLOW_ATTR_STATS ||
			    nla_type(a) == XDP_FLOW_ATTR_MSG)
				a->nla_len = mangle_rnd(2) ?
					NLA_HDRLEN + mangle_rnd(nla_len(a) + 1) :
					a->nla_len + 1 + mangle_rnd(64);
		break;
	case 4:	/* a wrong ERROR */
		l = len;
		for_each_reply_attr(nlh, a, rem, b, l)
			if (nla_type(a) == XDP_FLOW_ATTR_ERROR && nla_len(a) == 4)
				*(__u32 *)nla_data(a) = mangle_rnd(2) ?
					mangle_rnd(1000) : -4096 - mangle_rnd(1 << 30);
		break;
	case 5:	/* a wrong nlmsg_len or command */
		nlh = (void *)b;
		if (len < NLMSG_HDRLEN + GENL_HDRLEN)
			break;
		if (mangle_rnd(4))
			nlh->nlmsg_len = mangle_rnd(3) ? mangle_rnd(len + 64) : 0;
		else
			((struct genlmsghdr *)nlmsg_data(nlh))->cmd = mangle_rnd(256);
		break;
	default:
		break;
	}
	return len;
}

static void mangle_write(int fd, const void *buf, size_t len)
{
	if (write(fd, buf, len) < 0 && errno != EAGAIN)
		pr_err("test build: cannot send a damaged reply: %s",
		       strerror(errno));
}

/* Maybe sends a damaged copy of the datagram; true when it did. */
static bool reply_mangle(int fd, const void *buf, size_t len)
{
	static bool logged;
	unsigned int kind;
	size_t n;

	if (access(XDP_FLOW_UMH_MANGLE, F_OK))
		return false;
	pthread_mutex_lock(&mangle_lock);
	if (!logged) {
		pr_info("test build: damaging one reply in %d while %s exists",
			MANGLE_ONE_IN, XDP_FLOW_UMH_MANGLE);
		logged = true;
	}
	if (mangle_rnd(MANGLE_ONE_IN) || len > sizeof(mangle_buf) / 2) {
		pthread_mutex_unlock(&mangle_lock);
		return false;
	}
	kind = mangle_rnd(8);
	memcpy(mangle_buf, buf, len);
	memset(mangle_buf + len, 0, 64);
	if (kind == 6) {		/* twice */
		mangle_write(fd, buf, len);
		mangle_write(fd, buf, len);
	} else if (kind != 7) {		/* 7: not at all */
		n = mangle(mangle_buf, len, kind);
		mangle_write(fd, mangle_buf, n);
		/* the original too, now and then: both arrive */
		if (mangle_rnd(2))
			mangle_write(fd, buf, len);
	}
	pthread_mutex_unlock(&mangle_lock);
	return true;
}
#endif

static void reply_send(int fd, const void *buf, size_t len, __u32 seq)
{
#ifdef XDP_FLOW_UMH_MANGLE
	if (reply_mangle(fd, buf, len))
		return;
#endif
	if (write(fd, buf, len) < 0)
		pr_err("cannot send the reply to seq %u: %s", seq,
		       strerror(errno));
}

/* Writes @r as a REPLY of @family on the module's descriptor @fd. */
static void reply_write(int fd, int family, const struct umh_reply *r)
{
	struct nl_msg *msg = reply_build(family, r);

	if (!msg)
		return;
	reply_send(fd, nlmsg_hdr(msg), nlmsg_hdr(msg)->nlmsg_len, r->seq);
	nlmsg_free(msg);
}

/* Writes the request loop's gathered replies. Only that thread calls it. */
static void batch_flush(struct genl *g)
{
	if (!g->batch_len)
		return;
	reply_send(g->reply_fd, g->batch, g->batch_len, 0);
	g->batch_len = 0;
	g->batch_n = 0;
	g->batch_urgent = false;
}

/*
 * No request is left to read: how long to wait for one more before writing
 * the batch (see the top of this file), in microseconds; 0 for not at all.
 */
static long long batch_linger(struct genl *g)
{
	long long left;

	if (!g->batch_n || g->batch_urgent)
		return 0;
	left = g->batch_since_us + UMH_HOLD_US - dp_now_us();
	return left > 0 ? left : 0;
}

static void genl_reply(void *transport, const struct umh_reply *r)
{
	struct genl *g = transport;
	struct nl_msg *msg;
	size_t len;

	if (!pthread_equal(pthread_self(), g->loop)) {
		/* The attach worker: its reply goes now, on its own. */
		reply_write(g->reply_fd, g->family, r);
		return;
	}
	msg = reply_build(g->family, r);
	if (!msg)
		return;
	len = NLMSG_ALIGN(nlmsg_hdr(msg)->nlmsg_len);
	if (g->batch_len + len > sizeof(g->batch))
		batch_flush(g);
	if (len > sizeof(g->batch)) {
		reply_send(g->reply_fd, nlmsg_hdr(msg),
			   nlmsg_hdr(msg)->nlmsg_len, r->seq);
	} else {
		memset(g->batch + g->batch_len, 0, len);
		memcpy(g->batch + g->batch_len, nlmsg_hdr(msg),
		       nlmsg_hdr(msg)->nlmsg_len);
		g->batch_len += len;
		if (!g->batch_n)
			g->batch_since_us = dp_now_us();
		g->batch_urgent |= !g->posted;
		if (++g->batch_n >= BATCH_REPLIES)
			batch_flush(g);
	}
	nlmsg_free(msg);
}

/**
 * genl_progress() - tell the module that the helper is still at work
 * @u: the helper
 * @seq: the request (0: before HELLO)
 *
 * Needs only the reply descriptor and the family id, so it works before
 * genl_run() too, and from the attach worker.
 */
void genl_progress(struct umh *u, __u32 seq)
{
	struct umh_reply r = { .seq = seq, .progress = true };
	struct genl *g = u->transport;

	/* What was done before this request is done: say so first. */
	if (g && pthread_equal(pthread_self(), g->loop))
		batch_flush(g);
	if (u->reply_fd >= 0 && u->family > 0)
		reply_write(u->reply_fd, u->family, &r);
}

static int parse_request(struct genlmsghdr *gh, struct nlattr **tb,
			 struct umh_request *req)
{
	req->cmd = gh->cmd;
	if (!tb[XDP_FLOW_ATTR_SEQ])
		return -EINVAL;
	req->seq = nla_get_u32(tb[XDP_FLOW_ATTR_SEQ]);
	if (tb[XDP_FLOW_ATTR_RULE_ID]) {
		req->has_rule_id = true;
		req->rule_id = nla_get_u32(tb[XDP_FLOW_ATTR_RULE_ID]);
	}
	if (tb[XDP_FLOW_ATTR_IFINDEX])
		req->ifindex = nla_get_u32(tb[XDP_FLOW_ATTR_IFINDEX]);
	if (tb[XDP_FLOW_ATTR_XDP_MODE])
		req->xdp_mode = nla_get_u32(tb[XDP_FLOW_ATTR_XDP_MODE]);
	if (tb[XDP_FLOW_ATTR_RULE]) {
		if (nla_len(tb[XDP_FLOW_ATTR_RULE]) != sizeof(req->rule))
			return -EINVAL;
		memcpy(&req->rule, nla_data(tb[XDP_FLOW_ATTR_RULE]),
		       sizeof(req->rule));
	}
	req->posted = tb[XDP_FLOW_ATTR_POSTED] &&
		      (req->cmd == XDP_FLOW_CMD_RULE_ADD ||
		       req->cmd == XDP_FLOW_CMD_RULE_DEL);
	return 0;
}

/* Checks that a request carries what its command needs. */
static const char *request_missing(const struct umh_request *req,
				   struct nlattr **tb)
{
	switch (req->cmd) {
	case XDP_FLOW_CMD_RULE_ADD:
		return tb[XDP_FLOW_ATTR_RULE] ? NULL : "RULE";
	case XDP_FLOW_CMD_RULE_DEL:
		return req->has_rule_id ? NULL : "RULE_ID";
	case XDP_FLOW_CMD_DEV_ATTACH:
	case XDP_FLOW_CMD_DEV_DETACH:
		return tb[XDP_FLOW_ATTR_IFINDEX] ? NULL : "IFINDEX";
	}
	return NULL;
}

static int on_ctrl(struct genl *g, struct nl_msg *msg)
{
	struct nlattr *tb[CTRL_ATTR_MAX + 1];
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));

	if (gh->cmd != CTRL_CMD_DELFAMILY ||
	    genlmsg_parse(nlmsg_hdr(msg), 0, tb, CTRL_ATTR_MAX, NULL) ||
	    !tb[CTRL_ATTR_FAMILY_NAME] ||
	    strcmp(nla_get_string(tb[CTRL_ATTR_FAMILY_NAME]),
		   XDP_FLOW_GENL_NAME))
		return NL_SKIP;
	pr_err("the %s generic netlink family went away (module unloaded)",
	       XDP_FLOW_GENL_NAME);
	g->family_gone = true;
	return NL_STOP;
}

/**
 * genl_from_kernel() - NL_CB_MSG_IN: drop what the kernel did not send
 * @msg: a received message; libnl's recvmsgs() has set its source address
 *	 (recvmsg()'s msg_name) before calling us
 * @arg: unused
 *
 * Runs before any other callback (requests, acks, errors, the controller's
 * notifications), so a forged SHUTDOWN, HELLO error or DELFAMILY never gets
 * to them.
 *
 * Return: NL_OK for the kernel's messages, NL_SKIP for the others.
 */
int genl_from_kernel(struct nl_msg *msg, void *arg)
{
	static unsigned int nr_forged;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	__u32 port = nlmsg_get_src(msg)->nl_pid;

	(void)arg;
	if (!port)
		return NL_OK;
	if (nr_forged < FORGED_LOG_MAX)
		pr_err("ignored a message from port %u (cmd %u): not from the kernel",
		       port, genlmsg_valid_hdr(nlh, 0) ?
		       genlmsg_hdr(nlh)->cmd : 0);
	else if (nr_forged == FORGED_LOG_MAX)
		pr_err("further messages not from the kernel are not logged");
	if (nr_forged <= FORGED_LOG_MAX)
		nr_forged++;
	return NL_SKIP;
}

static int on_msg(struct nl_msg *msg, void *arg)
{
	struct umh *u = arg;
	struct genl *g = u->transport;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nlattr *tb[XDP_FLOW_ATTR_MAX + 1];
	struct umh_request req = {};
	struct umh_reply r = {};
	const char *missing;
	int err;

	if (nlh->nlmsg_type == GENL_ID_CTRL)
		return on_ctrl(g, msg);
	if (nlh->nlmsg_type != g->family)
		return NL_SKIP;

	err = genlmsg_parse(nlh, 0, tb, XDP_FLOW_ATTR_MAX, policy);
	if (!err)
		err = parse_request(genlmsg_hdr(nlh), tb, &req);
	missing = err ? NULL : request_missing(&req, tb);
	if (err || missing) {
		/* Malformed: answer it if it told us its SEQ at all. */
		pr_err("malformed request (cmd %u)%s%s",
		       genlmsg_hdr(nlh)->cmd, missing ? ", missing " : "",
		       missing ? missing : "");
		if (!tb[XDP_FLOW_ATTR_SEQ])
			return NL_SKIP;
		r.seq = req.seq;
		r.err = -EINVAL;
		snprintf(r.msg, sizeof(r.msg), "malformed request%s%s",
			 missing ? ": missing " : "", missing ? missing : "");
		genl_reply(g, &r);
		return NL_SKIP;
	}
	/*
	 * Only rule changes wait in the batch: the others may wait for the
	 * attach worker, which may need rtnl from a caller that waits for
	 * a reply in the batch.
	 */
	if (req.cmd != XDP_FLOW_CMD_RULE_ADD && req.cmd != XDP_FLOW_CMD_RULE_DEL)
		batch_flush(g);
	g->posted = req.posted;
	umh_handle(u, &req);
	g->posted = false;
	return u->exiting ? NL_STOP : NL_OK;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct umh *u = arg;
	struct genl *g = u->transport;

	if (nlmsg_hdr(msg)->nlmsg_seq == g->hello_seq && !g->hello_acked) {
		g->hello_acked = true;
		pr_info("registered with the module");
	}
	return NL_OK;
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct umh *u = arg;
	struct genl *g = u->transport;

	(void)nla;
	if (e->msg.nlmsg_seq == g->hello_seq) {
		pr_err("the module refused HELLO: %s", strerror(-e->error));
		g->fatal = e->error;
		return NL_STOP;
	}
	pr_err("the module refused a message (seq %u): %s",
	       e->msg.nlmsg_seq, strerror(-e->error));
	return NL_SKIP;
}

/* HELLO names the programs whose maps hold the module's gate and peers. */
static int send_hello(struct genl *g, int prog_fd, int tc_prog_fd)
{
	struct nl_msg *msg = nlmsg_alloc();
	int err = -NLE_NOMEM;

	if (!msg)
		return err;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, g->family, 0,
			 NLM_F_ACK, XDP_FLOW_CMD_HELLO, XDP_FLOW_GENL_VERSION) ||
	    nla_put_u32(msg, XDP_FLOW_ATTR_VERSION, XDP_FLOW_ABI_VERSION) ||
	    (prog_fd >= 0 && nla_put_u32(msg, XDP_FLOW_ATTR_PROG_FD, prog_fd)) ||
	    (tc_prog_fd >= 0 &&
	     nla_put_u32(msg, XDP_FLOW_ATTR_TC_PROG_FD, tc_prog_fd)))
		goto out;
	pthread_mutex_lock(&g->send_lock);
	err = nl_send_auto(g->sk, msg);
	g->hello_seq = nlmsg_hdr(msg)->nlmsg_seq;
	pthread_mutex_unlock(&g->send_lock);
out:
	nlmsg_free(msg);
	return err < 0 ? err : 0;
}

/**
 * genl_connect_kernel() - let only the kernel send to @sk
 * @sk: a connected libnl socket
 *
 * A connected netlink socket takes unicasts only from its peer: the kernel
 * refuses (ECONNREFUSED) those of any other user socket. Multicast, the
 * genl controller's notifications included, still arrives.
 *
 * Return: 0 or a negative errno.
 */
int genl_connect_kernel(struct nl_sock *sk)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	if (connect(nl_socket_get_fd(sk), (struct sockaddr *)&kernel,
		    sizeof(kernel)))
		return -errno;
	return 0;
}

static int genl_connect_family(struct genl *g)
{
	int fd, size = SOCK_BUF_SIZE, grp, err;

	g->sk = nl_socket_alloc();
	if (!g->sk)
		return -NLE_NOMEM;
	err = genl_connect(g->sk);
	if (err)
		return err;
	/* Before the first read: even the family's id is the kernel's word. */
	err = genl_connect_kernel(g->sk);
	if (err) {
		pr_err("cannot connect the netlink socket to the kernel: %s",
		       strerror(-err));
		return err;
	}
	nl_socket_modify_cb(g->sk, NL_CB_MSG_IN, NL_CB_CUSTOM, genl_from_kernel,
			    NULL);
	/* The module's requests carry their own SEQ attribute. */
	nl_socket_disable_seq_check(g->sk);
	/* One read a message, into a buffer that holds any request (no
	 * MSG_PEEK first to size it).
	 */
	nl_socket_disable_msg_peek(g->sk);
	err = nl_socket_set_msg_buf_size(g->sk, RECV_BUF_SIZE);
	if (err)
		return err;
	fd = nl_socket_get_fd(g->sk);
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)))
		nl_socket_set_buffer_size(g->sk, SOCK_BUF_SIZE, SOCK_BUF_SIZE);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));

	g->family = genl_ctrl_resolve(g->sk, XDP_FLOW_GENL_NAME);
	if (g->family < 0) {
		pr_err("generic netlink family %s not found (is xdp_flow loaded?)",
		       XDP_FLOW_GENL_NAME);
		return g->family;
	}
	grp = genl_ctrl_resolve_grp(g->sk, "nlctrl", "notify");
	if (grp < 0 || nl_socket_add_membership(g->sk, grp))
		pr_info("cannot watch the genl controller; unload goes unnoticed");
	return 0;
}

/* Before loading anything: is there a module to serve at all? Returns its
 * family id.
 */
int genl_check_family(void)
{
	struct nl_sock *sk = nl_socket_alloc();
	int family = -NLE_NOMEM;

	if (sk && !genl_connect(sk))
		family = genl_ctrl_resolve(sk, XDP_FLOW_GENL_NAME);
	if (sk)
		nl_socket_free(sk);
	if (family < 0)
		pr_err("generic netlink family %s not found (is xdp_flow loaded?)",
		       XDP_FLOW_GENL_NAME);
	return family;
}

int genl_run(struct umh *u)
{
	struct genl g = { .send_lock = PTHREAD_MUTEX_INITIALIZER,
			  .reply_fd = u->reply_fd, .loop = pthread_self() };
	struct nl_cb *cb = NULL;
	int err;

	if (g.reply_fd < 0) {
		pr_err("no --reply-fd: run by the module, which gives it");
		return 1;
	}
	u->reply = genl_reply;
	u->transport = &g;
	err = genl_connect_family(&g);
	if (err)
		goto out;

	nl_socket_modify_cb(g.sk, NL_CB_VALID, NL_CB_CUSTOM, on_msg, u);
	nl_socket_modify_cb(g.sk, NL_CB_ACK, NL_CB_CUSTOM, on_ack, u);
	nl_socket_modify_err_cb(g.sk, NL_CB_CUSTOM, on_error, u);

	/* Whatever the module replays from now on is the new state. */
	umh_begin_replay(u);
	err = send_hello(&g, u->skel ? dp_maps_prog_fd(u->skel) : -1,
			 u->skel ? dp_tc_maps_prog_fd(u->skel) : -1);
	if (err) {
		pr_err("cannot send HELLO: %s", nl_geterror(err));
		goto out;
	}

	/* Reads until none is left, then writes the replies and waits. */
	err = nl_socket_set_nonblocking(g.sk);
	cb = nl_socket_get_cb(g.sk);
	if (err || !cb) {
		pr_err("cannot set up the request loop: %s",
		       nl_geterror(err ?: -NLE_NOMEM));
		err = -1;
		goto out;
	}
	while (!u->exiting && !g.family_gone && !g.fatal) {
		struct pollfd p = { .fd = nl_socket_get_fd(g.sk),
				    .events = POLLIN };

		err = nl_recvmsgs_report(g.sk, cb);
		if (err > 0 || err == -NLE_INTR)
			continue;
		if (!err || err == -NLE_AGAIN) {
			bool due = u->table && table_idle_due(u->table);
			long long linger;
			int n;

			linger = batch_linger(&g);
			if (linger) {
				struct timespec ts = {
					.tv_sec = linger / 1000000,
					.tv_nsec = linger % 1000000 * 1000,
				};

				if (ppoll(&p, 1, &ts, NULL) > 0)
					continue;
			}
			batch_flush(&g);
			/* Work that waits for grace periods waits for quiet. */
			n = poll(&p, 1, due ? UMH_IDLE_MS : -1);
			if (!n)
				table_idle(u->table);
			if (n < 0 && errno != EINTR) {
				pr_err("waiting for requests: %s",
				       strerror(errno));
				break;
			}
			continue;
		}
		if (!u->exiting && !g.family_gone && !g.fatal) {
			pr_err("receiving: %s", nl_geterror(err));
			if (err == -NLE_BAD_SOCK)
				break;
		}
	}
	err = u->exiting ? 0 : -1;
out:
	/* SHUTDOWN's reply among them. */
	batch_flush(&g);
	if (cb)
		nl_cb_put(cb);
	/* A REPLY from the worker may still be on its way. */
	attach_wait_idle(u->attach);
	u->transport = NULL;
	if (g.sk)
		nl_socket_free(g.sk);
	return err ? 1 : 0;
}
