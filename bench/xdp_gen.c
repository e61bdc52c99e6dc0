// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_gen: a traffic generator for the benchmark, built on
 * BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES. A two-instruction XDP
 * program returns XDP_TX for a frame "received" on DEV; the kernel turns
 * that into a redirect to DEV, so the frames go out of DEV through its
 * ndo_xdp_xmit. On a veth, they arrive at the peer as xdp_frames in the
 * peer's NAPI, as frames from a NIC's ring do: an XDP program there runs on
 * the raw frame and no skb is built unless it passes the frame. (pktgen
 * instead hands veth an skb that it keeps a reference to, which veth must
 * copy before XDP may touch it.)
 *
 * Usage: xdp_gen -i DEV -D DSTMAC -S SRCIP -T DSTIP [-s SRCMAC]
 *                [-p DPORT] [-P SPORT] [-l LEN] [-t SECONDS] [-r PPS]
 *                [-c CPU] [-b BATCH] [-k KEEPDEV]
 *
 * Sends one flow of UDP frames of LEN bytes (without FCS; default 60, a
 * 64-byte frame on the wire) for SECONDS (default 5; 0: until SIGINT or
 * SIGTERM), as fast as it can or at about PPS frames a second. Prints
 * "sent N seconds S" at the end. Frames the receiver has no room for are
 * dropped silently, as on a wire: count them where they arrive.
 *
 * Every test run adds its program to the XDP dispatcher and removes it
 * again, and each time the kernel rewrites the dispatcher's code. With -k,
 * the program is also attached (native mode) to KEEPDEV, a device that
 * gets no traffic, while xdp_gen runs: it then stays in the dispatcher and
 * test runs leave the code alone. In an emulated (QEMU TCG) 6.12 guest,
 * that rewriting while another CPU ran XDP ended in "Oops: int3" in
 * bpf_dispatcher_xdp_func.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sched.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#ifndef BPF_F_TEST_XDP_LIVE_FRAMES
#define BPF_F_TEST_XDP_LIVE_FRAMES	(1U << 1)
#endif

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int parse_mac(const char *s, unsigned char *mac)
{
	unsigned int b[ETH_ALEN];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5]) != ETH_ALEN)
		return -1;
	for (i = 0; i < ETH_ALEN; i++)
		mac[i] = b[i];
	return 0;
}

static __u16 ip_csum(const void *hdr, int len)
{
	const __u16 *p = hdr;
	__u32 sum = 0;

	while (len > 1) {
		sum += *p++;
		len -= 2;
	}
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: xdp_gen -i DEV -D DSTMAC -S SRCIP -T DSTIP [-s SRCMAC]\n"
		"               [-p DPORT] [-P SPORT] [-l LEN] [-t SECONDS]\n"
		"               [-r PPS] [-c CPU] [-b BATCH] [-k KEEPDEV]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	/* r0 = XDP_TX; exit: the live-frames runner sends it out of DEV */
	const struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = XDP_TX },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	unsigned char frame[1514] = {}, dmac[ETH_ALEN], smac[ETH_ALEN] = {
		0x02, 0, 0, 0, 0, 1 };
	const char *dev = NULL, *dst = NULL, *src = NULL, *keep = NULL;
	unsigned int dport = 9, sport = 9, len = 60, batch = 0;
	double secs = 5, pps = 0, t0, t, next;
	unsigned long long sent = 0;
	struct xdp_md ctx = {};
	struct ethhdr *eth = (void *)frame;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	struct sigaction sa = { .sa_handler = on_signal };
	int have_dmac = 0, cpu = -1, ifindex, keep_ifindex = 0, fd, c, err = 0;

	while ((c = getopt(argc, argv, "i:D:s:S:T:p:P:l:t:r:c:b:k:")) != -1) {
		switch (c) {
		case 'i': dev = optarg; break;
		case 'D':
			if (parse_mac(optarg, dmac))
				usage();
			have_dmac = 1;
			break;
		case 's':
			if (parse_mac(optarg, smac))
				usage();
			break;
		case 'S': src = optarg; break;
		case 'T': dst = optarg; break;
		case 'p': dport = atoi(optarg); break;
		case 'P': sport = atoi(optarg); break;
		case 'l': len = atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'r': pps = atof(optarg); break;
		case 'c': cpu = atoi(optarg); break;
		case 'b': batch = atoi(optarg); break;
		case 'k': keep = optarg; break;
		default: usage();
		}
	}
	if (!dev || !dst || !src || !have_dmac)
		usage();
	if (len < sizeof(*eth) + sizeof(*ip) + sizeof(*udp) || len > sizeof(frame)) {
		fprintf(stderr, "xdp_gen: length %u out of range\n", len);
		return 2;
	}
	ifindex = if_nametoindex(dev);
	if (!ifindex) {
		fprintf(stderr, "xdp_gen: no device %s\n", dev);
		return 1;
	}
	if (keep) {
		keep_ifindex = if_nametoindex(keep);
		if (!keep_ifindex) {
			fprintf(stderr, "xdp_gen: no device %s\n", keep);
			return 1;
		}
	}

	memcpy(eth->h_dest, dmac, ETH_ALEN);
	memcpy(eth->h_source, smac, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->tot_len = htons(len - sizeof(*eth));
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	if (inet_pton(AF_INET, src, &ip->saddr) != 1 ||
	    inet_pton(AF_INET, dst, &ip->daddr) != 1)
		usage();
	ip->check = ip_csum(ip, sizeof(*ip));
	udp->source = htons(sport);
	udp->dest = htons(dport);
	udp->len = htons(len - sizeof(*eth) - sizeof(*ip));
	/* udp->check 0: no checksum, valid for IPv4 */

	/* the runner sends from the CPU it runs on: keep it in one place */
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			perror("xdp_gen: sched_setaffinity");
	}

	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xdp_gen", "GPL", prog, 2, NULL);
	if (fd < 0) {
		fprintf(stderr, "xdp_gen: loading the program: %s\n", strerror(-fd));
		return 1;
	}

	if (keep_ifindex) {
		err = bpf_xdp_attach(keep_ifindex, fd, XDP_FLAGS_DRV_MODE, NULL);
		if (err) {
			fprintf(stderr, "xdp_gen: attaching to %s: %s\n", keep,
				strerror(-err));
			return 1;
		}
	}

	/* no SA_RESTART: a signal ends a long test run early */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	ctx.data_end = len;
	ctx.ingress_ifindex = ifindex;
	t0 = now();
	next = t0;
	while (!stop) {
		/*
		 * Paced: a run every 2 ms or so (each run sets up a page
		 * pool: far more often would cost more than the frames);
		 * else runs short enough that the one a signal cuts short
		 * (its frames are not counted) does not matter.
		 */
		unsigned int n = pps > 0 ? (pps >= 500 ? pps / 500 : 1) : 8192;
		LIBBPF_OPTS(bpf_test_run_opts, opts,
			.data_in = frame,
			.data_size_in = len,
			.ctx_in = &ctx,
			.ctx_size_in = sizeof(ctx),
			.repeat = n,
			.flags = BPF_F_TEST_XDP_LIVE_FRAMES,
			.batch_size = batch,
		);

		err = bpf_prog_test_run_opts(fd, &opts);
		if (err && errno == EINTR) {
			err = 0;	/* stopped by a signal */
			break;
		}
		if (err) {
			fprintf(stderr, "xdp_gen: BPF_PROG_TEST_RUN (live frames): %s\n",
				strerror(errno));
			break;
		}
		sent += n;
		t = now();
		if (secs > 0 && t - t0 >= secs)
			break;
		if (pps > 0) {
			struct timespec ts;

			next += n / pps;
			if (next > t) {
				ts.tv_sec = (time_t)(next - t);
				ts.tv_nsec = (long)((next - t - ts.tv_sec) * 1e9);
				nanosleep(&ts, NULL);
			} else if (t - next > 1) {
				next = t;	/* fell behind: do not burst to catch up */
			}
		}
	}
	t = now() - t0;
	if (keep_ifindex) {
		/* the receivers drain their rings before the code changes */
		struct timespec ts = { .tv_nsec = 200 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		bpf_xdp_detach(keep_ifindex, XDP_FLAGS_DRV_MODE, NULL);
	}
	if (err)
		return 1;
	printf("sent %llu seconds %.3f\n", sent, t);
	return 0;
}
