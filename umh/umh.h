/* SPDX-License-Identifier: GPL-2.0 */
/* xdp_flow_umh: what the files of the helper share. */
#ifndef _XDP_FLOW_UMH_H
#define _XDP_FLOW_UMH_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <uapi/linux/xdp_flow.h>

#define UMH_MSG_LEN	256
/* Quiet this long (no request), the helper does table_idle()'s work. */
#define UMH_IDLE_MS	1000

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* log.c */
enum log_dest {
	LOG_DEST_STDERR,
	LOG_DEST_KMSG,
};

void log_init(enum log_dest dest, bool verbose);
void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_err(...)	log_msg(3, __VA_ARGS__)
#define pr_info(...)	log_msg(6, __VA_ARGS__)
#define pr_debug(...)	log_msg(7, __VA_ARGS__)

/* bpf.c: the XDP program and its maps */
struct xdp_flow_bpf;

enum dp_hook {
	DP_HOOK_XDP,
	DP_HOOK_TC,		/* TC-BPF at ingress through tcx */
	DP_NR_HOOKS,
};

long long dp_now_us(void);
long long dp_now_ms(void);
bool dp_bpffs_mounted(void);
int dp_mount_bpffs(void);
int dp_open_pin_dir(const char *pin_dir, bool create);
int dp_lock_pin_dir(const char *pin_dir, bool create, int timeout_ms);
bool dp_same_dir(int fd, const char *path);
void dp_pin_path(int dir_fd, const char *name, char *buf, size_t len);
bool dp_fd_is(int fd, const char *kind);
int dp_pin_get(int dir_fd, const char *name, const char *kind);
bool dp_is_map_pin(const char *name);
bool dp_is_prog_name(const char *name);
struct xdp_flow_bpf *dp_open(int pin_fd, unsigned int flow_entries,
			     unsigned int rule_ids,
			     void (*progress)(void *arg), void *arg);
void dp_close(struct xdp_flow_bpf *skel);
int dp_unpin(struct xdp_flow_bpf *skel, int pin_fd, const char *pin_dir);
struct xdp_flow_bpf *dp_hook_load(struct xdp_flow_bpf *skel,
				  enum dp_hook hook,
				  void (*progress)(void *arg), void *arg);
int dp_hook_fd(struct xdp_flow_bpf *inst, enum dp_hook hook);
int dp_maps_prog_fd(struct xdp_flow_bpf *skel);
int dp_tc_maps_prog_fd(struct xdp_flow_bpf *skel);

/* ftab.c: the XDP flow table, written in place */
struct ftab;
struct xdp_flow_ft_entry;

/* A mask's buckets: 1 << @order of them from @base on. */
struct ftab_region {
	__u32 base;
	__u32 order;
};

struct ftab *ftab_open(int buckets_fd, int entries_fd, int hash_fd);
void ftab_free(struct ftab *f);
int ftab_region_alloc(struct ftab *f, unsigned int order,
		      struct ftab_region *r);
void ftab_region_free(struct ftab *f, const struct ftab_region *r);
int ftab_region_claim(struct ftab *f, const struct ftab_region *r);
int ftab_grow(struct ftab *f, const struct ftab_region *r, __u32 mask_id,
	      struct ftab_region *to);
void ftab_repair(struct ftab *f, const struct ftab_region *r, __u32 mask_id);
int ftab_set(struct ftab *f, const struct ftab_region *r, __u32 mask_id,
	     const struct xdp_flow_key *key, __u32 rule, __u32 seq);
int ftab_del(struct ftab *f, const struct ftab_region *r, __u32 mask_id,
	     const struct xdp_flow_key *key, __u32 seq);
int ftab_lookup(const struct ftab *f, const struct ftab_region *r,
		__u32 mask_id, const struct xdp_flow_key *key);
void ftab_walk(const struct ftab *f, const struct ftab_region *r,
	       void (*fn)(void *arg, const struct xdp_flow_ft_entry *e),
	       void *arg);
void ftab_prune(struct ftab *f, const struct ftab_region *r,
		int (*keep)(void *arg, __u32 mask_id,
			    const struct xdp_flow_key *key),
		void *arg, __u32 seq);
unsigned int ftab_spilled(const struct ftab *f);

/* table*.c: the flow tables (tables.h: their files) */
struct table;

struct table *table_new(struct xdp_flow_bpf *skel);
int table_set_limits(struct table *t, unsigned int masks, unsigned int flows);
void table_free(struct table *t);
int table_recover(struct table *t);
void table_begin_replay(struct table *t);
int table_rule_add(struct table *t, const struct xdp_flow_rule *rule,
		   char *msg, size_t len);
int table_rule_del(struct table *t, __u32 id, char *msg, size_t len);
int table_stats(struct table *t, __u32 id, struct xdp_flow_stats *st,
		char *msg, size_t len);
int table_stats_all(struct table *t, struct xdp_flow_stats **st, size_t *nr);
int table_sync(struct table *t, char *msg, size_t len);
void table_room(struct table *t, struct xdp_flow_room *room);
bool table_idle_due(const struct table *t);
void table_idle(struct table *t);
void table_set_progress(struct table *t, void (*fn)(void *arg), void *arg);
unsigned int table_rule_count(const struct table *t);
unsigned int table_mask_count(const struct table *t);

/* attach.c: datapath links, done by a worker thread (attaching takes rtnl) */
struct attach;

/* tcx (6.6): newer than the uapi headers this may be built with. */
#define XF_BPF_TCX_INGRESS	46
#define XF_BPF_LINK_TYPE_TCX	11

typedef void (*attach_done_fn)(void *arg, __u32 seq, int err,
			       const char *msg);
typedef void (*attach_progress_fn)(void *arg, __u32 seq);

enum attach_op {
	ATTACH_OP_ATTACH,
	ATTACH_OP_DETACH,
	ATTACH_OP_SYNC,		/* detach every link not attached since replay */
};

struct attach *attach_new(struct xdp_flow_bpf *skel, int pin_fd,
			  attach_progress_fn progress, void *arg);
int attach_load(struct attach *a, enum dp_hook hook);
enum dp_hook attach_default_hook(void);
void attach_free(struct attach *a);
int attach_recover(struct attach *a);
void attach_begin_replay(struct attach *a);
int attach_submit(struct attach *a, enum attach_op op, __u32 ifindex,
		  __u32 xdp_mode, __u32 seq, attach_done_fn done, void *arg);
void attach_wait_idle(struct attach *a);
int attach_detach_all(struct attach *a);
bool attach_link_name_parse(const char *name, __u32 *ifindex);

/* request.c: one request, whichever transport brought it */
struct umh_reply {
	__u32 seq;
	int err;
	bool progress;			/* not the answer: still at it */
	char msg[UMH_MSG_LEN];
	struct xdp_flow_stats *stats;
	size_t nr_stats;
	const struct xdp_flow_room *room;	/* or NULL */
};

typedef void (*umh_reply_fn)(void *transport, const struct umh_reply *r);

struct umh {
	struct xdp_flow_bpf *skel;
	struct table *table;
	struct attach *attach;
	const char *pin_dir;		/* NULL: no pins */
	int pin_fd;			/* pin_dir, checked and locked */
	umh_reply_fn reply;
	void *transport;
	int reply_fd;			/* the module's channel for replies */
	int family;			/* the module's genl family id */
	/* The transport's report that request @seq goes on. */
	void (*progress)(struct umh *u, __u32 seq);
	__u32 progress_seq;		/* the request being served; 0 before
					 * HELLO
					 */
	long long progress_ms;		/* when progress was last reported */
	unsigned int step_delay_us;	/* tests: each step of long work
					 * takes this much longer
					 */
	bool exiting;
};

struct umh_request {
	__u8 cmd;			/* XDP_FLOW_CMD_* */
	__u32 seq;
	bool has_rule_id;
	__u32 rule_id;
	__u32 ifindex;
	__u32 xdp_mode;
	bool posted;			/* the module does not wait for it */
	struct xdp_flow_rule rule;
};

void umh_begin_replay(struct umh *u);
void umh_handle(struct umh *u, const struct umh_request *req);
void umh_progress(void *arg);

/* genl.c and driver.c: the transports */
struct nl_sock;
struct nl_msg;

int genl_check_family(void);
void genl_progress(struct umh *u, __u32 seq);
int genl_connect_kernel(struct nl_sock *sk);
int genl_from_kernel(struct nl_msg *msg, void *arg);
int genl_run(struct umh *u);
int driver_run(struct umh *u);
int driver_parse_rule(char *args, struct xdp_flow_rule *r, char *msg,
		      size_t len);

/* cleanup.c: --cleanup, what a helper that is gone left behind */
int cleanup_run(void);

#endif /* _XDP_FLOW_UMH_H */
