// SPDX-License-Identifier: GPL-2.0

#include <linux/mmap_lock.h>

int rust_helper_mmap_read_lock_killable(struct mm_struct *mm)
{
	return mmap_read_lock_killable(mm);
}

void rust_helper_mmap_read_unlock(struct mm_struct *mm)
{
	mmap_read_unlock(mm);
}
