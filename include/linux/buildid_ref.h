/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C build ID parser of lib/buildid.c under other names, kept as a
 * reference for tests and benchmarks of the Rust implementation
 * (CONFIG_BUILDID_C_REFERENCE).  Same semantics as <linux/buildid.h>.
 */
#ifndef _LINUX_BUILDID_REF_H
#define _LINUX_BUILDID_REF_H

#include <linux/buildid.h>

int build_id_ref_parse(struct vm_area_struct *vma, unsigned char *build_id, __u32 *size);
int build_id_ref_parse_file(struct file *file, unsigned char *build_id, __u32 *size);
int build_id_ref_parse_nofault(struct vm_area_struct *vma, unsigned char *build_id,
			       __u32 *size);
int build_id_ref_parse_buf(const void *buf, unsigned char *build_id, u32 buf_size);

/* The nofault parser on a file rather than a VMA, for tests and benchmarks. */
int build_id_ref_parse_file_nofault(struct file *file, unsigned char *build_id, __u32 *size);

/*
 * The Rust implementation's parse of a file, for the same tests and
 * benchmarks: nofault as build_id_parse_nofault(), or sleepable as
 * build_id_parse_file(); through the build ID cache unless
 * BUILD_ID_RUST_UNCACHED.
 */
#define BUILD_ID_RUST_SLEEPABLE	0x1
#define BUILD_ID_RUST_UNCACHED	0x2
int build_id_rust_parse_file(struct file *file, unsigned char *build_id, __u32 *size,
			     unsigned int flags);

#endif
