/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host stand-in for <linux/buildid.h>. BUILD_ID_SIZE_MAX is taken from the
 * kernel tree's own header by build.rs (SHIM_TREE_BUILD_ID_SIZE_MAX) so that a
 * change there is noticed by the tests.
 */
#ifndef SHIM_LINUX_BUILDID_H
#define SHIM_LINUX_BUILDID_H

#include <linux/types.h>

#ifndef SHIM_TREE_BUILD_ID_SIZE_MAX
#error "build.rs must define SHIM_TREE_BUILD_ID_SIZE_MAX"
#endif
#define BUILD_ID_SIZE_MAX SHIM_TREE_BUILD_ID_SIZE_MAX

struct vm_area_struct;
struct file;

int build_id_parse(struct vm_area_struct *vma, unsigned char *build_id, __u32 *size);
int build_id_parse_file(struct file *file, unsigned char *build_id, __u32 *size);
int build_id_parse_nofault(struct vm_area_struct *vma, unsigned char *build_id, __u32 *size);
int build_id_parse_buf(const void *buf, unsigned char *build_id, u32 buf_size);

#endif /* SHIM_LINUX_BUILDID_H */
