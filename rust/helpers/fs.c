// SPDX-License-Identifier: GPL-2.0

#include <linux/fs.h>
#include <linux/iversion.h>
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

int rust_helper_inode_write_count(const struct inode *inode)
{
	return atomic_read(&inode->i_writecount);
}

u64 rust_helper_inode_peek_iversion(const struct inode *inode)
{
	return inode_peek_iversion(inode);
}

struct timespec64 rust_helper_inode_get_ctime(const struct inode *inode)
{
	return inode_get_ctime(inode);
}

struct inode *rust_helper_d_real_inode(const struct dentry *dentry)
{
	return d_real_inode(dentry);
}
