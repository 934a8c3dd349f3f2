// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the build ID cache (CONFIG_BUILDID_CACHE): fills, hits,
 * negative entries, invalidation on write access, files that can change
 * without write access, what happens to a fill that races with a change or
 * with the switch, the size limit, inode freeing, and lookups from NMI
 * while the table is being updated.
 *
 * Built in, so that it runs at boot on files of a tmpfs instance of its
 * own; the eviction of page cache pages under a cached build ID is tested
 * by the kselftests, on ext4 and 9p.
 */

#include <kunit/test.h>
#include <linux/buildid.h>
#include <linux/buildid_cache.h>
#include <linux/completion.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/elf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/gfs2_ondisk.h>
#include <linux/irq_work.h>
#include <linux/iversion.h>
#include <linux/kthread.h>
#include <linux/magic.h>
#include <linux/memfd.h>
#include <linux/jump_label.h>
#include <linux/mm.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/sched.h>
#ifdef CONFIG_X86_LOCAL_APIC
#include <asm/apic.h>
#include <asm/nmi.h>
#endif

#include "buildid_kunit_image.h"

#define IMAGE_SIZE	1024

/* The image of every test: a 64-bit ELF file with a 20-byte build ID. */
static const struct image_layout layout = {
	.phoff = sizeof(Elf64_Ehdr),
	.note_off = 512,
	.id_len = BUILD_ID_SIZE_MAX,
	.size = IMAGE_SIZE,
};

static void expected_id(unsigned char *id, u32 seed)
{
	int i;

	for (i = 0; i < BUILD_ID_SIZE_MAX; i++)
		id[i] = seed * 31 + i;
}

/*
 * The tmpfs instance the test files live on.  Not shm_mnt, the internal
 * mount of memfd and SysV shm files, whose files the cache refuses: they
 * can be written without write access (buildid_cache_pseudo_files).
 */
static struct vfsmount *test_mnt;

/* A file on @mnt of @len bytes, holding @img unless it is NULL. */
static struct file *shmem_file_on(struct kunit *test, struct vfsmount *mnt, const u8 *img,
				  size_t len)
{
	struct file *file = shmem_file_setup_with_mnt(mnt, "buildid-cache-kunit", len, 0);
	loff_t pos = 0;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, file);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, buildid_kunit_fput, file), 0);
	if (img)
		KUNIT_ASSERT_EQ(test, kernel_write(file, img, len, &pos), (ssize_t)len);
	/* The tests rely on the file not holding write access. */
	KUNIT_ASSERT_LE(test, atomic_read(&file_inode(file)->i_writecount), 0);
	return file;
}

/* A file of the test's tmpfs holding @len bytes of @img, released at the end of the test. */
static struct file *tmpfs_file(struct kunit *test, const u8 *img, size_t len)
{
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, test_mnt);
	return shmem_file_on(test, test_mnt, img, len);
}

/* The image of the build ID numbered @seed. */
static u8 *make_image(struct kunit *test, u32 seed)
{
	u8 id[BUILD_ID_SIZE_MAX];

	expected_id(id, seed);
	return buildid_kunit_image(test, &layout, id);
}

static struct file *elf_file(struct kunit *test, u32 seed)
{
	return tmpfs_file(test, make_image(test, seed), IMAGE_SIZE);
}

static void expect_cached(struct kunit *test, struct file *file, u32 seed)
{
	unsigned char id[BUILD_ID_SIZE_MAX], want[BUILD_ID_SIZE_MAX];
	u32 size = 0;

	expected_id(want, seed);
	KUNIT_ASSERT_EQ(test, buildid_cache_lookup(file, id, &size), 0);
	KUNIT_EXPECT_EQ(test, size, BUILD_ID_SIZE_MAX);
	KUNIT_EXPECT_MEMEQ(test, id, want, BUILD_ID_SIZE_MAX);
}

static int lookup(struct file *file)
{
	unsigned char id[BUILD_ID_SIZE_MAX];

	return buildid_cache_lookup(file, id, NULL);
}

/*
 * Fills the cache for @file.  A fill gives up when write access to an inode
 * that shares its change counter (one of 64) is granted during its parse,
 * which other tasks may do at any time: try until one fill was not raced.
 */
static void fill_cache(struct kunit *test, struct file *file)
{
	int tries;

	for (tries = 0; tries < 100 && !buildid_cache_has_inode(file_inode(file)); tries++)
		buildid_cache_fill_file(file, false);
	KUNIT_ASSERT_TRUE(test, buildid_cache_has_inode(file_inode(file)));
}

static int buildid_cache_suite_init(struct kunit_suite *suite)
{
	struct file_system_type *tmpfs = get_fs_type("tmpfs");

	if (!tmpfs)
		return -ENODEV;
	/* No SB_KERNMOUNT: a tmpfs like one that mount(2) makes. */
	test_mnt = vfs_kern_mount(tmpfs, 0, "tmpfs", NULL);
	put_filesystem(tmpfs);
	if (IS_ERR(test_mnt))
		return PTR_ERR(test_mnt);
	/* Start from an empty cache of the default size, whatever ran before. */
	buildid_cache_set_enabled(false);
	buildid_cache_set_max_entries(4096);
	return buildid_cache_set_enabled(true);
}

static void buildid_cache_suite_exit(struct kunit_suite *suite)
{
	if (!IS_ERR_OR_NULL(test_mnt))
		mntput(test_mnt);
	test_mnt = NULL;
}

/* A counter of lib/buildid_cache.c, summed over the CPUs as debugfs does. */
static unsigned long stat_sum(enum buildid_cache_stat stat)
{
	unsigned long sum = 0;
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(buildid_cache_stats, cpu)[stat];
	return sum;
}

static void buildid_cache_fill_and_hit(struct kunit *test)
{
	struct file *f = elf_file(test, 1);
	struct vm_area_struct vma = { .vm_file = f };
	unsigned char id[BUILD_ID_SIZE_MAX], want[BUILD_ID_SIZE_MAX];
	unsigned long hits, misses;
	u32 size = 0;

	/* The lookup counts in place on x86-64: each in its own counter. */
	hits = stat_sum(BUILDID_CACHE_HIT);
	misses = stat_sum(BUILDID_CACHE_MISS);
	KUNIT_EXPECT_EQ(test, lookup(f), -ENOENT);
	KUNIT_EXPECT_EQ(test, stat_sum(BUILDID_CACHE_MISS), misses + 1);
	fill_cache(test, f);
	expect_cached(test, f, 1);
	KUNIT_EXPECT_EQ(test, stat_sum(BUILDID_CACHE_HIT), hits + 1);
	/* Every entry point answers from it. */
	expected_id(want, 1);
	KUNIT_EXPECT_EQ(test, build_id_parse_nofault(&vma, id, &size), 0);
	KUNIT_EXPECT_MEMEQ(test, id, want, BUILD_ID_SIZE_MAX);
	KUNIT_EXPECT_EQ(test, build_id_parse_file(f, id, &size), 0);
	KUNIT_EXPECT_MEMEQ(test, id, want, BUILD_ID_SIZE_MAX);
}

static void buildid_cache_sleepable_parse_fills(struct kunit *test)
{
	struct file *f = elf_file(test, 2);
	unsigned char id[BUILD_ID_SIZE_MAX];

	KUNIT_EXPECT_EQ(test, build_id_parse_file(f, id, NULL), 0);
	expect_cached(test, f, 2);
}

static void buildid_cache_negative_entry(struct kunit *test)
{
	static const u8 text[IMAGE_SIZE] = "#!/bin/sh\necho not an ELF file\n";
	struct file *f = tmpfs_file(test, text, sizeof(text));
	unsigned char id[BUILD_ID_SIZE_MAX];

	fill_cache(test, f);
	KUNIT_EXPECT_TRUE(test, buildid_cache_has_inode(file_inode(f)));
	KUNIT_EXPECT_EQ(test, lookup(f), -EINVAL);
	KUNIT_EXPECT_EQ(test, build_id_parse_file(f, id, NULL), -EINVAL);
}

/* A file open for write is neither filled nor served. */
static void buildid_cache_writable_not_cached(struct kunit *test)
{
	struct file *f = elf_file(test, 3);
	struct file *w;

	fill_cache(test, f);
	expect_cached(test, f, 3);

	w = dentry_open(&f->f_path, O_WRONLY | O_LARGEFILE, current_cred());
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w);
	/* do_dentry_open() dropped the entry. */
	KUNIT_EXPECT_FALSE(test, buildid_cache_has_inode(file_inode(f)));
	buildid_cache_fill_file(f, false);
	KUNIT_EXPECT_EQ(test, lookup(f), -ENOENT);
	fput(w);
	flush_delayed_fput();
	KUNIT_ASSERT_LE(test, atomic_read(&file_inode(f)->i_writecount), 0);

	fill_cache(test, f);
	expect_cached(test, f, 3);
}

/* A content change that bumps size or i_version is a miss even without the hook. */
static void buildid_cache_changed_size_is_a_miss(struct kunit *test)
{
	struct file *f = elf_file(test, 4);
	struct inode *inode = file_inode(f);

	fill_cache(test, f);
	expect_cached(test, f, 4);
	inode_lock(inode);
	i_size_write(inode, IMAGE_SIZE + 1);
	inode_unlock(inode);
	KUNIT_EXPECT_EQ(test, lookup(f), -ENOENT);
	inode_lock(inode);
	i_size_write(inode, IMAGE_SIZE);
	inode_inc_iversion(inode);
	inode_unlock(inode);
	KUNIT_EXPECT_EQ(test, lookup(f), -ENOENT);
	/* The stale entry is still there: fill_cache() would not replace it. */
	buildid_cache_forget_inode(inode, BUILDID_CACHE_INVALIDATION);
	fill_cache(test, f);
	expect_cached(test, f, 4);
}

/* No entry outlives its inode. */
static void buildid_cache_inode_freed(struct kunit *test)
{
	u8 *img = make_image(test, 5);
	struct file *f;
	struct inode *inode;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, test_mnt);
	f = shmem_file_setup_with_mnt(test_mnt, "buildid-cache-kunit", IMAGE_SIZE, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f);
	inode = file_inode(f);
	KUNIT_ASSERT_EQ(test, kernel_write(f, img, IMAGE_SIZE, &(loff_t){ 0 }), IMAGE_SIZE);
	fill_cache(test, f);
	KUNIT_EXPECT_TRUE(test, buildid_cache_has_inode(inode));
	fput(f);
	flush_delayed_fput();
	/* The inode is freed after an RCU grace period; its entry is gone already. */
	KUNIT_EXPECT_FALSE(test, buildid_cache_has_inode(inode));
}

static void buildid_cache_limit_holds(struct kunit *test)
{
	struct file *files[64];
	unsigned int i;

	KUNIT_ASSERT_EQ(test, buildid_cache_set_max_entries(16), 0);
	KUNIT_EXPECT_LE(test, buildid_cache_entries(), 16U);
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		files[i] = elf_file(test, 100 + i);
		fill_cache(test, files[i]);
		KUNIT_EXPECT_LE(test, buildid_cache_entries(), 16U);
	}
	/* The newest entry is always kept. */
	expect_cached(test, files[ARRAY_SIZE(files) - 1], 100 + ARRAY_SIZE(files) - 1);
	KUNIT_EXPECT_EQ(test, buildid_cache_set_max_entries(4096), 0);
}

/*
 * A new limit keeps the entries that fit: all of them when it grows; when
 * it shrinks below what is cached, recently used entries first, and every
 * entry kept still answers with its own ID.
 */
static void buildid_cache_resize_keeps_entries(struct kunit *test)
{
	struct file *files[24];
	unsigned int i, kept = 0;

	/* Empty, so that only this test's entries compete for the new table. */
	buildid_cache_set_enabled(false);
	KUNIT_ASSERT_EQ(test, buildid_cache_set_enabled(true), 0);
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		files[i] = elf_file(test, 200 + i);
		fill_cache(test, files[i]);
	}
	KUNIT_ASSERT_EQ(test, buildid_cache_set_max_entries(8192), 0);
	for (i = 0; i < ARRAY_SIZE(files); i++)
		expect_cached(test, files[i], 200 + i);

	/* The lookups above marked every entry; mark four only. */
	buildid_cache_set_enabled(false);
	KUNIT_ASSERT_EQ(test, buildid_cache_set_enabled(true), 0);
	for (i = 0; i < ARRAY_SIZE(files); i++)
		fill_cache(test, files[i]);
	for (i = 0; i < 4; i++)
		expect_cached(test, files[i], 200 + i);
	KUNIT_ASSERT_EQ(test, buildid_cache_set_max_entries(16), 0);
	KUNIT_EXPECT_LE(test, buildid_cache_entries(), 16U);
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		if (!buildid_cache_has_inode(file_inode(files[i]))) {
			KUNIT_EXPECT_GE_MSG(test, i, 4U, "recently used entry %u dropped", i);
			continue;
		}
		expect_cached(test, files[i], 200 + i);
		kept++;
	}
	KUNIT_EXPECT_EQ(test, buildid_cache_entries(), kept);
	KUNIT_EXPECT_EQ(test, buildid_cache_set_max_entries(4096), 0);
}

static void buildid_cache_off_is_empty(struct kunit *test)
{
	struct file *f = elf_file(test, 6);

	fill_cache(test, f);
	expect_cached(test, f, 6);
	KUNIT_ASSERT_EQ(test, buildid_cache_set_enabled(false), 0);
	KUNIT_EXPECT_EQ(test, buildid_cache_entries(), 0U);
	KUNIT_EXPECT_EQ(test, lookup(f), -ENOENT);
	buildid_cache_fill_file(f, false);
	KUNIT_EXPECT_EQ(test, lookup(f), -ENOENT);
	KUNIT_ASSERT_EQ(test, buildid_cache_set_enabled(true), 0);
	KUNIT_EXPECT_EQ(test, lookup(f), -ENOENT);
}

/*
 * memfd, SysV shm and every other file of an internal mount (shm_mnt,
 * hugetlbfs' own) are opened for write without get_write_access(), and a
 * store through a shared mapping whose PTEs are already writable changes
 * them without any trace in the inode: none of them is cached, unless
 * sealed against writes (F_SEAL_WRITE denies writable mappings, which
 * mapping_deny_writable() stands for here), and then only while sealed.
 */
static void buildid_cache_pseudo_files(struct kunit *test)
{
	/* shmem_file_setup() makes its files on shm_mnt, as memfd_create() does. */
	struct file *f = buildid_kunit_tmpfs_file(test, make_image(test, 7), IMAGE_SIZE);
	struct address_space *mapping = f->f_mapping;
	unsigned char id[BUILD_ID_SIZE_MAX];

	KUNIT_ASSERT_TRUE(test, file_inode(f)->i_sb->s_flags & SB_KERNMOUNT);
	buildid_cache_fill_file(f, false);
	KUNIT_EXPECT_FALSE(test, buildid_cache_has_inode(file_inode(f)));
	KUNIT_EXPECT_EQ(test, build_id_parse_file(f, id, NULL), 0);
	KUNIT_EXPECT_FALSE(test, buildid_cache_has_inode(file_inode(f)));

	/*
	 * Writable mappings denied, but not for good: memfd_add_seals() denies
	 * them before it waits for pinned folios, and allows them again if the
	 * wait fails, without the seal.
	 */
	KUNIT_ASSERT_EQ(test, mapping_deny_writable(mapping), 0);
	buildid_cache_fill_file(f, false);
	KUNIT_EXPECT_FALSE_MSG(test, buildid_cache_has_inode(file_inode(f)),
			       "filled while F_SEAL_WRITE was still being added");
	mapping_allow_writable(mapping);

	/* Sealed, as memfd_create(MFD_ALLOW_SEALING) and F_ADD_SEALS do it. */
	SHMEM_I(file_inode(f))->seals &= ~F_SEAL_SEAL;
	KUNIT_ASSERT_EQ(test, memfd_fcntl(f, F_ADD_SEALS, F_SEAL_WRITE), 0);
	fill_cache(test, f);
	expect_cached(test, f, 7);
	/* Served only while writable mappings are denied. */
	mapping_allow_writable(mapping);
	KUNIT_EXPECT_EQ(test, lookup(f), -ENOENT);
	KUNIT_EXPECT_EQ(test, mapping_deny_writable(mapping), 0);
}

/*
 * A writable shared mapping of a file that holds no write access (what a
 * pseudo file gets) keeps its entry from being served or filled.
 */
static void buildid_cache_writably_mapped(struct kunit *test)
{
	struct file *f = elf_file(test, 8);
	struct address_space *mapping = f->f_mapping;

	fill_cache(test, f);
	KUNIT_ASSERT_EQ(test, mapping_map_writable(mapping), 0);
	KUNIT_EXPECT_EQ(test, lookup(f), -ENOENT);
	buildid_cache_forget_inode(file_inode(f), BUILDID_CACHE_INVALIDATION);
	buildid_cache_fill_file(f, false);
	KUNIT_EXPECT_FALSE(test, buildid_cache_has_inode(file_inode(f)));
	mapping_unmap_writable(mapping);
	fill_cache(test, f);
	expect_cached(test, f, 8);
}

/* What the fill hook does to the file at one stage of a fill. */
static struct {
	struct kunit *test;
	struct file *file;
	enum buildid_cache_fill_stage stage;
	unsigned int calls;
	void (*action)(struct kunit *test, struct file *file);
} fill_race;

static void buildid_cache_test_fill_hook(struct file *file, enum buildid_cache_fill_stage stage)
{
	if (file != fill_race.file || stage != fill_race.stage || fill_race.calls++)
		return;
	fill_race.action(fill_race.test, file);
}

static void clear_fill_hook(void *unused)
{
	WRITE_ONCE(buildid_cache_fill_hook, NULL);
}

/* Runs @action at @stage of the first fill of @f that gets there, until the test ends. */
static void set_fill_hook_at(struct kunit *test, struct file *f,
			     enum buildid_cache_fill_stage stage,
			     void (*action)(struct kunit *test, struct file *file))
{
	fill_race.test = test;
	fill_race.file = f;
	fill_race.stage = stage;
	fill_race.calls = 0;
	fill_race.action = action;
	WRITE_ONCE(buildid_cache_fill_hook, buildid_cache_test_fill_hook);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, clear_fill_hook, NULL), 0);
}

/* Runs @action in the first fill of @f, between its parse and its insert. */
static void set_fill_hook(struct kunit *test, struct file *f,
			  void (*action)(struct kunit *test, struct file *file))
{
	set_fill_hook_at(test, f, BUILDID_CACHE_STAGE_INSERT, action);
}

/* Fills @f once with @action run at @stage of the fill. */
static void fill_racing_at(struct kunit *test, struct file *f,
			   enum buildid_cache_fill_stage stage,
			   void (*action)(struct kunit *test, struct file *file))
{
	set_fill_hook_at(test, f, stage, action);
	buildid_cache_fill_file(f, false);
	clear_fill_hook(NULL);
	KUNIT_EXPECT_EQ_MSG(test, fill_race.calls, 1U, "the fill did not reach the hook");
}

/* Fills @f once with @action run between the fill's parse and its insert. */
static void fill_racing(struct kunit *test, struct file *f,
			void (*action)(struct kunit *test, struct file *file))
{
	fill_racing_at(test, f, BUILDID_CACHE_STAGE_INSERT, action);
}

static void toggle_cache(struct kunit *test, struct file *file)
{
	KUNIT_EXPECT_EQ(test, buildid_cache_set_enabled(false), 0);
	KUNIT_EXPECT_EQ(test, buildid_cache_set_enabled(true), 0);
}

/*
 * Turned off and on during a fill: while it was off, the hooks that drop
 * entries did not run, so what the fill read before must not be inserted.
 */
static void buildid_cache_toggle_during_fill(struct kunit *test)
{
	struct file *f = elf_file(test, 9);

	fill_racing(test, f, toggle_cache);
	KUNIT_EXPECT_FALSE(test, buildid_cache_has_inode(file_inode(f)));
	KUNIT_EXPECT_EQ(test, lookup(f), -ENOENT);
	fill_cache(test, f);
	expect_cached(test, f, 9);
}

static void open_for_write(struct kunit *test, struct file *file)
{
	struct file *w = dentry_open(&file->f_path, O_WRONLY | O_LARGEFILE, current_cred());

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w);
	fput(w);
	flush_delayed_fput();
}

/* Write access granted and given back during a fill: nothing is inserted. */
static void buildid_cache_write_access_during_fill(struct kunit *test)
{
	struct file *f = elf_file(test, 10);

	fill_racing(test, f, open_for_write);
	KUNIT_EXPECT_FALSE(test, buildid_cache_has_inode(file_inode(f)));
}

/*
 * Overlayfs takes its layers as path names in the caller's mount namespace
 * (it clones their mounts privately), so at boot they live on rootfs, in a
 * directory of the suite's own, removed at the end of the test.
 */
#define OVL_DIR "/buildid_cache_kunit"

static void make_dir(struct kunit *test, const char *name)
{
	struct path parent;
	struct dentry *dentry = kern_path_create(AT_FDCWD, name, &parent, LOOKUP_DIRECTORY);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dentry);
	KUNIT_EXPECT_EQ(test, vfs_mkdir(mnt_idmap(parent.mnt), d_inode(parent.dentry), dentry,
					0700), 0);
	done_path_create(&parent, dentry);
}

static void write_image(struct kunit *test, struct file *file, u32 seed)
{
	loff_t pos = 0;

	KUNIT_ASSERT_EQ(test, kernel_write(file, make_image(test, seed), IMAGE_SIZE, &pos),
			(ssize_t)IMAGE_SIZE);
}

static void mntput_action(void *mnt)
{
	mntput(mnt);
}

/* A tmpfs instance of the test's own, released when the test ends. */
static struct vfsmount *private_tmpfs(struct kunit *test)
{
	struct file_system_type *tmpfs = get_fs_type("tmpfs");
	struct vfsmount *mnt;

	KUNIT_ASSERT_NOT_NULL(test, tmpfs);
	mnt = vfs_kern_mount(tmpfs, 0, "tmpfs", NULL);
	put_filesystem(tmpfs);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mnt));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mntput_action, mnt), 0);
	return mnt;
}

static const char *const overlay_layers[][2] = {
	{ "lowerdir", OVL_DIR "/lower" },
	{ "upperdir", OVL_DIR "/upper" },
	{ "workdir", OVL_DIR "/work" },
};

/* What the test and overlayfs make in OVL_DIR, children first. */
static const char *const overlay_tree[] = {
	OVL_DIR "/lower/f", OVL_DIR "/upper/f", OVL_DIR "/work/work", OVL_DIR "/lower",
	OVL_DIR "/upper", OVL_DIR "/work", OVL_DIR,
};

/* Removes what is left of the tree, as devtmpfs removes its nodes. */
static void remove_overlay_tree(void *unused)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(overlay_tree); i++) {
		struct path parent;
		struct dentry *dentry = kern_path_locked(overlay_tree[i], &parent);
		struct inode *dir;

		if (IS_ERR(dentry))
			continue;
		dir = d_inode(parent.dentry);
		if (d_is_dir(dentry))
			vfs_rmdir(mnt_idmap(parent.mnt), dir, dentry);
		else if (d_really_is_positive(dentry))
			vfs_unlink(mnt_idmap(parent.mnt), dir, dentry, NULL);
		dput(dentry);
		inode_unlock(dir);
		path_put(&parent);
	}
}

/* An overlay whose lower layer holds "f", the ELF file of build ID @seed. */
static struct vfsmount *overlay_mount(struct kunit *test, u32 seed)
{
	struct file_system_type *overlay = get_fs_type("overlay");
	struct fs_context *fc;
	struct vfsmount *mnt;
	struct file *f;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL_MSG(test, overlay, "CONFIG_OVERLAY_FS is needed");
	if (system_state >= SYSTEM_RUNNING) {
		put_filesystem(overlay);
		kunit_skip(test, "runs only at boot, on rootfs");
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, remove_overlay_tree, NULL), 0);
	make_dir(test, OVL_DIR);
	for (i = 0; i < ARRAY_SIZE(overlay_layers); i++)
		make_dir(test, overlay_layers[i][1]);
	f = filp_open(OVL_DIR "/lower/f", O_CREAT | O_EXCL | O_WRONLY, 0755);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f);
	write_image(test, f, seed);
	fput(f);
	flush_delayed_fput();

	fc = fs_context_for_mount(overlay, 0);
	put_filesystem(overlay);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fc);
	for (i = 0; i < ARRAY_SIZE(overlay_layers); i++) {
		const char *dir = overlay_layers[i][1];

		KUNIT_EXPECT_EQ(test, vfs_parse_fs_string(fc, overlay_layers[i][0], dir,
							  strlen(dir)), 0);
	}
	mnt = fc_mount(fc);
	put_fs_context(fc);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mnt);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mntput_action, mnt), 0);
	return mnt;
}

static struct vfsmount *copy_up_mnt;

/*
 * Copies "f" up to the upper layer and gives it another build ID.  Runs
 * inside the fill, so it fails with EXPECT and returns: an ASSERT would end
 * the test's thread in the middle of the fill.
 */
static void copy_up_and_rewrite(struct kunit *test, struct file *file)
{
	struct file *w = file_open_root_mnt(copy_up_mnt, "f", O_WRONLY | O_TRUNC, 0);
	loff_t pos = 0;

	if (IS_ERR(w)) {
		KUNIT_FAIL(test, "opening the file for write on the overlay: %ld", PTR_ERR(w));
		return;
	}
	KUNIT_EXPECT_EQ(test, kernel_write(w, make_image(test, 41), IMAGE_SIZE, &pos),
			(ssize_t)IMAGE_SIZE);
	fput(w);
	flush_delayed_fput();
}

/*
 * A file opened on overlayfs is copied up after the fill took the inode
 * below as its key and before it read anything: the parse then reads the
 * upper file (overlayfs reads follow a copy-up), whose build ID must not
 * become that of the lower inode.
 */
static void buildid_cache_overlay_copy_up_during_fill(struct kunit *test)
{
	struct inode *lower_inode, *upper_inode;
	struct file *f, *lower;
	int i;

	copy_up_mnt = overlay_mount(test, 40);
	f = file_open_root_mnt(copy_up_mnt, "f", O_RDONLY, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, buildid_kunit_fput, f), 0);
	lower = filp_open(OVL_DIR "/lower/f", O_RDONLY, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, lower);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, buildid_kunit_fput, lower), 0);
	lower_inode = file_inode(lower);
	KUNIT_ASSERT_PTR_EQ(test, d_real_inode(f->f_path.dentry), lower_inode);

	fill_racing_at(test, f, BUILDID_CACHE_STAGE_PARSE, copy_up_and_rewrite);
	KUNIT_ASSERT_PTR_NE_MSG(test, d_real_inode(f->f_path.dentry), lower_inode,
				"the file was not copied up");
	KUNIT_EXPECT_FALSE_MSG(test, buildid_cache_has_inode(lower_inode),
			       "the lower inode got an entry from a parse of the upper file");
	KUNIT_EXPECT_EQ(test, lookup(lower), -ENOENT);

	/* The lower file still has its own ID, and the upper file gets its own. */
	fill_cache(test, lower);
	expect_cached(test, lower, 40);
	upper_inode = d_real_inode(f->f_path.dentry);
	for (i = 0; i < 100 && !buildid_cache_has_inode(upper_inode); i++) {
		/*
		 * The upper file that overlayfs opened for writing behind the
		 * hook's file holds write access until a delayed fput, which
		 * the hook's own fput queues only while it is being flushed.
		 */
		if (i)
			msleep(20);
		flush_delayed_fput();
		buildid_cache_fill_file(f, false);
	}
	KUNIT_EXPECT_TRUE(test, buildid_cache_has_inode(upper_inode));
}

/*
 * Where the file system keeps no change attribute (no SB_I_VERSION: NFS,
 * Ceph and 9p, whose i_version holds the server's attribute), a fill must
 * not query i_version: querying sets I_VERSION_QUERIED in the raw value,
 * which those file systems compare with the server's.  The entry relies on
 * size and ctime there.
 */
static void buildid_cache_iversion_only_where_kept(struct kunit *test)
{
	struct vfsmount *mnt = private_tmpfs(test);
	struct file *f;
	s64 raw;

	f = shmem_file_on(test, mnt, make_image(test, 50), IMAGE_SIZE);
	/* The suite's own superblock, made to look like a network file system's. */
	mnt->mnt_sb->s_flags &= ~SB_I_VERSION;
	raw = atomic64_read(&file_inode(f)->i_version);

	fill_cache(test, f);
	expect_cached(test, f, 50);
	KUNIT_EXPECT_EQ_MSG(test, atomic64_read(&file_inode(f)->i_version), raw,
			    "a fill queried i_version where the file system keeps none");
}

/*
 * "No build ID" entries, which every lookup of a mapping of a non-ELF
 * file makes, cannot push out the build IDs that are in use.
 */
static void buildid_cache_negatives_capped(struct kunit *test)
{
	static const u8 text[IMAGE_SIZE] = "#!/bin/sh\necho not an ELF file\n";
	struct file *elf[4];
	unsigned int i, round;

	buildid_cache_set_enabled(false);
	KUNIT_ASSERT_EQ(test, buildid_cache_set_enabled(true), 0);
	KUNIT_ASSERT_EQ(test, buildid_cache_set_max_entries(16), 0);
	for (i = 0; i < ARRAY_SIZE(elf); i++) {
		elf[i] = elf_file(test, 300 + i);
		fill_cache(test, elf[i]);
	}
	for (round = 0; round < 64; round++) {
		buildid_cache_fill_file(tmpfs_file(test, text, sizeof(text)), false);
		/* The profiler keeps using the ELF files. */
		for (i = 0; i < ARRAY_SIZE(elf); i++)
			lookup(elf[i]);
	}
	for (i = 0; i < ARRAY_SIZE(elf); i++)
		expect_cached(test, elf[i], 300 + i);
	KUNIT_EXPECT_LE(test, buildid_cache_entries(), 16U);
	KUNIT_EXPECT_EQ(test, buildid_cache_set_max_entries(4096), 0);
}

/* The hooks run whenever the cache is on, and stop when it is turned off. */
static void buildid_cache_hooks_follow_switch(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, buildid_cache_is_enabled());
	KUNIT_EXPECT_TRUE(test, static_key_enabled(&buildid_cache_hooks));
	KUNIT_ASSERT_EQ(test, buildid_cache_set_enabled(false), 0);
	KUNIT_EXPECT_FALSE(test, buildid_cache_is_enabled());
	KUNIT_EXPECT_FALSE(test, static_key_enabled(&buildid_cache_hooks));
	KUNIT_ASSERT_EQ(test, buildid_cache_set_enabled(true), 0);
	KUNIT_EXPECT_TRUE(test, static_key_enabled(&buildid_cache_hooks));
}

/*
 * The switch and the size limit have one record each (cache.rs): a limit
 * out of range changes nothing, a limit set while the cache is off is the
 * one it turns on with, and turning it off or on keeps the limit.
 */
static void buildid_cache_settings_one_record(struct kunit *test)
{
	struct file *a = elf_file(test, 400);

	KUNIT_ASSERT_EQ(test, buildid_cache_set_max_entries(4096), 0);
	KUNIT_EXPECT_EQ(test, buildid_cache_set_max_entries(15), -EINVAL);
	KUNIT_EXPECT_EQ(test, buildid_cache_set_max_entries((1U << 20) + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, buildid_cache_set_max_entries(0), -EINVAL);
	KUNIT_EXPECT_EQ(test, buildid_cache_max_entries(), 4096U);
	KUNIT_EXPECT_TRUE(test, buildid_cache_is_enabled());

	KUNIT_ASSERT_EQ(test, buildid_cache_set_max_entries(32), 0);
	KUNIT_EXPECT_EQ(test, buildid_cache_max_entries(), 32U);
	fill_cache(test, a);

	KUNIT_ASSERT_EQ(test, buildid_cache_set_enabled(false), 0);
	KUNIT_EXPECT_EQ(test, buildid_cache_max_entries(), 32U);
	KUNIT_EXPECT_EQ(test, buildid_cache_entries(), 0U);
	KUNIT_ASSERT_EQ(test, buildid_cache_set_max_entries(64), 0);
	/* A new limit does not turn the cache on. */
	KUNIT_EXPECT_FALSE(test, buildid_cache_is_enabled());
	KUNIT_EXPECT_FALSE(test, static_key_enabled(&buildid_cache_hooks));
	buildid_cache_fill_file(a, false);
	KUNIT_EXPECT_EQ(test, buildid_cache_entries(), 0U);

	KUNIT_ASSERT_EQ(test, buildid_cache_set_enabled(true), 0);
	KUNIT_EXPECT_EQ(test, buildid_cache_max_entries(), 64U);
	KUNIT_EXPECT_TRUE(test, static_key_enabled(&buildid_cache_hooks));
	KUNIT_EXPECT_FALSE(test, buildid_cache_has_inode(file_inode(a)));
	fill_cache(test, a);
	expect_cached(test, a, 400);
	KUNIT_EXPECT_EQ(test, buildid_cache_set_max_entries(4096), 0);
}

/*
 * A deferred fill that blocks, as one on a hung network or FUSE server
 * would (the fill hook waits here): a fill of another file system still
 * completes, and turning the cache off does not wait for the blocked one.
 */
static struct {
	struct completion release, blocked, switched;
} stuck;

static void block_until_released(struct kunit *test, struct file *file)
{
	complete(&stuck.blocked);
	wait_for_completion(&stuck.release);
}

static int switch_off_thread(void *unused)
{
	buildid_cache_set_enabled(false);
	/* complete_all(): the test waits for it twice. */
	complete_all(&stuck.switched);
	return 0;
}

static void release_stuck_fill(void *unused)
{
	complete_all(&stuck.release);
}

/* Queues a deferred fill of @a that blocks in the fill hook until the test ends or releases it. */
static void block_deferred_fill(struct kunit *test, struct file *a)
{
	init_completion(&stuck.release);
	init_completion(&stuck.blocked);
	init_completion(&stuck.switched);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, release_stuck_fill, NULL), 0);
	set_fill_hook(test, a, block_until_released);

	KUNIT_ASSERT_TRUE(test, buildid_cache_defer_fill(a));
	KUNIT_ASSERT_NE_MSG(test, wait_for_completion_timeout(&stuck.blocked, 10 * HZ), 0UL,
			    "the deferred fill never ran");
}

static void buildid_cache_stuck_fill_stalls_nothing(struct kunit *test)
{
	struct file *a = elf_file(test, 12);
	struct file *b = shmem_file_on(test, private_tmpfs(test), make_image(test, 13),
				       IMAGE_SIZE);
	struct task_struct *thread;
	int i;

	block_deferred_fill(test, a);
	KUNIT_ASSERT_TRUE(test, buildid_cache_defer_fill(b));
	for (i = 0; i < 250 && !buildid_cache_has_inode(file_inode(b)); i++)
		msleep(20);
	KUNIT_EXPECT_TRUE_MSG(test, buildid_cache_has_inode(file_inode(b)),
			      "a fill of another file system waited for the blocked one");

	thread = kthread_run(switch_off_thread, NULL, "buildid_cache_off");
	KUNIT_ASSERT_FALSE(test, IS_ERR(thread));
	KUNIT_EXPECT_NE_MSG(test, wait_for_completion_timeout(&stuck.switched, 5 * HZ), 0UL,
			    "turning the cache off waited for the blocked fill");
	complete_all(&stuck.release);
	wait_for_completion(&stuck.switched);
	KUNIT_EXPECT_EQ(test, buildid_cache_drain(), 0);
	clear_fill_hook(NULL);
	KUNIT_EXPECT_FALSE(test, buildid_cache_has_inode(file_inode(a)));
	KUNIT_ASSERT_EQ(test, buildid_cache_set_enabled(true), 0);
}

static int umount_flags;

static int umount_thread(void *mnt)
{
	buildid_cache_umount(mnt, umount_flags);
	complete_all(&stuck.switched);
	return 0;
}

/*
 * umount(2) lets go of the queued fills of the mount's files: @b waits
 * behind @a, whose fill blocks, and umount must not wait for it or find
 * the mount busy because of its reference.  The fill in progress is
 * waited for.
 */
static void buildid_cache_umount_drops_queued_fills(struct kunit *test)
{
	struct file *a = elf_file(test, 14), *b = elf_file(test, 15);
	struct task_struct *thread;
	int i;

	block_deferred_fill(test, a);
	KUNIT_ASSERT_TRUE(test, buildid_cache_defer_fill(b));
	KUNIT_EXPECT_EQ(test, file_count(b), 2L);

	umount_flags = 0;
	thread = kthread_run(umount_thread, test_mnt, "buildid_cache_umount");
	KUNIT_ASSERT_FALSE(test, IS_ERR(thread));
	for (i = 0; i < 250 && file_count(b) > 1; i++)
		msleep(20);
	KUNIT_EXPECT_EQ_MSG(test, file_count(b), 1L, "the queued fill still holds its file");
	KUNIT_EXPECT_FALSE_MSG(test, completion_done(&stuck.switched),
			       "umount did not wait for the fill in progress");
	KUNIT_EXPECT_EQ(test, file_count(a), 2L);

	complete_all(&stuck.release);
	KUNIT_EXPECT_NE_MSG(test, wait_for_completion_timeout(&stuck.switched, 5 * HZ), 0UL,
			    "umount still waits after the fill ended");
	KUNIT_EXPECT_EQ(test, file_count(a), 1L);
	KUNIT_EXPECT_EQ(test, buildid_cache_drain(), 0);
	clear_fill_hook(NULL);
	KUNIT_EXPECT_FALSE(test, buildid_cache_has_inode(file_inode(b)));
}

/*
 * A fill that never ends (a hung server or device) does not hold umount(2)
 * for ever: it waits BUILDID_UMOUNT_WAIT_JIFFIES, and then the unmount finds
 * the mount busy.  A lazy unmount does not wait at all.
 */
static void buildid_cache_umount_wait_is_bounded(struct kunit *test)
{
	struct file *a = elf_file(test, 16);
	struct task_struct *thread;
	unsigned long start, done;

	block_deferred_fill(test, a);
	umount_flags = 0;
	thread = kthread_run(umount_thread, test_mnt, "buildid_cache_umount");
	KUNIT_ASSERT_FALSE(test, IS_ERR(thread));
	done = wait_for_completion_timeout(&stuck.switched, BUILDID_UMOUNT_WAIT_JIFFIES + 10 * HZ);
	KUNIT_EXPECT_NE_MSG(test, done, 0UL, "umount waits for a fill that does not end");
	/* It did not end: the fill still holds its file. */
	KUNIT_EXPECT_EQ(test, file_count(a), 2L);

	start = jiffies;
	buildid_cache_umount(test_mnt, MNT_DETACH);
	KUNIT_EXPECT_LT_MSG(test, jiffies - start, (unsigned long)BUILDID_UMOUNT_WAIT_JIFFIES,
			    "a lazy umount waited for the fill");

	complete_all(&stuck.release);
	wait_for_completion(&stuck.switched);
	KUNIT_EXPECT_EQ(test, buildid_cache_drain(), 0);
	clear_fill_hook(NULL);
	KUNIT_EXPECT_EQ(test, file_count(a), 1L);
}

/* Fills of files on these mounts block until released, as on hung servers. */
static struct {
	struct vfsmount *mnt[6];
	atomic_t blocked;
	struct completion release;
} hung;

static void hung_fill_hook(struct file *file, enum buildid_cache_fill_stage stage)
{
	unsigned int i;

	if (stage != BUILDID_CACHE_STAGE_INSERT)
		return;
	for (i = 0; i < ARRAY_SIZE(hung.mnt); i++) {
		if (file->f_path.mnt == hung.mnt[i]) {
			atomic_inc(&hung.blocked);
			wait_for_completion(&hung.release);
			return;
		}
	}
}

static void release_hung_fills(void *unused)
{
	complete_all(&hung.release);
}

/*
 * More file systems hang than there are fill workers: the deferred fills of
 * another file system still complete once the hung ones have been stuck
 * for BUILDID_FILL_STUCK_JIFFIES, and each hung file system gets a worker.
 */
static void buildid_cache_hung_fills_hold_no_worker(struct kunit *test)
{
	struct file *hung_file[ARRAY_SIZE(hung.mnt)], *healthy;
	unsigned int i;
	int tries;

	init_completion(&hung.release);
	atomic_set(&hung.blocked, 0);
	for (i = 0; i < ARRAY_SIZE(hung.mnt); i++) {
		hung.mnt[i] = private_tmpfs(test);
		hung_file[i] = shmem_file_on(test, hung.mnt[i], make_image(test, 20 + i),
					     IMAGE_SIZE);
	}
	healthy = shmem_file_on(test, private_tmpfs(test), make_image(test, 30), IMAGE_SIZE);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, release_hung_fills, NULL), 0);
	WRITE_ONCE(buildid_cache_fill_hook, hung_fill_hook);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, clear_fill_hook, NULL), 0);

	/* Queued again and again, as misses do, until every file system hangs a worker. */
	for (tries = 0; tries < 100 && atomic_read(&hung.blocked) < ARRAY_SIZE(hung.mnt);
	     tries++) {
		for (i = 0; i < ARRAY_SIZE(hung.mnt); i++)
			buildid_cache_defer_fill(hung_file[i]);
		msleep(200);
	}
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&hung.blocked), (int)ARRAY_SIZE(hung.mnt),
			    "a hung file system got no worker");

	for (tries = 0; tries < 100 && !buildid_cache_has_inode(file_inode(healthy)); tries++) {
		buildid_cache_defer_fill(healthy);
		msleep(200);
	}
	KUNIT_EXPECT_TRUE_MSG(test, buildid_cache_has_inode(file_inode(healthy)),
			      "the hung fills held every worker");

	complete_all(&hung.release);
	KUNIT_EXPECT_EQ(test, buildid_cache_drain(), 0);
	clear_fill_hook(NULL);
}

/*
 * The may-cache rule per class of file system ("Coherence" in
 * Documentation/core-api/buildid.rst), on superblocks that carry only what
 * the rule reads.
 */
static void buildid_cache_fs_classes(struct kunit *test)
{
	static const struct {
		const char *class;
		unsigned long magic;
		bool cached;
	} classes[] = {
		{ "ext4 (local block)", EXT4_SUPER_MAGIC, true },
		{ "xfs (local block)", XFS_SUPER_MAGIC, true },
		{ "btrfs (local block)", BTRFS_SUPER_MAGIC, true },
		{ "tmpfs", TMPFS_MAGIC, true },
		{ "overlayfs", OVERLAYFS_SUPER_MAGIC, true },
		{ "squashfs (read-only image)", SQUASHFS_MAGIC, true },
		{ "erofs (read-only image)", EROFS_SUPER_MAGIC_V1, true },
		{ "nfs (network)", NFS_SUPER_MAGIC, true },
		{ "9p (network)", V9FS_MAGIC, true },
		{ "cifs (network)", CIFS_SUPER_MAGIC, true },
		{ "smb2 (network)", SMB2_SUPER_MAGIC, true },
		{ "fuse and fuseblk", FUSE_SUPER_MAGIC, false },
		{ "gfs2 (cluster)", GFS2_MAGIC, false },
		{ "ocfs2 (cluster)", OCFS2_SUPER_MAGIC, false },
	};
	struct super_block *sb = kunit_kzalloc(test, sizeof(*sb), GFP_KERNEL);
	struct inode *inode = kunit_kzalloc(test, sizeof(*inode), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, sb);
	KUNIT_ASSERT_NOT_NULL(test, inode);
	inode->i_sb = sb;
	for (i = 0; i < ARRAY_SIZE(classes); i++) {
		sb->s_magic = classes[i].magic;
		KUNIT_EXPECT_EQ_MSG(test, buildid_cache_fs_coherent(inode), classes[i].cached,
				    "%s", classes[i].class);
	}
	/* And on a live superblock. */
	KUNIT_EXPECT_TRUE(test, buildid_cache_fs_coherent(file_inode(elf_file(test, 17))));
}

/* Maps @len bytes of @file at @pgoff into the test's own mm; fails the test if it cannot. */
static unsigned long map_file(struct kunit *test, struct file *file, unsigned long len,
			      unsigned long pgoff)
{
	unsigned long addr = kunit_vm_mmap(test, file, 0, len, PROT_READ | PROT_EXEC,
					   file ? MAP_PRIVATE : MAP_PRIVATE | MAP_ANONYMOUS,
					   pgoff << PAGE_SHIFT);

	KUNIT_ASSERT_TRUE_MSG(test, addr && !IS_ERR_VALUE(addr), "mmap: %ld", (long)addr);
	KUNIT_ASSERT_NOT_NULL(test, current->mm);
	return addr;
}

static void expect_vma_served(struct kunit *test, unsigned long addr, u32 seed, u64 want_offset)
{
	unsigned char id[BUILD_ID_SIZE_MAX], want[BUILD_ID_SIZE_MAX];
	struct buildid_vma_range range;

	expected_id(want, seed);
	KUNIT_ASSERT_EQ(test, buildid_cache_vma_lookup(current->mm, addr, id, NULL, &range), 0);
	KUNIT_EXPECT_MEMEQ(test, id, want, BUILD_ID_SIZE_MAX);
	KUNIT_EXPECT_LE(test, range.start, addr);
	KUNIT_EXPECT_GT(test, range.end, addr);
	KUNIT_EXPECT_EQ(test, range.offset + addr - range.start, want_offset);
}

static int vma_lookup_ret(unsigned long addr)
{
	unsigned char id[BUILD_ID_SIZE_MAX];
	struct buildid_vma_range range;

	return buildid_cache_vma_lookup(current->mm, addr, id, NULL, &range);
}

/*
 * A VMA is read without mmap_lock: served while a writer holds mmap_lock for
 * other VMAs, not while the VMA itself is write-locked, nor once it is
 * detached, whatever mmap_lock's state.
 */
static void buildid_cache_vma_without_mmap_lock(struct kunit *test)
{
	struct file *f = elf_file(test, 30);
	unsigned long addr, anon;
	struct vm_area_struct *vma;
	struct mm_struct *mm;

	if (!IS_ENABLED(CONFIG_PER_VMA_LOCK))
		kunit_skip(test, "needs CONFIG_PER_VMA_LOCK");
	fill_cache(test, f);
	/* At page offset 2, so that the file offset is not the address's offset in the VMA. */
	addr = map_file(test, f, PAGE_SIZE, 2);
	anon = map_file(test, NULL, PAGE_SIZE, 0);
	mm = current->mm;

	expect_vma_served(test, addr + 0x40, 30, 2 * PAGE_SIZE + 0x40);
	KUNIT_EXPECT_EQ(test, vma_lookup_ret(anon), -ENOENT);

	mmap_write_lock(mm);
	vma = vma_lookup(mm, addr);
	KUNIT_ASSERT_NOT_NULL(test, vma);
	/* A writer that holds mmap_lock but has not locked this VMA. */
	expect_vma_served(test, addr, 30, 2 * PAGE_SIZE);
	vma_start_write(vma);
	KUNIT_EXPECT_EQ(test, vma_lookup_ret(addr), -EAGAIN);
	/* Detached while write-locked, as munmap() does; still in the tree. */
	vma_mark_detached(vma, true);
	mmap_write_unlock(mm);
	KUNIT_EXPECT_EQ(test, vma_lookup_ret(addr), -EAGAIN);

	mmap_write_lock(mm);
	vma_start_write(vma);
	vma_mark_detached(vma, false);
	mmap_write_unlock(mm);
	expect_vma_served(test, addr, 30, 2 * PAGE_SIZE);
}

/*
 * A miss without mmap_lock queues a fill with a reference taken on a file
 * that nothing pinned, and the fill happens.
 */
/* Keeps the test on the CPU it runs on, and returns that CPU. */
static int pin_to_this_cpu(void)
{
	int cpu = get_cpu();

	put_cpu();
	set_cpus_allowed_ptr(current, cpumask_of(cpu));
	return cpu;
}

/* Maps the first page of @f, whose build ID the cache then does not hold. */
static unsigned long map_uncached(struct kunit *test, struct file *f)
{
	unsigned long addr;

	if (!IS_ENABLED(CONFIG_PER_VMA_LOCK))
		kunit_skip(test, "needs CONFIG_PER_VMA_LOCK");
	addr = map_file(test, f, PAGE_SIZE, 0);
	/* mmap() fills nothing: the first lookup misses. */
	KUNIT_ASSERT_FALSE(test, buildid_cache_has_inode(file_inode(f)));
	return addr;
}

static void buildid_cache_vma_miss_queues_fill(struct kunit *test)
{
	struct file *f = elf_file(test, 31);
	unsigned long addr = map_uncached(test, f);
	long refs;

	refs = file_count(f);
	KUNIT_EXPECT_EQ(test, vma_lookup_ret(addr), -EAGAIN);
	KUNIT_ASSERT_EQ(test, buildid_cache_drain(), 0);
	KUNIT_EXPECT_TRUE(test, buildid_cache_has_inode(file_inode(f)));
	/* The worker dropped the reference that the lookup took. */
	KUNIT_EXPECT_EQ(test, file_count(f), refs);
	expect_vma_served(test, addr, 31, 0);
}

/*
 * A writer on another CPU that changes the VMA of a lockless lookup while
 * the lookup's fill hook waits for it: between the reference the lookup
 * takes to a file that nothing pinned and its second look at the VMA.
 */
static struct {
	struct mm_struct *mm;
	struct vm_area_struct *vma;
	unsigned long addr;
	bool unmap;			/* munmap() the VMA; else write-lock it until released */
	bool go, done, release;		/* READ_ONCE() and WRITE_ONCE() */
} unpinned;

static int unpinned_writer(void *data)
{
	while (!READ_ONCE(unpinned.go) && !kthread_should_stop())
		usleep_range(100, 200);
	if (READ_ONCE(unpinned.go) && unpinned.unmap) {
		kthread_use_mm(unpinned.mm);
		vm_munmap(unpinned.addr, PAGE_SIZE);
		kthread_unuse_mm(unpinned.mm);
		WRITE_ONCE(unpinned.done, true);
	} else if (READ_ONCE(unpinned.go)) {
		mmap_write_lock(unpinned.mm);
		vma_start_write(unpinned.vma);
		WRITE_ONCE(unpinned.done, true);
		while (!READ_ONCE(unpinned.release) && !kthread_should_stop())
			usleep_range(100, 200);
		mmap_write_unlock(unpinned.mm);
	}
	/* kthread_stop() needs the thread until it is called. */
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

static void unpinned_stop_writer(void *writer)
{
	WRITE_ONCE(unpinned.release, true);
	kthread_stop(writer);
}

/* The fill hook: under the lookup's rcu_read_lock(), so it spins, bounded. */
static void unpinned_wait_for_writer(struct kunit *test, struct file *file)
{
	unsigned long deadline = jiffies + 10 * HZ;

	WRITE_ONCE(unpinned.go, true);
	while (!READ_ONCE(unpinned.done) && time_before(jiffies, deadline))
		cpu_relax();
}

/*
 * A miss without mmap_lock whose VMA changes (write-locked, or unmapped)
 * after the lookup took its reference to the file: the reference may be to
 * another file by then, so the worker only drops it.  Nothing is filled or
 * counted as queued, no reference is left, and the next miss fills.
 */
static void vma_changed_after_reference(struct kunit *test, bool unmap, u32 seed)
{
	struct file *f = elf_file(test, seed);
	unsigned long queued, addr = map_uncached(test, f);
	struct task_struct *writer;
	unsigned int other;
	long refs;
	int ret, cpu;

	memset(&unpinned, 0, sizeof(unpinned));
	unpinned.mm = current->mm;
	unpinned.addr = addr;
	unpinned.unmap = unmap;
	mmap_read_lock(current->mm);
	unpinned.vma = vma_lookup(current->mm, addr);
	mmap_read_unlock(current->mm);
	KUNIT_ASSERT_NOT_NULL(test, unpinned.vma);
	/* The hook spins here while the writer runs there: never on one CPU. */
	cpu = pin_to_this_cpu();
	other = cpumask_any_but(cpu_online_mask, cpu);
	if (other >= nr_cpu_ids)
		kunit_skip(test, "needs a second online CPU for the writer");
	writer = kthread_create_on_cpu(unpinned_writer, NULL, other, "buildid_writer/%u");
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(writer), "no writer thread: %ld", PTR_ERR(writer));
	/* Stopped however the test ends: it acts on whatever unpinned says. */
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, unpinned_stop_writer, writer), 0);
	wake_up_process(writer);

	refs = file_count(f);
	queued = stat_sum(BUILDID_CACHE_DEFER_QUEUED);
	set_fill_hook_at(test, f, BUILDID_CACHE_STAGE_UNPINNED_CHECK, unpinned_wait_for_writer);
	ret = vma_lookup_ret(addr);
	clear_fill_hook(NULL);
	kunit_release_action(test, unpinned_stop_writer, writer);
	set_cpus_allowed_ptr(current, cpu_possible_mask);

	KUNIT_EXPECT_EQ(test, ret, -EAGAIN);
	KUNIT_EXPECT_EQ_MSG(test, fill_race.calls, 1U, "the lookup did not reach the hook");
	KUNIT_ASSERT_TRUE_MSG(test, READ_ONCE(unpinned.done), "the writer did not run");
	KUNIT_ASSERT_EQ(test, buildid_cache_drain(), 0);
	/* With the VMA unmapped, the test holds the only reference left. */
	KUNIT_EXPECT_EQ(test, file_count(f), unmap ? refs - 1 : refs);
	KUNIT_EXPECT_EQ(test, stat_sum(BUILDID_CACHE_DEFER_QUEUED), queued);
	KUNIT_EXPECT_FALSE(test, buildid_cache_has_inode(file_inode(f)));
	if (unmap) {
		KUNIT_EXPECT_EQ(test, vma_lookup_ret(addr), -ENOENT);
		return;
	}
	/* A drop-only hand-over does not hold the next miss back. */
	KUNIT_EXPECT_EQ(test, vma_lookup_ret(addr), -EAGAIN);
	KUNIT_ASSERT_EQ(test, buildid_cache_drain(), 0);
	expect_vma_served(test, addr, seed, 0);
}

static void buildid_cache_vma_locked_after_reference(struct kunit *test)
{
	vma_changed_after_reference(test, false, 32);
}

static void buildid_cache_vma_unmapped_after_reference(struct kunit *test)
{
	vma_changed_after_reference(test, true, 33);
}

#ifdef CONFIG_X86_LOCAL_APIC

#define NMI_FILES	16
#define NMI_LOOKUPS	4

/*
 * Lookups from NMI while the interrupted CPU updates the table.  NMIs come
 * from a thread on another CPU, so they land in the middle of inserts and
 * removals, and as self-IPIs between updates.  The test counts the NMIs
 * whose lookups ran while the interrupted CPU was inside an update (held
 * the writers' lock), and fails unless there were some.
 */
#define NMI_MIN_ROUNDS		400
#define NMI_MAX_ROUNDS		8000
#define NMI_WANT_DURING_UPDATE	20

static struct {
	struct file *files[NMI_FILES];
	int target_cpu;
	bool armed;
	bool stop;
	atomic_t nmis, hits, misses, wrong, during_update;
} nmi_test;

static int buildid_cache_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	unsigned char id[BUILD_ID_SIZE_MAX], want[BUILD_ID_SIZE_MAX];
	unsigned int n, i;
	int ret;

	if (!READ_ONCE(nmi_test.armed) || smp_processor_id() != READ_ONCE(nmi_test.target_cpu))
		return NMI_DONE;
	n = atomic_inc_return(&nmi_test.nmis);
	/* The interrupted context cannot leave its update before we return. */
	if (buildid_cache_updates_in_progress())
		atomic_inc(&nmi_test.during_update);
	/* A few per NMI: TCG is slow, and the NMI handler time is checked. */
	for (i = 0; i < NMI_LOOKUPS; i++) {
		unsigned int k = (n * NMI_LOOKUPS + i) % NMI_FILES;

		ret = buildid_cache_lookup(nmi_test.files[k], id, NULL);
		if (ret == -ENOENT) {
			atomic_inc(&nmi_test.misses);
			continue;
		}
		expected_id(want, 200 + k);
		if (ret || memcmp(id, want, BUILD_ID_SIZE_MAX))
			atomic_inc(&nmi_test.wrong);
		else
			atomic_inc(&nmi_test.hits);
	}
	return NMI_HANDLED;
}

static int buildid_cache_nmi_sender(void *data)
{
	while (!READ_ONCE(nmi_test.stop)) {
		apic->send_IPI_mask(cpumask_of(READ_ONCE(nmi_test.target_cpu)), NMI_VECTOR);
		udelay(20);
		cond_resched();
	}
	return 0;
}

static void buildid_cache_nmi_lookups(struct kunit *test)
{
	struct task_struct *sender = NULL;
	unsigned int round, i, other;
	int cpu;

	for (i = 0; i < NMI_FILES; i++)
		nmi_test.files[i] = elf_file(test, 200 + i);
	atomic_set(&nmi_test.nmis, 0);
	atomic_set(&nmi_test.hits, 0);
	atomic_set(&nmi_test.misses, 0);
	atomic_set(&nmi_test.wrong, 0);
	atomic_set(&nmi_test.during_update, 0);
	WRITE_ONCE(nmi_test.stop, false);
	KUNIT_ASSERT_EQ(test, register_nmi_handler(NMI_LOCAL, buildid_cache_nmi_handler, 0,
						   "buildid_cache_kunit"), 0);

	/* Updates run on this CPU, which the sender targets. */
	cpu = pin_to_this_cpu();
	WRITE_ONCE(nmi_test.target_cpu, cpu);
	other = cpumask_any_but(cpu_online_mask, cpu);
	if (other < nr_cpu_ids) {
		sender = kthread_create_on_cpu(buildid_cache_nmi_sender, NULL, other,
					       "buildid_nmi/%u");
		if (!IS_ERR(sender))
			wake_up_process(sender);
		else
			sender = NULL;
	}
	if (!sender) {
		unregister_nmi_handler(NMI_LOCAL, "buildid_cache_kunit");
		set_cpus_allowed_ptr(current, cpu_possible_mask);
		KUNIT_FAIL(test, "needs a second online CPU to send NMIs from");
		return;
	}
	WRITE_ONCE(nmi_test.armed, true);

	for (round = 0; round < NMI_MAX_ROUNDS; round++) {
		struct file *f = nmi_test.files[round % NMI_FILES];

		if (round % 3 == 2)
			buildid_cache_forget_inode(file_inode(f), BUILDID_CACHE_INVALIDATION);
		else
			buildid_cache_fill_file(f, false);
		if (round % 100 == 99)
			buildid_cache_set_max_entries(round % 200 == 199 ? 4096 : 16);
		preempt_disable();
		apic->send_IPI_mask(cpumask_of(cpu), NMI_VECTOR);
		preempt_enable();
		if (round >= NMI_MIN_ROUNDS &&
		    atomic_read(&nmi_test.during_update) >= NMI_WANT_DURING_UPDATE)
			break;
	}

	WRITE_ONCE(nmi_test.stop, true);
	kthread_stop(sender);
	/* Let NMIs still in flight find the handler armed. */
	mdelay(10);
	WRITE_ONCE(nmi_test.armed, false);
	unregister_nmi_handler(NMI_LOCAL, "buildid_cache_kunit");
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	buildid_cache_set_max_entries(4096);

	kunit_info(test, "%u rounds, %d NMIs, %d during an update, %d hits, %d misses, %d wrong\n",
		   round, atomic_read(&nmi_test.nmis), atomic_read(&nmi_test.during_update),
		   atomic_read(&nmi_test.hits), atomic_read(&nmi_test.misses),
		   atomic_read(&nmi_test.wrong));
	KUNIT_EXPECT_GE(test, atomic_read(&nmi_test.nmis), NMI_MIN_ROUNDS);
	KUNIT_EXPECT_GT(test, atomic_read(&nmi_test.during_update), 0);
	KUNIT_EXPECT_GT(test, atomic_read(&nmi_test.hits), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&nmi_test.wrong), 0);
}

/*
 * Lockless VMA lookups from NMI and hardirq on one CPU while the test, on
 * another, maps two files in turn at one address with MAP_FIXED, at
 * different page offsets: an answer is either file's build ID with that
 * file's offset, never one file's ID with the other's offset, nor a third.
 */
#define REMAP_ROUNDS		300
#define REMAP_OFFSET		0x80

static struct {
	struct mm_struct *mm;
	unsigned long addr;
	int cpu;
	bool stop;
	atomic_t nmis, irqs, valid[2], again, wrong;
} remap_test;

static void remap_test_lookup(void)
{
	unsigned char id[BUILD_ID_SIZE_MAX], want[BUILD_ID_SIZE_MAX];
	unsigned long addr = remap_test.addr + REMAP_OFFSET;
	struct buildid_vma_range range = {};
	u64 offset;
	int ret, k;

	ret = buildid_cache_vma_lookup(remap_test.mm, addr, id, NULL, &range);
	offset = range.offset + addr - range.start;
	if (ret == -EAGAIN) {
		atomic_inc(&remap_test.again);
		return;
	}
	for (k = 0; k < 2 && !ret; k++) {
		expected_id(want, 40 + k);
		/* File k is mapped at page offset k. */
		if (!memcmp(id, want, BUILD_ID_SIZE_MAX) &&
		    offset == k * PAGE_SIZE + REMAP_OFFSET) {
			atomic_inc(&remap_test.valid[k]);
			return;
		}
	}
	atomic_inc(&remap_test.wrong);
}

static int buildid_cache_remap_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	if (!READ_ONCE(remap_test.mm) || smp_processor_id() != READ_ONCE(remap_test.cpu))
		return NMI_DONE;
	atomic_inc(&remap_test.nmis);
	remap_test_lookup();
	return NMI_HANDLED;
}

static void buildid_cache_remap_irq_work(struct irq_work *work)
{
	atomic_inc(&remap_test.irqs);
	remap_test_lookup();
}

static DEFINE_IRQ_WORK(remap_test_irq_work, buildid_cache_remap_irq_work);

/* Interrupts its own CPU, alternately with an NMI and with a hardirq. */
static int buildid_cache_remap_sampler(void *data)
{
	unsigned int n = 0;

	while (!READ_ONCE(remap_test.stop)) {
		preempt_disable();
		if (n++ % 2)
			apic->send_IPI_self(NMI_VECTOR);
		else
			irq_work_queue(&remap_test_irq_work);
		preempt_enable();
		udelay(10);
		cond_resched();
	}
	irq_work_sync(&remap_test_irq_work);
	return 0;
}

static void buildid_cache_vma_remapped_under_nmi(struct kunit *test)
{
	struct file *files[2] = { elf_file(test, 40), elf_file(test, 41) };
	struct task_struct *sampler;
	unsigned int round, other;
	int cpu;

	if (!IS_ENABLED(CONFIG_PER_VMA_LOCK))
		kunit_skip(test, "needs CONFIG_PER_VMA_LOCK");
	fill_cache(test, files[0]);
	fill_cache(test, files[1]);
	memset(&remap_test, 0, sizeof(remap_test));
	remap_test.addr = map_file(test, files[0], PAGE_SIZE, 0);

	cpu = pin_to_this_cpu();
	other = cpumask_any_but(cpu_online_mask, cpu);
	if (other >= nr_cpu_ids) {
		set_cpus_allowed_ptr(current, cpu_possible_mask);
		KUNIT_FAIL(test, "needs a second online CPU to sample from");
		return;
	}
	sampler = kthread_create_on_cpu(buildid_cache_remap_sampler, NULL, other,
					"buildid_remap/%u");
	if (IS_ERR(sampler)) {
		set_cpus_allowed_ptr(current, cpu_possible_mask);
		KUNIT_FAIL(test, "no sampler thread: %ld", PTR_ERR(sampler));
		return;
	}
	remap_test.cpu = other;
	KUNIT_ASSERT_EQ(test, register_nmi_handler(NMI_LOCAL, buildid_cache_remap_nmi_handler, 0,
						   "buildid_remap_kunit"), 0);
	/* The test's mm outlives the sampler: the test holds it, and stops the sampler first. */
	WRITE_ONCE(remap_test.mm, current->mm);
	wake_up_process(sampler);

	for (round = 0; round < REMAP_ROUNDS; round++) {
		unsigned int k = (round + 1) % 2;
		unsigned long addr = vm_mmap(files[k], remap_test.addr, PAGE_SIZE,
					     PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED,
					     k * PAGE_SIZE);

		if (addr != remap_test.addr) {
			KUNIT_FAIL(test, "MAP_FIXED mmap: %ld", (long)addr);
			break;
		}
		/* Both files must have been served: let the sampler see each for a while. */
		udelay(50);
	}

	WRITE_ONCE(remap_test.stop, true);
	kthread_stop(sampler);
	/* Let NMIs still in flight find the handler armed. */
	mdelay(10);
	WRITE_ONCE(remap_test.mm, NULL);
	unregister_nmi_handler(NMI_LOCAL, "buildid_remap_kunit");
	set_cpus_allowed_ptr(current, cpu_possible_mask);

	kunit_info(test, "%u remaps, %d NMIs, %d hardirqs: %d and %d valid, %d retry, %d wrong\n",
		   round, atomic_read(&remap_test.nmis), atomic_read(&remap_test.irqs),
		   atomic_read(&remap_test.valid[0]), atomic_read(&remap_test.valid[1]),
		   atomic_read(&remap_test.again), atomic_read(&remap_test.wrong));
	KUNIT_EXPECT_GT(test, atomic_read(&remap_test.nmis), 0);
	KUNIT_EXPECT_GT(test, atomic_read(&remap_test.irqs), 0);
	KUNIT_EXPECT_GT(test, atomic_read(&remap_test.valid[0]), 0);
	KUNIT_EXPECT_GT(test, atomic_read(&remap_test.valid[1]), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&remap_test.wrong), 0);
}

#else

static void buildid_cache_nmi_lookups(struct kunit *test)
{
	kunit_skip(test, "needs the x86 local APIC to send NMIs");
}

static void buildid_cache_vma_remapped_under_nmi(struct kunit *test)
{
	kunit_skip(test, "needs the x86 local APIC to send NMIs");
}

#endif

static struct kunit_case buildid_cache_cases[] = {
	KUNIT_CASE(buildid_cache_fill_and_hit),
	KUNIT_CASE(buildid_cache_sleepable_parse_fills),
	KUNIT_CASE(buildid_cache_negative_entry),
	KUNIT_CASE(buildid_cache_writable_not_cached),
	KUNIT_CASE(buildid_cache_changed_size_is_a_miss),
	KUNIT_CASE(buildid_cache_inode_freed),
	KUNIT_CASE(buildid_cache_limit_holds),
	KUNIT_CASE(buildid_cache_resize_keeps_entries),
	KUNIT_CASE(buildid_cache_off_is_empty),
	KUNIT_CASE(buildid_cache_pseudo_files),
	KUNIT_CASE(buildid_cache_writably_mapped),
	KUNIT_CASE(buildid_cache_toggle_during_fill),
	KUNIT_CASE(buildid_cache_write_access_during_fill),
	KUNIT_CASE(buildid_cache_overlay_copy_up_during_fill),
	KUNIT_CASE(buildid_cache_iversion_only_where_kept),
	KUNIT_CASE(buildid_cache_negatives_capped),
	KUNIT_CASE(buildid_cache_hooks_follow_switch),
	KUNIT_CASE(buildid_cache_settings_one_record),
	KUNIT_CASE(buildid_cache_stuck_fill_stalls_nothing),
	KUNIT_CASE(buildid_cache_umount_drops_queued_fills),
	KUNIT_CASE_SLOW(buildid_cache_umount_wait_is_bounded),
	KUNIT_CASE_SLOW(buildid_cache_hung_fills_hold_no_worker),
	KUNIT_CASE(buildid_cache_fs_classes),
	KUNIT_CASE(buildid_cache_nmi_lookups),
	KUNIT_CASE(buildid_cache_vma_without_mmap_lock),
	KUNIT_CASE(buildid_cache_vma_miss_queues_fill),
	KUNIT_CASE(buildid_cache_vma_locked_after_reference),
	KUNIT_CASE(buildid_cache_vma_unmapped_after_reference),
	KUNIT_CASE(buildid_cache_vma_remapped_under_nmi),
	{}
};

static struct kunit_suite buildid_cache_suite = {
	.name = "buildid_cache",
	.suite_init = buildid_cache_suite_init,
	.suite_exit = buildid_cache_suite_exit,
	.test_cases = buildid_cache_cases,
};

kunit_test_suites(&buildid_cache_suite);
