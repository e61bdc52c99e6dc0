// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: requests to the helper and their answers.
 *
 * Requests go to the helper over the generic netlink family, each answered
 * by one REPLY, which the helper sends on its end of a socket pair the
 * module gave it at start (reply.c brings them here): not over generic
 * netlink, whose receive path takes genetlink's global lock, which a caller
 * waiting for the reply may be keeping a writer (a family being
 * registered) from, and which that writer would keep the reply from.
 *
 * A request is waited for (xdp_flow_helper_call()), or posted
 * (xdp_flow_helper_post_rule()) when the helper surely has room for it, and
 * its answer goes to a callback. A helper that does not answer in time is
 * restarted, as is one whose answer is malformed.
 *
 * It owns the requests, what the helper said of its room, and the link
 * (struct xdp_flow_link): where requests go and whom to tell that the
 * helper misbehaves, which helper.c keeps up to date. It calls params.c
 * (the timeout).
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>

#include "xdp_flow.h"

/* DEV_ATTACH needs rtnl in the helper, which may wait for it. */
#define XDP_FLOW_ATTACH_TIMEOUT_MS	10000

struct xdp_flow_link xdp_flow_link = {
	.state = XDP_FLOW_HELPER_STOPPED,
};

/*
 * A request sent to the helper: waited for (xdp_flow_helper_call()), or
 * posted (xdp_flow_helper_post_rule()), whose @posted callback gets the
 * answer instead.
 *
 * A request is listed before it is sent, so that an answer that comes
 * before the sender's genlmsg_unicast() returned finds it. A posted one is
 * still its sender's until then (@sending): a send that fails frees it,
 * and the caller settles what it was for. So while @sending, neither the
 * answer nor xdp_flow_requests_fail() settles it: they record the outcome
 * (@answered, @err), and the sender gives it to @posted once its send
 * succeeded, or drops it when the send failed (the helper never got it).
 */
struct xdp_flow_request {
	struct list_head list;
	u32 seq;
	int err;
	bool sending;		/* posted, its sender's send not returned yet */
	bool answered;		/* while @sending: @err is the outcome */
	unsigned int progress;	/* progress reports so far */
	bool have_stats;
	struct xdp_flow_stats stats;
	char msg[128];
	struct completion done;
	void (*posted)(void *arg, int err);
	void *arg;
	bool add;		/* a posted RULE_ADD */
};

static LIST_HEAD(xdp_flow_requests);
static DEFINE_SPINLOCK(xdp_flow_requests_lock);
static u32 xdp_flow_next_seq;

/*
 * Under xdp_flow_requests_lock: the room the running helper reported last,
 * the posted requests not answered yet (and how many are RULE_ADDs, which
 * the room reported does not count yet), and when the helper last answered.
 */
static struct xdp_flow_room xdp_flow_room;
static bool xdp_flow_room_known;
static unsigned int xdp_flow_nr_posted;
static unsigned int xdp_flow_nr_posted_adds;
static unsigned long xdp_flow_answered_at;
/* Set by xdp_flow_requests_stop(): nothing arms the posted-watch again. */
static bool xdp_flow_posted_watch_off;
static DECLARE_WAIT_QUEUE_HEAD(xdp_flow_posted_wq);

/* At most this many posted requests wait for an answer; more wait first. */
#define XDP_FLOW_MAX_POSTED	256

static void xdp_flow_posted_watch_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(xdp_flow_posted_watch, xdp_flow_posted_watch_fn);

/*
 * debugfs, for tests: xdp_flow/posted, the posted requests not answered
 * yet; and a fault point, as Debian's kernels have no fault injection:
 * the next xdp_flow/fail_posted_send posted requests fail to send as on a
 * full receive queue, each after xdp_flow/fail_posted_send_delay_ms, with
 * the request already listed (so that the helper can be made to go away
 * meanwhile).
 */
static struct dentry *xdp_flow_debugfs;
static atomic_t xdp_flow_fail_posted_send = ATOMIC_INIT(0);
static u32 xdp_flow_fail_posted_send_delay_ms;

static void xdp_flow_debugfs_init(void)
{
	struct dentry *d = debugfs_create_dir(KBUILD_MODNAME, NULL);

	debugfs_create_u32("posted", 0400, d, &xdp_flow_nr_posted);
	debugfs_create_atomic_t("fail_posted_send", 0600, d,
				&xdp_flow_fail_posted_send);
	debugfs_create_u32("fail_posted_send_delay_ms", 0600, d,
			   &xdp_flow_fail_posted_send_delay_ms);
	xdp_flow_debugfs = d;
}

/* Whether this posted request's send is to fail (after the delay). */
static bool xdp_flow_should_fail_posted_send(void)
{
	if (!IS_ENABLED(CONFIG_DEBUG_FS) ||
	    !atomic_add_unless(&xdp_flow_fail_posted_send, -1, 0))
		return false;
	msleep(READ_ONCE(xdp_flow_fail_posted_send_delay_ms));
	return true;
}

static struct xdp_flow_request *xdp_flow_request_find(u32 seq)
{
	struct xdp_flow_request *req;

	list_for_each_entry(req, &xdp_flow_requests, list)
		if (req->seq == seq)
			return req;
	return NULL;
}

/* Caller holds xdp_flow_requests_lock; @req is posted. */
static void xdp_flow_posted_unlist(struct xdp_flow_request *req)
{
	list_del(&req->list);
	xdp_flow_nr_posted--;
	if (req->add)
		xdp_flow_nr_posted_adds--;
}

/* Caller holds xdp_flow_requests_lock; @req is posted and @sending. */
static void xdp_flow_posted_record(struct xdp_flow_request *req, int err)
{
	if (req->answered)
		return;		/* the first outcome counts */
	req->err = err;
	req->answered = true;
}

/* Only the sender forgets a request, and only one that is listed. */
static void xdp_flow_request_forget(struct xdp_flow_request *req)
{
	spin_lock_bh(&xdp_flow_requests_lock);
	if (req->posted)
		xdp_flow_posted_unlist(req);
	else
		list_del(&req->list);
	spin_unlock_bh(&xdp_flow_requests_lock);
	if (req->posted)
		wake_up(&xdp_flow_posted_wq);
	kfree(req);
}

/**
 * xdp_flow_requests_fail() - fail every request: the helper is gone
 * @err: what they fail with
 *
 * Completes every pending request with @err, and gives posted ones their
 * answer (those still being sent get it from their sender). The helper
 * they went to is gone: so is what it said of its room.
 */
void xdp_flow_requests_fail(int err)
{
	struct xdp_flow_request *req, *tmp;
	LIST_HEAD(posted);

	spin_lock_bh(&xdp_flow_requests_lock);
	xdp_flow_room_known = false;
	list_for_each_entry_safe(req, tmp, &xdp_flow_requests, list) {
		if (req->posted && req->sending) {
			xdp_flow_posted_record(req, err);
			continue;
		}
		if (req->posted) {
			xdp_flow_posted_unlist(req);
			list_add_tail(&req->list, &posted);
			continue;
		}
		if (completion_done(&req->done))
			continue;
		req->err = err;
		complete(&req->done);
	}
	spin_unlock_bh(&xdp_flow_requests_lock);
	wake_up_all(&xdp_flow_posted_wq);

	list_for_each_entry_safe(req, tmp, &posted, list) {
		req->posted(req->arg, err);
		kfree(req);
	}
}

/**
 * xdp_flow_helper_reply() - take the helper's answer to a request
 * @attrs: the attributes of its REPLY (xdp_flow_parse_reply())
 *
 * Return: 0, or a negative errno when the REPLY is no answer: the helper
 * misbehaves.
 */
int xdp_flow_helper_reply(struct nlattr **attrs)
{
	struct xdp_flow_request *req;
	struct nlattr *a;
	u32 seq;
	int err;

	if (!attrs[XDP_FLOW_ATTR_SEQ])
		return -EINVAL;
	seq = nla_get_u32(attrs[XDP_FLOW_ATTR_SEQ]);
	if (nla_get_flag(attrs[XDP_FLOW_ATTR_PROGRESS]) && !seq) {
		/* Only the helper being started has this channel. */
		WRITE_ONCE(xdp_flow_link.progressed, true);
		return 0;
	}
	if (!nla_get_flag(attrs[XDP_FLOW_ATTR_PROGRESS]) &&
	    !attrs[XDP_FLOW_ATTR_ERROR])
		return -EINVAL;

	spin_lock_bh(&xdp_flow_requests_lock);
	xdp_flow_answered_at = jiffies;
	req = xdp_flow_request_find(seq);
	if (!req || completion_done(&req->done)) {
		spin_unlock_bh(&xdp_flow_requests_lock);
		return 0;	/* given up on, or not waited for */
	}
	if (nla_get_flag(attrs[XDP_FLOW_ATTR_PROGRESS])) {
		WRITE_ONCE(req->progress, req->progress + 1);
		spin_unlock_bh(&xdp_flow_requests_lock);
		return 0;
	}
	err = (int)nla_get_u32(attrs[XDP_FLOW_ATTR_ERROR]);
	if (err > 0 || err < -MAX_ERRNO) {
		/* Not an answer: the request fails with the helper. */
		spin_unlock_bh(&xdp_flow_requests_lock);
		return -EPROTO;
	}
	a = attrs[XDP_FLOW_ATTR_ROOM];
	if (a) {
		memcpy(&xdp_flow_room, nla_data(a), sizeof(xdp_flow_room));
		xdp_flow_room_known = true;
	}
	if (req->posted && req->sending) {
		/* Before its sender's send returned: the sender settles it. */
		xdp_flow_posted_record(req, err);
		spin_unlock_bh(&xdp_flow_requests_lock);
		return 0;
	}
	req->err = err;
	if (req->posted) {
		/* Answered here, in the order the helper did them. */
		xdp_flow_posted_unlist(req);
		spin_unlock_bh(&xdp_flow_requests_lock);
		wake_up(&xdp_flow_posted_wq);
		req->posted(req->arg, req->err);
		kfree(req);
		return 0;
	}
	a = attrs[XDP_FLOW_ATTR_MSG];
	if (a)
		nla_strscpy(req->msg, a, sizeof(req->msg));
	a = attrs[XDP_FLOW_ATTR_STATS];
	if (a && nla_len(a) >= sizeof(req->stats)) {
		memcpy(&req->stats, nla_data(a), sizeof(req->stats));
		req->have_stats = true;
	}
	complete(&req->done);
	spin_unlock_bh(&xdp_flow_requests_lock);
	return 0;
}

/*
 * Sends one request to the running helper; @reqp gets it, pending, or for
 * a posted request (@posted set), @posted gets the answer (and @reqp
 * nothing: the request may be answered and gone by the time this returns).
 */
static int xdp_flow_helper_send(u8 cmd, u32 ifindex, u32 rule_id,
				u32 xdp_mode, const struct xdp_flow_rule *rule,
				void (*posted)(void *arg, int err), void *arg,
				struct xdp_flow_request **reqp)
{
	struct xdp_flow_request *req;
	struct sk_buff *skb;
	bool answered;
	u32 portid;
	void *hdr;
	int err;

	portid = READ_ONCE(xdp_flow_link.portid);
	if (READ_ONCE(xdp_flow_link.state) != XDP_FLOW_HELPER_RUNNING ||
	    !portid)
		return -ESRCH;

	req = kzalloc_obj(*req, GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	init_completion(&req->done);
	skb = genlmsg_new(rule ? nla_total_size(sizeof(*rule)) + 64 :
			  NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb) {
		kfree(req);
		return -ENOMEM;
	}
	req->posted = posted;
	req->arg = arg;
	req->add = posted && cmd == XDP_FLOW_CMD_RULE_ADD;
	req->sending = posted;
	spin_lock_bh(&xdp_flow_requests_lock);
	/* Whoever finds this helper gone clears the port first, then fails
	 * what is listed: listed after that, the request would wait for
	 * nobody.
	 */
	if (READ_ONCE(xdp_flow_link.portid) != portid) {
		spin_unlock_bh(&xdp_flow_requests_lock);
		nlmsg_free(skb);
		kfree(req);
		return -ESRCH;
	}
	req->seq = ++xdp_flow_next_seq;
	list_add_tail(&req->list, &xdp_flow_requests);
	if (posted) {
		if (!xdp_flow_nr_posted++)
			xdp_flow_answered_at = jiffies;
		xdp_flow_nr_posted_adds += req->add;
	}
	spin_unlock_bh(&xdp_flow_requests_lock);

	err = -EMSGSIZE;
	hdr = genlmsg_put(skb, 0, req->seq, xdp_flow_link.family, 0, cmd);
	if (!hdr ||
	    nla_put_u32(skb, XDP_FLOW_ATTR_SEQ, req->seq) ||
	    (ifindex && nla_put_u32(skb, XDP_FLOW_ATTR_IFINDEX, ifindex)) ||
	    ((cmd == XDP_FLOW_CMD_RULE_DEL || cmd == XDP_FLOW_CMD_STATS_GET) &&
	     nla_put_u32(skb, XDP_FLOW_ATTR_RULE_ID, rule_id)) ||
	    (cmd == XDP_FLOW_CMD_DEV_ATTACH &&
	     nla_put_u32(skb, XDP_FLOW_ATTR_XDP_MODE, xdp_mode)) ||
	    (rule && nla_put(skb, XDP_FLOW_ATTR_RULE, sizeof(*rule), rule)) ||
	    (posted && nla_put_flag(skb, XDP_FLOW_ATTR_POSTED))) {
		nlmsg_free(skb);
		goto err_forget;
	}
	genlmsg_end(skb, hdr);

	if (posted && xdp_flow_should_fail_posted_send()) {
		nlmsg_free(skb);
		err = -EAGAIN;
	} else {
		err = genlmsg_unicast(&init_net, skb, portid);
	}
	if (err) {
		/* Off the list first: nobody else answers it. */
		xdp_flow_request_forget(req);
		if (err == -ECONNREFUSED)
			xdp_flow_link.broken("its socket is gone");
		return err;
	}
	if (!posted) {
		*reqp = req;
		return 0;
	}
	/* Sent: from now on whoever has its outcome settles it. */
	spin_lock_bh(&xdp_flow_requests_lock);
	req->sending = false;
	answered = req->answered;
	if (answered)
		xdp_flow_posted_unlist(req);
	spin_unlock_bh(&xdp_flow_requests_lock);
	if (answered) {
		wake_up(&xdp_flow_posted_wq);
		req->posted(req->arg, req->err);
		kfree(req);
	}
	return 0;

err_forget:
	xdp_flow_request_forget(req);
	return err;
}

/**
 * xdp_flow_helper_post() - send a request without waiting for its reply
 * @cmd: DEV_ATTACH or DEV_DETACH (the helper does them in the background)
 * @ifindex: the device
 * @xdp_mode: for DEV_ATTACH
 *
 * Return: 0, or a negative errno when it could not be sent (-ESRCH: no
 * helper runs).
 */
int xdp_flow_helper_post(u8 cmd, u32 ifindex, u32 xdp_mode)
{
	struct xdp_flow_request *req;
	int err;

	err = xdp_flow_helper_send(cmd, ifindex, 0, xdp_mode, NULL, NULL, NULL,
				   &req);
	if (!err)
		xdp_flow_request_forget(req);
	return err;
}

/*
 * Arms the posted-watch, unless the module is going away. A post that
 * found the helper running before xdp_flow_helper_stop() may get here
 * after xdp_flow_requests_exit() cancelled the work, whose timer would
 * then fire into a module that is gone. The flag is set by
 * xdp_flow_requests_stop(), before that cancel, and read under the same
 * lock: once it is set, nothing queues the work again.
 */
static void xdp_flow_posted_watch_arm(unsigned long delay)
{
	spin_lock_bh(&xdp_flow_requests_lock);
	if (!xdp_flow_posted_watch_off)
		queue_delayed_work(system_long_wq, &xdp_flow_posted_watch,
				   delay);
	spin_unlock_bh(&xdp_flow_requests_lock);
}

/* Whether one more RULE_ADD without port ranges surely fits. */
static bool xdp_flow_room_for_one(void)
{
	unsigned int n = xdp_flow_nr_posted_adds + 1;

	return xdp_flow_room_known && xdp_flow_room.masks >= n &&
	       xdp_flow_room.flows >= n;
}

/**
 * xdp_flow_helper_post_rule() - send RULE_ADD or RULE_DEL, answer later
 * @cmd: XDP_FLOW_CMD_RULE_ADD (of a rule without port ranges: one mask
 *	and one flow entry at most) or XDP_FLOW_CMD_RULE_DEL
 * @rule_id: for RULE_DEL
 * @rule: for RULE_ADD
 * @posted: gets the helper's answer (0 or a negative errno; -ESRCH or
 *	-ESHUTDOWN when the helper went away first), once, from a work item,
 *	from whoever found the helper gone, or, when either came while the
 *	request was being sent, from this call before it returns; it must not
 *	sleep
 * @arg: for @posted
 *
 * The helper does requests in the order they were sent, posted or not.
 * A helper that answers nothing for helper_timeout_ms while posted
 * requests wait is restarted. Waits while XDP_FLOW_MAX_POSTED requests
 * are posted, for one timeout at most.
 *
 * Return: 0 when posted (@posted will be called), or a negative errno and
 * @posted is not called: -EAGAIN when a RULE_ADD may not fit in what the
 * helper said it had free (or too many requests wait): the caller then
 * waits for the answer instead; -ESRCH when no helper runs.
 */
int xdp_flow_helper_post_rule(u8 cmd, u32 rule_id,
			      const struct xdp_flow_rule *rule,
			      void (*posted)(void *arg, int err), void *arg)
{
	unsigned int timeout = xdp_flow_helper_timeout_ms();
	bool ok;
	int err;

	if (!wait_event_timeout(xdp_flow_posted_wq,
				READ_ONCE(xdp_flow_nr_posted) <
				XDP_FLOW_MAX_POSTED,
				msecs_to_jiffies(timeout)))
		return -EAGAIN;
	if (cmd == XDP_FLOW_CMD_RULE_ADD) {
		spin_lock_bh(&xdp_flow_requests_lock);
		ok = xdp_flow_room_for_one();
		spin_unlock_bh(&xdp_flow_requests_lock);
		if (!ok)
			return -EAGAIN;
	}
	err = xdp_flow_helper_send(cmd, 0, rule_id, 0, rule, posted, arg,
				   NULL);
	if (!err)
		xdp_flow_posted_watch_arm(msecs_to_jiffies(timeout));
	return err;
}

/*
 * While requests are posted, the helper must keep answering: one that said
 * nothing for a timeout is restarted (the posted requests then fail).
 */
static void xdp_flow_posted_watch_fn(struct work_struct *work)
{
	unsigned long timeout = msecs_to_jiffies(xdp_flow_helper_timeout_ms());
	unsigned long since;
	unsigned int n;

	spin_lock_bh(&xdp_flow_requests_lock);
	n = xdp_flow_nr_posted;
	since = xdp_flow_answered_at;
	spin_unlock_bh(&xdp_flow_requests_lock);
	if (!n)
		return;
	if (time_before(jiffies, since + timeout)) {
		xdp_flow_posted_watch_arm(since + timeout - jiffies);
		return;
	}
	xdp_flow_link.broken("it did not answer in time");
}

#ifndef NL_SET_ERR_MSG_FMT_MOD
/*
 * Before 6.3 an extack holds only static text. The refusals a user can
 * meet (the tables full) keep their words there, without the helper's
 * numbers (the sizes are the module parameters max_masks and max_flows).
 */
static const struct {
	const char *prefix;
	const char *text;
} xdp_flow_refusals[] = {
	{ "mask table full", KBUILD_MODNAME ": mask table full" },
	{ "flow table full", KBUILD_MODNAME ": flow table full" },
	{ "port ranges ",
	  KBUILD_MODNAME ": port ranges need more masked entries than a rule may have" },
	{ "too many devices", KBUILD_MODNAME ": too many devices" },
};
#endif

/*
 * The helper's message @msg (may be empty) on a refusal, for @extack. The
 * ack that carries it is built after the caller's netlink handler
 * returned, and callers run concurrently: so the text goes into @extack's
 * own buffer, never into one of this call or one shared between callers.
 * Kernels without that buffer (before 6.3) get a static text: the
 * refusal's own words where it is one a user can meet, else a fixed one.
 */
static void xdp_flow_helper_refused(struct netlink_ext_ack *extack,
				    const char *msg)
{
#ifdef NL_SET_ERR_MSG_FMT_MOD
	/* What fits after the prefix: a longer one would be warned of. */
	const int room = NETLINK_MAX_FMTMSG_LEN - sizeof(KBUILD_MODNAME ": ");

	if (msg[0]) {
		NL_SET_ERR_MSG_FMT_MOD(extack, "%.*s", room, msg);
		return;
	}
#else
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(xdp_flow_refusals); i++) {
		const char *p = xdp_flow_refusals[i].prefix;

		/* NL_SET_ERR_MSG() takes a literal only: the text is static. */
		if (!strncmp(msg, p, strlen(p))) {
			if (extack)
				extack->_msg = xdp_flow_refusals[i].text;
			return;
		}
	}
#endif
	NL_SET_ERR_MSG_MOD(extack, "helper refused the request");
}

/**
 * xdp_flow_helper_call() - send a request to the helper and wait for its reply
 * @cmd: XDP_FLOW_CMD_*
 * @ifindex: for DEV_ATTACH and DEV_DETACH
 * @rule_id: for RULE_DEL and STATS_GET
 * @xdp_mode: for DEV_ATTACH
 * @rule: for RULE_ADD
 * @stats: for STATS_GET, or NULL
 * @extack: gets the helper's message on error, or NULL
 *
 * A helper that does not answer in time is killed and restarted; the
 * replay then puts back what it holds. A helper that reports progress
 * (a long SYNC) is given another timeout after each report. DEV_ATTACH is
 * the one request that needs rtnl in the helper: never wait for it holding
 * xdp_flow_lock.
 *
 * Return: 0, the helper's negative errno, -ETIMEDOUT, or -ESRCH when no
 * helper runs or it went away meanwhile.
 */
int xdp_flow_helper_call(u8 cmd, u32 ifindex, u32 rule_id, u32 xdp_mode,
			 const struct xdp_flow_rule *rule,
			 struct xdp_flow_stats *stats,
			 struct netlink_ext_ack *extack)
{
	struct xdp_flow_request *req;
	unsigned int timeout, seen;
	unsigned long done;
	int err;

	err = xdp_flow_helper_send(cmd, ifindex, rule_id, xdp_mode, rule, NULL,
				   NULL, &req);
	if (err)
		return err;

	timeout = cmd == XDP_FLOW_CMD_DEV_ATTACH ? XDP_FLOW_ATTACH_TIMEOUT_MS :
		  xdp_flow_helper_timeout_ms();
	do {
		seen = READ_ONCE(req->progress);
		done = wait_for_completion_timeout(&req->done,
						   msecs_to_jiffies(timeout));
	} while (!done && READ_ONCE(req->progress) != seen);
	/* Off the list, no reply can complete it any more; one may have
	 * come in just after the wait gave up.
	 */
	spin_lock_bh(&xdp_flow_requests_lock);
	list_del(&req->list);
	spin_unlock_bh(&xdp_flow_requests_lock);
	err = done || completion_done(&req->done) ? req->err : -ETIMEDOUT;
	if (!err && stats && req->have_stats)
		*stats = req->stats;

	if (err == -ETIMEDOUT) {
		xdp_flow_link.broken("it did not answer in time");
		NL_SET_ERR_MSG_MOD(extack, "helper did not answer in time");
	} else if (err == -ESRCH || err == -ESHUTDOWN) {
		err = -ESRCH;
		NL_SET_ERR_MSG_MOD(extack, "helper went away");
	} else if (err) {
		xdp_flow_helper_refused(extack, req->msg);
	}
	kfree(req);
	return err;
}

/**
 * xdp_flow_helper_state() - enum xdp_flow_helper_state, right now
 *
 * Return: the state.
 */
u32 xdp_flow_helper_state(void)
{
	return READ_ONCE(xdp_flow_link.state);
}

/**
 * xdp_flow_helper_running() - whether a helper has registered
 *
 * Return: true while requests may go to it.
 */
bool xdp_flow_helper_running(void)
{
	return xdp_flow_helper_state() == XDP_FLOW_HELPER_RUNNING;
}

/**
 * xdp_flow_requests_init() - requests may go out once a helper runs
 * @family: the generic netlink family they go out on
 * @broken: restarts a helper that misbehaves
 */
void xdp_flow_requests_init(const struct genl_family *family,
			    void (*broken)(const char *why))
{
	xdp_flow_debugfs_init();
	xdp_flow_link.family = family;
	xdp_flow_link.broken = broken;
}

/**
 * xdp_flow_requests_stop() - fail every request, now and from now on
 *
 * After the link's state went to XDP_FLOW_HELPER_STOPPED for good.
 */
void xdp_flow_requests_stop(void)
{
	spin_lock_bh(&xdp_flow_requests_lock);
	xdp_flow_posted_watch_off = true;
	spin_unlock_bh(&xdp_flow_requests_lock);
	xdp_flow_requests_fail(-ESHUTDOWN);
}

/**
 * xdp_flow_requests_exit() - no more watching, no more debugfs
 *
 * After xdp_flow_requests_stop().
 */
void xdp_flow_requests_exit(void)
{
	/* Nothing arms it again (xdp_flow_posted_watch_off). */
	cancel_delayed_work_sync(&xdp_flow_posted_watch);
	debugfs_remove_recursive(xdp_flow_debugfs);
	xdp_flow_debugfs = NULL;
}
