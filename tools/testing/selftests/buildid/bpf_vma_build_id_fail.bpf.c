// SPDX-License-Identifier: GPL-2.0
/*
 * Uses of bpf_vma_build_id() that the verifier must reject, one per
 * program; bpf_vma_build_id.c loads each alone and checks the reason.
 */
#include "bpf_vma_build_id_kfuncs.h"
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

unsigned char id[20];
__u32 size = sizeof(id);
int pid;

/* A VMA that nothing keeps alive: a function argument seen by fentry. */
SEC("fentry/vm_area_free")
int BPF_PROG(untrusted_vma, struct vm_area_struct *vma)
{
	return bpf_vma_build_id(vma, id, sizeof(id));
}

struct found {
	struct vm_area_struct *vma;
};

static long keep_vma(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct found *found = ctx;

	found->vma = vma;
	return 0;
}

/*
 * A bpf_find_vma() callback's VMA is trusted in the callback only: one
 * stored in the caller's stack is used after bpf_find_vma() dropped
 * mmap_lock.
 */
SEC("syscall")
int find_vma_escape(void *ctx)
{
	struct task_struct *task = bpf_task_from_pid(pid);
	struct found found = {};

	if (!task)
		return 0;
	bpf_find_vma(task, 0, keep_vma, &found, 0);
	if (found.vma)
		bpf_vma_build_id(found.vma, id, sizeof(id));
	bpf_task_release(task);
	return 0;
}

/* What the iterator returns may be NULL. */
SEC("syscall")
int null_vma(void *ctx)
{
	struct task_struct *task = bpf_task_from_pid(pid);
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;

	if (!task)
		return 0;
	bpf_iter_task_vma_new(&it, task, 0);
	vma = bpf_iter_task_vma_next(&it);
	bpf_vma_build_id(vma, id, sizeof(id));
	bpf_iter_task_vma_destroy(&it);
	bpf_task_release(task);
	return 0;
}

/* The buffer's size must be a constant. */
SEC("syscall")
int variable_size(void *ctx)
{
	struct task_struct *task = bpf_task_from_pid(pid);
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;

	if (!task)
		return 0;
	bpf_iter_task_vma_new(&it, task, 0);
	vma = bpf_iter_task_vma_next(&it);
	if (vma)
		bpf_vma_build_id(vma, id, size & 15);
	bpf_iter_task_vma_destroy(&it);
	bpf_task_release(task);
	return 0;
}

/* ... and the buffer at least that large. */
SEC("syscall")
int small_buffer(void *ctx)
{
	struct task_struct *task = bpf_task_from_pid(pid);
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	unsigned char small[8] = {};
	int ret = 0;

	if (!task)
		return 0;
	bpf_iter_task_vma_new(&it, task, 0);
	vma = bpf_iter_task_vma_next(&it);
	if (vma)
		ret = bpf_vma_build_id(vma, small, 20);
	bpf_iter_task_vma_destroy(&it);
	bpf_task_release(task);
	return ret + small[0];
}

/* Not a tracing program: XDP can hold a trusted VMA, but has no business with build IDs. */
SEC("xdp")
int xdp_program(struct xdp_md *ctx)
{
	struct task_struct *task = bpf_task_from_pid(pid);
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;

	if (!task)
		return XDP_PASS;
	bpf_iter_task_vma_new(&it, task, 0);
	vma = bpf_iter_task_vma_next(&it);
	if (vma)
		bpf_vma_build_id(vma, id, sizeof(id));
	bpf_iter_task_vma_destroy(&it);
	bpf_task_release(task);
	return XDP_PASS;
}
