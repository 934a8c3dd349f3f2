// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the build ID cache (CONFIG_BUILDID_CACHE): fills, hits,
 * negative entries, invalidation on write access, the size limit, inode
 * freeing, and lookups from NMI while the table is being updated.
 *
 * Built in, so that it runs at boot on tmpfs files; the eviction of page
 * cache pages under a cached build ID is tested by the kselftests, on ext4
 * and 9p.
 */

#include <kunit/test.h>
#include <linux/buildid.h>
#include <linux/buildid_cache.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/elf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/iversion.h>
#include <linux/kthread.h>
#include <linux/mm.h>
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

/* A tmpfs file holding @len bytes of @img, released at the end of the test. */
static struct file *tmpfs_file(struct kunit *test, const u8 *img, size_t len)
{
	struct file *file = buildid_kunit_tmpfs_file(test, img, len);

	/* The tests rely on shmem_file_setup() not taking write access. */
	KUNIT_ASSERT_LE(test, atomic_read(&file_inode(file)->i_writecount), 0);
	return file;
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

static int buildid_cache_suite_init(struct kunit_suite *suite)
{
	/* Start from an empty cache of the default size, whatever ran before. */
	buildid_cache_set_enabled(false);
	return buildid_cache_set_enabled(true);
}

static void buildid_cache_fill_and_hit(struct kunit *test)
{
	struct file *f = elf_file(test, 1);
	struct vm_area_struct vma = { .vm_file = f };
	unsigned char id[BUILD_ID_SIZE_MAX], want[BUILD_ID_SIZE_MAX];
	u32 size = 0;

	KUNIT_EXPECT_EQ(test, lookup(f), -ENOENT);
	buildid_cache_fill_file(f, false);
	expect_cached(test, f, 1);
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

	buildid_cache_fill_file(f, false);
	KUNIT_EXPECT_TRUE(test, buildid_cache_has_inode(file_inode(f)));
	KUNIT_EXPECT_EQ(test, lookup(f), -EINVAL);
	KUNIT_EXPECT_EQ(test, build_id_parse_file(f, id, NULL), -EINVAL);
}

/* A file open for write is neither filled nor served. */
static void buildid_cache_writable_not_cached(struct kunit *test)
{
	struct file *f = elf_file(test, 3);
	struct file *w;

	buildid_cache_fill_file(f, false);
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

	buildid_cache_fill_file(f, false);
	expect_cached(test, f, 3);
}

/* A content change that bumps size or i_version is a miss even without the hook. */
static void buildid_cache_changed_size_is_a_miss(struct kunit *test)
{
	struct file *f = elf_file(test, 4);
	struct inode *inode = file_inode(f);

	buildid_cache_fill_file(f, false);
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
	buildid_cache_fill_file(f, false);
	expect_cached(test, f, 4);
}

/* No entry outlives its inode. */
static void buildid_cache_inode_freed(struct kunit *test)
{
	u8 *img = make_image(test, 5);
	struct file *f;
	struct inode *inode;

	f = shmem_file_setup("buildid-cache-kunit", IMAGE_SIZE, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f);
	inode = file_inode(f);
	KUNIT_ASSERT_EQ(test, kernel_write(f, img, IMAGE_SIZE, &(loff_t){ 0 }), IMAGE_SIZE);
	buildid_cache_fill_file(f, false);
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
		buildid_cache_fill_file(files[i], false);
		KUNIT_EXPECT_LE(test, buildid_cache_entries(), 16U);
	}
	/* The newest entry is always kept. */
	expect_cached(test, files[ARRAY_SIZE(files) - 1], 100 + ARRAY_SIZE(files) - 1);
	KUNIT_EXPECT_EQ(test, buildid_cache_set_max_entries(4096), 0);
}

/*
 * Fills the cache for @file.  A fill gives up when write access to any inode
 * that shares its counter (one of 64) is granted meanwhile, so try again.
 */
static void fill_cache(struct kunit *test, struct file *file)
{
	int tries;

	for (tries = 0; tries < 5 && !buildid_cache_has_inode(file_inode(file)); tries++)
		buildid_cache_fill_file(file, false);
	KUNIT_ASSERT_TRUE(test, buildid_cache_has_inode(file_inode(file)));
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

	buildid_cache_fill_file(f, false);
	expect_cached(test, f, 6);
	KUNIT_ASSERT_EQ(test, buildid_cache_set_enabled(false), 0);
	KUNIT_EXPECT_EQ(test, buildid_cache_entries(), 0U);
	KUNIT_EXPECT_EQ(test, lookup(f), -ENOENT);
	buildid_cache_fill_file(f, false);
	KUNIT_EXPECT_EQ(test, lookup(f), -ENOENT);
	KUNIT_ASSERT_EQ(test, buildid_cache_set_enabled(true), 0);
	KUNIT_EXPECT_EQ(test, lookup(f), -ENOENT);
}

#ifdef CONFIG_X86_LOCAL_APIC

#define NMI_FILES	16
#define NMI_LOOKUPS	4

/*
 * Lookups from NMI while the interrupted CPU updates the table.  NMIs come
 * from a thread on another CPU when there is one, so they land in the
 * middle of inserts and removals, and as self-IPIs between updates.
 */
static struct {
	struct file *files[NMI_FILES];
	int target_cpu;
	bool armed;
	bool stop;
	atomic_t nmis, hits, misses, wrong;
} nmi_test;

static int buildid_cache_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	unsigned char id[BUILD_ID_SIZE_MAX], want[BUILD_ID_SIZE_MAX];
	unsigned int n, i;
	int ret;

	if (!READ_ONCE(nmi_test.armed) || smp_processor_id() != READ_ONCE(nmi_test.target_cpu))
		return NMI_DONE;
	n = atomic_inc_return(&nmi_test.nmis);
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
	WRITE_ONCE(nmi_test.stop, false);
	KUNIT_ASSERT_EQ(test, register_nmi_handler(NMI_LOCAL, buildid_cache_nmi_handler, 0,
						   "buildid_cache_kunit"), 0);

	/* Updates run on this CPU, which the sender targets. */
	cpu = get_cpu();
	put_cpu();
	set_cpus_allowed_ptr(current, cpumask_of(cpu));
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
	WRITE_ONCE(nmi_test.armed, true);

	for (round = 0; round < 400; round++) {
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
	}

	WRITE_ONCE(nmi_test.stop, true);
	if (sender)
		kthread_stop(sender);
	/* Let NMIs still in flight find the handler armed. */
	mdelay(10);
	WRITE_ONCE(nmi_test.armed, false);
	unregister_nmi_handler(NMI_LOCAL, "buildid_cache_kunit");
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	buildid_cache_set_max_entries(4096);

	kunit_info(test, "%d NMIs (%s), %d hits, %d misses, %d wrong\n",
		   atomic_read(&nmi_test.nmis), sender ? "cross-CPU and self" : "self only",
		   atomic_read(&nmi_test.hits), atomic_read(&nmi_test.misses),
		   atomic_read(&nmi_test.wrong));
	KUNIT_EXPECT_GE(test, atomic_read(&nmi_test.nmis), 400);
	KUNIT_EXPECT_GT(test, atomic_read(&nmi_test.hits), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&nmi_test.wrong), 0);
}

#else

static void buildid_cache_nmi_lookups(struct kunit *test)
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
	KUNIT_CASE(buildid_cache_nmi_lookups),
	{}
};

static struct kunit_suite buildid_cache_suite = {
	.name = "buildid_cache",
	.suite_init = buildid_cache_suite_init,
	.test_cases = buildid_cache_cases,
};

kunit_test_suites(&buildid_cache_suite);
