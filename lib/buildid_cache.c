// SPDX-License-Identifier: GPL-2.0
/*
 * The build ID cache is one component in two files, each the only owner of
 * its state:
 *
 *   lib/buildid/cache.rs  the table, its lookups and fill protocol, and
 *                         the settings: whether the cache is on (its table
 *                         exists), the size limit, and the hooks' static
 *                         key, which it changes in one transition with the
 *                         table;
 *   this file             what 6.12 has no Rust abstractions for: the
 *                         per-CPU counters, the deferred fills that nofault
 *                         misses queue (per-CPU rings, irq_work, workers),
 *                         the lockless_vma switch, and the kernel interfaces
 *                         to all of it: the initcall, the sysctls (which go
 *                         through cache.rs for the settings) and debugfs
 *                         (counters and the switch).
 *
 * lib/buildid/buildid_rust.rs only converts the C ABI of
 * <linux/buildid_cache.h>.
 *
 * A nofault lookup runs wherever a build ID is wanted: in NMI, under
 * mmap_lock, under rq->lock from a tracepoint.  When it misses, the file is
 * parsed later, in a worker that may sleep:
 *
 *   lookup (any context)  reserves a slot of this CPU's ring with cmpxchg,
 *                         then takes get_file() (which cannot fail, so no
 *                         path needs fput() here), and raises an irq_work;
 *   irq_work (hardirq)    queues the work item; queue_work() takes a pool
 *                         lock, which the lookup's context may already hold;
 *   dispatcher (process)  empties every CPU's ring onto the fill workers'
 *                         lists: one worker per superblock at a time, at
 *                         most FILL_WORKERS at work; it never reads a file;
 *   fill (process)        a worker fills the cache from its list with
 *                         buffered reads, and drops each file reference
 *                         synchronously (__fput_sync()), so that no delayed
 *                         fput keeps a file system busy after a drain.
 *
 * A fill that blocks (a hung server or device) holds one worker.  Once it
 * has been on one file for BUILDID_FILL_STUCK_JIFFIES, it no longer counts
 * against FILL_WORKERS, so fills of other file systems go on, and later
 * files of its superblock are dropped rather than queued behind it.  With
 * FILL_SLOTS workers stuck, every deferred fill is dropped until one ends.
 * The switch never waits for fills, and a drain can be killed.  Unmount
 * waits a bounded time, after the file system's umount_begin() (see
 * buildid_cache_umount()).
 *
 * task_work is not used: it cannot be queued for exiting tasks, whose
 * stacks profilers sample too.  Neither ihold() (it does not pin the
 * mount) nor igrab() (it takes i_lock, which NMI must not) are.
 */

#include <linux/buildid_cache.h>
#include <linux/debugfs.h>
#include <linux/gfs2_ondisk.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/init.h>
#include <linux/irq_work.h>
#include <linux/iversion.h>
#include <linux/jiffies.h>
#include <linux/magic.h>
#include <linux/memfd.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/sysctl.h>
#include <linux/uio.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

/*
 * On whenever the table exists (turned on after it is made, off after it
 * is gone): off until buildid_cache_init() has turned the cache on, since
 * the hooks must not run, and fills must not parse, for a cache that does
 * not exist.  Only cache.rs changes it, through
 * buildid_cache_switch_hooks().
 */
DEFINE_STATIC_KEY_FALSE(buildid_cache_hooks);

bool buildid_cache_hooks_enabled(void)
{
	return static_key_enabled(&buildid_cache_hooks);
}

/**
 * buildid_cache_inode_stamp() - What the build ID cache compares of an inode.
 * @inode: an inode kept alive by the caller (a file, or RCU since it was seen referenced)
 * @stamp: where it goes
 *
 * One call per cache hit, so that the Rust side neither knows the layout or
 * encoding of these fields nor pays a call for each.  Any context, NMI
 * included: on 64-bit, which the cache depends on, it only loads
 * (i_size_read() retries under a seqcount on 32-bit SMP, where an NMI
 * that interrupted i_size_write() would spin).
 */
void buildid_cache_inode_stamp(const struct inode *inode, struct buildid_inode_stamp *stamp)
{
	struct timespec64 ctime;

	stamp->write_count = atomic_read(&inode->i_writecount);
	stamp->mmap_writable = atomic_read(&inode->i_mapping->i_mmap_writable);
	stamp->iversion = inode_peek_iversion(inode);
	stamp->size = i_size_read(inode);
	/* Plain loads, as for every caller; a concurrent update may be read torn. */
	ctime = data_race(inode_get_ctime(inode));
	stamp->ctime_sec = ctime.tv_sec;
	stamp->ctime_nsec = ctime.tv_nsec;
}

/**
 * buildid_cache_fs_coherent() - Whether the cache can follow @inode's content.
 * @inode: an inode kept alive by the caller (a file, or RCU since it was seen referenced)
 *
 * A cached build ID is served while the inode's stamp (write access, size,
 * change time and change attribute) shows no change since the parse.  That
 * is no staler than the page cache that C's parser reads only where a
 * change of the data that the page cache sees also changes the stamp: not
 * on a cluster file system, where another node's write drops this node's
 * page cache without this node's write access and before the inode is
 * read again, nor on FUSE (fuse and fuseblk), whose server may change the
 * data without changing the attributes it reports.  Their files get what
 * the page cache has, as from C.  See "Coherence" in
 * Documentation/core-api/buildid.rst.  No flag of the file system type
 * says this, hence the magic numbers.  Any context, NMI included.
 *
 * Return: true if files of @inode's file system may be cached.
 */
bool buildid_cache_fs_coherent(const struct inode *inode)
{
	switch (inode->i_sb->s_magic) {
	case FUSE_SUPER_MAGIC:
	case GFS2_MAGIC:
	case OCFS2_SUPER_MAGIC:
		return false;
	default:
		return true;
	}
}

/**
 * buildid_cache_read() - Read @file for a cache fill.
 * @file: a file open for reading
 * @buf: where the bytes go
 * @count: how many bytes to read
 * @pos: the file position to read at
 *
 * What __kernel_read() does, but always as a buffered read: the opener's
 * O_DIRECT (whose small unaligned reads most block file systems refuse) and
 * IOCB_NOWAIT do not apply, so that the cache records what the file holds,
 * whichever way the mapped file was opened.  May sleep.
 *
 * Return: the number of bytes read (fewer at end of file), or -errno.
 */
ssize_t buildid_cache_read(struct file *file, void *buf, size_t count, loff_t pos)
{
	struct kvec iov = { .iov_base = buf, .iov_len = count };
	struct iov_iter iter;
	struct kiocb kiocb;

	if (!(file->f_mode & FMODE_READ) || !(file->f_mode & FMODE_CAN_READ))
		return -EINVAL;
	if (!file->f_op->read_iter || file->f_op->read)
		return -EINVAL;
	init_sync_kiocb(&kiocb, file);
	kiocb.ki_flags &= ~(IOCB_DIRECT | IOCB_NOWAIT);
	kiocb.ki_pos = pos;
	iov_iter_kvec(&iter, ITER_DEST, &iov, 1, count);
	return file->f_op->read_iter(&kiocb, &iter);
}

/**
 * buildid_cache_sealed_against_writes() - Whether a memfd can never be written again.
 * @file: a file
 *
 * F_SEAL_WRITE is never removed, and once it is set, writable mappings of
 * the memfd are denied for good.  While memfd_add_seals() waits for pinned
 * folios, they are denied but not yet for good: if the wait fails, they are
 * allowed again and the seal is not set.
 *
 * Return: true if @file is a memfd (or another shmem file) sealed with
 * F_SEAL_WRITE.
 */
bool buildid_cache_sealed_against_writes(struct file *file)
{
	long seals = memfd_fcntl(file, F_GET_SEALS, 0);

	return seals >= 0 && (seals & F_SEAL_WRITE);
}

DEFINE_PER_CPU(unsigned long[BUILDID_CACHE_NR_STATS], buildid_cache_stats);

void buildid_cache_count(enum buildid_cache_stat stat)
{
	/* this_cpu_inc() is one instruction on x86, so also safe in NMI. */
	if (stat < BUILDID_CACHE_NR_STATS)
		this_cpu_inc(buildid_cache_stats[stat]);
}

/*
 * Files waiting for a deferred fill; a slot is NULL, RESERVED or a file,
 * tagged DEFER_DROP_ONLY when the reference may be to another file than the
 * one that missed (see buildid_cache_defer_fill_unpinned()).
 */
#define DEFER_SLOTS		16
#define DEFER_RESERVED		((struct file *)1UL)
#define DEFER_DROP_ONLY		2UL
static_assert(__alignof__(struct file) > DEFER_DROP_ONLY);
/* An inode queued less than this long ago is not queued again. */
#define DEFER_RECENT_BITS	6
#define DEFER_RECENT_JIFFIES	(HZ / 2)

struct buildid_defer_ring {
	struct file *slot[DEFER_SLOTS];
};

static DEFINE_PER_CPU(struct buildid_defer_ring, buildid_defer_rings);

/*
 * Inodes queued lately, by hash.  Races between CPUs may tear an entry;
 * that costs one duplicate or one skipped fill, which the next miss
 * queues again.
 */
static struct buildid_recent_fill {
	unsigned long inode;
	unsigned long when;
} buildid_defer_recent[1 << DEFER_RECENT_BITS];

static struct workqueue_struct *buildid_cache_wq;
static void buildid_defer_work_fn(struct work_struct *work);
static DECLARE_WORK(buildid_defer_work, buildid_defer_work_fn);

/*
 * At most this many fill workers read files at once, each of its own
 * superblock, not counting stuck ones: a worker that has been on one file
 * (its read or its release) for BUILDID_FILL_STUCK_JIFFIES waits for a hung
 * server or device.  Stuck or not, at most FILL_SLOTS workers exist.
 */
#define FILL_WORKERS		4
#define FILL_SLOTS		16
/* At most this many files wait for one worker. */
#define FILL_QUEUE		16

struct buildid_fill_item {
	struct list_head node;
	struct file *file;
	/*
	 * The mount umount(2) would find busy because of @file: the user's
	 * mount, not the private one of an overlayfs backing file.  Taken while
	 * @file is referenced, compared after it may be gone.
	 */
	struct vfsmount *mnt;
	/* For a file dropped unfilled: released by buildid_release_work_fn(). */
	struct work_struct release;
};

struct buildid_fill_worker {
	struct work_struct work;
	/* The superblock whose files it reads, NULL while idle; under the lock. */
	struct super_block *sb;
	/* The mount of the file it is reading, NULL between files; under the lock. */
	struct vfsmount *filling;
	/* When it took that file, in jiffies; under the lock. */
	unsigned long since;
	struct list_head files;
	unsigned int nr;
};

static DEFINE_SPINLOCK(buildid_fill_lock);
static struct buildid_fill_worker buildid_fill_workers[FILL_SLOTS];
/* Releases run here, at most FILL_WORKERS at once, whatever they wait for. */
static struct workqueue_struct *buildid_release_wq;
/* Files dropped unfilled whose release has not ended; under the lock. */
static LIST_HEAD(buildid_releasing);
/* Woken when a worker lets go of a file, for buildid_cache_umount(). */
static DECLARE_WAIT_QUEUE_HEAD(buildid_let_go);
static struct workqueue_struct *buildid_fill_wq;

/* Files queued, being filled or being released; drain waits for 0. */
static atomic_t buildid_defer_pending = ATOMIC_INIT(0);

/* One queued file less; wakes buildid_cache_drain() at the last. */
static void buildid_defer_settle(void)
{
	if (atomic_dec_and_test(&buildid_defer_pending))
		wake_up_var(&buildid_defer_pending);
}

static void buildid_defer_done(struct file *file)
{
	__fput_sync(file);
	buildid_defer_settle();
}

/*
 * A reference that may be to any file (DEFER_DROP_ONLY), even a device or
 * a socket whose release blocks: dropped with fput(), which leaves a last
 * release to the delayed fput work rather than to this worker, and which
 * buildid_cache_drain() flushes.
 */
static void buildid_defer_drop(struct file *file)
{
	fput(file);
	buildid_defer_settle();
}

static void buildid_release_work_fn(struct work_struct *work)
{
	struct buildid_fill_item *item = container_of(work, struct buildid_fill_item, release);

	__fput_sync(item->file);
	spin_lock(&buildid_fill_lock);
	list_del(&item->node);
	spin_unlock(&buildid_fill_lock);
	wake_up_all(&buildid_let_go);
	buildid_defer_settle();
	kfree(item);
}

/*
 * Drops the reference of a file that will not be filled, in a work item of
 * its own: neither the dispatcher, which serves every CPU's misses, nor
 * umount(2) may wait on a release that a hung server never answers, and
 * fput() would leave a delayed release that unmount does not wait for.
 * Called under buildid_fill_lock, with @item on no list.
 */
static void buildid_defer_release(struct buildid_fill_item *item)
{
	lockdep_assert_held(&buildid_fill_lock);
	buildid_cache_count(BUILDID_CACHE_DEFER_DROPPED);
	list_add_tail(&item->node, &buildid_releasing);
	INIT_WORK(&item->release, buildid_release_work_fn);
	queue_work(buildid_release_wq, &item->release);
}

static void buildid_defer_irq_fn(struct irq_work *work)
{
	queue_work(buildid_cache_wq, &buildid_defer_work);
}

static DEFINE_IRQ_WORK(buildid_defer_irq, buildid_defer_irq_fn);

/* The entry of buildid_defer_recent that @inode hashes to. */
static struct buildid_recent_fill *buildid_defer_recent_of(struct inode *inode)
{
	return &buildid_defer_recent[hash_long((unsigned long)inode, DEFER_RECENT_BITS)];
}

static bool buildid_defer_recently(struct inode *inode)
{
	struct buildid_recent_fill *recent = buildid_defer_recent_of(inode);

	return READ_ONCE(recent->inode) == (unsigned long)inode &&
	       time_before(jiffies, READ_ONCE(recent->when) + DEFER_RECENT_JIFFIES);
}

/* @inode's file was queued: a miss in the next DEFER_RECENT_JIFFIES does not queue it again. */
static void buildid_defer_mark(struct inode *inode)
{
	struct buildid_recent_fill *recent = buildid_defer_recent_of(inode);

	WRITE_ONCE(recent->inode, (unsigned long)inode);
	WRITE_ONCE(recent->when, jiffies);
}

/*
 * @inode is being freed: its mark must not hold back the first miss of a
 * new inode that gets its address within DEFER_RECENT_JIFFIES.
 */
void buildid_defer_unmark(struct inode *inode)
{
	struct buildid_recent_fill *recent = buildid_defer_recent_of(inode);

	if (READ_ONCE(recent->inode) == (unsigned long)inode)
		WRITE_ONCE(recent->inode, 0);
}

/* Reserves a slot of a ring for a deferred fill of @inode's file, or NULL. */
static struct file **buildid_defer_reserve(struct inode *inode)
{
	struct buildid_defer_ring *ring;
	unsigned int i;

	if (!buildid_cache_wq || !static_branch_unlikely(&buildid_cache_hooks) ||
	    !buildid_cache_fs_coherent(inode))
		return NULL;
	if (buildid_defer_recently(inode)) {
		buildid_cache_count(BUILDID_CACHE_DEFER_SKIPPED);
		return NULL;
	}

	/*
	 * Any CPU's ring will do: the slots are claimed with cmpxchg() and the
	 * worker empties every ring.  raw_cpu_ptr(), as the nofault lookups of
	 * process context that get here are preemptible.
	 */
	ring = raw_cpu_ptr(&buildid_defer_rings);
	for (i = 0; i < DEFER_SLOTS; i++) {
		/* An NMI may interrupt us on this CPU and take a slot too. */
		if (!cmpxchg(&ring->slot[i], NULL, DEFER_RESERVED))
			return &ring->slot[i];
	}
	buildid_cache_count(BUILDID_CACHE_DEFER_DROPPED);
	return NULL;
}

/* Hands a referenced file (or a tagged one) to the worker in a reserved slot. */
static void buildid_defer_publish(struct file **slot, struct file *file)
{
	if (!((unsigned long)file & DEFER_DROP_ONLY))
		buildid_defer_mark(file_inode(file));
	atomic_inc(&buildid_defer_pending);
	/* Pairs with the worker's smp_load_acquire(): the file is referenced. */
	smp_store_release(slot, file);
	irq_work_queue(&buildid_defer_irq);
}

/**
 * buildid_cache_defer_fill() - Parse @file's build ID later, where sleeping is allowed.
 * @file: a file whose reference the caller holds for the call
 *
 * Safe in any context, NMI included: it does not allocate, lock or sleep.
 *
 * Return: true if @file was queued.
 */
bool buildid_cache_defer_fill(struct file *file)
{
	struct file **slot = buildid_defer_reserve(file_inode(file));

	if (!slot)
		return false;
	buildid_defer_publish(slot, get_file(file));
	buildid_cache_count(BUILDID_CACHE_DEFER_QUEUED);
	return true;
}

/*
 * buildid_cache_defer_fill() for the file of a VMA that
 * buildid_cache_vma_lookup() read without mmap_lock, which nothing pins:
 * the file may have been put since, and its memory reused for another file
 * (SLAB_TYPESAFE_BY_RCU).  A reference taken with atomic_long_inc_not_zero()
 * (a full barrier when it succeeds) is to the VMA's file if the VMA is
 * unchanged after it.  Otherwise it may be to any file, even one still
 * being opened, and is handed to the worker only to be dropped: fput()
 * cannot be called here.  Any context, under the rcu_read_lock() of the
 * snapshot.
 */
void buildid_cache_defer_fill_unpinned(const struct vma_snapshot *snap)
{
	struct file **slot = buildid_defer_reserve(snap->inode);
	struct file *file = snap->file;

	if (!slot)
		return;
	if (IS_ENABLED(CONFIG_BUILDID_CACHE_KUNIT_TEST))
		buildid_cache_run_fill_hook(file, BUILDID_CACHE_STAGE_UNPINNED_GET);
	if (!atomic_long_inc_not_zero(&file->f_count)) {
		/* Nothing was published in the slot: give it back. */
		WRITE_ONCE(*slot, NULL);
		return;
	}
	if (IS_ENABLED(CONFIG_BUILDID_CACHE_KUNIT_TEST))
		buildid_cache_run_fill_hook(file, BUILDID_CACHE_STAGE_UNPINNED_CHECK);
	if (!vma_snapshot_unchanged(snap)) {
		buildid_defer_publish(slot, (struct file *)((unsigned long)file | DEFER_DROP_ONLY));
		return;
	}
	buildid_defer_publish(slot, file);
	buildid_cache_count(BUILDID_CACHE_DEFER_QUEUED);
}

/*
 * Whether BPF stack build IDs read VMAs without mmap_lock: debugfs
 * buildid_cache/lockless_vma, for benchmarks and tests to compare with the
 * path under mmap_lock.
 */
static bool buildid_cache_lockless_vma = IS_ENABLED(CONFIG_PER_VMA_LOCK);

/*
 * Whether buildid_cache_vma_lookup() may answer: lockless lookups are on, and
 * so is the cache.  A caller that walks many addresses asks once, and takes
 * the locked path for all of them when not.
 */
bool buildid_cache_lockless_vma_enabled(void)
{
	return READ_ONCE(buildid_cache_lockless_vma) &&
	       static_branch_unlikely(&buildid_cache_hooks);
}
EXPORT_SYMBOL_GPL(buildid_cache_lockless_vma_enabled);

static void buildid_fill_work_fn(struct work_struct *work)
{
	struct buildid_fill_worker *w = container_of(work, struct buildid_fill_worker, work);
	struct buildid_fill_item *item;

	for (;;) {
		spin_lock(&buildid_fill_lock);
		item = list_first_entry_or_null(&w->files, struct buildid_fill_item, node);
		if (!item) {
			w->sb = NULL;
			spin_unlock(&buildid_fill_lock);
			return;
		}
		list_del(&item->node);
		w->nr--;
		w->filling = item->mnt;
		w->since = jiffies;
		spin_unlock(&buildid_fill_lock);

		buildid_cache_fill_file(item->file, true);
		buildid_defer_done(item->file);
		kfree(item);

		spin_lock(&buildid_fill_lock);
		w->filling = NULL;
		spin_unlock(&buildid_fill_lock);
		wake_up_all(&buildid_let_go);
		cond_resched();
	}
}

/* Whether @w waits for a hung file system; under buildid_fill_lock. */
static bool buildid_fill_stuck(const struct buildid_fill_worker *w)
{
	return w->filling && time_after(jiffies, w->since + BUILDID_FILL_STUCK_JIFFIES);
}

/*
 * Puts @file on the list of the worker that reads its superblock, or of an
 * idle one if fewer than FILL_WORKERS are at work.  Dropped (the next miss
 * queues it again) when none can take it or FILL_QUEUE files wait for it.
 */
static void buildid_defer_dispatch(struct file *file)
{
	struct super_block *sb = file_inode(file)->i_sb;
	struct buildid_fill_item *item = kmalloc(sizeof(*item), GFP_KERNEL);
	struct buildid_fill_worker *w = NULL, *idle = NULL;
	unsigned int i, working = 0;
	bool start = false;

	if (!item) {
		/* A delayed release, which an unmount right after may find. */
		buildid_cache_count(BUILDID_CACHE_DEFER_DROPPED);
		buildid_defer_drop(file);
		return;
	}
	item->file = file;
	item->mnt = file_user_path(file)->mnt;
	spin_lock(&buildid_fill_lock);
	for (i = 0; i < FILL_SLOTS; i++) {
		struct buildid_fill_worker *slot = &buildid_fill_workers[i];

		if (slot->sb == sb)
			w = slot;
		else if (!slot->sb && !idle)
			idle = slot;
		else if (slot->sb && !buildid_fill_stuck(slot))
			working++;
	}
	if (!w && working < FILL_WORKERS)
		w = idle;
	/* Behind a stuck fill, a file would only keep its mount busy. */
	if (w && w->nr < FILL_QUEUE && !buildid_fill_stuck(w)) {
		start = !w->sb;
		w->sb = sb;
		list_add_tail(&item->node, &w->files);
		w->nr++;
	} else {
		w = NULL;
		buildid_defer_release(item);
	}
	spin_unlock(&buildid_fill_lock);
	if (start)
		queue_work(buildid_fill_wq, &w->work);
}

static void buildid_defer_work_fn(struct work_struct *work)
{
	unsigned int cpu, i;

	for_each_possible_cpu(cpu) {
		struct buildid_defer_ring *ring = per_cpu_ptr(&buildid_defer_rings, cpu);

		for (i = 0; i < DEFER_SLOTS; i++) {
			/* Pairs with the smp_store_release() that published it. */
			struct file *file = smp_load_acquire(&ring->slot[i]);

			if (!file || file == DEFER_RESERVED)
				continue;
			/* Only this (ordered) worker empties filled slots. */
			WRITE_ONCE(ring->slot[i], NULL);
			if ((unsigned long)file & DEFER_DROP_ONLY)
				buildid_defer_drop((struct file *)((unsigned long)file &
								   ~DEFER_DROP_ONLY));
			else
				buildid_defer_dispatch(file);
		}
	}
}

/**
 * buildid_cache_drain() - Wait until every queued deferred fill is done.
 *
 * Deferred fills hold file references: drain them before an unmount that
 * must not find the file system busy.  A fill may block as long as its
 * file system does (a hung server): the wait can be killed.
 *
 * Return: 0, or -EINTR if a fatal signal ended the wait.
 */
int buildid_cache_drain(void)
{
	int err;

	if (!buildid_cache_wq)
		return 0;
	/* Hand what the rings hold to the fill workers. */
	irq_work_sync(&buildid_defer_irq);
	flush_work(&buildid_defer_work);
	err = wait_var_event_killable(&buildid_defer_pending,
				      !atomic_read(&buildid_defer_pending));
	/* And the last references to files that others dropped from kthreads. */
	flush_delayed_fput();
	return err;
}

/* Whether the cache holds a file of @mnt that a worker fills or releases. */
static bool buildid_holding(struct vfsmount *mnt)
{
	struct buildid_fill_item *item;
	bool holding = false;
	unsigned int i;

	spin_lock(&buildid_fill_lock);
	for (i = 0; i < FILL_SLOTS; i++)
		holding |= buildid_fill_workers[i].filling == mnt;
	list_for_each_entry(item, &buildid_releasing, node)
		holding |= item->mnt == mnt;
	spin_unlock(&buildid_fill_lock);
	return holding;
}

/**
 * buildid_cache_umount() - Let go of the deferred fills of files on @mnt.
 * @mnt: The mount that umount(2) is about to find busy or not.
 * @flags: umount2()'s flags
 *
 * A queued fill holds a reference to its file, which must not make the
 * unmount fail: queued fills of files on @mnt are dropped (the next miss
 * queues them again), and their references released by workers.  Then,
 * unless the unmount is lazy (MNT_DETACH, which does not care whether the
 * mount is busy), it waits for the fill in progress on @mnt and for those
 * releases, at most BUILDID_UMOUNT_WAIT_JIFFIES and as long as the caller is not
 * killed: a fill that a hung server or device holds does not end on its
 * own, and the unmount then finds the file system busy, as it would with
 * any reader of that file.  Called after the file system's umount_begin(),
 * which MNT_FORCE calls to end the requests such a fill waits for.
 */
void buildid_cache_umount(struct vfsmount *mnt, int flags)
{
	struct buildid_fill_item *item, *next;
	unsigned int i;

	if (!buildid_cache_wq || !atomic_read(&buildid_defer_pending))
		return;
	/* Hand what the rings hold to the fill workers, to find it there. */
	irq_work_sync(&buildid_defer_irq);
	flush_work(&buildid_defer_work);

	spin_lock(&buildid_fill_lock);
	for (i = 0; i < FILL_SLOTS; i++) {
		struct buildid_fill_worker *w = &buildid_fill_workers[i];

		list_for_each_entry_safe(item, next, &w->files, node) {
			if (item->mnt != mnt)
				continue;
			list_del(&item->node);
			w->nr--;
			buildid_defer_release(item);
		}
	}
	spin_unlock(&buildid_fill_lock);

	if (!(flags & MNT_DETACH))
		wait_event_killable_timeout(buildid_let_go, !buildid_holding(mnt),
					    BUILDID_UMOUNT_WAIT_JIFFIES);
}

#if IS_ENABLED(CONFIG_BUILDID_CACHE_KUNIT_TEST)
void (*buildid_cache_fill_hook)(struct file *file, enum buildid_cache_fill_stage stage);

void buildid_cache_run_fill_hook(struct file *file, enum buildid_cache_fill_stage stage)
{
	void (*hook)(struct file *file, enum buildid_cache_fill_stage stage) =
		READ_ONCE(buildid_cache_fill_hook);

	if (hook)
		hook(file, stage);
}
#endif

/*
 * The switch and the size limit are the table's: lib/buildid/cache.rs keeps
 * them, checks the limit's range and changes them, with the hooks' static
 * key, in one transition.  These handlers only read and write them.
 */
static int buildid_cache_enabled_sysctl(const struct ctl_table *table, int write,
					void *buffer, size_t *lenp, loff_t *ppos)
{
	bool on = buildid_cache_is_enabled();
	struct ctl_table t = *table;
	loff_t pos = *ppos;
	int err;

	t.data = &on;
	err = proc_dobool(&t, write, buffer, lenp, ppos);
	/*
	 * A write past the start of the file is not applied, as
	 * sysctl_writes_strict (the default) has it: proc_dobool() then parsed
	 * nothing, and @on is the value read above, not the writer's.  Other
	 * modes parse such a write; it is ignored here all the same.
	 */
	if (!err && write && !pos)
		err = buildid_cache_set_enabled(on);
	return err;
}

static int buildid_cache_max_entries_sysctl(const struct ctl_table *table, int write,
					    void *buffer, size_t *lenp, loff_t *ppos)
{
	unsigned int max_entries = buildid_cache_max_entries();
	struct ctl_table t = *table;
	loff_t pos = *ppos;
	int err;

	t.data = &max_entries;
	err = proc_douintvec(&t, write, buffer, lenp, ppos);
	/* As above. */
	if (!err && write && !pos)
		err = buildid_cache_set_max_entries(max_entries);
	return err;
}

/* Only the transition in cache.rs calls this, under its settings lock. */
void buildid_cache_switch_hooks(bool on)
{
	if (on)
		static_branch_enable(&buildid_cache_hooks);
	else
		static_branch_disable(&buildid_cache_hooks);
}

/*
 * Defined in Rust, like the <linux/buildid.h> API; exported here for the
 * parser's KUnit suite, a module, which turns the cache off while it runs.
 */
EXPORT_SYMBOL_GPL(buildid_cache_set_enabled);
/* And to restore the switch as it found it. */
EXPORT_SYMBOL_GPL(buildid_cache_is_enabled);
/*
 * For the sample driver's benchmark, which times a frame's lookup as the
 * BPF stack helpers make it.
 */
EXPORT_SYMBOL_GPL(buildid_cache_vma_lookup);

static struct ctl_table buildid_cache_sysctls[] = {
	{
		.procname	= "enabled",
		.maxlen		= sizeof(bool),
		.mode		= 0644,
		.proc_handler	= buildid_cache_enabled_sysctl,
	},
	{
		.procname	= "max_entries",
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= buildid_cache_max_entries_sysctl,
	},
};

static const char *const buildid_cache_stat_names[BUILDID_CACHE_NR_STATS] = {
	[BUILDID_CACHE_HIT]		= "hits",
	[BUILDID_CACHE_MISS]		= "misses",
	[BUILDID_CACHE_FILL]		= "fills",
	[BUILDID_CACHE_DEFERRED_FILL]	= "deferred_fills",
	[BUILDID_CACHE_FILL_RACED]	= "fills_raced",
	[BUILDID_CACHE_DEFER_QUEUED]	= "deferrals_queued",
	[BUILDID_CACHE_DEFER_SKIPPED]	= "deferrals_skipped",
	[BUILDID_CACHE_DEFER_DROPPED]	= "deferrals_dropped",
	[BUILDID_CACHE_INVALIDATION]	= "invalidations",
	[BUILDID_CACHE_EVICTION]	= "evictions",
	[BUILDID_CACHE_REPLACEMENT]	= "replacements",
	[BUILDID_CACHE_VMA_LOCKLESS]	= "vma_lockless",
	[BUILDID_CACHE_VMA_LOCKED]	= "vma_locked",
};

static int buildid_cache_stats_show(struct seq_file *m, void *v)
{
	unsigned int stat, cpu;

	for (stat = 0; stat < BUILDID_CACHE_NR_STATS; stat++) {
		unsigned long sum = 0;

		/* Lookups are counted with CONFIG_BUILDID_CACHE_STATS only. */
		if (!IS_ENABLED(CONFIG_BUILDID_CACHE_STATS) &&
		    (stat == BUILDID_CACHE_HIT || stat == BUILDID_CACHE_MISS))
			continue;

		for_each_possible_cpu(cpu)
			sum += per_cpu(buildid_cache_stats, cpu)[stat];
		seq_printf(m, "%s %lu\n", buildid_cache_stat_names[stat], sum);
	}
	seq_printf(m, "entries %u\n", buildid_cache_entries());
	seq_printf(m, "enabled %d\n", buildid_cache_is_enabled());
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(buildid_cache_stats);

static ssize_t buildid_cache_drain_write(struct file *file, const char __user *buf,
					 size_t count, loff_t *ppos)
{
	int err = buildid_cache_drain();

	return err ? err : count;
}

static const struct file_operations buildid_cache_drain_fops = {
	.write	= buildid_cache_drain_write,
	.llseek	= noop_llseek,
};

static int __init buildid_cache_init(void)
{
	struct dentry *dir;
	unsigned int i;
	int err;

	for (i = 0; i < FILL_SLOTS; i++) {
		INIT_WORK(&buildid_fill_workers[i].work, buildid_fill_work_fn);
		INIT_LIST_HEAD(&buildid_fill_workers[i].files);
	}
	buildid_fill_wq = alloc_workqueue("buildid_cache_fill", WQ_UNBOUND, FILL_SLOTS);
	buildid_release_wq = alloc_workqueue("buildid_cache_release", WQ_UNBOUND, FILL_WORKERS);
	buildid_cache_wq = alloc_ordered_workqueue("buildid_cache", 0);
	if (!buildid_fill_wq || !buildid_release_wq || !buildid_cache_wq) {
		if (buildid_fill_wq)
			destroy_workqueue(buildid_fill_wq);
		if (buildid_release_wq)
			destroy_workqueue(buildid_release_wq);
		if (buildid_cache_wq)
			destroy_workqueue(buildid_cache_wq);
		buildid_cache_wq = NULL;
		return -ENOMEM;
	}

	err = buildid_cache_set_enabled(true);
	if (err)
		pr_warn("buildid_cache: off: no memory for its table (%d)\n", err);

	register_sysctl("kernel/buildid_cache", buildid_cache_sysctls);
	dir = debugfs_create_dir("buildid_cache", NULL);
	debugfs_create_file("stats", 0444, dir, NULL, &buildid_cache_stats_fops);
	debugfs_create_file("drain", 0200, dir, NULL, &buildid_cache_drain_fops);
	debugfs_create_bool("lockless_vma", 0600, dir, &buildid_cache_lockless_vma);
	return 0;
}
late_initcall(buildid_cache_init);
