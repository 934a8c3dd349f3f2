/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The ioctls of /dev/buildid, the Rust build ID sample driver
 * (samples/rust/rust_buildid.rs): the ELF build ID of an open file or of
 * the file mapped at an address of a process, and a benchmark of the
 * build ID parser.
 *
 * Every argument starts with its own size, and is copied the
 * copy_struct_from_user() way: a caller built against an older, shorter
 * struct gets only the fields it knows; a longer one is accepted if the
 * bytes the driver does not know are zero (E2BIG otherwise).  Shorter than
 * the first version's required fields, unknown flags, or a @reserved field
 * that is not zero, is EINVAL.  A command is matched whole: type, number,
 * direction and the size of this version's struct.
 */
#ifndef _UAPI_LINUX_BUILDID_DEV_H
#define _UAPI_LINUX_BUILDID_DEV_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define BUILDID_IOC_TYPE	0xb9
#define BUILDID_IOC_NR_FILE	1
#define BUILDID_IOC_NR_VMA	2
#define BUILDID_IOC_NR_BENCH	3

/* The longest build ID: BUILD_ID_SIZE_MAX. */
#define BUILDID_SIZE_MAX	20

/* Flag of the file and VMA queries: a sleepable parse, which may read the file. */
#define BUILDID_SLEEPABLE	1
/* Flags of the VMA query that choose the parser (exclusive). */
#define BUILDID_VMA_UNCACHED	2	/* the Rust parser without the build ID cache */
#define BUILDID_VMA_C_REFERENCE	4	/* the C reference (CONFIG_BUILDID_C_REFERENCE) */
/*
 * Flag of the VMA query, alone: the build ID cache without mmap_lock, as
 * the BPF stack helpers ask it for a frame (EAGAIN where they go on under
 * mmap_lock).  @vma_start and @vma_end are then 0, and @vma_offset is the
 * file offset of @addr itself.
 */
#define BUILDID_VMA_LOCKLESS	8
/* Flags of the benchmark (exclusive). */
#define BUILDID_C_REFERENCE	1
#define BUILDID_UNCACHED	2

/*
 * BUILDID_IOC_FILE: the build ID of the file open at @fd, which must be
 * open for reading (EBADF).  At least 12 bytes.
 */
struct buildid_file_query {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 build_id_size;			/* out */
	__u8 build_id[BUILDID_SIZE_MAX];	/* out */
	__u32 reserved;
};

/*
 * BUILDID_IOC_VMA: the build ID of the file mapped at @addr in process
 * @pid (0: the caller's), which needs the permission of reading
 * /proc/<pid>/maps; ENOENT if no VMA or no file is there.  At least 24
 * bytes.
 */
struct buildid_vma_query {
	__u32 size;
	__u32 flags;
	__s32 pid;
	__u32 build_id_size;			/* out */
	__u64 addr;
	__u64 vma_start;			/* out */
	__u64 vma_end;				/* out */
	__u64 vma_offset;			/* out */
	__u8 build_id[BUILDID_SIZE_MAX];	/* out */
	__u32 reserved;
};

/* What BUILDID_IOC_BENCH runs. */
enum buildid_bench_mode {
	BUILDID_BENCH_NOFAULT,
	BUILDID_BENCH_SLEEPABLE,
	BUILDID_BENCH_MEMORY,	/* the @length bytes at @offset of the file */
	BUILDID_BENCH_EMPTY,	/* no parse: the loop's own cost */
	/*
	 * A BPF stack frame at address @offset of the caller, looked up as
	 * kernel/bpf/stackmap.c does without mmap_lock (the cache's answer),
	 * or under mmap_read_trylock(): vma_lookup() and a nofault parse.
	 */
	BUILDID_BENCH_VMA_LOCKLESS,
	BUILDID_BENCH_VMA_TRYLOCK,
	/*
	 * No parse: the RCU read lock taken and dropped as the Rust cache
	 * takes it around every lookup (part of a hit's cost).
	 */
	BUILDID_BENCH_RCU_READ_LOCK,
};

/*
 * BUILDID_IOC_BENCH (CAP_SYS_ADMIN, CONFIG_SAMPLE_RUST_BUILDID_BENCH):
 * runs one entry point @iterations times (at most 10^7) on the file at @fd.
 * @result is the build ID size of the last run (20 for BUILDID_BENCH_MEMORY,
 * whose build_id_parse_buf() reports no size) or its negative errno.  At
 * least 20 bytes.
 */
struct buildid_bench {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 mode;				/* enum buildid_bench_mode */
	__u32 iterations;
	__s32 result;				/* out */
	__u64 offset;
	__u32 length;				/* at most 64 KiB */
	__u32 reserved;
	__u64 total_ns;				/* out */
};

#define BUILDID_IOC_FILE \
	_IOWR(BUILDID_IOC_TYPE, BUILDID_IOC_NR_FILE, struct buildid_file_query)
#define BUILDID_IOC_VMA \
	_IOWR(BUILDID_IOC_TYPE, BUILDID_IOC_NR_VMA, struct buildid_vma_query)
#define BUILDID_IOC_BENCH \
	_IOWR(BUILDID_IOC_TYPE, BUILDID_IOC_NR_BENCH, struct buildid_bench)

#endif /* _UAPI_LINUX_BUILDID_DEV_H */
