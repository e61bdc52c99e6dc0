// SPDX-License-Identifier: GPL-2.0
/*
 * One request of the module (or of the test driver), whichever transport
 * brought it: the same table and attach code serve both, and each request
 * gets exactly one reply through the transport's reply function.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "umh.h"

static void reply_send(struct umh *u, struct umh_reply *r, const char *msg)
{
	snprintf(r->msg, sizeof(r->msg), "%s", msg ? msg : "");
	u->reply(u->transport, r);
}

static void reply(struct umh *u, __u32 seq, int err, const char *msg,
		  struct xdp_flow_stats *stats, size_t nr_stats)
{
	struct umh_reply r = {
		.seq = seq,
		.err = err,
		.stats = stats,
		.nr_stats = nr_stats,
	};

	reply_send(u, &r, msg);
}

/*
 * The answer to a change of the rule tables, with the room they have left:
 * the module sends rules without waiting while it knows they fit.
 */
static void reply_room(struct umh *u, __u32 seq, int err, const char *msg)
{
	struct xdp_flow_room room;
	struct umh_reply r = {
		.seq = seq,
		.err = err,
		.room = &room,
	};

	table_room(u->table, &room);
	reply_send(u, &r, msg);
}

/* Called by the attach worker when an attach, detach or sync is done. */
static void attach_done(void *arg, __u32 seq, int err, const char *msg)
{
	reply(arg, seq, err, msg, NULL, 0);
}

static void handle_stats(struct umh *u, const struct umh_request *req)
{
	char msg[UMH_MSG_LEN] = "";
	struct xdp_flow_stats one, *all = NULL;
	size_t nr = 0;
	int err;

	if (req->has_rule_id) {
		err = table_stats(u->table, req->rule_id, &one, msg,
				  sizeof(msg));
		reply(u, req->seq, err, msg, err ? NULL : &one, !err);
		return;
	}
	err = table_stats_all(u->table, &all, &nr);
	if (err)
		snprintf(msg, sizeof(msg), "reading counters: %s",
			 strerror(-err));
	reply(u, req->seq, err, msg, all, nr);
	free(all);
}

/* Reports progress at most this often, well within any module timeout. */
#define PROGRESS_EVERY_MS	250

/**
 * umh_progress() - called by long work: the module hears that it goes on
 * @arg: the helper (struct umh)
 *
 * A report names the request being served (0: the takeover before HELLO),
 * and the module waits one more timeout for it rather than killing a
 * helper that works. The test driver has no module to tell.
 */
void umh_progress(void *arg)
{
	struct umh *u = arg;
	long long now;

	if (u->step_delay_us)
		usleep(u->step_delay_us);
	now = dp_now_ms();
	if (now - u->progress_ms < PROGRESS_EVERY_MS)
		return;
	u->progress_ms = now;
	if (u->progress)
		u->progress(u, u->progress_seq);
}

/*
 * SYNC: the rules go now; stale links go in the worker, after the replayed
 * attachments queued before it (the reply does not wait for them).
 */
static void handle_sync(struct umh *u, const struct umh_request *req)
{
	char msg[UMH_MSG_LEN] = "";
	int err;

	u->progress_seq = req->seq;
	u->progress_ms = dp_now_ms();
	err = table_sync(u->table, msg, sizeof(msg));
	u->progress_seq = 0;
	attach_submit(u->attach, ATTACH_OP_SYNC, 0, 0, 0, NULL, NULL);
	reply_room(u, req->seq, err, msg);
}

static void handle_shutdown(struct umh *u, const struct umh_request *req)
{
	char msg[UMH_MSG_LEN] = "";
	int err;

	err = attach_detach_all(u->attach);
	if (err)
		snprintf(msg, sizeof(msg), "detaching: %s", strerror(-err));
	if (u->pin_dir) {
		int uerr = dp_unpin(u->skel, u->pin_fd, u->pin_dir);

		if (uerr && !err) {
			err = uerr;
			snprintf(msg, sizeof(msg), "unpinning: %s",
				 strerror(-err));
		}
	}
	pr_info("shutdown%s%s", err ? ": " : "", msg);
	reply(u, req->seq, err, msg, NULL, 0);
	u->exiting = true;
}

/* A new replay starts: what is not replayed before SYNC is stale. */
void umh_begin_replay(struct umh *u)
{
	table_begin_replay(u->table);
	attach_begin_replay(u->attach);
}

void umh_handle(struct umh *u, const struct umh_request *req)
{
	char msg[UMH_MSG_LEN] = "";
	int err;

	switch (req->cmd) {
	case XDP_FLOW_CMD_RULE_ADD:
		err = table_rule_add(u->table, &req->rule, msg, sizeof(msg));
		break;
	case XDP_FLOW_CMD_RULE_DEL:
		err = table_rule_del(u->table, req->rule_id, msg, sizeof(msg));
		break;
	case XDP_FLOW_CMD_DEV_ATTACH:
	case XDP_FLOW_CMD_DEV_DETACH:
		err = attach_submit(u->attach,
				    req->cmd == XDP_FLOW_CMD_DEV_ATTACH ?
				    ATTACH_OP_ATTACH : ATTACH_OP_DETACH,
				    req->ifindex, req->xdp_mode, req->seq,
				    attach_done, u);
		if (!err)
			return;		/* the worker replies */
		snprintf(msg, sizeof(msg), "cannot queue: %s", strerror(-err));
		break;
	case XDP_FLOW_CMD_STATS_GET:
		handle_stats(u, req);
		return;
	case XDP_FLOW_CMD_SYNC:
		handle_sync(u, req);
		return;
	case XDP_FLOW_CMD_SHUTDOWN:
		handle_shutdown(u, req);
		return;
	default:
		err = -EOPNOTSUPP;
		snprintf(msg, sizeof(msg), "unknown command %u", req->cmd);
		break;
	}
	if (err)
		pr_debug("request %u (seq %u): %s", req->cmd, req->seq, msg);
	if (req->cmd == XDP_FLOW_CMD_RULE_ADD ||
	    req->cmd == XDP_FLOW_CMD_RULE_DEL)
		reply_room(u, req->seq, err, msg);
	else
		reply(u, req->seq, err, msg, NULL, 0);
}
