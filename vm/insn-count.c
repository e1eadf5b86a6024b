// SPDX-License-Identifier: GPL-2.0
/*
 * insn-count: a QEMU TCG plugin that counts the instructions every vCPU of
 * the guest executes, split into kernel and user, for make bench.
 *
 * Under TCG the guest's own CPU time is emulated: with -icount the virtual
 * clock advances by the instructions of *all* vCPUs, which the single TCG
 * thread runs in turns, so a busy vCPU is charged for the turns of the
 * others too. An instruction count per vCPU has no such bias.
 *
 * A translation block whose address has bit 63 set (the kernel half of the
 * x86-64 address space) counts as kernel, any other as user. Each vCPU's
 * counts are added up by inline operations at the start of every block.
 *
 * Use it with multi-threaded TCG (no -icount). With one TCG thread for all
 * vCPUs (which -icount needs), QEMU 10.0 compiles the index of the vCPU that
 * translated a block into the block's instrumentation, so whatever another
 * vCPU executes with that block is counted for the first one; and inline
 * operations together with -icount broke guest execution (an oops in
 * sync_regs() within seconds of boot: a REP MOVSQ that advanced RDI too far).
 *
 * Markers: a guest program maps a range of "ret" instructions at BASE and
 * calls BASE + K; when a vCPU executes the block starting there, one line
 *
 *   mark K vcpu V insn U0 K0 U1 K1 ...
 *
 * is appended to the output file: the user and kernel counts of every vCPU
 * at that moment (see devmem_bench -M). At exit a line "total U0 K0 ..." is
 * written.
 *
 * Arguments (-plugin FILE,arg=value,...):
 *   out=PATH     the output file (required)
 *   base=ADDR    the marker range (default 0x7e5700000000)
 *   size=BYTES   its length (default 65536)
 *   profile=PATH write, at exit, the instructions vCPU "pvcpu" (default 1)
 *                executed in each translation block between an even
 *                marker and the next odd one: lines "ADDRESS INSNS", for
 *                a profile by symbol (mk/bench-profile.py). The counting
 *                then goes through a call per block (slower).
 *   pvcpu=N      the vCPU profiled
 *   mem=1        also count the bytes every vCPU loads and stores, user
 *                and kernel apart (by the address of the instruction),
 *                through a callback per memory access (slower); each
 *                "mark" line is then followed by
 *
 *                  mem K vcpu V bytes UL0 US0 KL0 KS0 UL1 US1 ...
 *
 *                (user loads, user stores, kernel loads, kernel stores)
 *                and the "total" line by "memtotal UL0 US0 ...". A REP
 *                string instruction is one access per iteration under TCG,
 *                so a copy counts its bytes twice: loaded and stored.
 *
 * The plugin API is declared here, not taken from QEMU's qemu-plugin.h
 * (not packaged by Debian): only calls that exist unchanged since API
 * version 2 (QEMU 9.0) are used, and version 2 is what it asks for.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* ---- the parts of the QEMU plugin API this plugin uses ----------------- */

typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_scoreboard;
struct qemu_info_t;

typedef struct {
	struct qemu_plugin_scoreboard *score;
	size_t offset;
} qemu_plugin_u64;

enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
enum qemu_plugin_mem_rw {
	QEMU_PLUGIN_MEM_R = 1,
	QEMU_PLUGIN_MEM_W,
	QEMU_PLUGIN_MEM_RW,
};

typedef void (*tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*vcpu_udata_cb)(unsigned int vcpu_index, void *udata);
typedef void (*udata_cb)(qemu_plugin_id_t id, void *udata);
typedef void (*vcpu_mem_cb)(unsigned int vcpu_index,
			    qemu_plugin_meminfo_t info, uint64_t vaddr,
			    void *udata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   tb_trans_cb cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  vcpu_udata_cb cb,
					  enum qemu_plugin_cb_flags flags,
					  void *udata);
void qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(struct qemu_plugin_tb *tb,
						       enum qemu_plugin_op op,
						       qemu_plugin_u64 entry,
						       uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
				      vcpu_mem_cb cb,
				      enum qemu_plugin_cb_flags flags,
				      enum qemu_plugin_mem_rw rw,
				      void *udata);
unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_scoreboard *qemu_plugin_scoreboard_new(size_t size);
uint64_t qemu_plugin_u64_get(qemu_plugin_u64 entry, unsigned int vcpu_index);
int qemu_plugin_num_vcpus(void);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb cb,
				    void *udata);
void qemu_plugin_outs(const char *str);

EXPORT int qemu_plugin_version = 2;

/* ---- the plugin --------------------------------------------------------- */

struct counts {
	uint64_t user;
	uint64_t kernel;
};

#define MAX_VCPUS	64

static qemu_plugin_u64 user_insns;
static qemu_plugin_u64 kernel_insns;
/* profile=: [vcpu][0] user, [vcpu][1] kernel, each written by its vCPU */
static uint64_t cb_counts[MAX_VCPUS][2];
/* mem=1: [vcpu][kernel * 2 + store] bytes, each written by its vCPU */
static uint64_t mem_bytes[MAX_VCPUS][4];
static bool count_mem;
static uint64_t marker_base = 0x7e5700000000ULL;
static uint64_t marker_size = 65536;
static FILE *out;

/* profile=: one record per translation, merged by address at exit */
struct tb_prof {
	uint64_t pc;
	uint64_t n;
	uint64_t insns;
	struct tb_prof *next;
};

static const char *prof_path;
static unsigned int prof_vcpu = 1;
static bool prof_armed;
static struct tb_prof *prof_list;

static void print_counts(void)
{
	int i, n = qemu_plugin_num_vcpus();

	for (i = 0; i < n; i++) {
		if (prof_path && i < MAX_VCPUS)
			fprintf(out, " %" PRIu64 " %" PRIu64,
				cb_counts[i][0], cb_counts[i][1]);
		else
			fprintf(out, " %" PRIu64 " %" PRIu64,
				qemu_plugin_u64_get(user_insns, i),
				qemu_plugin_u64_get(kernel_insns, i));
	}
	fputc('\n', out);
	fflush(out);
}

/* mem=1: the bytes of every vCPU, after a "mem ..." or "memtotal" head */
static void print_mem(void)
{
	int i, j, n = qemu_plugin_num_vcpus();

	for (i = 0; i < n && i < MAX_VCPUS; i++)
		for (j = 0; j < 4; j++)
			fprintf(out, " %" PRIu64, mem_bytes[i][j]);
	fputc('\n', out);
	fflush(out);
}

static void on_marker(unsigned int vcpu_index, void *udata)
{
	fprintf(out, "mark %" PRIuPTR " vcpu %u insn", (uintptr_t)udata,
		vcpu_index);
	print_counts();
	if (count_mem) {
		fprintf(out, "mem %" PRIuPTR " vcpu %u bytes",
			(uintptr_t)udata, vcpu_index);
		print_mem();
	}
	if (vcpu_index == prof_vcpu)
		prof_armed = !((uintptr_t)udata & 1);
}

static void on_tb_exec_prof(unsigned int vcpu_index, void *udata)
{
	struct tb_prof *p = udata;

	if (vcpu_index < MAX_VCPUS)
		cb_counts[vcpu_index][p->pc >> 63] += p->n;
	if (prof_armed && vcpu_index == prof_vcpu)
		p->insns += p->n;
}

/* udata: 1 for an instruction in the kernel half, else 0 */
static void on_mem(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
		   uint64_t vaddr, void *udata)
{
	unsigned int slot = (uintptr_t)udata * 2 + qemu_plugin_mem_is_store(info);

	(void)vaddr;
	if (vcpu_index < MAX_VCPUS)
		mem_bytes[vcpu_index][slot] += 1ULL << qemu_plugin_mem_size_shift(info);
}

static void register_mem(struct qemu_plugin_tb *tb, size_t n)
{
	struct qemu_plugin_insn *insn;
	size_t i;

	for (i = 0; i < n; i++) {
		insn = qemu_plugin_tb_get_insn(tb, i);
		qemu_plugin_register_vcpu_mem_cb(insn, on_mem,
						 QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW,
						 (void *)(uintptr_t)(qemu_plugin_insn_vaddr(insn) >> 63));
	}
}

static int cmp_prof(const void *a, const void *b)
{
	const struct tb_prof *x = *(struct tb_prof * const *)a;
	const struct tb_prof *y = *(struct tb_prof * const *)b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* Merge the records by address and write the ones that ran. */
static void write_profile(void)
{
	struct tb_prof **v, *p;
	size_t n = 0, i;
	uint64_t sum;
	FILE *f;

	for (p = prof_list; p; p = p->next)
		n++;
	v = calloc(n ? n : 1, sizeof(*v));
	f = fopen(prof_path, "w");
	if (!v || !f) {
		qemu_plugin_outs("insn-count: cannot write the profile\n");
		free(v);
		if (f)
			fclose(f);
		return;
	}
	for (p = prof_list, i = 0; p; p = p->next)
		v[i++] = p;
	qsort(v, n, sizeof(*v), cmp_prof);
	i = 0;
	while (i < n) {
		size_t j = i;

		for (sum = 0; j < n && v[j]->pc == v[i]->pc; j++)
			sum += v[j]->insns;
		if (sum)
			fprintf(f, "%" PRIx64 " %" PRIu64 "\n", v[i]->pc, sum);
		i = j;
	}
	fclose(f);
	free(v);
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t pc = qemu_plugin_tb_vaddr(tb);
	size_t n = qemu_plugin_tb_n_insns(tb);
	qemu_plugin_u64 entry = (pc >> 63) ? kernel_insns : user_insns;
	void *mark = (void *)(uintptr_t)(pc - marker_base);
	struct tb_prof *prof;

	(void)id;
	prof = prof_path ? calloc(1, sizeof(*prof)) : NULL;
	if (prof) {
		prof->pc = pc;
		prof->n = n;
		prof->next = prof_list;
		prof_list = prof;
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_exec_prof,
						     QEMU_PLUGIN_CB_NO_REGS, prof);
	} else {
		qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64,
								  entry, n);
	}
	if (count_mem)
		register_mem(tb, n);
	if (pc >= marker_base && pc - marker_base < marker_size)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_marker,
						     QEMU_PLUGIN_CB_NO_REGS, mark);
}

static void on_plugin_exit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	fprintf(out, "total");
	print_counts();
	if (count_mem) {
		fprintf(out, "memtotal");
		print_mem();
	}
	fclose(out);
	if (prof_path)
		write_profile();
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
			       const struct qemu_info_t *info,
			       int argc, char **argv)
{
	struct qemu_plugin_scoreboard *sb;
	const char *path = NULL;
	int i;

	(void)info;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		else if (!strncmp(argv[i], "base=", 5))
			marker_base = strtoull(argv[i] + 5, NULL, 0);
		else if (!strncmp(argv[i], "size=", 5))
			marker_size = strtoull(argv[i] + 5, NULL, 0);
		else if (!strncmp(argv[i], "profile=", 8))
			prof_path = argv[i] + 8;
		else if (!strncmp(argv[i], "pvcpu=", 6))
			prof_vcpu = strtoul(argv[i] + 6, NULL, 0);
		else if (!strncmp(argv[i], "mem=", 4))
			count_mem = strtoul(argv[i] + 4, NULL, 0) != 0;
		else
			goto usage;
	}
	if (!path)
		goto usage;
	out = fopen(path, "w");
	if (!out) {
		qemu_plugin_outs("insn-count: cannot open the output file\n");
		return -1;
	}
	sb = qemu_plugin_scoreboard_new(sizeof(struct counts));
	user_insns.score = sb;
	user_insns.offset = offsetof(struct counts, user);
	kernel_insns.score = sb;
	kernel_insns.offset = offsetof(struct counts, kernel);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, on_plugin_exit, NULL);
	return 0;

usage:
	qemu_plugin_outs("insn-count: arguments out=PATH [base=ADDR] [size=BYTES]"
			 " [profile=PATH] [pvcpu=N] [mem=0|1]\n");
	return -1;
}
