/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF object of the devmem tests (devmem_progs.bpf.o, built with
 * clang), found next to the program that loads it, with libbpf.
 */
#ifndef DEVMEM_BPF_H
#define DEVMEM_BPF_H

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <bpf/libbpf.h>

/**
 * devmem_bpf_load - open and load devmem_progs.bpf.o
 *
 * Return: the loaded object, or NULL.
 */
static inline struct bpf_object *devmem_bpf_load(void)
{
	char path[PATH_MAX + 32], exe[PATH_MAX];
	struct bpf_object *obj;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return NULL;
	exe[n] = '\0';
	snprintf(path, sizeof(path), "%s/devmem_progs.bpf.o", dirname(exe));
	obj = bpf_object__open_file(path, NULL);
	if (!obj)
		return NULL;
	if (bpf_object__load(obj)) {
		bpf_object__close(obj);
		return NULL;
	}
	return obj;
}

#endif /* DEVMEM_BPF_H */
