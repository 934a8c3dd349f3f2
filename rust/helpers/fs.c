// SPDX-License-Identifier: GPL-2.0

#include <linux/fs.h>
#include <linux/secretmem.h>

struct file *rust_helper_get_file(struct file *f)
{
	return get_file(f);
}

loff_t rust_helper_i_size_read(const struct inode *inode)
{
	return i_size_read(inode);
}

bool rust_helper_secretmem_mapping(struct address_space *mapping)
{
	return secretmem_mapping(mapping);
}

struct inode *rust_helper_d_real_inode(const struct dentry *dentry)
{
	return d_real_inode(dentry);
}
