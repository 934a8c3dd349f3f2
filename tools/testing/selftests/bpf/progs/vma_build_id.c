// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_vma_build_id() on the VMA of this process that maps @addr, as each
 * source of trusted VMAs gives it: the open-coded task_vma iterator, an
 * iter/task_vma program and a bpf_find_vma() callback.  Each source calls
 * it twice, with a buffer larger than any build ID and with one smaller.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "bpf_experimental.h"

char _license[] SEC("license") = "GPL";

extern int bpf_vma_build_id(struct vm_area_struct *vma, void *build_id,
			    u32 build_id__szk) __ksym;

enum { ITERATOR, ITER_PROGRAM, FIND_VMA_CALLBACK, SOURCES };

/* Set by user space: an address in the VMA to look at. */
u64 addr;

/* Set by user space to a value that no call returns, to see that one did. */
int ret[SOURCES];
int small_ret[SOURCES];
/* 20 bytes is the longest build ID (BUILD_ID_SIZE_MAX): 12 must be padding. */
unsigned char id[SOURCES][32];
unsigned char small_id[SOURCES][8];

static void build_ids(struct vm_area_struct *vma, int source)
{
	if (source < 0 || source >= SOURCES)
		return;
	ret[source] = bpf_vma_build_id(vma, id[source], sizeof(id[source]));
	small_ret[source] = bpf_vma_build_id(vma, small_id[source],
					     sizeof(small_id[source]));
}

SEC("syscall")
int iterator(void *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;

	/* The first VMA that ends above addr. */
	bpf_iter_task_vma_new(&it, task, addr);
	vma = bpf_iter_task_vma_next(&it);
	if (vma && vma->vm_start <= addr)
		build_ids(vma, ITERATOR);
	bpf_iter_task_vma_destroy(&it);
	return 0;
}

SEC("iter/task_vma")
int iter_program(struct bpf_iter__task_vma *ctx)
{
	struct vm_area_struct *vma = ctx->vma;

	/* The iterator is attached to the test's process only. */
	if (vma && vma->vm_start <= addr && addr < vma->vm_end)
		build_ids(vma, ITER_PROGRAM);
	return 0;
}

static long in_callback(struct task_struct *task, struct vm_area_struct *vma,
			void *data)
{
	build_ids(vma, FIND_VMA_CALLBACK);
	return 0;
}

SEC("syscall")
int find_vma_callback(void *ctx)
{
	return bpf_find_vma(bpf_get_current_task_btf(), addr, in_callback, NULL, 0);
}
