// SPDX-License-Identifier: GPL-2.0
/*
 * Who may talk to the helper's generic netlink socket, checked without the
 * module: the helper's own genl_connect_kernel() and genl_from_kernel() on
 * a libnl socket set up like its own.
 *
 *   - libnl fills in the source address of what nl_recvmsgs() receives, so
 *     a user socket's message shows its port, and the helper's filter
 *     drops it (a forged "family deleted" here);
 *   - once connected to the kernel, the kernel refuses other sockets'
 *     unicasts (ECONNREFUSED), and its own answers still arrive;
 *   - multicast still arrives: the ethtool family's "monitor" group, for a
 *     feature change on <dev>. It stands in for the genl controller's
 *     "notify" group, which only a module load or unload would trigger.
 *
 * usage: test_netlink <dev>   (run in a network namespace holding <dev>;
 * the helper's log lines go to stderr, for test_genl.sh to count)
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "umh.h"

#define NR_FORGED	25

static int failures;

static void result(bool ok, const char *desc, const char *why)
{
	if (ok) {
		printf("ok - %s\n", desc);
	} else {
		printf("not ok - %s # %s\n", desc, why);
		failures++;
	}
}

/* What the VALID callback saw last, and how often. */
static unsigned int nr_valid;
static __u32 valid_port;
static int valid_type;
static __u32 in_port;

static int record_in(struct nl_msg *msg, void *arg)
{
	(void)arg;
	in_port = nlmsg_get_src(msg)->nl_pid;
	return NL_OK;
}

static int record_valid(struct nl_msg *msg, void *arg)
{
	(void)arg;
	nr_valid++;
	valid_port = nlmsg_get_src(msg)->nl_pid;
	valid_type = nlmsg_hdr(msg)->nlmsg_type;
	return NL_OK;
}

/* A user socket tells @port that a family went away; 0 or -errno. */
static int forge(int fd, __u32 port)
{
	struct {
		struct nlmsghdr nlh;
		struct genlmsghdr gh;
	} m = {
		.nlh = {
			.nlmsg_len = sizeof(m),
			.nlmsg_type = GENL_ID_CTRL,
			.nlmsg_flags = NLM_F_REQUEST,
		},
		.gh = { .cmd = CTRL_CMD_DELFAMILY, .version = 1 },
	};
	struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_pid = port };

	if (sendto(fd, &m, sizeof(m), 0, (struct sockaddr *)&to,
		   sizeof(to)) < 0)
		return -errno;
	return 0;
}

/* Receives what arrives within @ms, and whatever follows it closely. */
static void receive(struct nl_sock *sk, int ms)
{
	struct pollfd p = { .fd = nl_socket_get_fd(sk), .events = POLLIN };

	while (poll(&p, 1, ms) > 0) {
		nl_recvmsgs_default(sk);
		ms = 200;
	}
}

int main(int argc, char **argv)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct sockaddr_nl me = {};
	socklen_t len = sizeof(me);
	char why[256], cmd[256];
	int forger, family, grp, i, err;
	__u32 port;

	if (argc != 2) {
		fprintf(stderr, "usage: %s <dev>\n", argv[0]);
		return 2;
	}
	log_init(LOG_DEST_STDERR, false);
	forger = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (!sk || genl_connect(sk) || forger < 0) {
		printf("not ok - netlink sockets # %s\n", strerror(errno));
		return 1;
	}
	port = nl_socket_get_local_port(sk);
	/* As the helper does: requests are not answers to ours. */
	nl_socket_disable_seq_check(sk);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, record_valid, NULL);

	nl_socket_modify_cb(sk, NL_CB_MSG_IN, NL_CB_CUSTOM, record_in, NULL);
	err = forge(forger, port);
	receive(sk, 2000);
	getsockname(forger, (struct sockaddr *)&me, &len);
	snprintf(why, sizeof(why), "err %d, %u received, source port %u, sender %u",
		 err, nr_valid, in_port, me.nl_pid);
	result(!err && nr_valid == 1 && in_port && in_port == me.nl_pid,
	       "libnl: nlmsg_get_src() gives a user socket's port", why);

	nl_socket_modify_cb(sk, NL_CB_MSG_IN, NL_CB_CUSTOM, genl_from_kernel,
			    NULL);
	nr_valid = 0;
	for (i = 0, err = 0; i < NR_FORGED && !err; i++)
		err = forge(forger, port);
	receive(sk, 2000);
	snprintf(why, sizeof(why), "err %d, %u of %u got through", err,
		 nr_valid, NR_FORGED);
	result(!err && !nr_valid,
	       "genl_from_kernel() drops messages of user sockets", why);

	err = genl_connect_kernel(sk);
	snprintf(why, sizeof(why), "connect: %s", strerror(-err));
	result(!err, "genl_connect_kernel()", why);
	err = forge(forger, port);
	snprintf(why, sizeof(why), "sending to the helper's port: %s",
		 err ? strerror(-err) : "accepted");
	result(err == -ECONNREFUSED,
	       "connected: the kernel refuses other sockets' messages", why);

	family = genl_ctrl_resolve(sk, "nlctrl");
	snprintf(why, sizeof(why), "resolving nlctrl: %s",
		 family < 0 ? nl_geterror(family) : "wrong id");
	result(family == GENL_ID_CTRL,
	       "connected: requests to the kernel are answered", why);

	family = genl_ctrl_resolve(sk, "ethtool");
	grp = genl_ctrl_resolve_grp(sk, "ethtool", "monitor");
	if (family < 0 || grp < 0) {
		printf("ok - connected: multicast arrives # SKIP no ethtool netlink\n");
		return failures ? 1 : 0;
	}
	nr_valid = 0;
	err = nl_socket_add_membership(sk, grp);
	snprintf(cmd, sizeof(cmd),
		 "ethtool -K %s gro off >/dev/null && ethtool -K %s gro on >/dev/null",
		 argv[1], argv[1]);
	if (!err && system(cmd))
		err = -NLE_FAILURE;
	receive(sk, 2000);
	snprintf(why, sizeof(why), "err %d, %u received, last type %d from port %u",
		 err, nr_valid, valid_type, valid_port);
	result(!err && nr_valid && valid_type == family && !valid_port,
	       "connected: multicast (ethtool monitor) arrives from port 0", why);

	close(forger);
	nl_socket_free(sk);
	return failures ? 1 : 0;
}
