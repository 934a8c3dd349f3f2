// SPDX-License-Identifier: GPL-2.0
/*
 * PROCMAP_QUERY build IDs: the ioctl on /proc/<pid>/maps parses the build
 * ID of the file behind a VMA with the sleepable entry point of the build
 * ID code.  Every expected value is computed here, in user space.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/buildid_dev.h>

#include "../kselftest_harness.h"
#include "buildid_util.h"

#define PAGE 4096UL

FIXTURE(procmap) {
	int maps_fd;
	char dir[PATH_MAX];
	char huge_dir[PATH_MAX + 8];
	struct cache_switch cache;
	long max_entries_was;	/* 0: the test did not change the limit */
};

FIXTURE_SETUP(procmap)
{
	snprintf(self->dir, sizeof(self->dir), "%s/procmap.XXXXXX", scratch_dir());
	ASSERT_NE(NULL, mkdtemp(self->dir)) TH_LOG("mkdtemp in %s: %m", scratch_dir());
	self->huge_dir[0] = '\0';
	self->max_entries_was = 0;
	self->maps_fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->maps_fd);
}

FIXTURE_TEARDOWN(procmap)
{
	if (self->max_entries_was > 0)
		buildid_cache_set_max_entries(self->max_entries_was);
	cache_switch_restore(&self->cache);
	if (self->huge_dir[0])
		umount2(self->huge_dir, MNT_DETACH);
	close(self->maps_fd);
	if (remove_tree(self->dir))
		TH_LOG("could not remove %s", self->dir);
}

static const char *path_in(const char *dir, const char *name)
{
	static char path[4][PATH_MAX + 64];
	static unsigned int next;
	char *p = path[next++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	return p;
}

/* Query @addr and check the answer against @want (NULL: no build ID). */
static void expect_build_id(struct __test_metadata *_metadata, int maps_fd,
			    const void *addr, const struct build_id *want)
{
	unsigned char got[BUILD_ID_MAX] = {};
	char want_hex[48] = "(none)", got_hex[48];
	struct procmap_query q;
	struct build_id g;

	ASSERT_EQ(0, procmap_query(maps_fd, (uintptr_t)addr, &q, got, sizeof(got)));
	g.size = q.build_id_size;
	memcpy(g.data, got, sizeof(got));
	build_id_hex(&g, got_hex, sizeof(got_hex));
	if (want)
		build_id_hex(want, want_hex, sizeof(want_hex));
	if (!want) {
		EXPECT_EQ(0, q.build_id_size) TH_LOG("got %s, want no build ID", got_hex);
		return;
	}
	EXPECT_TRUE(build_id_equal(want, got, q.build_id_size))
		TH_LOG("got %s (%u bytes), want %s (%u bytes)", got_hex, q.build_id_size,
		       want_hex, want->size);
}

static void *map_file(const char *path, size_t *len)
{
	struct stat st;
	void *map;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return MAP_FAILED;
	if (fstat(fd, &st)) {
		close(fd);
		return MAP_FAILED;
	}
	*len = st.st_size;
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	return map;
}

TEST_F(procmap, test_binary)
{
	char exe[PATH_MAX];
	struct build_id want;
	struct procmap_query q;
	unsigned char id[BUILD_ID_MAX];
	struct stat st;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, n);
	exe[n] = '\0';
	ASSERT_EQ(0, elf_build_id_from_sections(exe, &want));
	ASSERT_EQ(20, want.size) TH_LOG("the test binary is linked with --build-id=sha1");
	expect_build_id(_metadata, self->maps_fd, (void *)expect_build_id, &want);

	/* The rest of the answer describes the same file. */
	ASSERT_EQ(0, procmap_query(self->maps_fd, (uintptr_t)expect_build_id, &q, id, sizeof(id)));
	ASSERT_EQ(0, stat(exe, &st));
	EXPECT_EQ(st.st_ino, q.inode);
	EXPECT_TRUE(q.vma_flags & PROCMAP_QUERY_VMA_EXECUTABLE);
}

static void check_library(struct __test_metadata *_metadata, int maps_fd,
			  const char *name, unsigned int size)
{
	const char *path = test_file(name);
	struct build_id want;
	void *handle, *sym;

	ASSERT_EQ(0, elf_build_id_from_sections(path, &want)) TH_LOG("%s", path);
	ASSERT_EQ(size, want.size);
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NE(NULL, handle) TH_LOG("dlopen %s: %s", path, dlerror());
	sym = dlsym(handle, "buildid_lib_value");
	ASSERT_NE(NULL, sym);
	expect_build_id(_metadata, maps_fd, sym, &want);
	dlclose(handle);
}

TEST_F(procmap, shared_library_sha1)
{
	check_library(_metadata, self->maps_fd, "libbuildid_sha1.so", 20);
}

TEST_F(procmap, shared_library_md5)
{
	check_library(_metadata, self->maps_fd, "libbuildid_md5.so", 16);
}

TEST_F(procmap, shared_library_fast)
{
	check_library(_metadata, self->maps_fd, "libbuildid_fast.so", 8);
}

TEST_F(procmap, note_beyond_first_page)
{
	const char *src = test_file("libbuildid_far_note.so");
	const char *copy = path_in(self->dir, "far_note.so");
	struct build_id want;
	void *handle, *sym, *map;
	size_t len;
	long note;

	note = elf_build_id_note_offset(src);
	ASSERT_LE((long)(2 * PAGE), note) TH_LOG("the linker script did not move the note");
	ASSERT_EQ(0, elf_build_id_from_sections(src, &want));
	handle = dlopen(src, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NE(NULL, handle) TH_LOG("dlopen %s: %s", src, dlerror());
	sym = dlsym(handle, "buildid_lib_value");
	ASSERT_NE(NULL, sym);
	expect_build_id(_metadata, self->maps_fd, sym, &want);
	dlclose(handle);

	/*
	 * The ioctl may sleep: with the note page evicted it reads it back.
	 * A copy mapped once, since ld.so maps the page holding the note
	 * twice (end of the R segment, start of R+X) and a page mapped
	 * twice cannot be paged out by one process.
	 */
	ASSERT_EQ(0, cache_switch_set(&self->cache, false));
	ASSERT_EQ(0, copy_file(src, copy));
	map = map_file(copy, &len);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_TRUE(evict_file(copy, note)) TH_LOG("could not evict the note page");
	expect_build_id(_metadata, self->maps_fd, map, &want);
	EXPECT_EQ(1, file_page_cached(copy, note));
	munmap(map, len);
}

/* Crafted layouts: program headers and notes at and across page edges. */
TEST_F(procmap, phdrs_beyond_first_page)
{
	static const struct { uint64_t phoff, note_off; } layouts[] = {
		{ 0x1000, 0x2000 },		/* both on later pages */
		{ 0x3008, 0x0ff8 },		/* note crosses a page edge */
		{ 0x1fe0, 0x4000 },		/* phdrs cross a page edge */
		{ 0x8000, 0x9ffc },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(layouts); i++) {
		const char *path = path_in(self->dir, "phdrs_far");
		struct elf_craft c = {
			.phoff = layouts[i].phoff, .note_off = layouts[i].note_off,
		};
		size_t len;
		void *map;

		build_id_pattern(&c.id, 20, i);
		ASSERT_EQ(0, elf_craft_file(path, &c));
		map = map_file(path, &len);
		ASSERT_NE(MAP_FAILED, map);
		expect_build_id(_metadata, self->maps_fd, map, &c.id);
		ASSERT_TRUE(evict_file(path, c.phoff));
		expect_build_id(_metadata, self->maps_fd, (char *)map + len - 1, &c.id);
		munmap(map, len);
	}
}

TEST_F(procmap, elf32)
{
	const char *path = path_in(self->dir, "elf32");
	struct elf_craft c = { .elf32 = true, .phoff = 0x34, .note_off = 0x200 };
	size_t len;
	void *map;

	build_id_pattern(&c.id, 20, 0x32);
	ASSERT_EQ(0, elf_craft_file(path, &c));
	map = map_file(path, &len);
	ASSERT_NE(MAP_FAILED, map);
	expect_build_id(_metadata, self->maps_fd, map, &c.id);
	munmap(map, len);
}

TEST_F(procmap, no_build_id)
{
	const char *path = test_file("libbuildid_none.so");
	struct build_id none;
	void *handle, *sym;

	ASSERT_EQ(-ENOENT, elf_build_id_from_sections(path, &none));
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NE(NULL, handle) TH_LOG("dlopen %s: %s", path, dlerror());
	sym = dlsym(handle, "buildid_lib_value");
	ASSERT_NE(NULL, sym);
	expect_build_id(_metadata, self->maps_fd, sym, NULL);
	dlclose(handle);
}

/* Anonymous memory has no file, so no build ID and no error either. */
TEST_F(procmap, anonymous_mapping)
{
	void *map = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, map);
	memset(map, 1, PAGE);
	expect_build_id(_metadata, self->maps_fd, map, NULL);
	munmap(map, PAGE);
}

static void put32(unsigned char *img, size_t off, uint32_t v)
{
	memcpy(img + off, &v, sizeof(v));
}

static void put64(unsigned char *img, size_t off, uint64_t v)
{
	memcpy(img + off, &v, sizeof(v));
}

/* Offsets in the crafted ELF64 image: e_phoff 0x40, note at 0x100. */
#define PH_NOTE 0x78		/* the second program header */
enum malformation {
	BAD_MAGIC, RELOCATABLE, PHOFF_PAST_EOF, PHNUM_OVERFLOW, NOTE_PAST_EOF,
	DESC_TOO_BIG, NAME_NOT_GNU, WRONG_TYPE, NAMESZ_HUGE, TRUNCATED_NOTE,
	TRUNCATED_HEADER, EMPTY_FILE, NR_MALFORMATIONS,
};

static const char * const malformation_names[] = {
	"bad magic", "ET_REL", "e_phoff past EOF", "e_phoff + e_phnum overflows",
	"PT_NOTE past EOF", "descsz 21", "note name GNX", "note type 4",
	"namesz 0xfffffff0", "file ends inside the note", "file ends inside the ELF header",
	"empty file",
};

static size_t malform(unsigned char *img, size_t len, enum malformation m)
{
	switch (m) {
	case BAD_MAGIC:
		img[1] = 'F';
		break;
	case RELOCATABLE:
		img[16] = ET_REL;
		break;
	case PHOFF_PAST_EOF:
		put64(img, 32, 1 << 20);
		break;
	case PHNUM_OVERFLOW:
		put64(img, 32, ~0ULL - 8);
		break;
	case NOTE_PAST_EOF:
		put64(img, PH_NOTE + 8, 1 << 20);
		break;
	case DESC_TOO_BIG:
		put32(img, 0x104, 21);
		break;
	case NAME_NOT_GNU:
		img[0x10e] = 'X';
		break;
	case WRONG_TYPE:
		put32(img, 0x108, 4);
		break;
	case NAMESZ_HUGE:
		put32(img, 0x100, 0xfffffff0);
		break;
	case TRUNCATED_NOTE:
		return 0x100 + 20;
	case TRUNCATED_HEADER:
		return 40;
	case EMPTY_FILE:
		return 0;
	default:
		break;
	}
	return len;
}

static int kmsg_open_at_end(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

TEST_F(procmap, malformed)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x100, .size = PAGE };
	unsigned int m;
	char rec[1024];
	int kmsg;

	ASSERT_EQ(sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr), PH_NOTE);
	build_id_pattern(&c.id, 20, 0x5a);
	kmsg = kmsg_open_at_end();
	ASSERT_LE(0, kmsg);

	for (m = 0; m < NR_MALFORMATIONS; m++) {
		const char *path = path_in(self->dir, "malformed");
		unsigned char *img;
		size_t len;
		void *map;
		int fd;

		img = elf_craft_image(&c, &len);
		ASSERT_NE(NULL, img);
		len = malform(img, len, m);
		ASSERT_EQ(0, write_file(path, img, len));
		free(img);
		/* A mapping may extend past EOF; only the file is looked at. */
		fd = open(path, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, fd);
		map = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		ASSERT_NE(MAP_FAILED, map);
		TH_LOG("case: %s", malformation_names[m]);
		expect_build_id(_metadata, self->maps_fd, map, NULL);
		munmap(map, PAGE);
	}

	/* Bad files are the caller's problem, not the kernel log's. */
	while (read(kmsg, rec, sizeof(rec)) > 0) {
		rec[sizeof(rec) - 1] = '\0';
		EXPECT_TRUE(false) TH_LOG("kernel log: %s", rec);
	}
	close(kmsg);
}

TEST_F(procmap, buffer_too_small)
{
	const char *path = test_file("libbuildid_sha1.so");
	unsigned char id[BUILD_ID_MAX + 4];
	struct procmap_query q;
	void *handle, *sym;

	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NE(NULL, handle) TH_LOG("dlopen %s: %s", path, dlerror());
	sym = dlsym(handle, "buildid_lib_value");
	ASSERT_NE(NULL, sym);

	/* As in 6.12: a build ID that does not fit is -ENAMETOOLONG. */
	EXPECT_EQ(-ENAMETOOLONG, procmap_query(self->maps_fd, (uintptr_t)sym, &q, id, 19));
	EXPECT_EQ(-ENAMETOOLONG, procmap_query(self->maps_fd, (uintptr_t)sym, &q, id, 1));
	EXPECT_EQ(0, procmap_query(self->maps_fd, (uintptr_t)sym, &q, id, 20));
	EXPECT_EQ(20, q.build_id_size);
	EXPECT_EQ(0, procmap_query(self->maps_fd, (uintptr_t)sym, &q, id, sizeof(id)));
	EXPECT_EQ(20, q.build_id_size);
	/* A buffer without a size, or a size without a buffer, is -EINVAL. */
	EXPECT_EQ(-EINVAL, procmap_query(self->maps_fd, (uintptr_t)sym, &q, NULL, 20));
	EXPECT_EQ(-EINVAL, procmap_query(self->maps_fd, (uintptr_t)sym, &q, id, 0));
	dlclose(handle);
}

TEST_F(procmap, wrong_struct_size)
{
	unsigned char big[sizeof(struct procmap_query) + 16] = {};
	struct procmap_query *q = (void *)big;

	q->query_addr = (uintptr_t)expect_build_id;
	/* Too short to hold query_addr. */
	q->size = offsetof(struct procmap_query, query_addr);
	EXPECT_EQ(-1, ioctl(self->maps_fd, PROCMAP_QUERY, q));
	EXPECT_EQ(EINVAL, errno);
	/* Longer than the kernel's struct with non-zero tail: -E2BIG. */
	q->size = sizeof(big);
	big[sizeof(big) - 1] = 1;
	EXPECT_EQ(-1, ioctl(self->maps_fd, PROCMAP_QUERY, q));
	EXPECT_EQ(E2BIG, errno);
	/* Longer with a zero tail is fine. */
	big[sizeof(big) - 1] = 0;
	EXPECT_EQ(0, ioctl(self->maps_fd, PROCMAP_QUERY, q));
}

TEST_F(procmap, deleted_file)
{
	const char *path = path_in(self->dir, "deleted.so");
	struct build_id want;
	void *handle, *sym;

	ASSERT_EQ(0, copy_file(test_file("libbuildid_md5.so"), path));
	ASSERT_EQ(0, elf_build_id_from_sections(path, &want));
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NE(NULL, handle) TH_LOG("dlopen %s: %s", path, dlerror());
	sym = dlsym(handle, "buildid_lib_value");
	ASSERT_NE(NULL, sym);
	ASSERT_EQ(0, unlink(path));
	expect_build_id(_metadata, self->maps_fd, sym, &want);
	dlclose(handle);
}

TEST_F(procmap, memfd_secret)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x100, .size = PAGE };
	unsigned char *img;
	size_t len;
	void *map;
	int fd;

	fd = syscall(SYS_memfd_secret, 0);
	ASSERT_LE(0, fd) TH_LOG("memfd_secret: %m (CONFIG_SECRETMEM is in the config)");
	ASSERT_EQ(0, ftruncate(fd, PAGE));
	map = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	/* Even a valid ELF image in secret memory is not read. */
	build_id_pattern(&c.id, 20, 0x77);
	img = elf_craft_image(&c, &len);
	ASSERT_NE(NULL, img);
	memcpy(map, img, len);
	free(img);
	expect_build_id(_metadata, self->maps_fd, map, NULL);
	munmap(map, PAGE);
	close(fd);
}

TEST_F(procmap, tmpfs_huge)
{
	static const uint64_t note_offs[] = {
		0x1ff8,			/* crosses a 4K page inside a 2M folio */
		0x200000 - 12,		/* crosses the edge between two 2M folios */
	};
	unsigned int i;

	snprintf(self->huge_dir, sizeof(self->huge_dir), "%s/huge", self->dir);
	ASSERT_EQ(0, mkdir(self->huge_dir, 0755));
	ASSERT_EQ(0, mount("tmpfs", self->huge_dir, "tmpfs", 0, "huge=always,size=16m"))
		TH_LOG("mount tmpfs huge=always: %m");

	for (i = 0; i < ARRAY_SIZE(note_offs); i++) {
		const char *path = path_in(self->huge_dir, "huge_elf");
		struct elf_craft c = { .phoff = 0x40, .note_off = note_offs[i],
				       .size = 0x400000 };
		unsigned int orders;
		size_t len;
		void *map;
		int fd;

		build_id_pattern(&c.id, 20, 0x90 + i);
		ASSERT_EQ(0, elf_craft_file(path, &c));
		/* This file's own folios: meminfo's count moves with others'. */
		fd = open(path, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, fd);
		orders = file_folio_orders(fd, c.size);
		close(fd);
		ASSERT_EQ(1u << 9, orders)
			TH_LOG("the file is not in 2 MiB folios: orders %#x", orders);
		map = map_file(path, &len);
		ASSERT_NE(MAP_FAILED, map);
		expect_build_id(_metadata, self->maps_fd, map, &c.id);
		munmap(map, len);
		ASSERT_EQ(0, unlink(path));
	}
}

TEST_F(procmap, evicted_data)
{
	const char *path = path_in(self->dir, "evicted.so");
	struct build_id want;
	size_t len;
	void *map;

	ASSERT_EQ(0, cache_switch_set(&self->cache, false));
	ASSERT_EQ(0, copy_file(test_file("libbuildid_sha1.so"), path));
	ASSERT_EQ(0, elf_build_id_from_sections(path, &want));
	map = map_file(path, &len);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, memcmp(map, ELFMAG, SELFMAG));
	ASSERT_TRUE(evict_file(path, 0)) TH_LOG("page 0 of %s stayed in the page cache", path);
	expect_build_id(_metadata, self->maps_fd, map, &want);
	/* The answer came from the file: the header page is back. */
	EXPECT_EQ(1, file_page_cached(path, 0));
	munmap(map, len);
}

struct rewriter {
	const char *path;
	unsigned char *img[2];
	size_t len;
	int stop;
	unsigned long rounds;
	int err;
};

static void *rewrite_loop(void *arg)
{
	struct rewriter *rw = arg;
	int fd = open(rw->path, O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		rw->err = errno;
		return NULL;
	}
	while (!__atomic_load_n(&rw->stop, __ATOMIC_RELAXED)) {
		unsigned char *img = rw->img[rw->rounds++ & 1];

		/* One write of one page: readers see all of it or none. */
		if (ftruncate(fd, 0) || pwrite(fd, img, rw->len, 0) != (ssize_t)rw->len) {
			rw->err = errno;
			break;
		}
	}
	close(fd);
	return NULL;
}

TEST_F_TIMEOUT(procmap, rewritten_while_queried, 300)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x200, .size = PAGE };
	struct build_id ids[2];
	unsigned int counts[3] = {}, i;
	struct rewriter rw = { .path = path_in(self->dir, "rewritten") };
	pthread_t thread;
	void *map;
	int fd;

	for (i = 0; i < 2; i++) {
		build_id_pattern(&c.id, 20, 0x10 * (i + 1));
		ids[i] = c.id;
		rw.img[i] = elf_craft_image(&c, &rw.len);
		ASSERT_NE(NULL, rw.img[i]);
	}
	ASSERT_EQ(0, write_file(rw.path, rw.img[0], rw.len));
	fd = open(rw.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	map = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	ASSERT_NE(MAP_FAILED, map);

	ASSERT_EQ(0, pthread_create(&thread, NULL, rewrite_loop, &rw));
	/*
	 * At least 3000 queries, and on until both IDs have been seen: a
	 * reader that keeps answering the first ID it saw (a stale cache, say)
	 * must fail, not pass for lack of a rewrite.
	 */
	for (i = 0; i < 3000 || ((!counts[0] || !counts[1]) && i < 100000); i++) {
		unsigned char got[BUILD_ID_MAX];
		struct procmap_query q;

		ASSERT_EQ(0, procmap_query(self->maps_fd, (uintptr_t)map, &q, got, sizeof(got)));
		if (!q.build_id_size)
			counts[2]++;
		else if (build_id_equal(&ids[0], got, q.build_id_size))
			counts[0]++;
		else if (build_id_equal(&ids[1], got, q.build_id_size))
			counts[1]++;
		else
			EXPECT_TRUE(false) TH_LOG("query %u: a build ID that was never written", i);
	}
	__atomic_store_n(&rw.stop, 1, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	ASSERT_EQ(0, rw.err);
	TH_LOG("%lu rewrites; answers: old %u, new %u, none %u", rw.rounds,
	       counts[0], counts[1], counts[2]);
	EXPECT_LT(1, rw.rounds);
	EXPECT_LT(0, counts[0]) TH_LOG("the first build ID was never answered");
	EXPECT_LT(0, counts[1]) TH_LOG("the rewritten build ID was never answered");
	munmap(map, PAGE);
	free(rw.img[0]);
	free(rw.img[1]);
}

/* An ELF file with build ID pattern @seed, mapped executable, as ld.so maps text. */
static void *map_exec(struct __test_metadata *_metadata, const char *path, uint8_t seed,
		      struct build_id *id)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x200, .size = PAGE };
	void *map;
	int fd;

	build_id_pattern(&c.id, 20, seed);
	*id = c.id;
	if (elf_craft_file(path, &c))
		return MAP_FAILED;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return MAP_FAILED;
	map = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	return map;
}

static void rewrite_id(struct __test_metadata *_metadata, const char *path, uint8_t seed,
		       struct build_id *id)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x200, .size = PAGE };
	unsigned char *img;
	size_t len;
	int fd;

	build_id_pattern(&c.id, 20, seed);
	*id = c.id;
	img = elf_craft_image(&c, &len);
	ASSERT_NE(NULL, img);
	/* In place: same inode, same size. */
	fd = open(path, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)len, pwrite(fd, img, len, 0));
	close(fd);
	free(img);
}

/*
 * With the build ID cache on, an evicted note is answered from the cache
 * that an earlier query filled (mmap() fills nothing), without reading the
 * file; and no content change ever gets the old ID back.
 */
TEST_F(procmap, cache_survives_eviction)
{
	const char *path = path_in(self->dir, "cached.so");
	struct build_id id;
	void *map;

	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	map = map_exec(_metadata, path, 0x31, &id);
	ASSERT_NE(MAP_FAILED, map);
	expect_build_id(_metadata, self->maps_fd, map, &id);
	ASSERT_TRUE(evict_file(path, 0)) TH_LOG("page 0 of %s stayed in the page cache", path);
	expect_build_id(_metadata, self->maps_fd, map, &id);
	EXPECT_EQ(0, file_page_cached(path, 0)) TH_LOG("the file was read, the cache missed");
	munmap(map, PAGE);
}

TEST_F(procmap, cache_content_changes)
{
	const char *path = path_in(self->dir, "changing.so");
	const char *other = path_in(self->dir, "replacement.so");
	struct build_id id, old_id, new_id;
	void *map, *map2;

	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	map = map_exec(_metadata, path, 0x41, &old_id);
	ASSERT_NE(MAP_FAILED, map);
	expect_build_id(_metadata, self->maps_fd, map, &old_id);

	/* write() in place, same size. */
	rewrite_id(_metadata, path, 0x42, &id);
	expect_build_id(_metadata, self->maps_fd, map, &id);

	/* truncate(2) by path to nothing and back: zeroes, no build ID. */
	ASSERT_EQ(0, truncate(path, 0));
	ASSERT_EQ(0, truncate(path, PAGE));
	expect_build_id(_metadata, self->maps_fd, map, NULL);
	munmap(map, PAGE);

	/* Replaced by rename(): the old mapping keeps the old inode and its ID. */
	map = map_exec(_metadata, path, 0x43, &old_id);
	ASSERT_NE(MAP_FAILED, map);
	expect_build_id(_metadata, self->maps_fd, map, &old_id);
	map2 = map_exec(_metadata, other, 0x44, &new_id);
	ASSERT_NE(MAP_FAILED, map2);
	munmap(map2, PAGE);
	ASSERT_EQ(0, rename(other, path));
	expect_build_id(_metadata, self->maps_fd, map, &old_id);
	map2 = map_file(path, &(size_t){ 0 });
	ASSERT_NE(MAP_FAILED, map2);
	expect_build_id(_metadata, self->maps_fd, map2, &new_id);
	munmap(map2, PAGE);
	munmap(map, PAGE);
}

static void mount_tmpfs(struct __test_metadata *_metadata, struct _test_data_procmap *self)
{
	snprintf(self->huge_dir, sizeof(self->huge_dir), "%s/tmpfs", self->dir);
	ASSERT_EQ(0, mkdir(self->huge_dir, 0755));
	ASSERT_EQ(0, mount("tmpfs", self->huge_dir, "tmpfs", 0, "size=1m"));
}

/* A write through a shared mapping, on tmpfs, which updates no timestamp. */
TEST_F(procmap, cache_shared_mapping_write)
{
	const char *path;
	struct build_id id, want;
	unsigned char *shared;
	void *map;
	int fd;

	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	mount_tmpfs(_metadata, self);
	path = path_in(self->huge_dir, "shared.so");
	map = map_exec(_metadata, path, 0x51, &id);
	ASSERT_NE(MAP_FAILED, map);
	expect_build_id(_metadata, self->maps_fd, map, &id);

	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	shared = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	ASSERT_NE(MAP_FAILED, shared);
	/* The ID bytes follow the 12-byte note header and "GNU\0". */
	build_id_pattern(&want, 20, 0x52);
	memcpy(shared + 0x200 + 16, want.data, 20);
	expect_build_id(_metadata, self->maps_fd, map, &want);
	munmap(shared, PAGE);
	/* Write access is gone, the ID stays the new one. */
	expect_build_id(_metadata, self->maps_fd, map, &want);
	munmap(map, PAGE);
}

static long cache_stat(struct __test_metadata *_metadata, const char *name)
{
	long v = buildid_cache_stat(name);

	EXPECT_LE(0, v) TH_LOG("buildid_cache stats: %s: %s", name, strerror(-v));
	return v;
}

/*
 * Maps @nr files named @prefix%u in @dir with IDs from @seed on, checks each
 * answer (which fills the cache) and unmaps them again.
 */
static void fill_files(struct __test_metadata *_metadata, struct _test_data_procmap *self,
		       const char *dir, const char *prefix, unsigned int nr, uint8_t seed)
{
	char name[64];
	struct build_id id;
	unsigned int i;
	void *map;

	for (i = 0; i < nr; i++) {
		snprintf(name, sizeof(name), "%s%u.so", prefix, i);
		map = map_exec(_metadata, path_in(dir, name), seed + i, &id);
		ASSERT_NE(MAP_FAILED, map);
		expect_build_id(_metadata, self->maps_fd, map, &id);
		munmap(map, PAGE);
	}
}

/*
 * An entry leaves with its inode: unlink, drop_caches and unmount each
 * evict the inodes whose build IDs were cached, and each eviction drops
 * the entry.  kmemleak, read after the run, reports an entry that was
 * taken out of the table and never freed.
 */
TEST_F(procmap, cache_eviction)
{
	enum { FILES = 8 };
	static const char * const ways[] = { "unlink", "drop_caches", "umount" };
	unsigned int way, i;
	char name[64];
	long evictions;

	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	mount_tmpfs(_metadata, self);
	for (way = 0; way < ARRAY_SIZE(ways); way++) {
		const char *dir = way == 2 ? self->huge_dir : self->dir;
		char prefix[16];

		snprintf(prefix, sizeof(prefix), "evict%u-", way);
		fill_files(_metadata, self, dir, prefix, FILES, 0x60 + FILES * way);
		ASSERT_EQ(0, buildid_cache_drain());
		evictions = cache_stat(_metadata, "evictions");
		switch (way) {
		case 0:
			for (i = 0; i < FILES; i++) {
				snprintf(name, sizeof(name), "%s%u.so", prefix, i);
				ASSERT_EQ(0, unlink(path_in(dir, name)));
			}
			break;
		case 1:
			ASSERT_EQ(0, drop_all_caches());
			break;
		case 2:
			ASSERT_EQ(0, umount2(self->huge_dir, 0));
			self->huge_dir[0] = '\0';
			break;
		}
		EXPECT_LE(evictions + FILES, cache_stat(_metadata, "evictions"))
			TH_LOG("%s left entries of evicted inodes", ways[way]);
	}
}

/*
 * A freed inode's memory is soon another inode.  Files written first, then
 * read back from disk after drop_caches (so that no open for write
 * invalidates anything), are mapped, queried and unlinked in turn, each
 * with its own build ID and the same size: none may get an earlier file's
 * ID, whose entry only the inode's eviction removes.
 */
TEST_F(procmap, cache_inode_reuse)
{
	enum { FILES = 64 };
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x200, .size = PAGE };
	char name[32];
	unsigned int i;
	void *map;
	int fd;

	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	for (i = 0; i < FILES; i++) {
		snprintf(name, sizeof(name), "reuse%u.so", i);
		build_id_pattern(&c.id, 20, 0x80 + i);
		ASSERT_EQ(0, elf_craft_file(path_in(self->dir, name), &c));
	}
	ASSERT_EQ(0, drop_all_caches());
	for (i = 0; i < FILES; i++) {
		const char *path;

		snprintf(name, sizeof(name), "reuse%u.so", i);
		path = path_in(self->dir, name);
		build_id_pattern(&c.id, 20, 0x80 + i);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, fd);
		map = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		close(fd);
		ASSERT_NE(MAP_FAILED, map);
		expect_build_id(_metadata, self->maps_fd, map, &c.id);
		munmap(map, PAGE);
		ASSERT_EQ(0, unlink(path));
	}
}

/* Where the ID bytes of map_exec()'s image lie: after the 12-byte note header and "GNU\0". */
#define EXEC_ID_OFF	(0x200 + 16)

/*
 * A memfd that a JIT writes through a shared mapping and runs through an
 * executable one.  Only the first store through the shared mapping faults,
 * and only a write fault updates the file times (shmem has no
 * ->page_mkwrite); a memfd never takes write access.  So after the store
 * that made the image, every later store changes the ID with no trace in
 * the inode: each answer must be the ID the bytes hold at that moment.
 */
TEST_F(procmap, cache_memfd_shared_mapping)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x200, .size = PAGE };
	unsigned char *img, *shared;
	struct build_id want;
	unsigned int round;
	void *exec;
	size_t len;
	int fd;

	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	build_id_pattern(&c.id, 20, 0x81);
	img = elf_craft_image(&c, &len);
	ASSERT_NE(NULL, img);
	fd = memfd_create("buildid-jit", MFD_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, PAGE));
	shared = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, shared);
	memcpy(shared, img, len);
	free(img);
	exec = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, exec);
	expect_build_id(_metadata, self->maps_fd, exec, &c.id);
	for (round = 0; round < 3; round++) {
		build_id_pattern(&want, 20, 0x82 + round);
		memcpy(shared + EXEC_ID_OFF, want.data, want.size);
		expect_build_id(_metadata, self->maps_fd, exec, &want);
	}
	/* Unmapped, the shared mapping can change nothing any more. */
	munmap(shared, PAGE);
	expect_build_id(_metadata, self->maps_fd, exec, &want);
	munmap(exec, PAGE);
	close(fd);
}

/* The same with pwrite() on the memfd, and through /proc/self/map_files. */
TEST_F(procmap, cache_memfd_pwrite)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x200, .size = PAGE };
	char link[128];
	struct build_id want;
	unsigned char *img;
	void *exec;
	size_t len;
	int fd, mf;

	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	build_id_pattern(&c.id, 20, 0x91);
	img = elf_craft_image(&c, &len);
	ASSERT_NE(NULL, img);
	fd = memfd_create("buildid-pwrite", MFD_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)len, pwrite(fd, img, len, 0));
	free(img);
	exec = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, exec);
	expect_build_id(_metadata, self->maps_fd, exec, &c.id);

	build_id_pattern(&want, 20, 0x92);
	ASSERT_EQ((ssize_t)want.size, pwrite(fd, want.data, want.size, EXEC_ID_OFF));
	expect_build_id(_metadata, self->maps_fd, exec, &want);

	snprintf(link, sizeof(link), "/proc/self/map_files/%lx-%lx", (unsigned long)exec,
		 (unsigned long)exec + PAGE);
	mf = open(link, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, mf) TH_LOG("%s: %m", link);
	build_id_pattern(&want, 20, 0x93);
	ASSERT_EQ((ssize_t)want.size, pwrite(mf, want.data, want.size, EXEC_ID_OFF));
	close(mf);
	expect_build_id(_metadata, self->maps_fd, exec, &want);
	munmap(exec, PAGE);
	close(fd);
}

/*
 * A memfd sealed against writes cannot change: its ID may be cached, and
 * is (the second query is a hit).
 */
TEST_F(procmap, cache_memfd_sealed)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x200, .size = PAGE };
	unsigned char *img;
	long hits;
	void *exec;
	size_t len;
	int fd;

	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	build_id_pattern(&c.id, 20, 0x94);
	img = elf_craft_image(&c, &len);
	ASSERT_NE(NULL, img);
	fd = memfd_create("buildid-sealed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)len, pwrite(fd, img, len, 0));
	free(img);
	ASSERT_EQ(0, fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW));
	exec = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, exec);
	expect_build_id(_metadata, self->maps_fd, exec, &c.id);
	hits = cache_stat(_metadata, "hits");
	expect_build_id(_metadata, self->maps_fd, exec, &c.id);
	EXPECT_LT(hits, cache_stat(_metadata, "hits")) TH_LOG("a sealed memfd was not cached");
	munmap(exec, PAGE);
	close(fd);
}

/*
 * Maps @path PROT_EXEC through a file opened O_DIRECT, its pages evicted
 * by the caller, as a user who may only read it, and asks for the mapping's build
 * ID as a nofault caller (/dev/buildid's VMA query): the miss queues a fill
 * of that O_DIRECT file, which must not make the cache answer "no build ID"
 * for the file.  Runs in a child that opens the file and the device, then
 * gives up root (uid 65534) before it maps the file.
 */
static int map_exec_odirect(const char *path, bool unprivileged)
{
	struct buildid_vma_query q = { .size = sizeof(q) };
	int status, fd, dev;
	pid_t pid = fork();
	void *map;

	if (pid < 0)
		return -1;
	if (!pid) {
		fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
		dev = open_buildid_dev();
		if (fd < 0 || dev < 0)
			_exit(10);
		if (unprivileged && (setgid(65534) || setuid(65534)))
			_exit(11);
		map = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED)
			_exit(13);
		/* Nothing in the page cache (the caller evicted it), nothing cached: a miss. */
		q.addr = (uintptr_t)map;
		_exit(ioctl(dev, BUILDID_IOC_VMA, &q) ? 0 : 14);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * On ext4, a 64-byte read through a file opened O_DIRECT fails (-EINVAL:
 * not aligned to the block size).  A fill that read that way used to
 * cache "no build ID" for the inode, for every later user of the file.
 */
TEST_F(procmap, cache_not_poisoned_by_odirect)
{
	char type[32];
	unsigned int unprivileged;

	ASSERT_EQ(0, fs_type_of(self->dir, type, sizeof(type)));
	ASSERT_STREQ("ext4", type) TH_LOG("BUILDID_SCRATCH_DIR is not on ext4");
	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	for (unprivileged = 0; unprivileged < 2; unprivileged++) {
		const char *path = path_in(self->dir, unprivileged ? "odirect1.so" : "odirect0.so");
		struct elf_craft c = { .phoff = 0x40, .note_off = 0x200, .size = PAGE };
		void *map;

		build_id_pattern(&c.id, 20, 0xa0 + unprivileged);
		ASSERT_EQ(0, elf_craft_file(path, &c));
		ASSERT_EQ(0, chmod(path, 0644));
		ASSERT_TRUE(evict_file(path, 0));
		ASSERT_EQ(0, map_exec_odirect(path, unprivileged));
		ASSERT_EQ(0, buildid_cache_drain());
		/* A mapping through an ordinary open, the cache on. */
		map = map_file(path, &(size_t){ 0 });
		ASSERT_NE(MAP_FAILED, map);
		expect_build_id(_metadata, self->maps_fd, map, &c.id);
		/* And again once the pages are gone: only the cache can answer. */
		ASSERT_TRUE(evict_file(path, 0));
		expect_build_id(_metadata, self->maps_fd, map, &c.id);
		munmap(map, PAGE);
	}
}

/* More files than the cache may hold: it stays within its limit, answers stay right. */
TEST_F(procmap, cache_limit)
{
	enum { LIMIT = 16, FILES = 48 };
	long replaced, entries;

	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	self->max_entries_was = buildid_cache_set_max_entries(LIMIT);
	ASSERT_LT(0, self->max_entries_was);
	replaced = cache_stat(_metadata, "replacements");
	fill_files(_metadata, self, self->dir, "limit", FILES, 0x10);
	ASSERT_EQ(0, buildid_cache_drain());
	entries = cache_stat(_metadata, "entries");
	EXPECT_LT(0, entries);
	EXPECT_GE(LIMIT, entries);
	EXPECT_LE(replaced + FILES - LIMIT, cache_stat(_metadata, "replacements"));
	/* The first files were replaced: asked again, they are parsed again. */
	fill_files(_metadata, self, self->dir, "limit", FILES, 0x10);
	EXPECT_GE(LIMIT, cache_stat(_metadata, "entries"));
}

/*
 * A write to the switch past the start of its sysctl file parses nothing
 * (sysctl_writes_strict), so it must not act as a write of the switch,
 * which empties the cache: the entry made before it still answers.
 */
TEST_F(procmap, cache_sysctl_write_past_start)
{
	const char *path = path_in(self->dir, "sysctl.so");
	struct build_id id;
	void *map;
	int fd;

	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	fd = open("/proc/sys/kernel/buildid_cache/enabled", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	/* At the start of the file: a write of the switch. */
	ASSERT_EQ(2, write(fd, "1\n", 2));
	map = map_exec(_metadata, path, 0x33, &id);
	ASSERT_NE(MAP_FAILED, map);
	expect_build_id(_metadata, self->maps_fd, map, &id);
	/* At offset 2: ignored. */
	EXPECT_LE(0, write(fd, "1\n", 2));
	close(fd);
	ASSERT_TRUE(evict_file(path, 0)) TH_LOG("page 0 of %s stayed in the page cache", path);
	expect_build_id(_metadata, self->maps_fd, map, &id);
	EXPECT_EQ(0, file_page_cached(path, 0))
		TH_LOG("the file was read: the ignored write emptied the cache");
	munmap(map, PAGE);
}

/*
 * A child that shares a mapping of @path with us (set up before the fork),
 * then waits for a byte on @pipe_fds[0]; our own copy of the mapping goes,
 * so only the child's /proc/PID/maps has it.  Returns the child's pid.
 */
static pid_t child_with_mapping(void *map, size_t len, int pipe_fds[2])
{
	pid_t pid;
	char c;

	if (pipe(pipe_fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(pipe_fds[1]);
		_exit(read(pipe_fds[0], &c, 1) == 1 ? 0 : 1);
	}
	close(pipe_fds[0]);
	munmap(map, len);
	return pid;
}

static int open_maps(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/*
 * PROCMAP_QUERY on another process answers with its mapping's build ID,
 * with the build ID cache on and off; once the process is gone, -ESRCH.
 */
TEST_F(procmap, other_process)
{
	const char *path = path_in(self->dir, "other.so");
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x300 };
	int pipe_fds[2], maps_fd, on, status;
	unsigned char got[BUILD_ID_MAX];
	struct procmap_query q;
	size_t len;
	void *map;
	pid_t pid;

	build_id_pattern(&c.id, 20, 0x61);
	ASSERT_EQ(0, elf_craft_file(path, &c));
	map = map_file(path, &len);
	ASSERT_NE(MAP_FAILED, map);
	pid = child_with_mapping(map, len, pipe_fds);
	ASSERT_LT(0, pid);
	maps_fd = open_maps(pid);
	ASSERT_LE(0, maps_fd);
	EXPECT_EQ(-ENOENT, procmap_query(self->maps_fd, (uintptr_t)map, &q, got, sizeof(got)))
		TH_LOG("the mapping is still ours");
	for (on = 1; on >= 0; on--) {
		ASSERT_EQ(0, cache_switch_set(&self->cache, on));
		expect_build_id(_metadata, maps_fd, map, &c.id);
	}
	ASSERT_EQ(1, write(pipe_fds[1], "x", 1));
	close(pipe_fds[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(-ESRCH, procmap_query(maps_fd, (uintptr_t)map, &q, got, sizeof(got)));
	close(maps_fd);
}

struct exit_race {
	int maps_fd;
	uint64_t addr;
	const struct build_id *want;
	bool stop;			/* __atomic: the test thread sets it */
	unsigned int ids, gone, wrong;	/* read once the querying thread ended */
	unsigned int gone_seen;		/* __atomic: the test thread waits for it */
	int wrong_err;
};

static void *query_until_stopped(void *arg)
{
	struct exit_race *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		unsigned char got[BUILD_ID_MAX] = {};
		struct procmap_query q;
		int err = procmap_query(r->maps_fd, r->addr, &q, got, sizeof(got));

		if (!err && build_id_equal(r->want, got, q.build_id_size)) {
			r->ids++;
		} else if (err == -ESRCH) {
			r->gone++;
			__atomic_store_n(&r->gone_seen, 1, __ATOMIC_RELAXED);
		} else {
			r->wrong++;
			r->wrong_err = err;
		}
	}
	return NULL;
}

/*
 * PROCMAP_QUERY with build IDs on a process that is killed while another
 * thread queries it: every answer is the ID or -ESRCH, never another error
 * or a wrong ID, and the kernel log stays clean (the harness checks it).
 */
TEST_F_TIMEOUT(procmap, exiting_process, 300)
{
	const char *path = path_in(self->dir, "exiting.so");
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x1300 };
	unsigned int round, ids = 0, gone = 0;
	int pipe_fds[2], status;
	pthread_t thread;
	size_t len;

	build_id_pattern(&c.id, 20, 0x62);
	ASSERT_EQ(0, elf_craft_file(path, &c));
	for (round = 0; round < 40; round++) {
		struct exit_race r = { .want = &c.id };
		void *map = map_file(path, &len);
		pid_t pid;

		ASSERT_NE(MAP_FAILED, map);
		/* Odd rounds parse (cache off), even ones may hit. */
		ASSERT_EQ(0, cache_switch_set(&self->cache, round % 2 == 0));
		pid = child_with_mapping(map, len, pipe_fds);
		ASSERT_LT(0, pid);
		r.maps_fd = open_maps(pid);
		ASSERT_LE(0, r.maps_fd);
		r.addr = (uintptr_t)map;
		ASSERT_EQ(0, pthread_create(&thread, NULL, query_until_stopped, &r));
		usleep(1000 * (round % 5));
		kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		/* Until the querying thread has seen the process gone, 10 s at most. */
		for (unsigned int ms = 0;
		     ms < 10000 && !__atomic_load_n(&r.gone_seen, __ATOMIC_RELAXED); ms++)
			usleep(1000);
		__atomic_store_n(&r.stop, true, __ATOMIC_RELAXED);
		pthread_join(thread, NULL);
		close(pipe_fds[1]);
		EXPECT_EQ(0, r.wrong) TH_LOG("round %u: %u wrong answers, last %d", round,
					     r.wrong, r.wrong_err);
		EXPECT_LT(0, r.gone) TH_LOG("round %u: never -ESRCH after the exit", round);
		ids += r.ids;
		gone += r.gone;
		close(r.maps_fd);
	}
	TH_LOG("%u answers with the ID, %u with -ESRCH", ids, gone);
	EXPECT_LT(0, ids);
}

TEST_HARNESS_MAIN
