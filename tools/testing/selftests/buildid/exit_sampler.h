/* SPDX-License-Identifier: GPL-2.0 */
/* Layout shared by exit_sampler.bpf.c and exit_symbolize.c. */
#ifndef BUILDID_SELFTEST_EXIT_SAMPLER_H
#define BUILDID_SELFTEST_EXIT_SAMPLER_H

#define SAMPLE_MAX_FRAMES 32
#define SAMPLER_COMM "exit_worker"

/*
 * One cpu-clock sample of a thread whose command starts with SAMPLER_COMM,
 * taken in user mode: what a profiler keeps when it asks for no build IDs.
 */
struct exit_sample {
	__u64 time_ns;			/* bpf_ktime_get_ns() */
	__u32 tgid, tid;
	char comm[16];
	__u32 nr;			/* frames in ips[] */
	__u32 pad;
	__u64 ips[SAMPLE_MAX_FRAMES];
};

/* The BPF object's .bss. */
struct exit_sampler_counts {
	__u64 samples;			/* recorded */
	__u64 kernel_mode;		/* of the workers, in the kernel: not recorded */
	__u64 lost;			/* the ring buffer was full */
	__u64 no_stack;			/* bpf_get_stack() failed */
};

#endif
