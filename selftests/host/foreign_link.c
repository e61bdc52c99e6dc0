// SPDX-License-Identifier: GPL-2.0
/*
 * Another application's XDP program, for test_pin_trust.sh: loads a program
 * that passes every frame, attaches it to a device through a bpf_link and
 * pins the link, so that it stays attached after this exits.
 *
 * usage: foreign_link <dev> <link pin path> [<prog name>]
 *   (run in the network namespace of <dev>; prints the program's id)
 *
 * The program is named "xf_foreign" unless told otherwise: named as the
 * helper's own ("xdp_flow"), it is the same name with another tag.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

int main(int argc, char **argv)
{
	const struct bpf_insn insns[] = {
		/* r0 = XDP_PASS; exit */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	unsigned int ifindex;
	int prog_fd, link_fd;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: foreign_link <dev> <link pin path> [<prog name>]\n");
		return 2;
	}
	ifindex = if_nametoindex(argv[1]);
	if (!ifindex) {
		fprintf(stderr, "no device %s\n", argv[1]);
		return 1;
	}
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_XDP,
				argc > 3 ? argv[3] : "xf_foreign", "GPL",
				insns, sizeof(insns) / sizeof(insns[0]), NULL);
	if (prog_fd < 0) {
		fprintf(stderr, "cannot load the program: %s\n",
			strerror(errno));
		return 1;
	}
	link_fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, NULL);
	if (link_fd < 0) {
		fprintf(stderr, "cannot attach to %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	if (bpf_obj_pin(link_fd, argv[2])) {
		fprintf(stderr, "cannot pin %s: %s\n", argv[2],
			strerror(errno));
		return 1;
	}
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len)) {
		fprintf(stderr, "cannot read the program's id: %s\n",
			strerror(errno));
		return 1;
	}
	printf("%u\n", info.id);
	return 0;
}
