// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the channel the helper's answers come on.
 *
 * The helper sends its REPLY messages on its end of a SOCK_SEQPACKET pair
 * (--reply-fd), one pair per helper start, rather than over generic
 * netlink (see requests.c). A work item reads them, parses each as the
 * family would (proto.c) and hands it to the request it answers
 * (requests.c); a malformed one has the helper restarted.
 *
 * It owns the pair and its buffer; it calls proto.c and requests.c.
 */
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "xdp_flow.h"

/*
 * The replies' channel: a SOCK_SEQPACKET pair per helper start. The module
 * keeps one end; the other is installed in the new process only (see
 * xdp_flow_helper_setup()), so whatever arrives here comes from the helper
 * the module started (or from whom it gave its descriptor to). A datagram
 * holds one or more REPLY messages, whole; a work item takes them, so
 * nothing the waiting caller holds can keep a reply out.
 */
#define XDP_FLOW_REPLY_MAX	65536

static DEFINE_MUTEX(xdp_flow_reply_lock);
static struct socket *xdp_flow_reply_sock;	/* the module's end */
static void (*xdp_flow_reply_ready_orig)(struct sock *sk);
static void *xdp_flow_reply_buf;

static void xdp_flow_reply_work_fn(struct work_struct *work);
static DECLARE_WORK(xdp_flow_reply_work, xdp_flow_reply_work_fn);

static void xdp_flow_reply_ready(struct sock *sk)
{
	queue_work(system_highpri_wq, &xdp_flow_reply_work);
}

/*
 * Takes the REPLY messages in one datagram @buf of @len bytes. Returns
 * false when one is malformed: its request cannot be told its answer.
 */
static bool xdp_flow_replies_take(const void *buf, int len)
{
	struct nlattr *tb[XDP_FLOW_ATTR_MAX + 1];
	const struct nlmsghdr *nlh = buf;
	int rem = len;

	for (; nlmsg_ok(nlh, rem); nlh = nlmsg_next(nlh, &rem))
		if (xdp_flow_parse_reply(nlh, nlh->nlmsg_len, tb) ||
		    xdp_flow_helper_reply(tb))
			break;
	if (rem <= 0)
		return true;
	pr_warn_ratelimited("xdp_flow: a malformed reply from the helper (%d of %d bytes)\n",
			    rem, len);
	return false;
}

/*
 * A helper whose reply is malformed misbehaves: it is restarted, and what
 * waited for it fails as if it had gone (the replay then puts back every
 * rule), never as a refusal that would leave a rule in software for good.
 */
static void xdp_flow_reply_work_fn(struct work_struct *work)
{
	bool broken = false;
	int n;

	mutex_lock(&xdp_flow_reply_lock);
	while (xdp_flow_reply_sock) {
		struct kvec iov = {
			.iov_base = xdp_flow_reply_buf,
			.iov_len = XDP_FLOW_REPLY_MAX,
		};
		struct msghdr msg = {};

		n = kernel_recvmsg(xdp_flow_reply_sock, &msg, &iov, 1,
				   iov.iov_len, MSG_DONTWAIT);
		/* Nothing left, or the helper's end is closed. */
		if (n <= 0)
			break;
		if (msg.msg_flags & MSG_TRUNC) {
			pr_warn_ratelimited("xdp_flow: a reply from the helper over %d bytes\n",
					    XDP_FLOW_REPLY_MAX);
			broken = true;
			continue;
		}
		if (!xdp_flow_replies_take(xdp_flow_reply_buf, n))
			broken = true;
	}
	mutex_unlock(&xdp_flow_reply_lock);
	if (broken)
		xdp_flow_link.broken("it sent a malformed reply");
}

/**
 * xdp_flow_reply_open() - a new pair for a helper being started
 *
 * The previous helper's pair, if any, goes: that helper is gone.
 *
 * Return: the helper's end, or an ERR_PTR().
 */
struct socket *xdp_flow_reply_open(void)
{
	struct socket *mine, *theirs;
	int err;

	err = sock_create_kern(&init_net, AF_UNIX, SOCK_SEQPACKET, 0, &mine);
	if (err)
		return ERR_PTR(err);
	err = sock_create_kern(&init_net, AF_UNIX, SOCK_SEQPACKET, 0, &theirs);
	if (err) {
		sock_release(mine);
		return ERR_PTR(err);
	}
	err = mine->ops->socketpair(mine, theirs);
	if (err) {
		sock_release(theirs);
		sock_release(mine);
		return ERR_PTR(err);
	}
	write_lock_bh(&mine->sk->sk_callback_lock);
	xdp_flow_reply_ready_orig = mine->sk->sk_data_ready;
	mine->sk->sk_data_ready = xdp_flow_reply_ready;
	write_unlock_bh(&mine->sk->sk_callback_lock);

	mutex_lock(&xdp_flow_reply_lock);
	swap(mine, xdp_flow_reply_sock);
	mutex_unlock(&xdp_flow_reply_lock);
	/* The previous helper's end: that helper is gone. */
	if (mine)
		sock_release(mine);
	return theirs;
}

/**
 * xdp_flow_reply_exit() - close the pair and free the buffer
 *
 * Once the helper is gone, at module exit (and when the module's init
 * fails after xdp_flow_reply_init()).
 */
void xdp_flow_reply_exit(void)
{
	struct socket *mine;

	mutex_lock(&xdp_flow_reply_lock);
	mine = xdp_flow_reply_sock;
	xdp_flow_reply_sock = NULL;
	mutex_unlock(&xdp_flow_reply_lock);
	if (mine) {
		write_lock_bh(&mine->sk->sk_callback_lock);
		mine->sk->sk_data_ready = xdp_flow_reply_ready_orig;
		write_unlock_bh(&mine->sk->sk_callback_lock);
		sock_release(mine);
	}
	cancel_work_sync(&xdp_flow_reply_work);
	kvfree(xdp_flow_reply_buf);
	xdp_flow_reply_buf = NULL;
}

/**
 * xdp_flow_reply_init() - the buffer the answers are read into
 *
 * Return: 0 or -ENOMEM.
 */
int xdp_flow_reply_init(void)
{
	xdp_flow_reply_buf = kvmalloc(XDP_FLOW_REPLY_MAX, GFP_KERNEL);
	if (!xdp_flow_reply_buf)
		return -ENOMEM;
	return 0;
}
