/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BPF side of bpf_vma_build_id: the kernel types the programs read, which
 * libbpf relocates against the running kernel's BTF, and the kfuncs they
 * call.  The types are complete so that libbpf can match the kfuncs'
 * prototypes with the kernel's.
 */
#ifndef BUILDID_SELFTEST_VMA_KFUNCS_H
#define BUILDID_SELFTEST_VMA_KFUNCS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct file;

struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;
	unsigned long vm_flags;
	unsigned long vm_pgoff;
	struct file *vm_file;
} __attribute__((preserve_access_index));

struct task_struct {
	int tgid;
} __attribute__((preserve_access_index));

/* The iterator's state on the stack: a __u64 is 8-aligned, as the kernel wants. */
struct bpf_iter_task_vma {
	__u64 opaque;
};

extern int bpf_vma_build_id(struct vm_area_struct *vma, void *build_id,
			    __u32 build_id__szk) __ksym;
extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __ksym;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym;
extern struct task_struct *bpf_task_from_pid(__s32 pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;
extern int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __ksym;
extern int *bpf_iter_num_next(struct bpf_iter_num *it) __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num *it) __ksym;

#endif
