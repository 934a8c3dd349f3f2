/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ioctl ABI of /dev/buildid (samples/rust/rust_buildid.rs), as its
 * documentation comment describes it, for buildid_dev and buildid_bench.
 */
#ifndef BUILDID_SELFTEST_DEV_H
#define BUILDID_SELFTEST_DEV_H

#include <stdint.h>
#include <linux/ioctl.h>

#define BUILDID_IOC_TYPE 0xb1

struct buildid_file_query {
	uint32_t size;
	uint32_t flags;
	int32_t fd;
	uint32_t build_id_size;
	uint8_t build_id[20];
	uint32_t reserved;
};

struct buildid_vma_query {
	uint32_t size;
	uint32_t flags;
	int32_t pid;
	uint32_t build_id_size;
	uint64_t addr;
	uint64_t vma_start, vma_end, vma_offset;
	uint8_t build_id[20];
	uint32_t reserved;
};

struct buildid_bench {
	uint32_t size;
	uint32_t flags;
	int32_t fd;
	uint32_t mode;
	uint32_t iterations;
	int32_t result;
	uint64_t offset;
	uint32_t length;
	uint32_t reserved;
	uint64_t total_ns;
};

#define BUILDID_IOC_FILE	_IOWR(BUILDID_IOC_TYPE, 1, struct buildid_file_query)
#define BUILDID_IOC_VMA		_IOWR(BUILDID_IOC_TYPE, 2, struct buildid_vma_query)
#define BUILDID_IOC_BENCH	_IOWR(BUILDID_IOC_TYPE, 3, struct buildid_bench)

/* flags of the file and VMA queries */
#define BUILDID_SLEEPABLE	1
/* flags of the VMA query that choose the parser (exclusive) */
#define BUILDID_VMA_UNCACHED	2
#define BUILDID_VMA_C_REFERENCE	4
/* flags (exclusive) and modes of the benchmark */
#define BUILDID_C_REFERENCE	1
#define BUILDID_UNCACHED	2	/* the Rust parser without the build ID cache */
enum buildid_bench_mode {
	BUILDID_BENCH_NOFAULT,
	BUILDID_BENCH_SLEEPABLE,
	BUILDID_BENCH_MEMORY,
	BUILDID_BENCH_EMPTY,	/* no parse: the loop's own cost */
};

#endif
