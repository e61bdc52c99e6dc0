// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: where a redirect may skip the target's transmit path, and
 * where it may enter a device's receive path.
 *
 * Two hooks carry out redirects past what TC's mirred would run on the
 * target X: the TC hook's bpf_redirect_peer() into a veth's peer, and every
 * redirect of the XDP hook, which goes to X's ndo_xdp_xmit. Either is exact
 * only while X's transmit path is empty: no queueing qdisc, no egress
 * filter, tcx program or netfilter egress hook. The module keeps that state
 * for the devices of init_net in two maps that only it writes, by the same
 * checks and at the same moments (below):
 *  - XDP_FLOW_PEERS_NAME, the TC program's, for bpf_redirect_peer();
 *  - XDP_FLOW_EGRESS_NAME, the XDP program's: an entry for each device X
 *    that is up with carrier, takes XDP frames and whose transmit path is
 *    empty. Without one the XDP hook hands the frame to the stack untouched
 *    and uncounted, and TC runs the rule: mirred transmits it on X. The
 *    tc hook's tunnel_key set needs the same of the VXLAN or Geneve
 *    device it sends the frame to (no queue: the metadata it sets is per
 *    CPU), which gets an entry by the same checks.
 *    (A frame redirected at TC ingress skips netfilter's egress hook; the
 *    frames nftables' fwd and flowtables send out, whose rules XDP runs
 *    too, do not: a netfilter egress hook costs all of them the speed.)
 *
 * The peers: redirects that enter a veth's peer directly.
 *
 * TC's "mirred egress redirect dev X", X a veth, makes X transmit the frame:
 * X's qdisc and egress hooks run, then veth forwards it to X's peer P, which
 * receives it through its backlog (or its NAPI, with XDP or GRO). From TC
 * ingress, bpf_redirect_peer() hands the frame to P's receive path at once,
 * the path container networking takes (Cilium, netkit). The frame's fate and
 * bytes are then exactly those of the mirred path when:
 *  1. X is up with carrier, P is up and in another namespace than X (the
 *     kernel drops the frame otherwise);
 *  2. X transmits without a queue (noqueue, a veth's default), with no
 *     egress hook (TC's clsact or tcx, netfilter egress), and with the
 *     checksum, scatter-gather, segmentation and VLAN offloads a veth has,
 *     so that its transmit path would not change the frame;
 *  3. P runs no XDP program (veth runs a driver program on what X sends,
 *     never on what bpf_redirect_peer() delivers);
 *  4. the frame passes veth's forwarding check: it fits P's MTU, or is GSO;
 *  5. P's own classification would make it PACKET_HOST, as
 *     bpf_redirect_peer() does: its destination is P's address;
 *  6. what crossing namespaces clears is cleared: the mark.
 * 1-3 are the devices' state: the module keeps it in the TC program's map
 * XDP_FLOW_PEERS_NAME, an entry for each veth X of init_net for which they
 * hold, with P's address and MTU. 4-6 depend on the frame: the TC hook
 * checks and does them per frame. The XDP hook does not use the map: it
 * redirects xdp_frames, which veth hands to P's NAPI anyway.
 *
 * The state is checked again when it may have changed: at every netdev
 * event of X or of P, any device (events that come before a change, and
 * unregistering, take the entries away first); at every TC change in
 * init_net (rtnetlink's RTNLGRP_TC announces qdiscs, classes, filters and
 * chains, with their device); and, for what announces nothing to a module
 * (tcx programs, netfilter egress hooks, XDP programs attached through
 * links), every XDP_FLOW_PEER_RECHECK_MS for every device of init_net while
 * there are entries or a device with an egress hook. A change announced
 * after it is made (a qdisc added to X) may still meet frames that take the
 * direct path in the meantime: frames already on their way when a
 * configuration changes; one that is not announced, for up to
 * XDP_FLOW_PEER_RECHECK_MS.
 *
 * The ingress: TC's "mirred ingress redirect (or mirror) dev X" hands the
 * frame (or a copy) to X's receive path as it is; the TC hook's
 * bpf_redirect() with BPF_F_INGRESS goes through X's backlog, classifies
 * the frame for X anew and zeroes its priority. The module keeps an entry
 * in the TC program's map XDP_FLOW_INGRESS_NAME, X's address, for each
 * Ethernet device X of init_net that is up with carrier (mirred drops
 * otherwise), runs no XDP program (mirred's frames skip generic XDP) and
 * nothing at its ingress (no tcx program, TC filter or netfilter hook: a
 * loop of redirects, which mirred's nesting limit ends, would not end
 * through the backlog). The TC hook checks the frame's class and priority
 * per frame (the uapi header says how). Its checks and moments are those
 * of the others.
 *
 * Module parameter redirect_peer (default on) turns the peers off: every
 * TC hook redirect then transmits on X. It leaves the egress and the
 * ingress alone.
 *
 * It owns what it wrote of the three maps and redirect_peer; it calls
 * dpmaps.c (the maps) and netdev.c.
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/netdevice.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/sch_generic.h>
#include <net/sock.h>
#ifdef XDP_FLOW_HAVE_TCX
#include <net/tcx.h>
#endif

#include "xdp_flow.h"

#define XDP_FLOW_PEER_RECHECK_MS	1000
#define XDP_FLOW_PEER_BUF		8192

/* What X must have on so that its transmit path leaves the frame alone. */
#define XDP_FLOW_PEER_FEATURES	(NETIF_F_HW_CSUM | NETIF_F_SG | \
				 NETIF_F_GSO_SOFTWARE | \
				 NETIF_F_HW_VLAN_CTAG_TX | \
				 NETIF_F_HW_VLAN_STAG_TX)

static bool redirect_peer = true;

/* What the module wrote for a device of init_net. */
struct xdp_flow_tx {
	u64 peer;	/* its peers entry's word; 0: none (a word never is) */
	u64 ingress;	/* its ingress entry's word; 0: none (never is) */
	bool egress;	/* it has an egress entry */
};

/* Orders the checks and the map writes; taken under rtnl, never around it. */
static DEFINE_MUTEX(xdp_flow_peer_lock);
/* The entries written, by ifindex: struct xdp_flow_tx. */
static DEFINE_XARRAY(xdp_flow_tx_written);
static bool xdp_flow_peer_exiting;

static struct socket *xdp_flow_peer_sock;	/* RTNLGRP_TC, init_net */
static void *xdp_flow_peer_buf;

static void xdp_flow_peer_resync_fn(struct work_struct *work);
static DECLARE_WORK(xdp_flow_peer_resync_work, xdp_flow_peer_resync_fn);
static void xdp_flow_peer_tc_fn(struct work_struct *work);
static DECLARE_WORK(xdp_flow_peer_tc_work, xdp_flow_peer_tc_fn);
static void xdp_flow_peer_recheck_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(xdp_flow_peer_recheck_work,
			    xdp_flow_peer_recheck_fn);

static bool xdp_flow_egress_hooked(const struct net_device *dev)
{
#ifdef XDP_FLOW_HAVE_TCX
	if (rcu_access_pointer(dev->tcx_egress))
		return true;
#elif IS_ENABLED(CONFIG_NET_CLS_ACT)
	if (rcu_access_pointer(dev->miniq_egress))
		return true;
#endif
#if IS_ENABLED(CONFIG_NETFILTER_EGRESS)
	if (rcu_access_pointer(dev->nf_hooks_egress))
		return true;
#endif
	return false;
}

/* Caller holds rcu_read_lock(). Does @dev transmit without a queue? */
static bool xdp_flow_noqueue(struct net_device *dev)
{
	unsigned int i;

	/* A queue's qdisc is never NULL: noop_qdisc while there is none. */
	for (i = 0; i < dev->num_tx_queues; i++)
		if (rcu_dereference(netdev_get_tx_queue(dev, i)->qdisc)->enqueue)
			return false;
	return true;
}

/* Caller holds rcu_read_lock(). Is @dev up, and its transmit path empty? */
static bool xdp_flow_tx_empty(struct net_device *dev)
{
	return (dev->flags & IFF_UP) && netif_carrier_ok(dev) &&
	       !xdp_flow_egress_hooked(dev) && xdp_flow_noqueue(dev);
}

/*
 * May a redirect go to @dev at once: the XDP hook's to a device that takes
 * XDP frames, the tc hook's after tunnel_key set to a tunnel device (whose
 * metadata, bpf_skb_set_tunnel_key()'s, is per CPU: the next frame's
 * would overwrite it while the frame waited in a queue)?
 */
static bool xdp_flow_egress_kind(const struct net_device *dev)
{
	return xdp_flow_can_xmit(dev) || xdp_flow_is_tunnel(dev);
}

/* May @dev's state change without an announcement that reaches us? */
static bool xdp_flow_tx_watched(const struct net_device *dev)
{
	return (xdp_flow_is_veth(dev) || xdp_flow_egress_kind(dev)) &&
	       xdp_flow_egress_hooked(dev);
}

/* Caller holds rcu_read_lock(). Does anything run at @dev's ingress? */
static bool xdp_flow_ingress_hooked(struct net_device *dev)
{
#ifdef XDP_FLOW_HAVE_TCX
	struct bpf_mprog_entry *entry = rcu_dereference(dev->tcx_ingress);

	/* clsact keeps an entry, with or without filters. */
	if (entry && (bpf_mprog_total(entry) ||
		      rcu_access_pointer(tcx_entry(entry)->miniq)))
		return true;
#elif IS_ENABLED(CONFIG_NET_CLS_ACT)
	if (rcu_access_pointer(dev->miniq_ingress))
		return true;
#endif
#if IS_ENABLED(CONFIG_NETFILTER_INGRESS)
	if (rcu_access_pointer(dev->nf_hooks_ingress))
		return true;
#endif
	return false;
}

/*
 * Caller holds rcu_read_lock(). Fills @in and returns true when the TC
 * hook may enter frames into @dev's receive path (the ingress, in the
 * file's comment).
 */
static bool xdp_flow_ingress_state(struct net_device *dev,
				   union xdp_flow_ingress *in)
{
	if (dev->type != ARPHRD_ETHER || !(dev->flags & IFF_UP) ||
	    !netif_carrier_ok(dev) || dev_xdp_prog_count(dev) ||
	    xdp_flow_ingress_hooked(dev) || !is_valid_ether_addr(dev->dev_addr))
		return false;
	memset(in, 0, sizeof(*in));
	ether_addr_copy(in->mac, dev->dev_addr);
	return true;
}

/*
 * Caller holds rcu_read_lock(). Fills @p and returns true when points 1-3
 * of the file's comment hold for veth @dev.
 */
static bool xdp_flow_peer_state(struct net_device *dev, union xdp_flow_peer *p)
{
	struct net_device *peer;

	if (!xdp_flow_is_veth(dev) || !dev->netdev_ops->ndo_get_peer_dev ||
	    (dev->features & XDP_FLOW_PEER_FEATURES) != XDP_FLOW_PEER_FEATURES ||
	    !xdp_flow_tx_empty(dev))
		return false;
	peer = dev->netdev_ops->ndo_get_peer_dev(dev);
	if (!peer || !(peer->flags & IFF_UP) ||
	    net_eq(dev_net(peer), dev_net(dev)) || dev_xdp_prog_count(peer) ||
	    !is_valid_ether_addr(peer->dev_addr) || peer->mtu > U16_MAX)
		return false;
	memset(p, 0, sizeof(*p));
	ether_addr_copy(p->mac, peer->dev_addr);
	p->mtu = peer->mtu;
	return true;
}

/*
 * Caller holds xdp_flow_peer_lock. Writes @ifindex's entries that changed:
 * peers @p (NULL: none), egress @egress, ingress @in (NULL: none).
 * Returns whether any is left.
 */
static bool xdp_flow_tx_put(u32 ifindex, const union xdp_flow_peer *p,
			    bool egress, const union xdp_flow_ingress *in)
{
	struct xdp_flow_tx *tx = xa_load(&xdp_flow_tx_written, ifindex);
	struct xdp_flow_tx cur = {}, want = {};

	if (tx)
		cur = *tx;
	if (p)
		want.peer = p->word;
	if (in)
		want.ingress = in->word;
	want.egress = egress;
	if (cur.peer != want.peer &&
	    xdp_flow_dp_peer_write(ifindex, want.peer ? p : NULL))
		want.peer = 0;
	if (cur.egress != want.egress &&
	    xdp_flow_dp_egress_write(ifindex, want.egress))
		want.egress = false;
	if (cur.ingress != want.ingress &&
	    xdp_flow_dp_ingress_write(ifindex, want.ingress ? in : NULL))
		want.ingress = 0;
	if (!want.peer && !want.egress && !want.ingress) {
		kfree(xa_erase(&xdp_flow_tx_written, ifindex));
		return false;
	}
	if (!tx) {
		tx = kzalloc_obj(*tx, GFP_KERNEL);
		if (!tx || xa_err(xa_store(&xdp_flow_tx_written, ifindex, tx,
					   GFP_KERNEL))) {
			/* Unknown to the module, so never kept up to date. */
			kfree(tx);
			xdp_flow_dp_peer_write(ifindex, NULL);
			xdp_flow_dp_egress_write(ifindex, false);
			xdp_flow_dp_ingress_write(ifindex, NULL);
			return false;
		}
	}
	*tx = want;
	return true;
}

/* Caller holds xdp_flow_peer_lock. Checks device @ifindex of init_net. */
static void xdp_flow_tx_check(u32 ifindex)
{
	bool peer = false, egress = false, ingress = false, watched = false;
	union xdp_flow_ingress in;
	struct net_device *dev;
	union xdp_flow_peer p;

	if (!xdp_flow_peer_exiting) {
		rcu_read_lock();
		dev = dev_get_by_index_rcu(&init_net, ifindex);
		if (dev) {
			peer = redirect_peer && xdp_flow_peer_state(dev, &p);
			egress = xdp_flow_egress_kind(dev) &&
				 xdp_flow_tx_empty(dev);
			ingress = xdp_flow_ingress_state(dev, &in);
			watched = xdp_flow_tx_watched(dev);
		}
		rcu_read_unlock();
	}
	if (xdp_flow_tx_put(ifindex, peer ? &p : NULL, egress,
			    ingress ? &in : NULL) || watched)
		schedule_delayed_work(&xdp_flow_peer_recheck_work,
				      msecs_to_jiffies(XDP_FLOW_PEER_RECHECK_MS));
}

/*
 * Caller holds rtnl and xdp_flow_peer_lock. Checks every device of
 * init_net, and the entries of devices that are gone.
 */
static void xdp_flow_tx_check_all(void)
{
	struct net_device *dev;
	unsigned long ifindex;
	void *tx;

	for_each_netdev(&init_net, dev)
		xdp_flow_tx_check(dev->ifindex);
	xa_for_each(&xdp_flow_tx_written, ifindex, tx)
		if (!__dev_get_by_index(&init_net, ifindex))
			xdp_flow_tx_check(ifindex);
}

/* Caller holds xdp_flow_peer_lock. Removes every entry, and their record. */
static void xdp_flow_tx_clear(void)
{
	unsigned long ifindex;
	void *tx;

	xdp_flow_dp_tx_clear();
	xa_for_each(&xdp_flow_tx_written, ifindex, tx)
		kfree(xa_erase(&xdp_flow_tx_written, ifindex));
}

/* Every entry anew: at HELLO and when redirect_peer changes. */
static void xdp_flow_peer_resync_fn(struct work_struct *work)
{
	rtnl_lock();
	mutex_lock(&xdp_flow_peer_lock);
	xdp_flow_tx_clear();
	xdp_flow_tx_check_all();
	mutex_unlock(&xdp_flow_peer_lock);
	rtnl_unlock();
}

/**
 * xdp_flow_peers_resync() - write every peers and egress entry anew, soon
 *
 * For a peers or egress map just taken (a pinned map may hold entries of
 * an earlier module), and when redirect_peer changes.
 */
void xdp_flow_peers_resync(void)
{
	schedule_work(&xdp_flow_peer_resync_work);
}

/*
 * Under rtnl, like the events, so as not to write an entry back between
 * an event that comes before a change and the change. rtnl busy: the next
 * period.
 */
static void xdp_flow_peer_recheck_fn(struct work_struct *work)
{
	if (!rtnl_trylock()) {
		schedule_delayed_work(&xdp_flow_peer_recheck_work,
				      msecs_to_jiffies(XDP_FLOW_PEER_RECHECK_MS));
		return;
	}
	mutex_lock(&xdp_flow_peer_lock);
	xdp_flow_tx_check_all();
	mutex_unlock(&xdp_flow_peer_lock);
	rtnl_unlock();
}

/* The ifindex of TC message @nlh, or 0. */
static u32 xdp_flow_tc_ifindex(const struct nlmsghdr *nlh)
{
	const struct tcmsg *tcm;

	if (nlh->nlmsg_type < RTM_NEWQDISC || nlh->nlmsg_type > RTM_GETCHAIN ||
	    (nlh->nlmsg_type >= RTM_NEWACTION &&
	     nlh->nlmsg_type <= RTM_GETACTION) ||
	    nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*tcm)))
		return 0;
	tcm = nlmsg_data(nlh);
	/* A shared block's filters: its devices have clsact already. */
	if (tcm->tcm_ifindex <= 0)
		return 0;
	return tcm->tcm_ifindex;
}

/*
 * TC changed something: check the devices it names. Under rtnl, so after
 * the change is complete: TC announces a qdisc before it activates the
 * device's new ones.
 */
static void xdp_flow_peer_tc_fn(struct work_struct *work)
{
	const struct nlmsghdr *nlh;
	bool all = false;
	int n, rem;
	u32 ifindex;

	rtnl_lock();
	mutex_lock(&xdp_flow_peer_lock);
	while (xdp_flow_peer_sock) {
		struct kvec iov = {
			.iov_base = xdp_flow_peer_buf,
			.iov_len = XDP_FLOW_PEER_BUF,
		};
		struct msghdr msg = {};

		n = kernel_recvmsg(xdp_flow_peer_sock, &msg, &iov, 1,
				   iov.iov_len, MSG_DONTWAIT);
		if (n == -EAGAIN)
			break;
		/* Messages lost (-ENOBUFS) or cut: any device may be meant. */
		if (n <= 0 || msg.msg_flags & MSG_TRUNC) {
			all = true;
			if (n == -ENOBUFS || n > 0)
				continue;
			break;
		}
		rem = n;
		for (nlh = xdp_flow_peer_buf; nlmsg_ok(nlh, rem);
		     nlh = nlmsg_next(nlh, &rem)) {
			ifindex = xdp_flow_tc_ifindex(nlh);
			if (ifindex)
				xdp_flow_tx_check(ifindex);
		}
	}
	if (all)
		xdp_flow_tx_check_all();
	mutex_unlock(&xdp_flow_peer_lock);
	rtnl_unlock();
}

static void xdp_flow_peer_tc_ready(struct sock *sk)
{
	schedule_work(&xdp_flow_peer_tc_work);
}

static int xdp_flow_peer_listen(void)
{
	struct sockaddr_nl addr = {
		.nl_family = AF_NETLINK,
		.nl_groups = 1 << (RTNLGRP_TC - 1),
	};
	struct socket *sock;
	int err;

	xdp_flow_peer_buf = kmalloc(XDP_FLOW_PEER_BUF, GFP_KERNEL);
	if (!xdp_flow_peer_buf)
		return -ENOMEM;
	err = sock_create_kern(&init_net, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE,
			       &sock);
	if (err)
		goto err_buf;
	/* struct sockaddr_unsized on newer kernels, sockaddr before */
	err = kernel_bind(sock, (void *)&addr, sizeof(addr));
	if (err)
		goto err_sock;
	write_lock_bh(&sock->sk->sk_callback_lock);
	sock->sk->sk_data_ready = xdp_flow_peer_tc_ready;
	write_unlock_bh(&sock->sk->sk_callback_lock);
	mutex_lock(&xdp_flow_peer_lock);
	xdp_flow_peer_sock = sock;
	mutex_unlock(&xdp_flow_peer_lock);
	return 0;

err_sock:
	sock_release(sock);
err_buf:
	kfree(xdp_flow_peer_buf);
	return err;
}

/* Under rtnl: @dev's state changed (or will, for @before). */
static void xdp_flow_peer_dev_event(struct net_device *dev, bool before)
{
	struct net_device *peer = xdp_flow_veth_peer(dev);

	mutex_lock(&xdp_flow_peer_lock);
	if (net_eq(dev_net(dev), &init_net)) {
		if (before)
			xdp_flow_tx_put(dev->ifindex, NULL, false, NULL);
		xdp_flow_tx_check(dev->ifindex);
	}
	if (peer && net_eq(dev_net(peer), &init_net)) {
		if (before)
			xdp_flow_tx_put(peer->ifindex, NULL, false, NULL);
		xdp_flow_tx_check(peer->ifindex);
	}
	mutex_unlock(&xdp_flow_peer_lock);
}

/* Is @event the one that says a device's xdp_features changed? */
static bool xdp_flow_xdp_feat_event(unsigned long event)
{
#ifdef XDP_FLOW_HAVE_XDP_FEATURES
	return event == NETDEV_XDP_FEAT_CHANGE;
#else
	return false;
#endif
}

static int xdp_flow_peer_netdev_event(struct notifier_block *nb,
				      unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);

	/* A veth's peer may be in init_net: the devices of others are not. */
	if (!xdp_flow_is_veth(dev) && !net_eq(dev_net(dev), &init_net))
		return NOTIFY_DONE;
	switch (event) {
	case NETDEV_GOING_DOWN:
	case NETDEV_PRECHANGEMTU:
	case NETDEV_PRE_CHANGEADDR:
	case NETDEV_UNREGISTER:
		xdp_flow_peer_dev_event(dev, true);
		break;
	case NETDEV_REGISTER:
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
	case NETDEV_CHANGEADDR:
	case NETDEV_FEAT_CHANGE:
		xdp_flow_peer_dev_event(dev, false);
		break;
	default:
		/* Drivers announce it with or without rtnl: @dev alone. */
		if (!xdp_flow_xdp_feat_event(event) ||
		    !net_eq(dev_net(dev), &init_net))
			break;
		mutex_lock(&xdp_flow_peer_lock);
		xdp_flow_tx_check(dev->ifindex);
		mutex_unlock(&xdp_flow_peer_lock);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block xdp_flow_peer_nb = {
	.notifier_call = xdp_flow_peer_netdev_event,
};

static int xdp_flow_redirect_peer_set(const char *val,
				      const struct kernel_param *kp)
{
	int err = param_set_bool(val, kp);

	/* Also at load, before the module is up, and while it goes. */
	mutex_lock(&xdp_flow_peer_lock);
	if (!err && xdp_flow_peer_sock)
		xdp_flow_peers_resync();
	mutex_unlock(&xdp_flow_peer_lock);
	return err;
}

static const struct kernel_param_ops xdp_flow_redirect_peer_ops = {
	.set = xdp_flow_redirect_peer_set,
	.get = param_get_bool,
};

module_param_cb(redirect_peer, &xdp_flow_redirect_peer_ops, &redirect_peer,
		0644);
MODULE_PARM_DESC(redirect_peer,
		 "TC hook: redirects to a veth enter its peer directly where that changes nothing but speed (default: on)");

/**
 * xdp_flow_peer_init() - start keeping the peers entries
 *
 * Return: 0, or a negative errno.
 */
int xdp_flow_peer_init(void)
{
	int err;

	err = xdp_flow_peer_listen();
	if (err)
		return err;
	err = register_netdevice_notifier(&xdp_flow_peer_nb);
	if (err)
		xdp_flow_peer_exit();
	return err;
}

/**
 * xdp_flow_peer_exit() - remove every peers entry and stop keeping them
 *
 * Not under rtnl.
 */
void xdp_flow_peer_exit(void)
{
	struct socket *sock;

	unregister_netdevice_notifier(&xdp_flow_peer_nb);
	mutex_lock(&xdp_flow_peer_lock);
	xdp_flow_peer_exiting = true;
	sock = xdp_flow_peer_sock;
	xdp_flow_peer_sock = NULL;
	mutex_unlock(&xdp_flow_peer_lock);
	if (sock)
		sock_release(sock);
	cancel_work_sync(&xdp_flow_peer_tc_work);
	cancel_work_sync(&xdp_flow_peer_resync_work);
	cancel_delayed_work_sync(&xdp_flow_peer_recheck_work);

	mutex_lock(&xdp_flow_peer_lock);
	xdp_flow_tx_clear();
	mutex_unlock(&xdp_flow_peer_lock);
	kfree(xdp_flow_peer_buf);
	xdp_flow_peer_buf = NULL;
}
