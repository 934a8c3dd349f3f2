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
/* A value the verifier cannot know: both branches that test it are explored. */
__u32 flag;

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

/*
 * The same escape, as the verifier's state pruning could miss it.  An
 * outer bpf_find_vma() callback keeps its own VMA in a stack slot, which
 * stays trusted while it runs; an inner callback stores its VMA over it on
 * one branch only.  If the branch without the store is explored first, the
 * branch with it reaches the join where that state was saved; the ids of
 * the two VMAs must keep them apart there, or the store is never seen when
 * the inner callback returns and the outer one passes the inner VMA, whose
 * mmap_lock is gone, to the kfunc.  The programs are written in assembly
 * so that each branch order and join stays as written.
 */
#define __naked __attribute__((naked))
#define __used __attribute__((used))
#define __clobber_all "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "memory"

/* The inner callback (task, vma, slot): the branch without the store comes first. */
static __used __naked void store_second(void)
{
	asm volatile (
	"r6 = %[flag] ll;"
	"r6 = *(u32 *)(r6 + 0);"
	"if r6 != 0 goto 1f;"
	"2: r0 = 0;"
	"exit;"
	"1: *(u64 *)(r3 + 0) = r2;"
	"goto 2b;"
	:
	: [flag] "i"(&flag)
	: __clobber_all);
}

/*
 * ... padded so that the verifier saves a state at the join by itself: it
 * does after two jumps and eight instructions since the last one it saved
 * (at the callback's entry); the second jump is one it knows is not taken.
 */
static __used __naked void store_second_padded(void)
{
	asm volatile (
	"r6 = %[flag] ll;"
	"r6 = *(u32 *)(r6 + 0);"
	"if r6 != 0 goto 1f;"
	"r7 = 0;"
	"if r7 > 100 goto 2f;"
	"r7 += 1;"
	"r7 += 1;"
	"r7 += 1;"
	"r7 += 1;"
	"r7 += 1;"
	"r7 += 1;"
	"r7 += 1;"
	"r7 += 1;"
	"r7 += 1;"
	"2: r0 = 0;"
	"exit;"
	"1: *(u64 *)(r3 + 0) = r2;"
	"goto 2b;"
	:
	: [flag] "i"(&flag)
	: __clobber_all);
}

/* ... the branch with the store comes first. */
static __used __naked void store_first(void)
{
	asm volatile (
	"r6 = %[flag] ll;"
	"r6 = *(u32 *)(r6 + 0);"
	"if r6 == 0 goto 1f;"
	"*(u64 *)(r3 + 0) = r2;"
	"1: r0 = 0;"
	"exit;"
	:
	: [flag] "i"(&flag)
	: __clobber_all);
}

/*
 * The outer callback (task, vma, ctx): its VMA in its own stack, the inner
 * bpf_find_vma() on the same task, then the kfunc on what the slot holds.
 */
#define OUTER_CALLBACK(name, inner)						\
static __used __naked void name(void)						\
{										\
	asm volatile (								\
	"*(u64 *)(r10 - 8) = r2;"						\
	"r2 = 0;"								\
	"r3 = " #inner " ll;"							\
	"r4 = r10;"								\
	"r4 += -8;"								\
	"r5 = 0;"								\
	"call %[bpf_find_vma];"							\
	"r1 = *(u64 *)(r10 - 8);"						\
	"r2 = %[id] ll;"							\
	"r3 = 20;"								\
	"call %[bpf_vma_build_id];"						\
	"r0 = 0;"								\
	"exit;"									\
	:									\
	: [bpf_find_vma] "i"(bpf_find_vma),					\
	  [bpf_vma_build_id] "i"(bpf_vma_build_id), [id] "i"(&id)		\
	: __clobber_all);							\
}

/* The program: bpf_find_vma() on the current task with @outer, no context. */
#define FIND_VMA_PROGRAM(name, outer)						\
SEC("syscall")									\
__naked int name(void)								\
{										\
	asm volatile (								\
	"call %[bpf_get_current_task_btf];"					\
	"r1 = r0;"								\
	"r2 = 0;"								\
	"r3 = " #outer " ll;"							\
	"r4 = 0;"								\
	"r5 = 0;"								\
	"call %[bpf_find_vma];"							\
	"r0 = 0;"								\
	"exit;"									\
	:									\
	: [bpf_get_current_task_btf] "i"(bpf_get_current_task_btf),		\
	  [bpf_find_vma] "i"(bpf_find_vma)					\
	: __clobber_all);							\
}

OUTER_CALLBACK(outer_store_second, store_second)
OUTER_CALLBACK(outer_store_second_padded, store_second_padded)
OUTER_CALLBACK(outer_store_first, store_first)

/* Loaded with BPF_F_TEST_STATE_FREQ, and without it. */
FIND_VMA_PROGRAM(pruned_escape, outer_store_second)
FIND_VMA_PROGRAM(pruned_escape_padded, outer_store_second_padded)
FIND_VMA_PROGRAM(pruned_escape_store_first, outer_store_first)

/* The slot in the main program's stack: the outer callback stores its VMA through ctx. */
static __used __naked void outer_main_slot(void)
{
	asm volatile (
	"r6 = r3;"
	"*(u64 *)(r6 + 0) = r2;"
	"r2 = 0;"
	"r3 = store_second ll;"
	"r4 = r6;"
	"r5 = 0;"
	"call %[bpf_find_vma];"
	"r1 = *(u64 *)(r6 + 0);"
	"r2 = %[id] ll;"
	"r3 = 20;"
	"call %[bpf_vma_build_id];"
	"r0 = 0;"
	"exit;"
	:
	: [bpf_find_vma] "i"(bpf_find_vma), [bpf_vma_build_id] "i"(bpf_vma_build_id), [id] "i"(&id)
	: __clobber_all);
}

SEC("syscall")
__naked int pruned_escape_main_slot(void)
{
	asm volatile (
	"r1 = 0;"
	"*(u64 *)(r10 - 8) = r1;"
	"call %[bpf_get_current_task_btf];"
	"r1 = r0;"
	"r2 = 0;"
	"r3 = outer_main_slot ll;"
	"r4 = r10;"
	"r4 += -8;"
	"r5 = 0;"
	"call %[bpf_find_vma];"
	"r0 = 0;"
	"exit;"
	:
	: [bpf_get_current_task_btf] "i"(bpf_get_current_task_btf), [bpf_find_vma] "i"(bpf_find_vma)
	: __clobber_all);
}

/* The inner bpf_find_vma() in a bpf_loop() callback, whose context is {task, slot}. */
static __used __naked void loop_find_vma(void)
{
	asm volatile (
	"r6 = r2;"
	"r1 = *(u64 *)(r6 + 0);"
	"r2 = 0;"
	"r3 = store_second ll;"
	"r4 = r6;"
	"r4 += 8;"
	"r5 = 0;"
	"call %[bpf_find_vma];"
	"r0 = 0;"
	"exit;"
	:
	: [bpf_find_vma] "i"(bpf_find_vma)
	: __clobber_all);
}

static __used __naked void outer_bpf_loop(void)
{
	asm volatile (
	"*(u64 *)(r10 - 16) = r1;"
	"*(u64 *)(r10 - 8) = r2;"
	"r1 = 1;"
	"r2 = loop_find_vma ll;"
	"r3 = r10;"
	"r3 += -16;"
	"r4 = 0;"
	"call %[bpf_loop];"
	"r1 = *(u64 *)(r10 - 8);"
	"r2 = %[id] ll;"
	"r3 = 20;"
	"call %[bpf_vma_build_id];"
	"r0 = 0;"
	"exit;"
	:
	: [bpf_loop] "i"(bpf_loop), [bpf_vma_build_id] "i"(bpf_vma_build_id), [id] "i"(&id)
	: __clobber_all);
}

FIND_VMA_PROGRAM(pruned_escape_bpf_loop, outer_bpf_loop)

/*
 * An open-coded task_vma iterator in the callback: one of its VMAs may be
 * stored over the callback's own, and the slot is used after _destroy().
 */
static __used __naked void outer_iterator(void)
{
	asm volatile (
	"*(u64 *)(r10 - 8) = r2;"
	"call %[bpf_get_current_task_btf];"
	"r2 = r0;"
	"r1 = r10;"
	"r1 += -16;"
	"r3 = 0;"
	"call %[bpf_iter_task_vma_new];"
	"1: r1 = r10;"
	"r1 += -16;"
	"call %[bpf_iter_task_vma_next];"
	"if r0 == 0 goto 2f;"
	"r6 = %[flag] ll;"
	"r6 = *(u32 *)(r6 + 0);"
	"if r6 == 0 goto 1b;"
	"*(u64 *)(r10 - 8) = r0;"
	"goto 1b;"
	"2: r1 = r10;"
	"r1 += -16;"
	"call %[bpf_iter_task_vma_destroy];"
	"r1 = *(u64 *)(r10 - 8);"
	"r2 = %[id] ll;"
	"r3 = 20;"
	"call %[bpf_vma_build_id];"
	"r0 = 0;"
	"exit;"
	:
	: [bpf_get_current_task_btf] "i"(bpf_get_current_task_btf),
	  [bpf_iter_task_vma_new] "i"(bpf_iter_task_vma_new),
	  [bpf_iter_task_vma_next] "i"(bpf_iter_task_vma_next),
	  [bpf_iter_task_vma_destroy] "i"(bpf_iter_task_vma_destroy),
	  [bpf_vma_build_id] "i"(bpf_vma_build_id), [flag] "i"(&flag), [id] "i"(&id)
	: __clobber_all);
}

FIND_VMA_PROGRAM(iterator_in_callback, outer_iterator)

/*
 * What the open-coded iterator returns is its own copy of the VMA, freed
 * by _destroy(): in a sleepable program, memory that may be someone
 * else's once the program sleeps.
 */
SEC("syscall")
int vma_after_destroy(void *ctx)
{
	struct task_struct *task = bpf_task_from_pid(pid);
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	char buf[8];

	if (!task)
		return 0;
	bpf_iter_task_vma_new(&it, task, 0);
	vma = bpf_iter_task_vma_next(&it);
	bpf_iter_task_vma_destroy(&it);
	if (vma) {
		bpf_copy_from_user(buf, sizeof(buf), NULL);
		bpf_vma_build_id(vma, id, sizeof(id));
	}
	bpf_task_release(task);
	return 0;
}

/* ... and overwritten by the next _next(). */
SEC("syscall")
int vma_after_next(void *ctx)
{
	struct task_struct *task = bpf_task_from_pid(pid);
	struct vm_area_struct *first, *second;
	struct bpf_iter_task_vma it;

	if (!task)
		return 0;
	bpf_iter_task_vma_new(&it, task, 0);
	first = bpf_iter_task_vma_next(&it);
	second = bpf_iter_task_vma_next(&it);
	if (first && second)
		bpf_vma_build_id(first, id, sizeof(id));
	bpf_iter_task_vma_destroy(&it);
	bpf_task_release(task);
	return 0;
}
