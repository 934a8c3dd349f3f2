// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the <linux/buildid.h> API as served by the Rust
 * implementation, each input also run through the C reference
 * (build_id_ref_*(), CONFIG_BUILDID_C_REFERENCE) with identical results
 * required: return code, size and all 20 bytes.
 *
 * Files come from tmpfs (shmem_file_setup()) and, when the module is loaded
 * with dir=<directory on a block file system such as ext4>, from that file
 * system, where clean pages can be evicted to test uncached data.  With
 * huge_dir=<directory on tmpfs mounted huge=always> a note is placed inside
 * a large folio.
 */

#include <kunit/test.h>
#include <kunit/visibility.h>
#include <linux/buildid.h>
#include <linux/buildid_cache.h>
#include <linux/buildid_ref.h>
#include <linux/elf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pagemap.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>

#include "buildid_kunit_image.h"

static char *dir;
module_param(dir, charp, 0444);
MODULE_PARM_DESC(dir, "directory on a block-backed file system (e.g. ext4) for eviction tests");

static char *huge_dir;
module_param(huge_dir, charp, 0444);
MODULE_PARM_DESC(huge_dir, "directory on tmpfs mounted with huge=always for large folio tests");

static int secret_fd = -1;
module_param(secret_fd, int, 0444);
MODULE_PARM_DESC(secret_fd, "fd of a memfd_secret() file in the loading task");

struct result {
	int ret;
	u32 size;
	unsigned char id[BUILD_ID_SIZE_MAX];
};

static void fill_id(unsigned char *id, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		id[i] = 0xa0 + i;
}

/* An image as @l describes, with the build ID fill_id() makes. */
static u8 *make_image(struct kunit *test, const struct image_layout *l)
{
	u8 id[BUILD_ID_SIZE_MAX];

	fill_id(id, l->id_len);
	return buildid_kunit_image(test, l, id);
}

static void write_all(struct kunit *test, struct file *file, const u8 *buf, u64 len)
{
	loff_t pos = 0;

	KUNIT_ASSERT_EQ(test, kernel_write(file, buf, len, &pos), (ssize_t)len);
}

static void path_file_release(void *file)
{
	struct file *f = file;

	vfs_truncate(&f->f_path, 0);
	filp_close(f, NULL);
}

/* A new file named @name in @where holding @img; skips the test without @where. */
static struct file *dir_file(struct kunit *test, const char *where, const char *name,
			     const u8 *img, u64 len)
{
	struct file *file;
	char *path;

	if (!where)
		kunit_skip(test, "no directory given for this test (module parameter)");
	path = kunit_kzalloc(test, PATH_MAX, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, path);
	snprintf(path, PATH_MAX, "%s/%s", where, name);
	file = filp_open(path, O_RDWR | O_CREAT | O_TRUNC | O_LARGEFILE, 0600);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, file);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, path_file_release, file), 0);
	write_all(test, file, img, len);
	return file;
}

/*
 * Writes the file back and drops its pages from the page cache.  Not with
 * invalidate_mapping_pages(): it skips a folio with an extra reference, as
 * a folio just added to the page cache has while it sits in a per-CPU LRU
 * batch (folio_add_lru()), and then a page stays behind now and then.
 */
static void evict(struct kunit *test, struct file *file)
{
	KUNIT_ASSERT_EQ(test, vfs_fsync(file, 0), 0);
	KUNIT_ASSERT_EQ(test, invalidate_inode_pages2(file->f_mapping), 0);
	KUNIT_ASSERT_EQ(test, file->f_mapping->nrpages, 0UL);
}

enum mode { NOFAULT, SLEEPABLE_VMA, SLEEPABLE_FILE };

static const char *const mode_name[] = { "nofault", "sleepable (vma)", "sleepable (file)" };

/* One implementation of the API: the Rust exports or the C reference. */
struct buildid_api {
	int (*parse_nofault)(struct vm_area_struct *vma, unsigned char *build_id, __u32 *size);
	int (*parse)(struct vm_area_struct *vma, unsigned char *build_id, __u32 *size);
	int (*parse_file)(struct file *file, unsigned char *build_id, __u32 *size);
};

static const struct buildid_api rust_api = {
	build_id_parse_nofault, build_id_parse, build_id_parse_file
};

static const struct buildid_api c_api = {
	build_id_ref_parse_nofault, build_id_ref_parse, build_id_ref_parse_file
};

static void run(const struct buildid_api *api, struct file *file, enum mode m,
		struct result *r)
{
	/* The parsers only look at vm_file. */
	struct vm_area_struct vma = { .vm_file = file };

	memset(r->id, 0x5a, sizeof(r->id));
	r->size = 0xdeadbeef;
	if (m == NOFAULT)
		r->ret = api->parse_nofault(&vma, r->id, &r->size);
	else if (m == SLEEPABLE_VMA)
		r->ret = api->parse(&vma, r->id, &r->size);
	else
		r->ret = api->parse_file(file, r->id, &r->size);
}

/*
 * Runs Rust then C on @file in mode @m, expects both to agree and to return
 * @want; on success the ID must be the one make_image() wrote, of @id_len bytes.
 */
static void expect_parse(struct kunit *test, struct file *file, enum mode m, int want,
			 u32 id_len)
{
	struct result rust, c;
	unsigned char expected[BUILD_ID_SIZE_MAX] = {};

	run(&rust_api, file, m, &rust);
	run(&c_api, file, m, &c);
	KUNIT_EXPECT_EQ_MSG(test, rust.ret, c.ret, "%s: Rust and C differ", mode_name[m]);
	KUNIT_EXPECT_EQ_MSG(test, rust.ret, want, "%s", mode_name[m]);
	KUNIT_EXPECT_EQ_MSG(test, rust.size, c.size, "%s", mode_name[m]);
	KUNIT_EXPECT_MEMEQ_MSG(test, rust.id, c.id, BUILD_ID_SIZE_MAX, "%s", mode_name[m]);
	if (want == 0) {
		fill_id(expected, id_len);
		KUNIT_EXPECT_EQ(test, rust.size, id_len);
		KUNIT_EXPECT_MEMEQ(test, rust.id, expected, BUILD_ID_SIZE_MAX);
	}
}

static void expect_all_modes(struct kunit *test, struct file *file, int want_nofault,
			     int want_sleepable, u32 id_len)
{
	expect_parse(test, file, NOFAULT, want_nofault, id_len);
	expect_parse(test, file, SLEEPABLE_VMA, want_sleepable, id_len);
	expect_parse(test, file, SLEEPABLE_FILE, want_sleepable, id_len);
}

/* --- memory buffers ----------------------------------------------------- */

static void buildid_buf_valid_and_truncated(struct kunit *test)
{
	static const u32 lens[] = { 1, 8, 16, 20 };
	u8 buf[64];
	unsigned int i, cut;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		u32 note_sz = sizeof(Elf32_Nhdr) + 4 + ALIGN(lens[i], 4);
		u8 id[BUILD_ID_SIZE_MAX];

		memset(buf, 0, sizeof(buf));
		fill_id(id, lens[i]);
		buildid_kunit_note(buf, id, lens[i]);

		for (cut = 0; cut <= note_sz; cut++) {
			unsigned char rid[BUILD_ID_SIZE_MAX], cid[BUILD_ID_SIZE_MAX];
			unsigned char expected[BUILD_ID_SIZE_MAX] = {};
			int r, c;

			memset(rid, 0x5a, sizeof(rid));
			memset(cid, 0x5a, sizeof(cid));
			r = build_id_parse_buf(buf, rid, cut);
			c = build_id_ref_parse_buf(buf, cid, cut);
			KUNIT_EXPECT_EQ_MSG(test, r, c, "len %u cut %u", lens[i], cut);
			KUNIT_EXPECT_MEMEQ(test, rid, cid, BUILD_ID_SIZE_MAX);
			KUNIT_EXPECT_EQ_MSG(test, r, cut == note_sz ? 0 : -EINVAL,
					    "len %u cut %u", lens[i], cut);
			if (cut == note_sz) {
				fill_id(expected, lens[i]);
				KUNIT_EXPECT_MEMEQ(test, rid, expected, BUILD_ID_SIZE_MAX);
			}
		}
	}
}

static void buildid_buf_rejects_bad_notes(struct kunit *test)
{
	static const struct { u32 namesz, descsz, type; const char *name; } bad[] = {
		{ 4, 0, NT_GNU_BUILD_ID, "GNU" },	/* empty ID */
		{ 4, 21, NT_GNU_BUILD_ID, "GNU" },	/* longer than BUILD_ID_SIZE_MAX */
		{ 4, 20, 1, "GNU" },			/* wrong type */
		{ 4, 20, NT_GNU_BUILD_ID, "GNX" },	/* wrong name */
		{ 3, 20, NT_GNU_BUILD_ID, "GNU" },	/* name without NUL */
	};
	u8 buf[64];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		Elf32_Nhdr *nhdr = (Elf32_Nhdr *)buf;
		unsigned char rid[BUILD_ID_SIZE_MAX], cid[BUILD_ID_SIZE_MAX];

		memset(buf, 0, sizeof(buf));
		nhdr->n_namesz = bad[i].namesz;
		nhdr->n_descsz = bad[i].descsz;
		nhdr->n_type = bad[i].type;
		memcpy(nhdr + 1, bad[i].name, 4);
		KUNIT_EXPECT_EQ_MSG(test, build_id_parse_buf(buf, rid, sizeof(buf)), -EINVAL,
				    "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, build_id_ref_parse_buf(buf, cid, sizeof(buf)), -EINVAL,
				    "case %u", i);
	}
}

/* --- files in the page cache ------------------------------------------- */

static void buildid_tmpfs_elf64_and_elf32(struct kunit *test)
{
	struct image_layout l64 = { .phoff = 64, .note_off = 256, .id_len = 20, .size = 512 };
	struct image_layout l32 = { .elf32 = true, .phoff = 52, .note_off = 200, .id_len = 16,
				    .size = 512 };
	struct file *f64 = buildid_kunit_tmpfs_file(test, make_image(test, &l64), l64.size);
	struct file *f32 = buildid_kunit_tmpfs_file(test, make_image(test, &l32), l32.size);

	expect_all_modes(test, f64, 0, 0, 20);
	expect_all_modes(test, f32, 0, 0, 16);
}

static void buildid_tmpfs_beyond_first_page(struct kunit *test)
{
	struct image_layout l = { .phoff = 3 * PAGE_SIZE + 8, .note_off = 5 * PAGE_SIZE + 100,
				  .id_len = 20, .size = 6 * PAGE_SIZE };
	struct file *f = buildid_kunit_tmpfs_file(test, make_image(test, &l), l.size);

	expect_all_modes(test, f, 0, 0, 20);
}

/* Parses per path when counting folio references: a leak of one each outgrows a drain. */
#define LEAK_ROUNDS	4

/* Note header and descriptor straddle a page (and so an order-0 folio) boundary. */
static void buildid_tmpfs_note_crosses_folio(struct kunit *test)
{
	static const int shifts[] = { -4, -8, -12, -16, -20, -24 };
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(shifts); i++) {
		struct image_layout l = { .phoff = PAGE_SIZE - 60, .note_off = 2 * PAGE_SIZE + shifts[i],
					  .id_len = 20, .size = 3 * PAGE_SIZE };
		struct file *f = buildid_kunit_tmpfs_file(test, make_image(test, &l), l.size);
		struct folio *folio;
		struct result r;
		int refs;

		/*
		 * No folio reference is left behind.  Only the page cache paths
		 * are counted: __kernel_read() marks folios accessed, and the
		 * per-CPU LRU batch that takes holds a reference of its own
		 * until it is drained.  The write that made the file left its
		 * folios in such a batch, which may be drained meanwhile (one
		 * reference less, and lru_add_drain_all() is not exported to
		 * modules): each path parses several times, so that a leak
		 * shows as more references than before.
		 */
		folio = filemap_get_folio(f->f_mapping, 1);
		KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
		refs = folio_ref_count(folio);
		for (j = 0; j < LEAK_ROUNDS; j++)
			expect_parse(test, f, NOFAULT, 0, 20);
		KUNIT_EXPECT_LE(test, folio_ref_count(folio), refs);
		/* The Rust sleepable reader serves cached data from the page cache. */
		for (j = 0; j < LEAK_ROUNDS; j++) {
			run(&rust_api, f, SLEEPABLE_FILE, &r);
			KUNIT_EXPECT_EQ(test, r.ret, 0);
		}
		KUNIT_EXPECT_LE(test, folio_ref_count(folio), refs);
		folio_put(folio);
		expect_all_modes(test, f, 0, 0, 20);
	}
}

/* Program headers or notes in a hole: not in the page cache, zeroes when read. */
static void buildid_tmpfs_holes(struct kunit *test)
{
	struct image_layout l = { .phoff = 64, .note_off = 8 * PAGE_SIZE, .id_len = 20,
				  .size = 9 * PAGE_SIZE };
	u8 *img = make_image(test, &l);
	struct file *f = buildid_kunit_tmpfs_file(test, NULL, l.size);
	loff_t pos = 0;

	/* Only the first page and the page of the note are written. */
	KUNIT_ASSERT_EQ(test, kernel_write(f, img, PAGE_SIZE, &pos), (ssize_t)PAGE_SIZE);
	pos = l.note_off;
	KUNIT_ASSERT_EQ(test, kernel_write(f, img + l.note_off, PAGE_SIZE, &pos),
			(ssize_t)PAGE_SIZE);
	expect_all_modes(test, f, 0, 0, 20);

	/* Now with the note in a hole: no page to find, zeroes to read. */
	l.note_off = 4 * PAGE_SIZE;
	img = make_image(test, &l);
	f = buildid_kunit_tmpfs_file(test, NULL, l.size);
	pos = 0;
	KUNIT_ASSERT_EQ(test, kernel_write(f, img, PAGE_SIZE, &pos), (ssize_t)PAGE_SIZE);
	/* nofault: the note fetch fails with -EFAULT, swallowed into "no build ID". */
	expect_all_modes(test, f, -EINVAL, -EINVAL, 20);

	/* Program headers in a hole: nofault returns the -EFAULT of the phdr fetch. */
	l.note_off = 64 + 2 * sizeof(Elf64_Phdr);
	l.phoff = 2 * PAGE_SIZE;
	img = make_image(test, &l);
	f = buildid_kunit_tmpfs_file(test, NULL, l.size);
	pos = 0;
	KUNIT_ASSERT_EQ(test, kernel_write(f, img, PAGE_SIZE, &pos), (ssize_t)PAGE_SIZE);
	expect_all_modes(test, f, -EFAULT, -EINVAL, 20);
}

static void buildid_tmpfs_not_elf(struct kunit *test)
{
	struct image_layout l = { .phoff = 64, .note_off = 256, .id_len = 20, .size = 512 };
	u8 *img = make_image(test, &l);
	struct file *f;

	img[0] = 0x7e;
	f = buildid_kunit_tmpfs_file(test, img, l.size);
	expect_all_modes(test, f, -EINVAL, -EINVAL, 20);

	img[0] = 0x7f;
	((Elf64_Ehdr *)img)->e_type = ET_REL;
	f = buildid_kunit_tmpfs_file(test, img, l.size);
	expect_all_modes(test, f, -EINVAL, -EINVAL, 20);

	/* Shorter than an ELF header: the sleepable read comes back short. */
	((Elf64_Ehdr *)img)->e_type = ET_DYN;
	f = buildid_kunit_tmpfs_file(test, img, 40);
	expect_all_modes(test, f, -EINVAL, -EIO, 20);

	f = buildid_kunit_tmpfs_file(test, NULL, 0);
	expect_all_modes(test, f, -EFAULT, -EIO, 20);
}

/* The file shrinks after it was written: the note is cut off. */
static void buildid_tmpfs_truncated(struct kunit *test)
{
	struct image_layout l = { .phoff = 64, .note_off = PAGE_SIZE + 200, .id_len = 20,
				  .size = 2 * PAGE_SIZE };
	struct file *f = buildid_kunit_tmpfs_file(test, make_image(test, &l), l.size);

	expect_all_modes(test, f, 0, 0, 20);
	KUNIT_ASSERT_EQ(test, vfs_truncate(&f->f_path, PAGE_SIZE + 210), 0);
	/* nofault sees the zeroed tail of the cached page; sleepable a short read. */
	expect_all_modes(test, f, -EINVAL, -EINVAL, 20);
	/*
	 * Cut inside the program headers: nofault reads the zeroes the page
	 * cache has past the new end (no PT_NOTE), sleepable gets a short read.
	 */
	KUNIT_ASSERT_EQ(test, vfs_truncate(&f->f_path, 100), 0);
	expect_all_modes(test, f, -EINVAL, -EIO, 20);
}

/*
 * Offsets that become negative loff_t values reach the readers: each mode
 * must fail them with C's errno, without looking anything up.
 */
static void buildid_tmpfs_negative_offsets(struct kunit *test)
{
	struct image_layout l = { .phoff = 64, .note_off = 256, .id_len = 20, .size = 512 };
	u8 *img = make_image(test, &l);
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + l.phoff);
	struct file *f;

	/*
	 * A PT_NOTE at -100 whose end is at 100: the note header read fails,
	 * which counts as "no build ID in this segment".
	 */
	ph[1].p_offset = -100ULL;
	ph[1].p_filesz = 200;
	f = buildid_kunit_tmpfs_file(test, img, l.size);
	expect_all_modes(test, f, -EINVAL, -EINVAL, 20);

	/*
	 * Program headers at 2^63: the read of the first one fails. Nofault
	 * looks nothing up; __kernel_read() has no rw_verify_area() check, and
	 * shmem reads nothing at a negative offset.
	 */
	((Elf64_Ehdr *)img)->e_phoff = 1ULL << 63;
	f = buildid_kunit_tmpfs_file(test, img, l.size);
	expect_all_modes(test, f, -EFAULT, -EIO, 20);
}

/*
 * A parse reads at most MAX_NOTE_CNT (256) note headers: a build ID behind
 * 255 empty notes (twelve zero bytes each) is found, one behind 256 is not,
 * in every mode and in a buffer.
 */
static void buildid_tmpfs_note_budget(struct kunit *test)
{
	static const unsigned int empty[] = { 255, 256 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(empty); i++) {
		u32 notes_sz = 12 * empty[i] + sizeof(Elf32_Nhdr) + 4 + 20;
		struct image_layout l = { .phoff = 64, .note_off = 256 + 12 * empty[i],
					  .id_len = 20, .size = 2 * PAGE_SIZE };
		u8 *img = make_image(test, &l);
		Elf64_Phdr *ph = (Elf64_Phdr *)(img + l.phoff);
		int want = i ? -EINVAL : 0;
		unsigned char rid[BUILD_ID_SIZE_MAX], cid[BUILD_ID_SIZE_MAX];
		struct file *f;

		ph[1].p_offset = 256;
		ph[1].p_filesz = notes_sz;
		f = buildid_kunit_tmpfs_file(test, img, l.size);
		expect_all_modes(test, f, want, want, 20);

		KUNIT_EXPECT_EQ(test, build_id_parse_buf(img + 256, rid, notes_sz), want);
		KUNIT_EXPECT_EQ(test, build_id_ref_parse_buf(img + 256, cid, notes_sz), want);
		if (!want)
			KUNIT_EXPECT_MEMEQ(test, rid, cid, BUILD_ID_SIZE_MAX);
	}
}

/* --- files on a block file system: uncached data ----------------------- */

static void buildid_blockfs_cached_and_evicted(struct kunit *test)
{
	struct image_layout l = { .phoff = 2 * PAGE_SIZE + 16, .note_off = 3 * PAGE_SIZE - 20,
				  .id_len = 20, .size = 4 * PAGE_SIZE };
	struct file *f = dir_file(test, dir, "buildid-kunit-evict", make_image(test, &l), l.size);

	expect_all_modes(test, f, 0, 0, 20);
	evict(test, f);
	/* Nothing cached: nofault fails on the ELF header, sleepable reads it in. */
	expect_parse(test, f, NOFAULT, -EFAULT, 20);
	expect_parse(test, f, SLEEPABLE_FILE, 0, 20);
	/* The sleepable parse brought the pages in, so now nofault works too. */
	expect_parse(test, f, NOFAULT, 0, 20);
}

/*
 * A folio that is in the page cache but not uptodate (as while its read is in
 * flight) must not be read by the nofault parser; the sleepable one reads
 * the data in.
 */
static void buildid_blockfs_not_uptodate(struct kunit *test)
{
	struct image_layout l = { .phoff = 64, .note_off = 512, .id_len = 20,
				  .size = 2 * PAGE_SIZE };
	struct file *f = dir_file(test, dir, "buildid-kunit-stale", make_image(test, &l), l.size);
	struct address_space *mapping = f->f_mapping;
	struct folio *folio;

	evict(test, f);
	folio = __filemap_get_folio(mapping, 0, FGP_CREAT | FGP_LOCK, mapping_gfp_mask(mapping));
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	KUNIT_ASSERT_FALSE(test, folio_test_uptodate(folio));
	/* Unlocked, so the sleepable read can bring it uptodate. */
	folio_unlock(folio);
	folio_put(folio);
	expect_parse(test, f, NOFAULT, -EFAULT, 20);
	expect_parse(test, f, SLEEPABLE_VMA, 0, 20);
	expect_parse(test, f, NOFAULT, 0, 20);
}

/* --- large folios ------------------------------------------------------ */

static void buildid_large_folio(struct kunit *test)
{
	struct image_layout l = { .phoff = 64, .note_off = 3 * PAGE_SIZE - 12, .id_len = 20,
				  .size = 4 * PAGE_SIZE };
	struct file *f;
	struct folio *folio;

	if (!IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE))
		kunit_skip(test, "no CONFIG_TRANSPARENT_HUGEPAGE");
	f = dir_file(test, huge_dir, "buildid-kunit-huge", make_image(test, &l), l.size);
	folio = filemap_get_folio(f->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	if (!folio_test_large(folio)) {
		folio_put(folio);
		kunit_skip(test, "%s did not give a large folio (huge=always?)", huge_dir);
	}
	folio_put(folio);
	expect_all_modes(test, f, 0, 0, 20);
}

/*
 * These suites compare each parse with the C reference, which has no
 * cache; the cache has its own suite (lib/buildid_cache_kunit.c).
 */
#if IS_ENABLED(CONFIG_BUILDID_CACHE)
static bool cache_was_on;
#endif

static int buildid_without_cache_init(struct kunit_suite *suite)
{
#if IS_ENABLED(CONFIG_BUILDID_CACHE)
	cache_was_on = buildid_cache_is_enabled();
	return buildid_cache_set_enabled(false);
#else
	return 0;
#endif
}

static void buildid_without_cache_exit(struct kunit_suite *suite)
{
#if IS_ENABLED(CONFIG_BUILDID_CACHE)
	if (cache_was_on)
		buildid_cache_set_enabled(true);
#endif
}

/* --- memfd_secret ------------------------------------------------------ */

static struct file *secret_file;

/* Runs in the task that loads the module, which holds the secret fd. */
static int buildid_secretmem_init(struct kunit_suite *suite)
{
	if (secret_fd >= 0)
		secret_file = fget(secret_fd);
	return buildid_without_cache_init(suite);
}

static void buildid_secretmem_exit(struct kunit_suite *suite)
{
	buildid_without_cache_exit(suite);
	if (secret_file)
		fput(secret_file);
	secret_file = NULL;
}

/* The file holds a valid ELF image with a build ID that must never be read. */
static void buildid_secretmem_rejected(struct kunit *test)
{
	if (!secret_file)
		kunit_skip(test, "no memfd_secret() file (load with secret_fd=)");
	expect_all_modes(test, secret_file, -EFAULT, -EFAULT, 20);
}

static struct kunit_case buildid_buf_cases[] = {
	KUNIT_CASE(buildid_buf_valid_and_truncated),
	KUNIT_CASE(buildid_buf_rejects_bad_notes),
	{}
};

static struct kunit_suite buildid_buf_suite = {
	.name = "buildid_buf",
	.test_cases = buildid_buf_cases,
};

static struct kunit_case buildid_file_cases[] = {
	KUNIT_CASE(buildid_tmpfs_elf64_and_elf32),
	KUNIT_CASE(buildid_tmpfs_beyond_first_page),
	KUNIT_CASE(buildid_tmpfs_note_crosses_folio),
	KUNIT_CASE(buildid_tmpfs_holes),
	KUNIT_CASE(buildid_tmpfs_not_elf),
	KUNIT_CASE(buildid_tmpfs_truncated),
	KUNIT_CASE(buildid_tmpfs_negative_offsets),
	KUNIT_CASE(buildid_tmpfs_note_budget),
	KUNIT_CASE(buildid_blockfs_cached_and_evicted),
	KUNIT_CASE(buildid_blockfs_not_uptodate),
	KUNIT_CASE(buildid_large_folio),
	{}
};

static struct kunit_suite buildid_file_suite = {
	.name = "buildid_file",
	.suite_init = buildid_without_cache_init,
	.suite_exit = buildid_without_cache_exit,
	.test_cases = buildid_file_cases,
};

static struct kunit_case buildid_secretmem_cases[] = {
	KUNIT_CASE(buildid_secretmem_rejected),
	{}
};

static struct kunit_suite buildid_secretmem_suite = {
	.name = "buildid_secretmem",
	.suite_init = buildid_secretmem_init,
	.suite_exit = buildid_secretmem_exit,
	.test_cases = buildid_secretmem_cases,
};

kunit_test_suites(&buildid_buf_suite, &buildid_file_suite, &buildid_secretmem_suite);

MODULE_DESCRIPTION("KUnit tests of the Rust build ID parser against the C reference");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(BUILDID_C_REFERENCE);
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
