/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host stand-in for <linux/fs.h> (and the bits of <linux/mm_types.h> that
 * lib/buildid.c needs): a "file" is an in-memory image described by a
 * struct shim_model (see shim_model.h).
 */
#ifndef SHIM_LINUX_FS_H
#define SHIM_LINUX_FS_H

#include <linux/types.h>

struct shim_model;

struct address_space {
	struct shim_model *model;
};

/* Every file of the model is a regular file. */
#define S_IFMT		00170000
#define S_IFREG		0100000
#define S_ISREG(m)	(((m) & S_IFMT) == S_IFREG)

struct inode {
	unsigned short i_mode;
};

struct file {
	struct address_space *f_mapping;
	struct inode *f_inode;
};

static inline struct inode *file_inode(const struct file *f)
{
	return f->f_inode;
}

struct vm_area_struct {
	struct file *vm_file;
};

/*
 * Reads from the model's data: a short read (possibly 0) at end of file, and
 * -EINVAL for offsets rw_verify_area() would reject (pos < 0, or pos + count
 * beyond LLONG_MAX). Every call is recorded in the model's trace.
 */
ssize_t __kernel_read(struct file *file, void *buf, size_t count, loff_t *pos);

#endif /* SHIM_LINUX_FS_H */
