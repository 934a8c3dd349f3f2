/* SPDX-License-Identifier: GPL-2.0 */
/* Layout shared by bpf_vma_build_id.bpf.c and bpf_vma_build_id.c. */
#ifndef BUILDID_SELFTEST_VMA_BUILD_ID_H
#define BUILDID_SELFTEST_VMA_BUILD_ID_H

#define VMA_MAX 96

/* What the programs saw of one VMA, and what bpf_vma_build_id() said of it. */
struct vma_result {
	__u64 start, end;
	__u64 pgoff;			/* in pages */
	__u64 flags;			/* vm_flags */
	int ret;			/* bpf_vma_build_id() */
	unsigned char id[20];
};

/* The only global of the BPF object: user space reads it as .bss. */
struct vma_test_data {
	int pid;			/* the process whose VMAs are read */
	int err;			/* of bpf_iter_task_vma_new() */
	__u64 addr;			/* for vma_at */
	unsigned int nr;		/* VMAs in vmas[] */
	unsigned int more;		/* VMAs that did not fit */
	struct vma_result vmas[VMA_MAX];
	/* bpf_vma_build_id() with a buffer of 8 bytes, and of 32, on vmas[0] */
	int ret_small, ret_large;
	unsigned char large[32];
	/* buildid_bench: bench_calls calls on the VMA at addr (none: the loop alone) */
	unsigned int bench_calls;
	unsigned int bench_kfunc;
	int bench_ret;
	__u64 bench_ns;
};

#endif
