// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_genl: random and malformed generic netlink messages to every
 * command of the xdp_flow family (selftests/guest/test_44_fuzz.sh).
 *
 * Usage: fuzz_genl [-n messages] [-s seed] [-i ifindex|name]... [-p port]...
 *                  [-a answer_ms] [-t stall_s] [-v]
 *
 *   -n  messages to build (default 10000); a batch of several in one
 *       send counts each of them
 *   -s  seed of the generator (default: from the clock); printed, so a
 *       run can be repeated exactly
 *   -i  a device whose ifindex the messages may carry (lo is always
 *       one), so that DEV_ENABLE and DEV_DISABLE act on real devices
 *   -p  a netlink port (the helper's) that some messages go to instead of
 *       the kernel
 *   -a  how long a message that asked for an ack may wait for its answer
 *       once everything queued was read (default 5000 ms); one that gets
 *       none by then counts as unanswered
 *   -t  a send or wait that takes longer than this (default 60 s) is a
 *       hang: the program says which message and exits 3
 *   -v  print the first few unanswered messages and odd events
 *
 * Messages: commands 0 to past XDP_FLOW_CMD_MAX and random ones (the
 * helper's HELLO, REPLY, RULE_ADD... included); attributes of every
 * XDP_FLOW_ATTR_* id and out-of-range ids, of lengths 0, short, exact,
 * long and the sizes of the uapi structures, with plausible or random
 * content, nested garbage, lengths that overrun the message; random
 * nlmsg flags (NLM_F_DUMP on do operations and the other way round,
 * NLM_F_ACK, NLM_F_ECHO...), truncated netlink and genetlink headers,
 * random genetlink versions, zero-length and huge sends, several messages
 * in one send, dumps abandoned half-read on a socket closed at once.
 *
 * Every answer is read (non-blocking after each send, dumps drained): the
 * socket never fills. A message with NLM_F_REQUEST | NLM_F_ACK and a
 * header the kernel can parse must get an answer (an ack, an error, a
 * reply or the end of a dump): those that do not are counted as
 * unanswered.
 *
 * Output: one line, "fuzz_genl: seed S messages N sends N ... unanswered
 * U ... answers: ok=N EINVAL=N ...", the errno histogram of the kernel's
 * answers (ok: acks of success) and of the sends that failed, and by
 * command the acks of success and replies (ok_by_cmd: cmd=count).
 * Exit status: 0; 1 when the family cannot be resolved (at the start or
 * after the run: it vanished) or does not answer a status request after
 * the run; 2 on a usage error; 3 on a hang.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/xdp_flow.h>

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_GET_STRICT_CHK
#define NETLINK_GET_STRICT_CHK 12
#endif

#define BUF_SIZE	(256 * 1024)
#define MAX_MSG		(64 * 1024)
#define MAX_BATCH	4
#define MAX_ERRNO	4096
#define MAX_IFINDEX	32
#define MAX_PORTS	16

static uint64_t rng_state;

static uint64_t rnd64(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint32_t rnd(uint32_t n)
{
	return n ? (uint32_t)((rnd64() >> 32) % n) : 0;
}

/* true with probability pct / 100 */
static bool chance(unsigned int pct)
{
	return rnd(100) < pct;
}

static void rnd_bytes(void *p, size_t n)
{
	uint8_t *b = p;
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!(i & 7))
			v = rnd64();
		b[i] = v;
		v >>= 8;
	}
}

static uint32_t ifindexes[MAX_IFINDEX];
static int nr_ifindexes;
static uint32_t ports[MAX_PORTS];
static int nr_ports;
static int verbose;

static int family_id;
static const char *family_name = XDP_FLOW_GENL_NAME;
static uint8_t sendbuf[MAX_BATCH * (MAX_MSG + 64)];
static uint8_t recvbuf[BUF_SIZE];

/* What happened (for the summary line). */
static unsigned long answers[MAX_ERRNO];	/* kernel's answers by errno */
static unsigned long ok_by_cmd[256];	/* acks of success, replies */
static unsigned long send_errs[MAX_ERRNO];	/* failed sends by errno */
static unsigned long n_msgs, n_sends, n_bytes, n_replies, n_dumps_done;
static unsigned long n_must, n_unanswered, n_late, n_overruns, n_abandoned;
static unsigned long n_to_helper, n_truncated_recv;
static volatile unsigned long cur_msg;
static volatile int cur_cmd, cur_flags;

static void on_alarm(int sig)
{
	char line[160];
	int n;

	(void)sig;
	n = snprintf(line, sizeof(line),
		     "fuzz_genl: HANG: message %lu (cmd %d, flags 0x%x) not done within the stall limit\n",
		     cur_msg, cur_cmd, cur_flags);
	if (n > 0 && write(STDOUT_FILENO, line, n) < 0)
		n = 0;
	_exit(3);
}

static int nl_open(bool strict)
{
	int fd, one = 1, rcvbuf = 4 << 20;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	if (strict)
		setsockopt(fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one,
			   sizeof(one));
	return fd;
}

/* ---- family resolution (CTRL_CMD_GETFAMILY) ---- */

static int resolve_family(int fd, int timeout_ms)
{
	struct {
		struct nlmsghdr nlh;
		struct genlmsghdr gh;
		struct nlattr na;
		char name[GENL_NAMSIZ];
	} req;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	uint32_t seq = 0x7f000000u + rnd(0xffff);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int id = -ENOENT;

	memset(&req, 0, sizeof(req));
	req.na.nla_type = CTRL_ATTR_FAMILY_NAME;
	strncpy(req.name, family_name, sizeof(req.name) - 1);
	req.na.nla_len = NLA_HDRLEN + strlen(req.name) + 1;
	req.nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN +
			    NLA_ALIGN(req.na.nla_len);
	req.nlh.nlmsg_type = GENL_ID_CTRL;
	req.nlh.nlmsg_flags = NLM_F_REQUEST;
	req.nlh.nlmsg_seq = seq;
	req.gh.cmd = CTRL_CMD_GETFAMILY;
	req.gh.version = 1;
	if (sendto(fd, &req, req.nlh.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;
	for (;;) {
		struct nlmsghdr *nlh;
		ssize_t n;
		int len;

		if (poll(&pfd, 1, timeout_ms) <= 0)
			return -ETIMEDOUT;
		n = recv(fd, recvbuf, sizeof(recvbuf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR || errno == ENOBUFS)
				continue;
			return -errno;
		}
		len = n;
		for (nlh = (void *)recvbuf; NLMSG_OK(nlh, len);
		     nlh = NLMSG_NEXT(nlh, len)) {
			struct nlattr *a;
			int rem;

			if (nlh->nlmsg_seq != seq)
				continue;
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nlh);

				return e->error ? e->error : id;
			}
			if (nlh->nlmsg_type != GENL_ID_CTRL)
				continue;
			rem = nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
			a = (void *)((char *)NLMSG_DATA(nlh) + GENL_HDRLEN);
			while (rem >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
			       a->nla_len <= rem) {
				if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID &&
				    a->nla_len >= NLA_HDRLEN + 2)
					id = *(uint16_t *)((char *)a + NLA_HDRLEN);
				rem -= NLA_ALIGN(a->nla_len);
				a = (void *)((char *)a + NLA_ALIGN(a->nla_len));
			}
			return id;
		}
	}
}

/* ---- message generation ---- */

struct gen {
	uint8_t *p;	/* start of the message */
	size_t len;	/* bytes written */
	size_t cap;
};

static void *put(struct gen *g, size_t n)
{
	void *p;

	if (g->len + n > g->cap)
		return NULL;
	p = g->p + g->len;
	g->len += n;
	return p;
}

static uint32_t pick_ifindex(void)
{
	switch (rnd(8)) {
	case 0:
		return 0;
	case 1:
		return 0xffffffffu;
	case 2:
		return 0x10000u + rnd(0x7fff0000u);	/* no such device */
	case 3:
		return (uint32_t)-(int32_t)(1 + rnd(4));
	default:
		return ifindexes[rnd(nr_ifindexes)];
	}
}

/* A u32 that means something to some attribute. */
static uint32_t pick_u32(int type)
{
	switch (type) {
	case XDP_FLOW_ATTR_IFINDEX:
		return pick_ifindex();
	case XDP_FLOW_ATTR_XDP_MODE:
		return chance(80) ? rnd(XDP_FLOW_XDP_MODE_AUTO + 1) : rnd64();
	case XDP_FLOW_ATTR_VERSION:
		return chance(50) ? XDP_FLOW_ABI_VERSION : rnd(40);
	case XDP_FLOW_ATTR_PROG_FD:
	case XDP_FLOW_ATTR_TC_PROG_FD:
		return chance(70) ? rnd(64) : rnd64();
	case XDP_FLOW_ATTR_ERROR:
		return chance(50) ? (uint32_t)-(int32_t)rnd(140) : (uint32_t)rnd64();
	case XDP_FLOW_ATTR_RULE_ID:
		return chance(50) ? rnd(16) :
		       chance(50) ? XDP_FLOW_MAX_RULES - 1 - rnd(XDP_FLOW_MAX_SHIELDS + 2) :
		       rnd64();
	case XDP_FLOW_ATTR_SEQ:
		return chance(50) ? rnd(64) : rnd64();
	default:
		switch (rnd(4)) {
		case 0:
			return 0;
		case 1:
			return rnd(8);
		case 2:
			return 0xffffffffu;
		default:
			return rnd64();
		}
	}
}

static void fill_rule(struct xdp_flow_rule *r)
{
	uint32_t i;

	rnd_bytes(r, sizeof(*r));
	if (chance(50))
		return;
	r->id = chance(70) ? rnd(64) : r->id;
	r->flags &= 0xf;
	r->nr_actions = rnd(XDP_FLOW_MAX_ACTIONS + 3);
	r->key.ifindex = pick_ifindex();
	r->mask.ifindex = ~0u;
	for (i = 0; i < XDP_FLOW_MAX_ACTIONS; i++) {
		r->actions[i].id = rnd(__XDP_FLOW_ACTION_MAX + 2);
		if (r->actions[i].id == XDP_FLOW_ACTION_REDIRECT ||
		    r->actions[i].id == XDP_FLOW_ACTION_MIRROR ||
		    r->actions[i].id == XDP_FLOW_ACTION_REDIRECT_INGRESS ||
		    r->actions[i].id == XDP_FLOW_ACTION_MIRROR_INGRESS)
			r->actions[i].ifindex = pick_ifindex();
	}
}

/* Lengths an attribute payload may get. */
static size_t pick_len(int type)
{
	switch (rnd(16)) {
	case 0:
		return 0;
	case 1:
		return 1 + rnd(3);
	case 2:
		return 5 + rnd(4);
	case 3:
		return sizeof(struct xdp_flow_rule);
	case 4:
		return sizeof(struct xdp_flow_rule) - 1 - rnd(8);
	case 5:
		return sizeof(struct xdp_flow_rule) + 1 + rnd(8);
	case 6:
		return sizeof(struct xdp_flow_stats) * (1 + rnd(4));
	case 7:
		return sizeof(struct xdp_flow_stats) - 1;
	case 8:
		return sizeof(struct xdp_flow_room);
	case 9:
		return 255 + rnd(3);
	case 10:
		return rnd(600);
	case 11:
		return 2;
	default:
		/* the right size for a u32 or the struct */
		if (type == XDP_FLOW_ATTR_RULE)
			return sizeof(struct xdp_flow_rule);
		if (type == XDP_FLOW_ATTR_STATS)
			return sizeof(struct xdp_flow_stats);
		if (type == XDP_FLOW_ATTR_ROOM)
			return sizeof(struct xdp_flow_room);
		if (type == XDP_FLOW_ATTR_MSG || type == XDP_FLOW_ATTR_HOOK_WHY ||
		    type == XDP_FLOW_ATTR_ALL_KIND)
			return 1 + rnd(40);
		if (type == XDP_FLOW_ATTR_TO_STACK || type == XDP_FLOW_ATTR_PROGRESS ||
		    type == XDP_FLOW_ATTR_POSTED)
			return 0;
		return 4;
	}
}

/* One attribute of @type (flag bits included) with @len bytes. */
static void put_attr(struct gen *g, uint16_t type, size_t len, int depth)
{
	struct nlattr *a;
	size_t start = g->len;
	uint8_t *d;

	a = put(g, NLA_HDRLEN);
	if (!a)
		return;
	a->nla_type = type;
	if ((type & NLA_F_NESTED) && depth < 3 && chance(80)) {
		/* nested garbage: random attributes inside */
		int k, nr = rnd(4);

		for (k = 0; k < nr; k++)
			put_attr(g, rnd(XDP_FLOW_ATTR_MAX + 4) |
				 (chance(10) ? NLA_F_NESTED : 0),
				 pick_len(0), depth + 1);
		a = (void *)(g->p + start);
		a->nla_len = g->len - start;
		return;
	}
	d = put(g, NLA_ALIGN(len));
	if (!d) {
		g->len = start;
		return;
	}
	memset(d + len, 0, NLA_ALIGN(len) - len);
	a->nla_len = NLA_HDRLEN + len;
	if (len == 4 && chance(85)) {
		uint32_t v = pick_u32(type & NLA_TYPE_MASK);

		memcpy(d, &v, 4);
	} else if ((type & NLA_TYPE_MASK) == XDP_FLOW_ATTR_RULE &&
		   len == sizeof(struct xdp_flow_rule)) {
		fill_rule((void *)d);
	} else if (len && chance(30)) {
		/* a string, NUL-terminated or not */
		size_t i;

		for (i = 0; i < len; i++)
			d[i] = 'a' + rnd(26);
		if (chance(70))
			d[len - 1] = 0;
	} else {
		rnd_bytes(d, len);
	}
}

/* What each command takes, to reach past the policy more often. */
static void put_valid_attrs(struct gen *g, int cmd)
{
	switch (cmd) {
	case XDP_FLOW_CMD_DEV_ENABLE:
		put_attr(g, XDP_FLOW_ATTR_IFINDEX, 4, 0);
		if (chance(60))
			put_attr(g, XDP_FLOW_ATTR_XDP_MODE, 4, 0);
		break;
	case XDP_FLOW_CMD_DEV_DISABLE:
	case XDP_FLOW_CMD_RULE_GET:
	case XDP_FLOW_CMD_DEV_ATTACH:
	case XDP_FLOW_CMD_DEV_DETACH:
		if (chance(80))
			put_attr(g, XDP_FLOW_ATTR_IFINDEX, 4, 0);
		break;
	case XDP_FLOW_CMD_HELLO:
		put_attr(g, XDP_FLOW_ATTR_VERSION, 4, 0);
		if (chance(60))
			put_attr(g, XDP_FLOW_ATTR_PROG_FD, 4, 0);
		if (chance(60))
			put_attr(g, XDP_FLOW_ATTR_TC_PROG_FD, 4, 0);
		if (chance(30))
			put_attr(g, XDP_FLOW_ATTR_PID, 4, 0);
		break;
	case XDP_FLOW_CMD_REPLY:
		put_attr(g, XDP_FLOW_ATTR_SEQ, 4, 0);
		put_attr(g, XDP_FLOW_ATTR_ERROR, 4, 0);
		if (chance(40))
			put_attr(g, XDP_FLOW_ATTR_ROOM, sizeof(struct xdp_flow_room), 0);
		if (chance(40))
			put_attr(g, XDP_FLOW_ATTR_STATS,
				 sizeof(struct xdp_flow_stats) * (1 + rnd(3)), 0);
		if (chance(20))
			put_attr(g, XDP_FLOW_ATTR_PROGRESS, 0, 0);
		break;
	case XDP_FLOW_CMD_RULE_ADD:
		put_attr(g, XDP_FLOW_ATTR_SEQ, 4, 0);
		put_attr(g, XDP_FLOW_ATTR_RULE, sizeof(struct xdp_flow_rule), 0);
		if (chance(30))
			put_attr(g, XDP_FLOW_ATTR_POSTED, 0, 0);
		break;
	case XDP_FLOW_CMD_RULE_DEL:
	case XDP_FLOW_CMD_STATS_GET:
		put_attr(g, XDP_FLOW_ATTR_SEQ, 4, 0);
		if (chance(70))
			put_attr(g, XDP_FLOW_ATTR_RULE_ID, 4, 0);
		break;
	case XDP_FLOW_CMD_SYNC:
	case XDP_FLOW_CMD_SHUTDOWN:
		put_attr(g, XDP_FLOW_ATTR_SEQ, 4, 0);
		break;
	default:
		break;
	}
}

static void put_random_attrs(struct gen *g)
{
	int k, nr = rnd(9);

	for (k = 0; k < nr; k++) {
		uint16_t type;

		if (chance(90))
			type = rnd(XDP_FLOW_ATTR_MAX + 5);
		else
			type = rnd(0x10000);
		if (chance(5))
			type |= NLA_F_NESTED;
		put_attr(g, type, pick_len(type & NLA_TYPE_MASK), 0);
	}
}

/*
 * Builds one message at @g; returns the bytes to send of it (which may be
 * less than what its header says) and sets *must when the kernel has to
 * answer it.
 */
static size_t gen_msg(struct gen *g, uint32_t seq, bool *must, int *cmdp,
		      int *flagsp)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *gh;
	uint16_t flags = 0;
	size_t len, sent;
	int cmd;

	*must = false;
	nlh = put(g, NLMSG_HDRLEN);
	gh = put(g, GENL_HDRLEN);

	if (chance(85))
		cmd = rnd(__XDP_FLOW_CMD_MAX + 3);
	else
		cmd = rnd(256);
	if (chance(96))
		flags |= NLM_F_REQUEST;
	if (chance(60))
		flags |= NLM_F_ACK;
	if (cmd == XDP_FLOW_CMD_DEV_GET || cmd == XDP_FLOW_CMD_RULE_GET) {
		if (chance(80))
			flags |= NLM_F_DUMP;
	} else if (chance(15)) {
		flags |= NLM_F_DUMP;
	}
	if (chance(5))
		flags |= NLM_F_ECHO;
	if (chance(5))
		flags |= rnd(0x10000);

	nlh->nlmsg_type = family_id;
	if (chance(1))
		nlh->nlmsg_type = rnd(NLMSG_MIN_TYPE);	/* control types */
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = chance(97) ? 0 : rnd64();
	gh->cmd = cmd;
	gh->version = chance(90) ? XDP_FLOW_GENL_VERSION : rnd(256);
	gh->reserved = chance(95) ? 0 : rnd(0x10000);

	switch (rnd(20)) {
	case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7:
	case 8: case 9:
		put_valid_attrs(g, cmd);
		if (chance(25))
			put_random_attrs(g);
		break;
	case 10: case 11: case 12: case 13: case 14: case 15: case 16:
		put_random_attrs(g);
		break;
	case 17: case 18: {
		/* garbage after the genetlink header */
		size_t n = rnd(chance(95) ? 300 : 4000);
		void *d = put(g, n);

		if (d)
			rnd_bytes(d, n);
		break;
	}
	default: {
		/* huge: many attributes, or one long one */
		size_t n = chance(50) ? 8000 + rnd(MAX_MSG - 9000) : 0;

		if (n) {
			put_attr(g, rnd(XDP_FLOW_ATTR_MAX + 3), n, 0);
		} else {
			int k, nr = 100 + rnd(400);

			for (k = 0; k < nr; k++)
				put_attr(g, rnd(XDP_FLOW_ATTR_MAX + 1), 4, 0);
		}
		break;
	}
	}
	len = g->len;
	nlh->nlmsg_len = len;
	sent = len;
	/* Corrupt the header's lengths now and then. */
	switch (rnd(40)) {
	case 0:	/* shorter than a netlink header */
		nlh->nlmsg_len = rnd(NLMSG_HDRLEN);
		break;
	case 1:	/* says more than there is */
		nlh->nlmsg_len = len + 1 + rnd(1000);
		break;
	case 2:	/* a truncated genetlink header */
		sent = NLMSG_HDRLEN + rnd(GENL_HDRLEN);
		nlh->nlmsg_len = chance(50) ? sent : len;
		break;
	case 3:	/* says less than there is: trailing bytes */
		if (len > NLMSG_HDRLEN + GENL_HDRLEN)
			nlh->nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN +
					 rnd(len - NLMSG_HDRLEN - GENL_HDRLEN);
		break;
	case 4:	/* the send cut short */
		sent = rnd(len + 1);
		break;
	case 5: /* an attribute that overruns the message */
		if (len >= NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN) {
			struct nlattr *a = (void *)(g->p + NLMSG_HDRLEN + GENL_HDRLEN);

			a->nla_len = chance(50) ? rnd(NLA_HDRLEN) :
				     len - NLMSG_HDRLEN - GENL_HDRLEN + 1 + rnd(64);
		}
		break;
	default:
		break;
	}
	/* The kernel parses it, asked for an answer: it must give one. */
	*must = sent >= NLMSG_HDRLEN && nlh->nlmsg_len >= NLMSG_HDRLEN &&
		nlh->nlmsg_len <= sent &&
		(flags & (NLM_F_REQUEST | NLM_F_ACK)) == (NLM_F_REQUEST | NLM_F_ACK) &&
		nlh->nlmsg_type >= NLMSG_MIN_TYPE;
	*cmdp = cmd;
	*flagsp = flags;
	return sent;
}

/* ---- answers ---- */

struct pending {
	uint32_t seq[MAX_BATCH];
	bool must[MAX_BATCH];
	bool seen[MAX_BATCH];
	int cmd[MAX_BATCH];
	char what[MAX_BATCH][64];	/* for -v */
	int nr;
};

static void note_errno(unsigned long *hist, int e)
{
	if (e < 0)
		e = -e;
	if (e >= MAX_ERRNO)
		e = MAX_ERRNO - 1;
	hist[e]++;
}

/* @ok: an ack of success or a reply (not the end of a dump) */
static void mark_seen(struct pending *p, uint32_t seq, bool ok)
{
	int i;

	for (i = 0; i < p->nr; i++) {
		if (p->seq[i] == seq) {
			p->seen[i] = true;
			if (ok && p->cmd[i] >= 0)
				ok_by_cmd[p->cmd[i] & 0xff]++;
			return;
		}
	}
	n_late++;
}

static bool all_seen(const struct pending *p)
{
	int i;

	for (i = 0; i < p->nr; i++)
		if (p->must[i] && !p->seen[i])
			return false;
	return true;
}

/* Reads what is queued (reading also moves dumps on); 0 when nothing was. */
static int read_some(int fd, struct pending *p)
{
	struct nlmsghdr *nlh;
	ssize_t n;
	int len;

	n = recv(fd, recvbuf, sizeof(recvbuf), MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0) {
		if (errno == ENOBUFS) {
			n_overruns++;
			return 1;
		}
		return 0;
	}
	if (n > (ssize_t)sizeof(recvbuf)) {
		n_truncated_recv++;
		n = sizeof(recvbuf);
	}
	len = n;
	for (nlh = (void *)recvbuf; NLMSG_OK(nlh, len); nlh = NLMSG_NEXT(nlh, len)) {
		bool ok = false;

		if (nlh->nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr *e = NLMSG_DATA(nlh);

			if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(*e))) {
				note_errno(answers, e->error);
				ok = !e->error;
			}
		} else if (nlh->nlmsg_type == NLMSG_DONE) {
			n_dumps_done++;
		} else {
			n_replies++;
			ok = true;
		}
		mark_seen(p, nlh->nlmsg_seq, ok);
	}
	return 1;
}

/* Drains the socket; waits up to @answer_ms for the answers @p must get. */
static void drain(int fd, struct pending *p, int answer_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec t0, t;
	int i;

	while (read_some(fd, p))
		;
	if (all_seen(p))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long left;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = answer_ms - ((t.tv_sec - t0.tv_sec) * 1000 +
				    (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			break;
		while (read_some(fd, p))
			;
		if (all_seen(p))
			return;
	}
	for (i = 0; i < p->nr; i++) {
		if (p->must[i] && !p->seen[i]) {
			n_unanswered++;
			if (verbose && n_unanswered <= 10)
				fprintf(stderr, "fuzz_genl: message seq %u (%s) got no answer within %d ms\n",
					p->seq[i], p->what[i], answer_ms);
		}
	}
}

/* A dump started on a socket of its own, maybe read a little, abandoned. */
static void abandon_dump(uint32_t seq)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct {
		struct nlmsghdr nlh;
		struct genlmsghdr gh;
		struct nlattr na;
		uint32_t ifindex;
	} req;
	int fd = nl_open(chance(50));

	if (fd < 0)
		return;
	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN;
	if (chance(50)) {
		req.na.nla_type = XDP_FLOW_ATTR_IFINDEX;
		req.na.nla_len = NLA_HDRLEN + 4;
		req.ifindex = pick_ifindex();
		req.nlh.nlmsg_len += NLA_HDRLEN + 4;
	}
	req.nlh.nlmsg_type = family_id;
	req.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP | (chance(50) ? NLM_F_ACK : 0);
	req.nlh.nlmsg_seq = seq;
	req.gh.cmd = chance(50) ? XDP_FLOW_CMD_RULE_GET : XDP_FLOW_CMD_DEV_GET;
	req.gh.version = XDP_FLOW_GENL_VERSION;
	if (sendto(fd, &req, req.nlh.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) >= 0) {
		n_abandoned++;
		if (chance(50) && recv(fd, recvbuf, 64, MSG_DONTWAIT) < 0)
			n_abandoned += 0;
	}
	close(fd);
}

/* After the run: the family is there and answers STATUS_GET. */
static int check_alive(int fd, int answer_ms)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct {
		struct nlmsghdr nlh;
		struct genlmsghdr gh;
	} req;
	struct pending p = { .nr = 1 };
	unsigned long replies = n_replies;
	int id;

	id = resolve_family(fd, answer_ms);
	if (id < 0) {
		printf("fuzz_genl: the family %s is gone after the run: %s\n",
		       family_name, strerror(-id));
		return 1;
	}
	if (id != family_id) {
		printf("fuzz_genl: the family %s has id %d after the run, not %d\n",
		       family_name, id, family_id);
		return 1;
	}
	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = family_id;
	req.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.nlh.nlmsg_seq = p.seq[0] = 0x7fffffff;
	p.must[0] = true;
	req.gh.cmd = XDP_FLOW_CMD_STATUS_GET;
	req.gh.version = XDP_FLOW_GENL_VERSION;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0) {
		printf("fuzz_genl: STATUS_GET after the run: %s\n", strerror(errno));
		return 1;
	}
	drain(fd, &p, answer_ms);
	if (!p.seen[0] || n_replies == replies) {
		printf("fuzz_genl: no status from the module after the run\n");
		return 1;
	}
	return 0;
}

static void print_hist(const char *what, const unsigned long *hist)
{
	int e;

	printf(" %s:", what);
	for (e = 0; e < MAX_ERRNO; e++) {
		const char *name;

		if (!hist[e])
			continue;
		name = e ? strerrorname_np(e) : "ok";
		if (name)
			printf(" %s=%lu", name, hist[e]);
		else
			printf(" E%d=%lu", e, hist[e]);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: fuzz_genl [-n messages] [-s seed] [-i ifindex|name]... [-p port]... [-a answer_ms] [-t stall_s] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	unsigned long messages = 10000, i;
	unsigned int stall_s = 60;
	int answer_ms = 5000;
	uint64_t seed = 0;
	bool seeded = false;
	struct timespec t0, t1;
	double secs;
	int fd, opt, rc;
	char *end;

	while ((opt = getopt(argc, argv, "n:s:i:p:a:t:vF:")) != -1) {
		switch (opt) {
		case 'n':
			messages = strtoul(optarg, &end, 0);
			if (*end)
				usage();
			break;
		case 's':
			seed = strtoull(optarg, &end, 0);
			if (*end)
				usage();
			seeded = true;
			break;
		case 'i': {
			unsigned long v = strtoul(optarg, &end, 0);

			if (*end)
				v = if_nametoindex(optarg);
			if (!v) {
				fprintf(stderr, "fuzz_genl: no device %s\n", optarg);
				exit(2);
			}
			if (nr_ifindexes < MAX_IFINDEX)
				ifindexes[nr_ifindexes++] = v;
			break;
		}
		case 'p':
			if (nr_ports < MAX_PORTS)
				ports[nr_ports++] = strtoul(optarg, NULL, 0);
			break;
		case 'a':
			answer_ms = atoi(optarg);
			break;
		case 't':
			stall_s = atoi(optarg);
			break;
		case 'v':
			verbose = 1;
			break;
		case 'F':	/* another family: to try the fuzzer itself */
			family_name = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (!seeded) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = ((uint64_t)ts.tv_sec * 1000000007ULL) ^ ts.tv_nsec ^
		       ((uint64_t)getpid() << 32);
	}
	rng_state = seed ? seed : 0x9e3779b97f4a7c15ULL;
	if (nr_ifindexes < MAX_IFINDEX && if_nametoindex("lo"))
		ifindexes[nr_ifindexes++] = if_nametoindex("lo");
	if (!nr_ifindexes)
		ifindexes[nr_ifindexes++] = 1;
	printf("fuzz_genl: seed %llu messages %lu\n", (unsigned long long)seed,
	       messages);
	fflush(stdout);

	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	fd = nl_open(false);
	if (fd < 0) {
		perror("fuzz_genl: socket");
		return 1;
	}
	alarm(stall_s);
	family_id = resolve_family(fd, answer_ms);
	if (family_id < 0) {
		printf("fuzz_genl: cannot resolve the family %s: %s\n",
		       family_name, strerror(-family_id));
		return 1;
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < messages;) {
		struct gen g = { .p = sendbuf, .cap = sizeof(sendbuf) };
		struct pending p = { .nr = 0 };
		struct sockaddr_nl to = kernel;
		size_t total = 0;
		int k, nr = 1;
		ssize_t n;

		cur_msg = i;
		alarm(stall_s);
		if (chance(1) && chance(20)) {
			abandon_dump(0x40000000u + i);
			i++;
			n_msgs++;
			continue;
		}
		if (chance(5))
			nr = 2 + rnd(MAX_BATCH - 1);
		if (nr > (int)(messages - i))
			nr = messages - i;
		for (k = 0; k < nr; k++) {
			struct gen m = { .p = sendbuf + total,
					 .cap = MAX_MSG };
			bool must;
			size_t sent;
			int cmd, flags;

			sent = gen_msg(&m, i + 1, &must, &cmd, &flags);
			cur_cmd = cmd;
			cur_flags = flags;
			p.seq[p.nr] = i + 1;
			p.must[p.nr] = must;
			p.seen[p.nr] = false;
			/* only what reaches the family's operations */
			p.cmd[p.nr] = (flags & NLM_F_REQUEST) &&
				      ((struct nlmsghdr *)m.p)->nlmsg_type == family_id ?
				      cmd : -1;
			if (verbose)
				snprintf(p.what[p.nr], sizeof(p.what[0]),
					 "cmd %d flags 0x%x len %u of %zu, batch %d",
					 cmd, flags, ((struct nlmsghdr *)m.p)->nlmsg_len,
					 sent, nr);
			p.nr++;
			i++;
			n_msgs++;
			if (nr > 1) {
				/*
				 * In a batch, the kernel stops at the first
				 * header it cannot take: only whole,
				 * aligned messages before that count.
				 */
				struct nlmsghdr *nlh = (void *)m.p;

				if (sent != m.len || nlh->nlmsg_len != m.len) {
					total += sent;
					break;
				}
				total += NLMSG_ALIGN(sent);
			} else {
				total = sent;
			}
		}
		for (k = 0; k < p.nr; k++)
			if (p.must[k])
				n_must++;
		g.len = total;
		if (chance(1) && chance(50))
			g.len = 0;	/* a zero-length send */
		if (nr_ports && chance(3)) {
			to.nl_pid = ports[rnd(nr_ports)];
			n_to_helper++;
			for (k = 0; k < p.nr; k++)
				p.must[k] = false;
		}
		if (!g.len)
			for (k = 0; k < p.nr; k++)
				p.must[k] = false;
		n = sendto(fd, sendbuf, g.len, 0, (struct sockaddr *)&to, sizeof(to));
		n_sends++;
		if (n < 0) {
			note_errno(send_errs, errno);
			for (k = 0; k < p.nr; k++)
				p.must[k] = false;
		} else {
			n_bytes += n;
		}
		drain(fd, &p, answer_ms);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;

	alarm(stall_s);
	rc = check_alive(fd, answer_ms);
	alarm(0);
	printf("fuzz_genl: seed %llu messages %lu sends %lu bytes %lu seconds %.1f rate %.0f/s must_answer %lu unanswered %lu replies %lu dumps_done %lu late %lu overruns %lu abandoned_dumps %lu to_helper %lu alive %s;",
	       (unsigned long long)seed, n_msgs, n_sends, n_bytes, secs,
	       secs > 0 ? n_msgs / secs : 0.0, n_must, n_unanswered,
	       n_replies, n_dumps_done, n_late, n_overruns, n_abandoned,
	       n_to_helper, rc ? "no" : "yes");
	print_hist("answers", answers);
	printf(";");
	print_hist("send_errors", send_errs);
	printf("; ok_by_cmd:");
	for (i = 0; i < 256; i++)
		if (ok_by_cmd[i])
			printf(" %lu=%lu", i, ok_by_cmd[i]);
	printf("\n");
	close(fd);
	return rc;
}
