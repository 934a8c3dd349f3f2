// SPDX-License-Identifier: GPL-2.0
/*
 * BPF side of exit_symbolize: a profiler's sampler that records only
 * instruction pointers (no BPF_F_USER_BUILD_ID), to be symbolized later
 * from what `buildid record-exits` wrote.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#include "exit_sampler.h"

char _license[] SEC("license") = "GPL";

struct exit_sampler_counts counts;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} samples SEC(".maps");

static __always_inline int is_worker(const char *comm)
{
	const char prefix[] = SAMPLER_COMM;
	int i;

	for (i = 0; i < sizeof(prefix) - 1; i++)
		if (comm[i] != prefix[i])
			return 0;
	return 1;
}

SEC("perf_event")
int sample(struct bpf_perf_event_data *ctx)
{
	struct exit_sample *s;
	char comm[16];
	__u64 id;
	long n;

	if (bpf_get_current_comm(comm, sizeof(comm)) || !is_worker(comm))
		return 0;
	/*
	 * In the kernel (an exec, say) the user registers may belong to an
	 * image that is already gone; a profiler's user-mode samples are not.
	 */
	if ((ctx->regs.cs & 3) != 3) {
		__sync_fetch_and_add(&counts.kernel_mode, 1);
		return 0;
	}
	s = bpf_ringbuf_reserve(&samples, sizeof(*s), 0);
	if (!s) {
		__sync_fetch_and_add(&counts.lost, 1);
		return 0;
	}
	id = bpf_get_current_pid_tgid();
	s->time_ns = bpf_ktime_get_ns();
	s->tgid = id >> 32;
	s->tid = (__u32)id;
	__builtin_memcpy(s->comm, comm, sizeof(comm));
	n = bpf_get_stack(ctx, s->ips, sizeof(s->ips), BPF_F_USER_STACK);
	if (n < 0) {
		__sync_fetch_and_add(&counts.no_stack, 1);
		bpf_ringbuf_discard(s, 0);
		return 0;
	}
	s->nr = n / sizeof(s->ips[0]);
	s->pad = 0;
	__sync_fetch_and_add(&counts.samples, 1);
	bpf_ringbuf_submit(s, 0);
	return 0;
}
