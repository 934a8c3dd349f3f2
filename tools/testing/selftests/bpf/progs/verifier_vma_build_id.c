// SPDX-License-Identifier: GPL-2.0
/*
 * The verifier's rules for bpf_vma_build_id(): it takes the VMAs that stay
 * valid while the program holds them (an open-coded task_vma iterator's
 * copy, between _next() and the next _next() or _destroy(); an
 * iter/task_vma program's and a bpf_find_vma() callback's, for which
 * mmap_lock is held), and no others, whatever the order in which the
 * verifier explores the branches of a program and prunes its states.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "bpf_misc.h"
#include "bpf_experimental.h"

char _license[] SEC("license") = "GPL";

extern int bpf_vma_build_id(struct vm_area_struct *vma, void *build_id,
			    u32 build_id__szk) __ksym;
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;

unsigned char id[20];
u32 size = sizeof(id);
int pid;
/* A value the verifier cannot know: both branches that test it are explored. */
u32 flag;

SEC("syscall")
__success
int iterator_vma(void *ctx)
{
	struct task_struct *task = bpf_task_from_pid(pid);
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;

	if (!task)
		return 0;
	bpf_iter_task_vma_new(&it, task, 0);
	while ((vma = bpf_iter_task_vma_next(&it)))
		bpf_vma_build_id(vma, id, sizeof(id));
	bpf_iter_task_vma_destroy(&it);
	bpf_task_release(task);
	return 0;
}

SEC("iter/task_vma")
__success
int iter_program_vma(struct bpf_iter__task_vma *ctx)
{
	struct vm_area_struct *vma = ctx->vma;

	if (vma)
		bpf_vma_build_id(vma, id, sizeof(id));
	return 0;
}

static long build_id_in_callback(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	bpf_vma_build_id(vma, id, sizeof(id));
	return 0;
}

SEC("syscall")
__success
int find_vma_callback_vma(void *ctx)
{
	bpf_find_vma(bpf_get_current_task_btf(), 0, build_id_in_callback, NULL, 0);
	return 0;
}

/* A VMA that nothing keeps alive: a function argument seen by fentry. */
SEC("fentry/vm_area_free")
__failure __msg("must be referenced or trusted")
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
__failure __msg("must be referenced or trusted")
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

SEC("syscall")
__failure __msg("Possibly NULL pointer passed to trusted arg0")
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

SEC("syscall")
__failure __msg("must be a known constant")
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

SEC("syscall")
__failure __msg("invalid indirect access to stack")
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

/* XDP can hold a trusted VMA, but has no business with build IDs. */
SEC("xdp")
__failure __msg("calling kernel function bpf_vma_build_id is not allowed")
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

/*
 * The program: bpf_find_vma() on the current task with @outer, no context,
 * with the test's annotations.
 */
#define FIND_VMA_PROGRAM(name, outer, annotations...)				\
SEC("syscall") annotations							\
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

#define ESCAPED __failure __msg("R1 must be referenced or trusted")
#define EVERY_STATE __flag(BPF_F_TEST_STATE_FREQ)

/* Verified with BPF_F_TEST_STATE_FREQ, which saves a state at every jump, and without. */
FIND_VMA_PROGRAM(pruned_escape, outer_store_second, ESCAPED)
FIND_VMA_PROGRAM(pruned_escape_every_state, outer_store_second, EVERY_STATE ESCAPED)
FIND_VMA_PROGRAM(pruned_escape_padded, outer_store_second_padded, ESCAPED)
FIND_VMA_PROGRAM(pruned_escape_padded_every_state, outer_store_second_padded,
		 EVERY_STATE ESCAPED)
FIND_VMA_PROGRAM(pruned_escape_store_first, outer_store_first, EVERY_STATE ESCAPED)

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

SEC("syscall") EVERY_STATE ESCAPED
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

FIND_VMA_PROGRAM(pruned_escape_bpf_loop, outer_bpf_loop, EVERY_STATE ESCAPED)

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

/*
 * What the verifier says of a VMA that _destroy() or the next _next() took
 * away: the register is no longer a pointer.
 */
#define ITER_VMA_GONE \
	__failure __msg("arg#0 pointer type STRUCT vm_area_struct must point to scalar")

FIND_VMA_PROGRAM(iterator_in_callback, outer_iterator, ITER_VMA_GONE)
FIND_VMA_PROGRAM(iterator_in_callback_every_state, outer_iterator, EVERY_STATE ITER_VMA_GONE)

/*
 * What the open-coded iterator returns is its own copy of the VMA, freed
 * by _destroy(): in a sleepable program, memory that may be someone
 * else's once the program sleeps.
 */
SEC("syscall") ITER_VMA_GONE
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
SEC("syscall") ITER_VMA_GONE
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
