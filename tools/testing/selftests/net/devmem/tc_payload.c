// SPDX-License-Identifier: GPL-2.0
/*
 * tc_payload IFNAME SECONDS: attach devmem_progs.bpf.o's tc_read_payload to
 * the ingress of IFNAME (libbpf), let traffic run for SECONDS, then print
 * how many reads past the headers worked and how many the kernel refused:
 *
 *   load_ok: N
 *   load_refused: N
 *
 * Prints "attached" once the program runs. Exit status 1 on any setup
 * failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "devmem_bpf.h"

static unsigned long long read_count(int map_fd, __u32 key)
{
	__u64 val = 0;

	bpf_map_lookup_elem(map_fd, &key, &val);
	return val;
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = 1, .priority = 1);
	struct bpf_program *prog;
	struct bpf_object *obj;
	int map_fd, err;

	if (argc != 3) {
		fprintf(stderr, "usage: tc_payload IFNAME SECONDS\n");
		return 2;
	}
	hook.ifindex = if_nametoindex(argv[1]);
	obj = devmem_bpf_load();
	if (!hook.ifindex || !obj) {
		fprintf(stderr, "tc_payload: no %s, or no BPF object\n", argv[1]);
		return 1;
	}
	map_fd = bpf_object__find_map_fd_by_name(obj, "payload_reads");
	prog = bpf_object__find_program_by_name(obj, "tc_read_payload");
	opts.prog_fd = prog ? bpf_program__fd(prog) : -1;
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		fprintf(stderr, "tc_payload: clsact: %d\n", err);
		return 1;
	}
	err = bpf_tc_attach(&hook, &opts);
	if (err) {
		fprintf(stderr, "tc_payload: attach: %d\n", err);
		bpf_tc_hook_destroy(&hook);
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	sleep(atoi(argv[2]));
	printf("load_ok: %llu\n", read_count(map_fd, 0));
	printf("load_refused: %llu\n", read_count(map_fd, 1));
	opts.prog_fd = 0;
	opts.flags = 0;
	opts.prog_id = 0;
	bpf_tc_detach(&hook, &opts);
	bpf_tc_hook_destroy(&hook);
	bpf_object__close(obj);
	return 0;
}
