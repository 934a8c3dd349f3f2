// SPDX-License-Identifier: GPL-2.0
/*
 * BPF side of bpf_stack_buildid: every program records the user stack of
 * the process under test with build IDs, in one of the ways the helpers
 * offer, into the one global that user space reads back.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#include "buildid_stack.h"

#define STACK_FLAGS (BPF_F_USER_STACK | BPF_F_USER_BUILD_ID)

/* Kernel types, relocated against the running kernel's BTF by libbpf. */
struct task_struct {
	int pid;
} __attribute__((preserve_access_index));

struct bpf_iter_meta {
	void *seq;
} __attribute__((preserve_access_index));

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} __attribute__((preserve_access_index));

struct stack_test_data data;

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, STACK_MAX_FRAMES * sizeof(struct bpf_stack_build_id));
	__uint(map_flags, BPF_F_STACK_BUILD_ID);
} stackmap SEC(".maps");

static __always_inline int current_is_target(void)
{
	return (bpf_get_current_pid_tgid() >> 32) == (__u64)data.target_tgid;
}

static __always_inline void record_ips(void *ctx, struct stack_result *res)
{
	if (data.record_ips)
		res->ips_ret = bpf_get_stack(ctx, res->ips, sizeof(res->ips), BPF_F_USER_STACK);
}

static __always_inline void record(void *ctx, struct stack_result *res)
{
	res->ret = bpf_get_stack(ctx, res->frames, sizeof(res->frames), STACK_FLAGS);
	record_ips(ctx, res);
	res->hits++;
}

SEC("uprobe")
int uprobe_stack(struct pt_regs *ctx)
{
	if (current_is_target())
		record(ctx, &data.uprobe);
	return 0;
}

SEC("uprobe.s")
int uprobe_stack_sleepable(struct pt_regs *ctx)
{
	if (current_is_target())
		record(ctx, &data.uprobe_sleepable);
	return 0;
}

/* The same walk without build IDs, as the benchmark's baseline. */
SEC("uprobe")
int uprobe_stack_ips(struct pt_regs *ctx)
{
	if (current_is_target()) {
		data.uprobe_ips.ret = bpf_get_stack(ctx, data.uprobe_ips.frames,
						    sizeof(data.uprobe_ips.frames),
						    BPF_F_USER_STACK);
		data.uprobe_ips.hits++;
	}
	return 0;
}

SEC("uprobe")
int uprobe_stackid(struct pt_regs *ctx)
{
	if (!current_is_target())
		return 0;
	data.stackid = bpf_get_stackid(ctx, &stackmap, BPF_F_USER_STACK);
	record_ips(ctx, &data.stackid_ips);
	data.stackid_hits++;
	return 0;
}

SEC("perf_event")
int perf_stack(struct bpf_perf_event_data *ctx)
{
	/* Only samples taken in user mode, so that frame 0 is ours. */
	if (!current_is_target() || data.perf.hits || (long)ctx->regs.rip < 0)
		return 0;
	record(ctx, &data.perf);
	return 0;
}

static __always_inline int same_id(const unsigned char *a, const unsigned char *b)
{
	for (int i = 0; i < 20; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* Whether a VALID frame at @ip is file @k's, with the offset of @k's mapping. */
static __always_inline int race_frame_is(const struct bpf_stack_build_id *frame, __u64 ip, int k)
{
	return same_id(frame->build_id, data.race.ids[k]) &&
	       frame->offset == ip - data.race.map_start + data.race.pgoff[k];
}

/* Sorts a sample in the race file by its frame's build ID and offset. */
static __always_inline void race_sample(void *ctx)
{
	struct bpf_stack_build_id frame;
	__u64 ip;

	if (!current_is_target() ||
	    bpf_get_stack(ctx, &ip, sizeof(ip), BPF_F_USER_STACK) < (long)sizeof(ip) ||
	    ip < data.race.start || ip >= data.race.end)
		return;
	data.race.samples++;
	if (bpf_get_stack(ctx, &frame, sizeof(frame), STACK_FLAGS) < (long)sizeof(frame)) {
		data.race.failed++;
	} else if (frame.status == BPF_STACK_BUILD_ID_IP) {
		data.race.ip_only++;
	} else if (frame.status == BPF_STACK_BUILD_ID_VALID && race_frame_is(&frame, ip, 0)) {
		data.race.seen[0]++;
	} else if (frame.status == BPF_STACK_BUILD_ID_VALID && race_frame_is(&frame, ip, 1)) {
		data.race.seen[1]++;
	} else {
		data.race.wrong++;
		data.race.wrong_status = frame.status;
		data.race.wrong_offset = frame.offset;
		data.race.wrong_ip = ip;
		__builtin_memcpy(data.race.wrong_id, frame.build_id, 20);
	}
}

/* A sample of the race in hard interrupt context (cpu-clock). */
SEC("perf_event")
int perf_race(struct bpf_perf_event_data *ctx)
{
	race_sample(ctx);
	return 0;
}

/*
 * The same in NMI: this tracepoint fires only in nmi_handle(), once per
 * handler that an NMI runs (the NMI backtrace handler, for the test).  The
 * user stack is that of the task the NMI interrupted.
 */
SEC("tp/nmi/nmi_handler")
int nmi_race(void *ctx)
{
	race_sample(ctx);
	return 0;
}

static __always_inline void record_task(struct task_struct *task, struct stack_result *res)
{
	res->ret = bpf_get_task_stack(task, res->frames, sizeof(res->frames), STACK_FLAGS);
	if (data.record_ips)
		res->ips_ret = bpf_get_task_stack(task, res->ips, sizeof(res->ips),
						  BPF_F_USER_STACK);
	res->hits++;
}

SEC("iter/task")
int task_stack(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;

	if (!task)
		return 0;
	if (task->pid == data.target_tid)
		record_task(task, &data.task_other);
	else if (task->pid == data.self_tid)
		record_task(task, &data.task_self);
	return 0;
}

SEC("iter.s/task")
int task_stack_sleepable(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;

	if (task && task->pid == data.self_tid)
		record_task(task, &data.task_self_sleepable);
	return 0;
}

char _license[] SEC("license") = "GPL";
