/* SPDX-License-Identifier: GPL-2.0 */
/* Layout shared by buildid_stack.bpf.c and bpf_stack_buildid.c. */
#ifndef BUILDID_SELFTEST_STACK_H
#define BUILDID_SELFTEST_STACK_H

#define STACK_MAX_FRAMES 16

struct stack_result {
	long ret;			/* helper return value */
	unsigned int hits;		/* times the program stored a result */
	struct bpf_stack_build_id frames[STACK_MAX_FRAMES];
	/*
	 * With record_ips: the same stack from a second call without build
	 * IDs in the same program run, so that the test can compute each
	 * frame's expected file offset from /proc/self/maps on its own.
	 */
	long ips_ret;
	__u64 ips[STACK_MAX_FRAMES];
};

/*
 * perf_race, nmi_race: the samples of the target whose innermost user frame is in
 * [start, end), sorted by what bpf_get_stack() said of that frame.  File k
 * is mapped at map_start from file offset pgoff[k] (bytes): a VALID frame
 * with ids[k] must have the offset ip - map_start + pgoff[k].
 */
struct race_result {
	__u64 start, end;
	__u64 map_start;
	__u64 pgoff[2];
	unsigned char ids[2][20];	/* the two IDs the mapping takes turns with */
	unsigned int samples;		/* in [start, end) */
	unsigned int seen[2];		/* BPF_STACK_BUILD_ID_VALID, ids[k], offset right */
	unsigned int ip_only;		/* BPF_STACK_BUILD_ID_IP */
	unsigned int failed;		/* bpf_get_stack() failed */
	unsigned int wrong;		/* another status, ID, or offset */
	unsigned char wrong_id[20];
	int wrong_status;
	__u64 wrong_offset, wrong_ip;
};

/* The only global of the BPF object: user space reads it as .bss. */
struct stack_test_data {
	int target_tgid;		/* process whose stacks are recorded */
	int target_tid;			/* another task, for bpf_get_task_stack() */
	int self_tid;			/* the task that reads the iterator */
	int record_ips;			/* also fill stack_result.ips (tests, not benchmarks) */
	struct stack_result uprobe;
	struct stack_result uprobe_sleepable;
	struct stack_result uprobe_ips;		/* same stack, IPs only (benchmark) */
	struct stack_result perf;
	struct stack_result task_other;
	struct stack_result task_self;
	struct stack_result task_self_sleepable;
	long stackid;
	unsigned int stackid_hits;
	struct stack_result stackid_ips;	/* only .ips and .ips_ret */
	struct race_result race;
};

#endif
