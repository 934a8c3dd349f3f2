// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_vma_build_id() on every trusted VMA a program can hold: from the
 * open-coded task_vma iterator and an iter/task_vma program.  Each records
 * what it saw into the one global.
 */
#include "bpf_vma_build_id_kfuncs.h"
#include "bpf_vma_build_id.h"

char _license[] SEC("license") = "GPL";

struct bpf_iter_meta {
	void *seq;
} __attribute__((preserve_access_index));

struct bpf_iter__task_vma {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
	struct vm_area_struct *vma;
} __attribute__((preserve_access_index));

struct vma_test_data data;

static __always_inline void record(struct vm_area_struct *vma)
{
	struct vma_result *r;
	unsigned int n = data.nr;

	if (n >= VMA_MAX) {
		data.more++;
		return;
	}
	r = &data.vmas[n];
	r->start = vma->vm_start;
	r->end = vma->vm_end;
	r->pgoff = vma->vm_pgoff;
	r->flags = vma->vm_flags;
	/*
	 * First: a miss queues a fill, which another CPU may finish before a
	 * later call here, and the tests of misses look at this answer.
	 */
	r->ret = bpf_vma_build_id(vma, r->id, sizeof(r->id));
	if (!n) {
		/* A buffer too small for a 20-byte ID, and one larger than it. */
		data.ret_small = bpf_vma_build_id(vma, data.large, 8);
		data.ret_large = bpf_vma_build_id(vma, data.large, sizeof(data.large));
	}
	data.nr = n + 1;
}

/* Every VMA of data.pid, with the open-coded iterator. */
SEC("syscall")
int iterate_vmas(void *ctx)
{
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct task_struct *task;

	task = bpf_task_from_pid(data.pid);
	if (!task) {
		data.err = -3;	/* ESRCH */
		return 0;
	}
	data.err = bpf_iter_task_vma_new(&it, task, 0);
	while ((vma = bpf_iter_task_vma_next(&it)))
		record(vma);
	bpf_iter_task_vma_destroy(&it);
	bpf_task_release(task);
	return 0;
}

static long record_found_vma(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	record(vma);
	return 0;
}

/* The VMA of data.pid that maps data.addr, in a bpf_find_vma() callback. */
SEC("syscall")
int find_vma_at(void *ctx)
{
	struct task_struct *task = bpf_task_from_pid(data.pid);

	if (!task) {
		data.err = -3;	/* ESRCH */
		return 0;
	}
	data.err = bpf_find_vma(task, data.addr, record_found_vma, NULL, 0);
	bpf_task_release(task);
	return 0;
}

/* The VMA of data.pid that maps data.addr: the iterator started there. */
SEC("syscall")
int vma_at(void *ctx)
{
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct task_struct *task;

	task = bpf_task_from_pid(data.pid);
	if (!task) {
		data.err = -3;	/* ESRCH */
		return 0;
	}
	data.err = bpf_iter_task_vma_new(&it, task, data.addr);
	vma = bpf_iter_task_vma_next(&it);
	if (vma && vma->vm_start <= data.addr)
		record(vma);
	bpf_iter_task_vma_destroy(&it);
	bpf_task_release(task);
	return 0;
}

/* Every VMA of data.pid, as an iter/task_vma program (under mmap_lock). */
SEC("iter/task_vma")
int seq_vmas(struct bpf_iter__task_vma *ctx)
{
	struct vm_area_struct *vma = ctx->vma;
	struct task_struct *task = ctx->task;

	if (task && vma && task->tgid == data.pid)
		record(vma);
	return 0;
}

/*
 * For buildid_bench: data.bench_calls calls of bpf_vma_build_id() on the
 * VMA of data.pid at data.addr, or as many turns of the loop alone, timed
 * here.
 */
SEC("syscall")
int bench_vma_build_id(void *ctx)
{
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct task_struct *task;
	struct bpf_iter_num turns;
	unsigned char id[20];
	int ret = 0;
	__u64 t0;

	task = bpf_task_from_pid(data.pid);
	if (!task)
		return 0;
	data.bench_ret = bpf_iter_task_vma_new(&it, task, data.addr);
	vma = bpf_iter_task_vma_next(&it);
	if (vma) {
		t0 = bpf_ktime_get_ns();
		bpf_iter_num_new(&turns, 0, data.bench_calls);
		while (bpf_iter_num_next(&turns))
			if (data.bench_kfunc)
				ret = bpf_vma_build_id(vma, id, sizeof(id));
		bpf_iter_num_destroy(&turns);
		data.bench_ns = bpf_ktime_get_ns() - t0;
		data.bench_ret = ret;
	}
	bpf_iter_task_vma_destroy(&it);
	bpf_task_release(task);
	return 0;
}
