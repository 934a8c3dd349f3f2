/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The build ID cache: build IDs of ELF files, keyed by inode, that nofault
 * lookups (NMI, perf, BPF) can read when the page cache no longer holds the
 * note.  See Documentation/core-api/buildid.rst.
 */
#ifndef _LINUX_BUILDID_CACHE_H
#define _LINUX_BUILDID_CACHE_H

#include <linux/errno.h>
#include <linux/jump_label.h>
#include <linux/mman.h>
#include <linux/percpu.h>
#include <linux/types.h>

struct file;
struct inode;
struct mm_struct;
struct vfsmount;
struct vma_snapshot;

/*
 * What buildid_cache_vma_lookup() saw of a VMA, at one instant: its range
 * and the file offset of its start.
 */
struct buildid_vma_range {
	unsigned long start;
	unsigned long end;
	u64 offset;
};

/*
 * What the cache records of an inode when it parses the file, and what a
 * hit compares: read with the inode's own accessors, in any context, by
 * buildid_cache_inode_stamp().
 */
struct buildid_inode_stamp {
	loff_t size;			/* i_size_read() */
	time64_t ctime_sec;		/* inode_get_ctime() */
	u64 iversion;			/* inode_peek_iversion() */
	long ctime_nsec;
	int write_count;		/* i_writecount */
	int mmap_writable;		/* i_mapping->i_mmap_writable */
};

/* The per-CPU counters, in the order debugfs prints them. */
enum buildid_cache_stat {
	BUILDID_CACHE_HIT,
	BUILDID_CACHE_MISS,
	BUILDID_CACHE_FILL,
	BUILDID_CACHE_DEFERRED_FILL,
	BUILDID_CACHE_FILL_RACED,
	BUILDID_CACHE_DEFER_QUEUED,
	BUILDID_CACHE_DEFER_SKIPPED,
	BUILDID_CACHE_DEFER_DROPPED,
	BUILDID_CACHE_INVALIDATION,
	BUILDID_CACHE_EVICTION,
	BUILDID_CACHE_REPLACEMENT,
	/* BPF stack frames answered without mmap_lock, and left to it. */
	BUILDID_CACHE_VMA_LOCKLESS,
	BUILDID_CACHE_VMA_LOCKED,
	BUILDID_CACHE_NR_STATS,
};

#ifdef CONFIG_BUILDID_CACHE

/*
 * A deferred fill that has been on one file this long waits for a hung
 * server or device, and no longer holds back fills of other file systems.
 */
#define BUILDID_FILL_STUCK_JIFFIES	(2 * HZ)
/* How long umount(2) waits for the cache to let go of the mount's files. */
#define BUILDID_UMOUNT_WAIT_JIFFIES	(2 * HZ)

/*
 * Enabled whenever the cache's table exists (turned on after it is made,
 * off after it is gone): gates the hooks in fs/ and mm/, and the fills.
 */
DECLARE_STATIC_KEY_FALSE(buildid_cache_hooks);

/*
 * lib/buildid_cache.c
 *
 * The counters are not static: the BPF stack helpers add to them with
 * buildid_cache_count_n(), inline.
 */
DECLARE_PER_CPU(unsigned long[BUILDID_CACHE_NR_STATS], buildid_cache_stats);
void buildid_cache_count(enum buildid_cache_stat stat);
bool buildid_cache_hooks_enabled(void);
void buildid_cache_inode_stamp(const struct inode *inode, struct buildid_inode_stamp *stamp);
bool buildid_cache_fs_coherent(const struct inode *inode);
ssize_t buildid_cache_read(struct file *file, void *buf, size_t count, loff_t pos);
bool buildid_cache_defer_fill(struct file *file);
void buildid_defer_unmark(struct inode *inode);
void buildid_cache_switch_hooks(bool on);
int buildid_cache_drain(void);
bool buildid_cache_sealed_against_writes(struct file *file);
void buildid_cache_umount(struct vfsmount *mnt, int flags);
bool buildid_cache_lockless_vma_enabled(void);
void buildid_cache_defer_fill_unpinned(const struct vma_snapshot *snap);

/* buildid_cache_count() @n times; inline, for the BPF stack helpers' every call. */
static inline void buildid_cache_count_n(enum buildid_cache_stat stat, unsigned int n)
{
	if (stat < BUILDID_CACHE_NR_STATS)
		this_cpu_add(buildid_cache_stats[stat], n);
}

/* Where a fill calls the KUnit suite's hook. */
enum buildid_cache_fill_stage {
	/* The fill has taken its key and its snapshot; nothing is read yet. */
	BUILDID_CACHE_STAGE_PARSE,
	/* The parse is done; nothing is inserted yet. */
	BUILDID_CACHE_STAGE_INSERT,
	/*
	 * A lockless VMA lookup missed and is about to take a reference to
	 * the file it read without a lock (it may be gone already)...
	 */
	BUILDID_CACHE_STAGE_UNPINNED_GET,
	/* ...took it, and has not checked the VMA again yet. */
	BUILDID_CACHE_STAGE_UNPINNED_CHECK,
};

#if IS_ENABLED(CONFIG_BUILDID_CACHE_KUNIT_TEST)
extern void (*buildid_cache_fill_hook)(struct file *file, enum buildid_cache_fill_stage stage);
#endif
void buildid_cache_run_fill_hook(struct file *file, enum buildid_cache_fill_stage stage);

/* lib/buildid/buildid_rust.rs */
int buildid_cache_lookup(struct file *file, unsigned char *build_id, __u32 *size);
/*
 * buildid_cache_vma_lookup() - The cached build ID of the file mapped at
 * @addr in @mm, read without mmap_lock or any other lock; any context, NMI
 * included.  @mm must have a user (mm_users) for the call; @build_id takes
 * BUILD_ID_SIZE_MAX bytes, zero-padded, @size (if not NULL) the ID's size,
 * and @range what the VMA mapped at one instant.  Ask
 * buildid_cache_lockless_vma_enabled() once before a batch of lookups.
 *
 * Return: 0; -ENOENT if no file was mapped at @addr; -EINVAL if the file is
 * not a regular file or is cached as having no build ID; -EAGAIN if the VMA
 * could not be read without its lock or the cache had no answer (a fill is
 * then queued).
 */
int buildid_cache_vma_lookup(struct mm_struct *mm, unsigned long addr,
			     unsigned char *build_id, u32 *size,
			     struct buildid_vma_range *range);
void buildid_cache_fill_file(struct file *file, bool deferred);
void buildid_cache_forget_inode(struct inode *inode, enum buildid_cache_stat why);
bool buildid_cache_is_enabled(void);
int buildid_cache_set_enabled(bool on);
int buildid_cache_set_max_entries(unsigned int max_entries);
unsigned int buildid_cache_max_entries(void);
unsigned int buildid_cache_entries(void);
bool buildid_cache_has_inode(const struct inode *inode);
unsigned int buildid_cache_updates_in_progress(void);

/* Someone got write access to @inode: its cached build ID may go stale. */
static inline void buildid_cache_write_access(struct inode *inode)
{
	if (static_branch_unlikely(&buildid_cache_hooks))
		buildid_cache_forget_inode(inode, BUILDID_CACHE_INVALIDATION);
}

/*
 * @inode is being freed: no entry, nor mark of a recent deferred fill, may
 * outlive it, since both are keyed by its address.
 */
static inline void buildid_cache_inode_destroy(struct inode *inode)
{
	if (static_branch_unlikely(&buildid_cache_hooks)) {
		buildid_cache_forget_inode(inode, BUILDID_CACHE_EVICTION);
		buildid_defer_unmark(inode);
	}
}

#else

static inline void buildid_cache_write_access(struct inode *inode) { }
static inline void buildid_cache_inode_destroy(struct inode *inode) { }
static inline void buildid_cache_umount(struct vfsmount *mnt, int flags) { }
static inline void buildid_cache_count(enum buildid_cache_stat stat) { }
static inline void buildid_cache_count_n(enum buildid_cache_stat stat, unsigned int n) { }
static inline int buildid_cache_vma_lookup(struct mm_struct *mm, unsigned long addr,
					   unsigned char *build_id, u32 *size,
					   struct buildid_vma_range *range)
{
	return -EAGAIN;
}

static inline bool buildid_cache_lockless_vma_enabled(void)
{
	return false;
}

static inline int buildid_cache_lookup(struct file *file, unsigned char *build_id, __u32 *size)
{
	return -ENOENT;
}

#endif /* CONFIG_BUILDID_CACHE */

#endif /* _LINUX_BUILDID_CACHE_H */
