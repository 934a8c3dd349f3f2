/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host stand-in for <linux/pagemap.h>, <linux/highmem.h> and <linux/err.h>:
 * a page cache made of naturally aligned folios of the model's folio size,
 * each of which is either absent, present and uptodate, or present but not
 * uptodate. Folio references and kmaps are counted so the tests can check that
 * lib/buildid.c releases everything it takes.
 */
#ifndef SHIM_LINUX_PAGEMAP_H
#define SHIM_LINUX_PAGEMAP_H

#include <limits.h>
#include <linux/fs.h>
#include <linux/types.h>

#define PAGE_SHIFT		12
#define PAGE_SIZE		(1UL << PAGE_SHIFT)
#define MAX_LFS_FILESIZE	((loff_t)LLONG_MAX)	/* 64-bit value */

#define MAX_ERRNO	4095
#define IS_ERR_VALUE(x)	__builtin_expect((unsigned long)(void *)(x) >= (unsigned long)-MAX_ERRNO, 0)

static inline void *ERR_PTR(long error)
{
	return (void *)error;
}

static inline bool IS_ERR(const void *ptr)
{
	return IS_ERR_VALUE((unsigned long)ptr);
}

struct folio;

struct folio *filemap_get_folio(struct address_space *mapping, pgoff_t index);
bool folio_test_uptodate(const struct folio *folio);
loff_t folio_pos(const struct folio *folio);
size_t folio_size(const struct folio *folio);
void folio_put(struct folio *folio);
void *kmap_local_folio(struct folio *folio, size_t offset);
void kunmap_local(const void *addr);

#endif /* SHIM_LINUX_PAGEMAP_H */
