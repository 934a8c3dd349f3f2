/* SPDX-License-Identifier: GPL-2.0 */
/* Layout of the records that record_exits.bpf.c sends to tools/buildid. */
#ifndef BUILDID_RECORD_EXITS_H
#define BUILDID_RECORD_EXITS_H

#define RECORD_PATH_MAX 512
#define RECORD_COMM_LEN 16
#define RECORD_ID_MAX 20

enum record_kind {
	RECORD_MAPPING = 1,	/* one executable file mapping */
	RECORD_END = 2,		/* after a process' mappings: seq of them were sent */
};

enum record_event {
	RECORD_EXIT = 1,	/* the last thread of the process is exiting */
	RECORD_EXEC = 2,	/* the process replaces its image */
};

/*
 * One executable file mapping of a process that goes away, or the end of
 * its list.  The path is path[0..path_len), its names from the leaf up,
 * each followed by '/'.  path has room past RECORD_PATH_MAX for the
 * verifier's sake.
 */
struct mapping_record {
	__u32 kind;		/* enum record_kind */
	__u32 event;		/* enum record_event */
	__u64 start, end;
	__u64 offset;		/* file offset of start, in bytes */
	__u64 ino;
	__u64 time_ns;		/* CLOCK_MONOTONIC, as bpf_ktime_get_ns() */
	__u32 dev;		/* the kernel's dev_t: major << 20 | minor */
	__u32 pid;		/* tgid */
	__s32 build_id_ret;	/* bpf_vma_build_id(): the ID's size, or -errno */
	__u32 path_cut;		/* path lacks the names nearest the root */
	__u32 dropped;		/* at the end: 1 if mappings may have been lost */
	__u32 path_len;
	__u64 walk_dentry, walk_mnt;	/* the BPF program's scratch */
	char comm[RECORD_COMM_LEN];
	unsigned char build_id[RECORD_ID_MAX];
	char path[RECORD_PATH_MAX + 256];
};

#endif
