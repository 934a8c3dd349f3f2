// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/buildid, the Rust build ID sample driver (samples/rust/rust_buildid.rs,
 * CONFIG_SAMPLE_RUST_BUILDID): every ioctl against build IDs computed in
 * user space, the copy_struct_from_user() rules for its size-prefixed
 * arguments, permissions, and loading and unloading the module.
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
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include <linux/buildid_dev.h>
#include "buildid_fuse.h"
#include "buildid_util.h"

static int ioctl_err(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/* Run @fn in a child that gave up root (uid and gid 65534); its status. */
static int as_nobody(int (*fn)(int dev, void *arg), int dev, void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (setgid(65534) || setuid(65534))
			_exit(100);
		_exit(fn(dev, arg));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

FIXTURE(dev) {
	int dev;
	char dir[PATH_MAX];
	char lib[PATH_MAX + 32];
	struct build_id lib_id;
};

FIXTURE_SETUP(dev)
{
	self->dev = open_buildid_dev();
	ASSERT_LE(0, self->dev) TH_LOG("/dev/buildid: %m (CONFIG_SAMPLE_RUST_BUILDID)");
	snprintf(self->dir, sizeof(self->dir), "%s/dev.XXXXXX", scratch_dir());
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->lib, sizeof(self->lib), "%s/lib.so", self->dir);
	ASSERT_EQ(0, copy_file(test_file("libbuildid_sha1.so"), self->lib));
	ASSERT_EQ(0, elf_build_id_from_sections(self->lib, &self->lib_id));
}

FIXTURE_TEARDOWN(dev)
{
	close(self->dev);
	if (remove_tree(self->dir))
		TH_LOG("could not remove %s", self->dir);
}

TEST_F(dev, file_query)
{
	struct buildid_file_query q = { .size = sizeof(q) };
	int cache_was = buildid_cache_set(0);
	int fd = open(self->lib, O_RDONLY | O_CLOEXEC);

	/* Without the build ID cache, which would answer the evicted case. */
	ASSERT_TRUE(cache_was >= 0 || cache_was == -ENOENT);
	ASSERT_LE(0, fd);
	q.fd = fd;
	/* Cached after copy_file(): both modes find it. */
	ASSERT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_FILE, &q));
	EXPECT_TRUE(build_id_equal(&self->lib_id, q.build_id, q.build_id_size));
	q.flags = BUILDID_SLEEPABLE;
	ASSERT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_FILE, &q));
	EXPECT_TRUE(build_id_equal(&self->lib_id, q.build_id, q.build_id_size));

	/* Evicted: nofault gives up, sleepable reads the file. */
	ASSERT_TRUE(evict_file(self->lib, 0));
	q.flags = 0;
	EXPECT_EQ(-EFAULT, ioctl_err(self->dev, BUILDID_IOC_FILE, &q));
	q.flags = BUILDID_SLEEPABLE;
	ASSERT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_FILE, &q));
	EXPECT_TRUE(build_id_equal(&self->lib_id, q.build_id, q.build_id_size));
	close(fd);
	if (cache_was > 0)
		buildid_cache_set(cache_was);
}

TEST_F(dev, file_query_errors)
{
	struct buildid_file_query q = { .size = sizeof(q), .fd = -1 };
	int wr, dir;

	EXPECT_EQ(-EBADF, ioctl_err(self->dev, BUILDID_IOC_FILE, &q));
	/* Open only for writing: not the caller's to read. */
	wr = open(self->lib, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, wr);
	q.fd = wr;
	EXPECT_EQ(-EBADF, ioctl_err(self->dev, BUILDID_IOC_FILE, &q));
	close(wr);
	/* Not a regular file, and a file without a build ID. */
	dir = open(self->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, dir);
	q.fd = dir;
	EXPECT_EQ(-EINVAL, ioctl_err(self->dev, BUILDID_IOC_FILE, &q));
	close(dir);
	q.fd = open(test_file("libbuildid_none.so"), O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, q.fd);
	q.flags = BUILDID_SLEEPABLE;
	EXPECT_EQ(-EINVAL, ioctl_err(self->dev, BUILDID_IOC_FILE, &q));
	/* Unknown flags, unknown ioctls. */
	q.flags = 2;
	EXPECT_EQ(-EINVAL, ioctl_err(self->dev, BUILDID_IOC_FILE, &q));
	EXPECT_EQ(-ENOTTY, ioctl_err(self->dev, _IOWR(BUILDID_IOC_TYPE, 9, int), &q));
	EXPECT_EQ(-ENOTTY, ioctl_err(self->dev, _IOWR(0xb2, 1, int), &q));
	close(q.fd);
	/* A query that succeeds, but for the command or the reserved field. */
	q.fd = open(self->lib, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, q.fd);
	q.flags = 0;
	EXPECT_EQ(-ENOTTY, ioctl_err(self->dev, _IOWR(BUILDID_IOC_TYPE, BUILDID_IOC_NR_FILE, int),
				     &q));
	EXPECT_EQ(-ENOTTY, ioctl_err(self->dev, _IOR(BUILDID_IOC_TYPE, BUILDID_IOC_NR_FILE,
						     struct buildid_file_query), &q));
	q.reserved = 1;
	EXPECT_EQ(-EINVAL, ioctl_err(self->dev, BUILDID_IOC_FILE, &q));
	q.reserved = 0;
	EXPECT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_FILE, &q));
	close(q.fd);
}

TEST_F(dev, struct_sizes)
{
	unsigned char buf[sizeof(struct buildid_file_query) + 64];
	struct buildid_file_query *q = (void *)buf;
	int fd = open(self->lib, O_RDONLY | O_CLOEXEC);

	ASSERT_LE(0, fd);
	memset(buf, 0, sizeof(buf));
	q->fd = fd;
	q->flags = BUILDID_SLEEPABLE;

	/* Shorter than size, flags and fd. */
	q->size = 8;
	EXPECT_EQ(-EINVAL, ioctl_err(self->dev, BUILDID_IOC_FILE, q));
	/* An old caller that knows only size, flags and fd: nothing is written past it. */
	q->size = 12;
	memset(&q->build_id_size, 0xee, sizeof(buf) - 12);
	EXPECT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_FILE, q));
	EXPECT_EQ(0xeeeeeeee, q->build_id_size);
	/* A newer caller: zero tail accepted, answer complete. */
	memset(&q->build_id_size, 0, sizeof(buf) - 12);
	q->size = sizeof(buf);
	EXPECT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_FILE, q));
	EXPECT_TRUE(build_id_equal(&self->lib_id, q->build_id, q->build_id_size));
	/* A newer caller asking for something unknown. */
	buf[sizeof(buf) - 1] = 1;
	EXPECT_EQ(-E2BIG, ioctl_err(self->dev, BUILDID_IOC_FILE, q));
	/* Absurd sizes. */
	q->size = 1 << 20;
	EXPECT_EQ(-E2BIG, ioctl_err(self->dev, BUILDID_IOC_FILE, q));
	EXPECT_EQ(-EFAULT, ioctl_err(self->dev, BUILDID_IOC_FILE, NULL));
	close(fd);
}

TEST_F(dev, vma_query_self)
{
	struct buildid_vma_query q = { .size = sizeof(q), .flags = BUILDID_SLEEPABLE };
	struct cache_switch cache = {};
	struct mapping m;
	void *handle, *sym;

	/* On before the first query, which fills it for the lockless one below. */
	ASSERT_EQ(0, cache_switch_set(&cache, 1)) TH_LOG("CONFIG_BUILDID_CACHE");
	handle = dlopen(self->lib, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NE(NULL, handle) TH_LOG("dlopen: %s", dlerror());
	sym = dlsym(handle, "buildid_lib_value");
	ASSERT_NE(NULL, sym);
	ASSERT_EQ(0, maps_find(getpid(), (uintptr_t)sym, &m));

	q.addr = (uintptr_t)sym;
	ASSERT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_VMA, &q));
	EXPECT_TRUE(build_id_equal(&self->lib_id, q.build_id, q.build_id_size));
	EXPECT_EQ(m.start, q.vma_start);
	EXPECT_EQ(m.end, q.vma_end);
	EXPECT_EQ(m.offset, q.vma_offset);
	/* The same by pid. */
	q.pid = getpid();
	ASSERT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_VMA, &q));
	EXPECT_TRUE(build_id_equal(&self->lib_id, q.build_id, q.build_id_size));
	/* Each implementation, in both modes; two at once is no choice. */
	for (q.flags = 0; q.flags < 6; q.flags++) {
		memset(q.build_id, 0, sizeof(q.build_id));
		ASSERT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_VMA, &q)) TH_LOG("flags %u", q.flags);
		EXPECT_TRUE(build_id_equal(&self->lib_id, q.build_id, q.build_id_size))
			TH_LOG("flags %u", q.flags);
	}
	q.flags = BUILDID_VMA_UNCACHED | BUILDID_VMA_C_REFERENCE;
	EXPECT_EQ(-EINVAL, ioctl_err(self->dev, BUILDID_IOC_VMA, &q));
	q.flags = BUILDID_VMA_LOCKLESS | BUILDID_SLEEPABLE;
	EXPECT_EQ(-EINVAL, ioctl_err(self->dev, BUILDID_IOC_VMA, &q));
	q.flags = 16;
	EXPECT_EQ(-EINVAL, ioctl_err(self->dev, BUILDID_IOC_VMA, &q));
	q.flags = 0;
	q.reserved = 1;
	EXPECT_EQ(-EINVAL, ioctl_err(self->dev, BUILDID_IOC_VMA, &q));
	q.reserved = 0;
	EXPECT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_VMA, &q));
	/*
	 * As the BPF stack helpers ask for a frame, without mmap_lock: the
	 * cache has the library (the first sleepable query filled it), there
	 * is no range, and the offset is the address's own.
	 */
	q.flags = BUILDID_VMA_LOCKLESS;
	memset(q.build_id, 0, sizeof(q.build_id));
	EXPECT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_VMA, &q));
	EXPECT_TRUE(build_id_equal(&self->lib_id, q.build_id, q.build_id_size));
	EXPECT_EQ(0, q.vma_start);
	EXPECT_EQ(0, q.vma_end);
	EXPECT_EQ(m.offset + q.addr - m.start, q.vma_offset);
	q.flags = BUILDID_SLEEPABLE;
	dlclose(handle);

	/* Anonymous memory, and no mapping at all. */
	q.pid = 0;
	q.addr = (uintptr_t)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	EXPECT_EQ(-ENOENT, ioctl_err(self->dev, BUILDID_IOC_VMA, &q));
	munmap((void *)(uintptr_t)q.addr, 4096);
	EXPECT_EQ(-ENOENT, ioctl_err(self->dev, BUILDID_IOC_VMA, &q));
	q.pid = -5;
	EXPECT_EQ(-EINVAL, ioctl_err(self->dev, BUILDID_IOC_VMA, &q));
	cache_switch_restore(&cache);
}

static int query_pid1(int dev, void *arg)
{
	struct buildid_vma_query q = { .size = sizeof(q), .pid = 1, .addr = (uintptr_t)arg };

	return ioctl_err(dev, BUILDID_IOC_VMA, &q) == -EACCES ? 0 : 1;
}

static int query_own(int dev, void *arg)
{
	struct buildid_vma_query q = { .size = sizeof(q), .pid = 0, .addr = (uintptr_t)arg,
				       .flags = BUILDID_SLEEPABLE };

	return ioctl_err(dev, BUILDID_IOC_VMA, &q) ? 1 : 0;
}

TEST_F(dev, vma_query_other_process)
{
	struct buildid_vma_query q = { .size = sizeof(q), .flags = BUILDID_SLEEPABLE };
	struct build_id exe_id;
	int status;
	pid_t child;

	ASSERT_EQ(0, elf_build_id_from_sections("/proc/self/exe", &exe_id));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		pause();
		_exit(0);
	}
	/* The child runs the same binary at the same addresses. */
	q.pid = child;
	q.addr = (uintptr_t)open_buildid_dev;
	EXPECT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_VMA, &q));
	EXPECT_TRUE(build_id_equal(&exe_id, q.build_id, q.build_id_size));
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	/* Gone: no such process. */
	EXPECT_EQ(-ESRCH, ioctl_err(self->dev, BUILDID_IOC_VMA, &q));

	/* Without root, another user's process is off limits, one's own is not. */
	EXPECT_EQ(0, as_nobody(query_pid1, self->dev, (void *)(uintptr_t)0x400000));
	EXPECT_EQ(0, as_nobody(query_own, self->dev, (void *)open_buildid_dev));
}

static int bench_as_nobody(int dev, void *arg)
{
	struct buildid_bench *b = arg;

	return ioctl_err(dev, BUILDID_IOC_BENCH, b) == -EPERM ? 0 : 1;
}

TEST_F(dev, bench)
{
	static const uint32_t impls[] = { 0, BUILDID_C_REFERENCE, BUILDID_UNCACHED };
	static const unsigned int no_lookup[] = {
		BUILDID_BENCH_EMPTY, BUILDID_BENCH_RCU_READ_LOCK,
	};
	struct buildid_bench b = { .size = sizeof(b), .iterations = 100 };
	unsigned int mode, impl, i;
	long note;

	b.fd = open(self->lib, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, b.fd);
	note = elf_build_id_note_offset(self->lib);
	ASSERT_LE(0, note);
	b.offset = note;
	b.length = 36;

	for (impl = 0; impl < ARRAY_SIZE(impls); impl++) {
		for (mode = 0; mode < 3; mode++) {
			b.flags = impls[impl];
			b.mode = mode;
			b.total_ns = 0;
			ASSERT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_BENCH, &b))
				TH_LOG("impl %u mode %u", impl, mode);
			EXPECT_EQ(20, b.result) TH_LOG("impl %u mode %u", impl, mode);
			EXPECT_LT(0, b.total_ns);
		}
	}
	b.flags = 0;
	/* The modes that time no lookup. */
	for (i = 0; i < ARRAY_SIZE(no_lookup); i++) {
		b.mode = no_lookup[i];
		b.result = -1;
		EXPECT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_BENCH, &b)) TH_LOG("mode %u", b.mode);
		EXPECT_EQ(0, b.result) TH_LOG("mode %u", b.mode);
	}
	/* A frame's lookups, at an address of this program's code and at none. */
	for (mode = BUILDID_BENCH_VMA_LOCKLESS; mode <= BUILDID_BENCH_VMA_TRYLOCK; mode++) {
		b.mode = mode;
		b.offset = (uintptr_t)open_buildid_dev;
		ASSERT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_BENCH, &b));
		if (b.result == -EAGAIN) {
			/* The lockless lookup missed and queued a fill. */
			ASSERT_EQ(0, buildid_cache_drain());
			ASSERT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_BENCH, &b));
		}
		EXPECT_EQ(20, b.result) TH_LOG("mode %u", mode);
		b.offset = 0;
		ASSERT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_BENCH, &b));
		EXPECT_EQ(-ENOENT, b.result) TH_LOG("mode %u", mode);
	}
	b.offset = note;
	b.mode = BUILDID_BENCH_RCU_READ_LOCK + 1;
	EXPECT_EQ(-EINVAL, ioctl_err(self->dev, BUILDID_IOC_BENCH, &b));
	b.mode = 0;
	b.iterations = 0;
	EXPECT_EQ(-EINVAL, ioctl_err(self->dev, BUILDID_IOC_BENCH, &b));
	b.iterations = 100000000;
	EXPECT_EQ(-EINVAL, ioctl_err(self->dev, BUILDID_IOC_BENCH, &b));
	b.iterations = 1;
	b.flags = BUILDID_C_REFERENCE | BUILDID_UNCACHED;
	EXPECT_EQ(-EINVAL, ioctl_err(self->dev, BUILDID_IOC_BENCH, &b));
	b.flags = 0;
	b.mode = 2;
	b.length = 1 << 20;
	EXPECT_EQ(-EINVAL, ioctl_err(self->dev, BUILDID_IOC_BENCH, &b));
	b.mode = 0;
	EXPECT_EQ(0, as_nobody(bench_as_nobody, self->dev, &b));
	close(b.fd);
}

/* The Rust and C parsers, nofault and sleepable, as a VMA query picks them. */
static const struct parser {
	const char *name;
	uint32_t flags;
} parsers[] = {
	{ "Rust nofault", BUILDID_VMA_UNCACHED },
	{ "C nofault", BUILDID_VMA_C_REFERENCE },
	{ "Rust sleepable", BUILDID_VMA_UNCACHED | BUILDID_SLEEPABLE },
	{ "C sleepable", BUILDID_VMA_C_REFERENCE | BUILDID_SLEEPABLE },
};

struct answer {
	int ret;		/* 0 or -errno */
	struct build_id id;	/* with ret 0 */
};

/* What the parser that @flags pick says of the file mapped at @addr. */
static struct answer ask(int dev, const void *addr, uint32_t flags)
{
	struct buildid_vma_query q = { .size = sizeof(q), .flags = flags,
				       .addr = (uintptr_t)addr };
	struct answer a = { .ret = ioctl_err(dev, BUILDID_IOC_VMA, &q) };

	if (!a.ret && q.build_id_size <= BUILD_ID_MAX) {
		a.id.size = q.build_id_size;
		memcpy(a.id.data, q.build_id, q.build_id_size);
	} else if (!a.ret) {
		a.ret = -E2BIG;
	}
	return a;
}

static bool same_answer(const struct answer *a, const struct answer *b)
{
	return a->ret == b->ret && (a->ret || build_id_equal(&a->id, b->id.data, b->id.size));
}

/*
 * Sparse files on the ext4 scratch whose program headers lie past 4 GiB,
 * straddle it or cross a page past 8 GiB: every parser finds the ID written
 * by user space while the pages are cached; evicted, the nofault parsers
 * agree with each other and the sleepable ones read it back.  A note that
 * ends past 4 GiB is not read: lib/buildid.c computes the note's end in 32
 * bits (parse_build_id()'s note_end) and answers -EINVAL, and so must Rust.
 */
TEST_F(dev, sparse_file_beyond_4g)
{
	const uint64_t G = 1ULL << 30;
	static const struct {
		uint64_t phoff, note_off;
		int want;	/* 0: the ID, else the error */
	} layouts[] = {
		{ 4 * G + 64, 4096, 0 },
		{ 4 * G - 56, 8192, 0 },		/* the two headers straddle 4 GiB */
		{ 9 * G + 4096 - 8, 3 * 4096 - 20, 0 },	/* both cross a page */
		{ 64, 4 * G + 8, -EINVAL },
		{ 64, 4 * G - 12, -EINVAL },		/* the note straddles 4 GiB */
		{ 5 * G, 6 * G, -EINVAL },
	};
	char path[PATH_MAX + 64], type[32];
	unsigned int i, p;

	ASSERT_EQ(0, fs_type_of(self->dir, type, sizeof(type)));
	ASSERT_STREQ("ext4", type) TH_LOG("BUILDID_SCRATCH_DIR is not on ext4");
	for (i = 0; i < ARRAY_SIZE(layouts); i++) {
		struct elf_craft c = { .phoff = layouts[i].phoff, .note_off = layouts[i].note_off };
		struct answer nofault[2];
		void *map;
		int fd;

		build_id_pattern(&c.id, 20, 40 + i);
		snprintf(path, sizeof(path), "%s/sparse.%u", self->dir, i);
		ASSERT_EQ(0, elf_craft_sparse_file(path, &c)) TH_LOG("layout %u", i);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, fd);
		map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		ASSERT_NE(MAP_FAILED, map);

		for (p = 0; p < ARRAY_SIZE(parsers); p++) {
			struct answer a = ask(self->dev, map, parsers[p].flags);

			EXPECT_EQ(layouts[i].want, a.ret)
				TH_LOG("layout %u, %s", i, parsers[p].name);
			if (!a.ret)
				EXPECT_TRUE(build_id_equal(&c.id, a.id.data, a.id.size))
					TH_LOG("layout %u, %s", i, parsers[p].name);
		}
		EXPECT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED));
		for (p = 0; p < ARRAY_SIZE(parsers); p++) {
			struct answer a = ask(self->dev, map, parsers[p].flags);

			if (!(parsers[p].flags & BUILDID_SLEEPABLE)) {
				nofault[p] = a;
				continue;
			}
			EXPECT_EQ(layouts[i].want, a.ret)
				TH_LOG("layout %u, evicted, %s", i, parsers[p].name);
			if (!a.ret)
				EXPECT_TRUE(build_id_equal(&c.id, a.id.data, a.id.size))
					TH_LOG("layout %u, evicted, %s", i, parsers[p].name);
		}
		EXPECT_TRUE(same_answer(&nofault[0], &nofault[1]))
			TH_LOG("layout %u, evicted: Rust %d, C %d", i, nofault[0].ret,
			       nofault[1].ret);
		munmap(map, 4096);
		close(fd);
		unlink(path);
	}
}

static uint64_t next_random(uint64_t *state)
{
	/* xorshift64 */
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* A random ELF layout within @span bytes: headers and note never overlap. */
static void random_layout(struct elf_craft *c, uint64_t *rnd, uint64_t span)
{
	size_t ehsize, phsize;

	memset(c, 0, sizeof(*c));
	c->elf32 = next_random(rnd) % 4 == 0;
	ehsize = c->elf32 ? 52 : 64;
	build_id_pattern(&c->id, next_random(rnd) % 8 ? 1 + next_random(rnd) % 20 : 0,
			 next_random(rnd));
	phsize = (c->id.size ? 2 : 1) * (c->elf32 ? 32 : 56);
	c->phoff = ehsize + next_random(rnd) % (span / 2);
	do {
		c->note_off = next_random(rnd) % span;
	} while (c->note_off < ehsize ||
		 (c->note_off + 40 > c->phoff && c->note_off < c->phoff + phsize));
	c->size = next_random(rnd) % (span + 2 * 4096);
}

/* Punches a hole through a descriptor of its own, closed on return. */
static int punch_hole(const char *path, uint64_t off, uint64_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len))
		err = -errno;
	close(fd);
	return err;
}

/* Where partly_cached() runs, and what it saw there. */
struct partly_cached_fs {
	const char *dir;
	uint64_t span;		/* random layouts lie within this many bytes */
	unsigned int layouts;
	bool punch;		/* punch holes: the page cache cannot be dropped */
	unsigned int max_run;	/* pages dropped or punched at once, at most */
	unsigned int orders;	/* out: folio orders seen, bit k for 2^k pages */
};

/*
 * Random layouts in files whose pages are partly in the page cache: each
 * round drops random runs of pages (or punches them out), then the nofault
 * parsers must give the same answer, the ID written by user space or an
 * error; with nothing dropped, every parser gives the ID.  Both outcomes
 * must occur, so that the rounds test something.  With the build ID cache
 * on, the cached parser must answer at least as often, with the ID written
 * or (punching) what the Rust parser said; its fills are waited for, so
 * that they do not read pages in under the next round.  Without punching, the
 * file's page cache can then be dropped whole: a parser that kept a folio
 * reference would keep its folio cached.
 */
static void partly_cached(struct __test_metadata *_metadata, struct _test_data_dev *self,
			  struct partly_cached_fs *fs)
{
	unsigned int i, round, p, answered = 0, failed = 0, cache_answered = 0;
	uint64_t rnd = 0x9e3779b97f4a7c15ULL;
	struct cache_switch cache = {};
	char path[PATH_MAX + 64];

	ASSERT_EQ(0, cache_switch_set(&cache, 1)) TH_LOG("CONFIG_BUILDID_CACHE");

	for (i = 0; i < fs->layouts; i++) {
		struct elf_craft c;
		uint64_t size, pages, pg, run;
		void *map;
		int fd;

		random_layout(&c, &rnd, fs->span);
		snprintf(path, sizeof(path), "%s/partly.%u", fs->dir, i);
		ASSERT_EQ(0, elf_craft_sparse_file(path, &c)) TH_LOG("layout %u", i);
		/* Read-only: the cache neither fills nor answers for files open for writing. */
		fd = open(path, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, fd);
		size = lseek(fd, 0, SEEK_END);
		pages = (size + 4095) / 4096;
		map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		ASSERT_NE(MAP_FAILED, map);

		for (p = 0; p < ARRAY_SIZE(parsers); p++) {
			struct answer a = ask(self->dev, map, parsers[p].flags);

			if (!c.id.size) {
				EXPECT_EQ(-EINVAL, a.ret)
					TH_LOG("layout %u, %s", i, parsers[p].name);
				continue;
			}
			EXPECT_EQ(0, a.ret) TH_LOG("layout %u, %s", i, parsers[p].name);
			EXPECT_TRUE(build_id_equal(&c.id, a.id.data, a.id.size))
				TH_LOG("layout %u, %s", i, parsers[p].name);
		}
		fs->orders |= file_folio_orders(fd, size);
		for (round = 0; round < 8; round++) {
			struct answer rust, cref, cached;

			if (fs->punch) {
				ASSERT_EQ(0, elf_craft_sparse_file(path, &c));
			} else {
				static char chunk[64 * 4096];

				for (pg = 0; pg < size; pg += sizeof(chunk))
					ASSERT_LE(0, pread(fd, chunk, sizeof(chunk), pg));
			}
			for (pg = 0; pg < pages; pg += run) {
				run = 1 + next_random(&rnd) % fs->max_run;
				if (next_random(&rnd) % 3)
					continue;
				if (fs->punch) {
					ASSERT_EQ(0, punch_hole(path, pg * 4096, run * 4096));
				} else {
					ASSERT_EQ(0, posix_fadvise(fd, pg * 4096, run * 4096,
								   POSIX_FADV_DONTNEED));
				}
			}
			rust = ask(self->dev, map, parsers[0].flags);
			cref = ask(self->dev, map, parsers[1].flags);
			EXPECT_TRUE(same_answer(&rust, &cref))
				TH_LOG("layout %u round %u: Rust %d, C %d", i, round, rust.ret,
				       cref.ret);
			cached = ask(self->dev, map, 0);
			ASSERT_EQ(0, buildid_cache_drain());
			if (!cached.ret) {
				cache_answered++;
				EXPECT_TRUE(build_id_equal(&c.id, cached.id.data, cached.id.size) ||
					    (fs->punch && same_answer(&cached, &rust)))
					TH_LOG("layout %u round %u, cached", i, round);
			}
			if (rust.ret) {
				failed++;
				continue;
			}
			answered++;
			/* A punched hole reads as zeros: only C is the reference then. */
			if (!fs->punch)
				EXPECT_TRUE(build_id_equal(&c.id, rust.id.data, rust.id.size))
					TH_LOG("layout %u round %u", i, round);
		}
		if (!fs->punch) {
			/* Clean, unmapped and unreferenced: every folio can go. */
			ASSERT_EQ(0, fdatasync(fd));
			ASSERT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED));
			EXPECT_EQ(0, file_pages_cached(fd, size))
				TH_LOG("layout %u: pages still cached after dropping them all", i);
		}
		munmap(map, 4096);
		close(fd);
		unlink(path);
	}
	cache_switch_restore(&cache);
	TH_LOG("%u nofault answers with an ID, %u without (with the cache: %u with an ID); "
	       "folio orders seen %#x", answered, failed, cache_answered, fs->orders);
	EXPECT_LT(0, answered);
	EXPECT_LT(0, failed);
	/* Without rewrites, what a fill found stays cached across evictions. */
	EXPECT_LE(answered + !fs->punch, cache_answered);
}

/* ext4: single pages dropped with POSIX_FADV_DONTNEED; a 6-page span. */
TEST_F_TIMEOUT(dev, partly_cached_ext4, 300)
{
	struct partly_cached_fs fs = {
		.dir = self->dir, .span = 6 * 4096, .layouts = 64, .max_run = 1,
	};
	char type[32];

	ASSERT_EQ(0, fs_type_of(self->dir, type, sizeof(type)));
	ASSERT_STREQ("ext4", type) TH_LOG("BUILDID_SCRATCH_DIR is not on ext4");
	partly_cached(_metadata, self, &fs);
}

/*
 * XFS caches files in large folios of several orders (iomap writes and
 * readahead both make them), which POSIX_FADV_DONTNEED drops only whole:
 * runs of up to 16 pages in a 256 KiB span.  At least two large orders
 * must be seen, or the case would test little that ext4 does not.
 */
TEST_F_TIMEOUT(dev, partly_cached_xfs, 300)
{
	struct partly_cached_fs fs = {
		.span = 64 * 4096, .layouts = 32, .max_run = 16,
	};
	char base[PATH_MAX + 32];
	struct loop_fs xfs;

	snprintf(base, sizeof(base), "%s/xfs", self->dir);
	ASSERT_EQ(0, mkdir(base, 0700));
	/* mkfs.xfs makes nothing smaller than 300 MiB. */
	ASSERT_EQ(0, loop_fs_mount(&xfs, base, "xfs", 320))
		TH_LOG("XFS on a loop device: CONFIG_XFS_FS and mkfs.xfs (xfsprogs)");
	fs.dir = xfs.mnt;
	partly_cached(_metadata, self, &fs);
	EXPECT_LE(2, __builtin_popcount(fs.orders & ~1u))
		TH_LOG("fewer than two large folio orders seen (%#x)", fs.orders);
	EXPECT_EQ(0, loop_fs_umount(&xfs));
}

/* tmpfs with huge pages: holes punched in large folios; a 3 MiB span. */
TEST_F_TIMEOUT(dev, partly_cached_tmpfs_huge, 300)
{
	struct partly_cached_fs fs = {
		.span = 3 << 20, .layouts = 24, .punch = true, .max_run = 1,
	};
	char dir[PATH_MAX + 32];

	snprintf(dir, sizeof(dir), "%s/tmpfs", self->dir);
	ASSERT_EQ(0, mkdir(dir, 0700));
	ASSERT_EQ(0, mount("tmpfs", dir, "tmpfs", 0, "huge=always,size=64m")) TH_LOG("%m");
	fs.dir = dir;
	partly_cached(_metadata, self, &fs);
	EXPECT_EQ(0, umount(dir));
}

/* A crafted file in @dir, its pages synced and evicted, mapped at *@map. */
static int evicted_file(const char *dir, const char *name, struct elf_craft *c, void **map)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (elf_craft_sparse_file(path, c))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	*map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (*map == MAP_FAILED || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Every request to the block device under the scratch file system fails
 * (fail_make_request) while the sleepable parsers read a file whose pages
 * were evicted: Rust and C fail with the same error; the nofault parsers
 * then do not use the folios that the failed reads left behind; once the
 * device works again, every parser finds the ID.  The window is two
 * parses long, so that the file system's own writes do not fail.
 */
TEST_F(dev, io_error_sleepable)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 3 * 4096 + 0x10, .size = 5 * 4096 };
	struct answer rust, cref, cached, after[ARRAY_SIZE(parsers)];
	char make_it_fail[128], type[32];
	struct stat st;
	unsigned int p;
	void *map;
	int fd;

	ASSERT_EQ(0, fs_type_of(self->dir, type, sizeof(type)));
	ASSERT_STREQ("ext4", type) TH_LOG("BUILDID_SCRATCH_DIR is not on ext4");
	ASSERT_EQ(0, stat(self->dir, &st));
	snprintf(make_it_fail, sizeof(make_it_fail), "/sys/dev/block/%u:%u/make-it-fail",
		 major(st.st_dev), minor(st.st_dev));
	build_id_pattern(&c.id, 20, 0x70);
	fd = evicted_file(self->dir, "ioerr.elf", &c, &map);
	ASSERT_LE(0, fd);
	sync();

	ASSERT_EQ(0, fault_injection_arm("fail_make_request", true))
		TH_LOG("CONFIG_FAIL_MAKE_REQUEST and CONFIG_FAULT_INJECTION_DEBUG_FS");
	ASSERT_EQ(0, write_string(make_it_fail, "1")) TH_LOG("%s", make_it_fail);
	rust = ask(self->dev, map, parsers[2].flags);
	cref = ask(self->dev, map, parsers[3].flags);
	cached = ask(self->dev, map, BUILDID_SLEEPABLE);
	write_string(make_it_fail, "0");
	fault_injection_arm("fail_make_request", false);

	EXPECT_EQ(-EIO, rust.ret);
	EXPECT_TRUE(same_answer(&rust, &cref)) TH_LOG("Rust %d, C %d", rust.ret, cref.ret);
	EXPECT_EQ(-EIO, cached.ret) TH_LOG("with the build ID cache");
	for (p = 0; p < 2; p++) {
		after[p] = ask(self->dev, map, parsers[p].flags);
		EXPECT_NE(0, after[p].ret) TH_LOG("%s after the failed reads", parsers[p].name);
	}
	EXPECT_TRUE(same_answer(&after[0], &after[1]))
		TH_LOG("nofault: Rust %d, C %d", after[0].ret, after[1].ret);
	/* Sleepable first: they read the pages back for the nofault ones. */
	for (p = ARRAY_SIZE(parsers); p-- > 0;) {
		after[p] = ask(self->dev, map, parsers[p].flags);
		EXPECT_EQ(0, after[p].ret) TH_LOG("%s, device working", parsers[p].name);
		EXPECT_TRUE(build_id_equal(&c.id, after[p].id.data, after[p].id.size))
			TH_LOG("%s, device working", parsers[p].name);
	}
	munmap(map, 4096);
	close(fd);
}

/*
 * The block device fails while the sleepable parsers read the note, after
 * the headers came from the page cache: C answers -EINVAL for a failed read
 * inside the note walk, and Rust must too.  The build ID cache must not take
 * that answer for "no build ID": once the device works, the cached parser
 * finds the ID.
 */
TEST_F(dev, io_error_in_note_walk)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 3 * 4096 + 0x10, .size = 5 * 4096 };
	struct answer rust, cref, cached, after;
	char make_it_fail[128], path[PATH_MAX + 16], page[4096];
	int fd, rd, cache_was;
	struct stat st;
	void *map;

	cache_was = buildid_cache_set(1);
	ASSERT_LE(0, cache_was) TH_LOG("CONFIG_BUILDID_CACHE");
	ASSERT_EQ(0, stat(self->dir, &st));
	snprintf(make_it_fail, sizeof(make_it_fail), "/sys/dev/block/%u:%u/make-it-fail",
		 major(st.st_dev), minor(st.st_dev));
	build_id_pattern(&c.id, 20, 0x72);
	fd = evicted_file(self->dir, "ioerr-note.elf", &c, &map);
	ASSERT_LE(0, fd);
	sync();
	/* Page 0 only, without readahead: the headers are cached, the note is not. */
	snprintf(path, sizeof(path), "%s/ioerr-note.elf", self->dir);
	rd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rd);
	ASSERT_EQ(0, posix_fadvise(rd, 0, 0, POSIX_FADV_RANDOM));
	ASSERT_EQ((ssize_t)sizeof(page), pread(rd, page, sizeof(page), 0));
	close(rd);
	ASSERT_EQ(1, file_pages_cached(fd, c.size)) TH_LOG("want only page 0 cached");

	ASSERT_EQ(0, fault_injection_arm("fail_make_request", true));
	ASSERT_EQ(0, write_string(make_it_fail, "1")) TH_LOG("%s", make_it_fail);
	rust = ask(self->dev, map, parsers[2].flags);
	cref = ask(self->dev, map, parsers[3].flags);
	cached = ask(self->dev, map, BUILDID_SLEEPABLE);
	write_string(make_it_fail, "0");
	fault_injection_arm("fail_make_request", false);

	EXPECT_EQ(-EINVAL, cref.ret) TH_LOG("C: %d", cref.ret);
	EXPECT_TRUE(same_answer(&rust, &cref)) TH_LOG("Rust %d, C %d", rust.ret, cref.ret);
	EXPECT_TRUE(same_answer(&cached, &cref)) TH_LOG("cached %d, C %d", cached.ret, cref.ret);
	after = ask(self->dev, map, BUILDID_SLEEPABLE);
	EXPECT_EQ(0, after.ret) TH_LOG("cached parser, device working: %d", after.ret);
	EXPECT_TRUE(build_id_equal(&c.id, after.id.data, after.id.size));
	munmap(map, 4096);
	close(fd);
	if (!cache_was)
		buildid_cache_set(0);
}

/*
 * A file opened O_DIRECT: __kernel_read() reads it with IOCB_DIRECT, which
 * ext4 refuses for the parser's small unaligned reads.  The Rust sleepable
 * parser must not answer from the page cache where C's reads would fail:
 * with the pages cached, both give the same answer.
 */
TEST_F(dev, odirect_sleepable_matches_c)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x200, .size = 4096 };
	char path[PATH_MAX + 16], page[4096];
	struct answer rust, cref;
	int fd, rd;
	void *map;

	build_id_pattern(&c.id, 20, 0x73);
	snprintf(path, sizeof(path), "%s/odirect.elf", self->dir);
	ASSERT_EQ(0, elf_craft_file(path, &c));
	fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	ASSERT_LE(0, fd);
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	rd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rd);
	ASSERT_EQ((ssize_t)sizeof(page), pread(rd, page, sizeof(page), 0));
	close(rd);
	ASSERT_EQ(1, file_pages_cached(fd, c.size));

	rust = ask(self->dev, map, parsers[2].flags);
	cref = ask(self->dev, map, parsers[3].flags);
	EXPECT_TRUE(same_answer(&rust, &cref)) TH_LOG("Rust %d, C %d", rust.ret, cref.ret);
	munmap(map, 4096);
	close(fd);
}

/*
 * A nofault miss queues a deferred fill, which holds a reference to the
 * file: after the process that mapped it is killed, the file system
 * unmounts at once, with the fills drained (even rounds) or not (odd
 * rounds: umount(2) itself lets go of the fill's reference, and waits
 * for its release).  Each round makes and mounts a file system: 3.5 to
 * 4 s under TCG, more than the default 30 s in all.
 */
TEST_F_TIMEOUT(dev, umount_after_deferred_fill, 180)
{
	enum { ROUNDS = 8 };
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x200, .size = 4096 };
	unsigned int round;
	int cache_was, status;

	cache_was = buildid_cache_set(1);
	ASSERT_LE(0, cache_was) TH_LOG("CONFIG_BUILDID_CACHE");
	for (round = 0; round < ROUNDS; round++) {
		char path[PATH_MAX + 64];
		int ready[2];
		struct loop_fs fs;
		pid_t pid;
		char byte;

		char base[PATH_MAX + 8];
		int err;

		snprintf(base, sizeof(base), "%s/loop", self->dir);
		ASSERT_TRUE(!mkdir(base, 0700) || errno == EEXIST);
		ASSERT_EQ(0, loop_fs_mount(&fs, base, "ext4", 16));
		snprintf(path, sizeof(path), "%s/deferred.so", fs.mnt);
		build_id_pattern(&c.id, 20, 0x74 + round);
		ASSERT_EQ(0, elf_craft_file(path, &c));
		ASSERT_EQ(0, pipe(ready));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			void *map = fd < 0 ? MAP_FAILED :
				    mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
			struct answer a;

			/* Written back first: dirty pages are not dropped. */
			if (map == MAP_FAILED || fsync(fd) ||
			    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
				_exit(1);
			/* Evicted and not cached: a miss, which queues a fill. */
			a = ask(self->dev, map, 0);
			byte = a.ret == -EFAULT ? 'y' : 'n';
			if (write(ready[1], &byte, 1) != 1)
				_exit(2);
			pause();
			_exit(0);
		}
		close(ready[1]);
		ASSERT_EQ(1, read(ready[0], &byte, 1));
		close(ready[0]);
		EXPECT_EQ('y', byte) TH_LOG("the nofault query did not miss");
		kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		if (round % 2 == 0)
			ASSERT_EQ(0, buildid_cache_drain());
		err = loop_fs_umount(&fs);
		EXPECT_EQ(0, err) TH_LOG("round %u: unmounting: %s", round, strerror(-err));
	}
	if (!cache_was)
		buildid_cache_set(0);
}

/*
 * FUSE files are not cached ("Coherence" in buildid.rst): the server may
 * change their data without changing the attributes it reports.  A
 * sleepable parse reads through the server and fills nothing; a nofault
 * miss queues no fill, so a server that stops answering holds no fill
 * worker, and umount -f of its mount, whose umount_begin() aborts the
 * reads it holds, returns at once.
 */
TEST_F_TIMEOUT(dev, fuse_files_not_cached, 120)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x200, .size = 4096 };
	char back[PATH_MAX + 16], mnt[PATH_MAX + 16], path[PATH_MAX + 32];
	struct fuse_server srv;
	int cache_was, fd, status, i, forced;
	struct answer a;
	long queued;
	pid_t reader;
	void *map;

	cache_was = buildid_cache_set(1);
	ASSERT_LE(0, cache_was) TH_LOG("CONFIG_BUILDID_CACHE");
	snprintf(back, sizeof(back), "%s/fuse-back", self->dir);
	snprintf(mnt, sizeof(mnt), "%s/fuse", self->dir);
	ASSERT_EQ(0, mkdir(back, 0700));
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s.so", back, i ? "hung" : "read");
		build_id_pattern(&c.id, 20, 0x5a + i);
		ASSERT_EQ(0, elf_craft_file(path, &c));
	}
	ASSERT_EQ(0, fuse_serve(&srv, back, mnt)) TH_LOG("FUSE: %m");

	/* Read through the server, and not cached. */
	snprintf(path, sizeof(path), "%s/read.so", mnt);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	a = ask(self->dev, map, BUILDID_SLEEPABLE);
	ASSERT_EQ(0, a.ret);
	build_id_pattern(&c.id, 20, 0x5a);
	EXPECT_TRUE(build_id_equal(&c.id, a.id.data, a.id.size));
	ASSERT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED));
	ASSERT_EQ(0, file_pages_cached(fd, c.size));
	a = ask(self->dev, map, 0);
	EXPECT_EQ(-EFAULT, a.ret) TH_LOG("a FUSE file's build ID came from the cache");
	munmap(map, 4096);
	close(fd);

	/* A miss while the server hangs queues nothing. */
	fuse_hang(&srv);
	snprintf(path, sizeof(path), "%s/hung.so", mnt);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	queued = buildid_cache_stat("deferrals_queued");
	a = ask(self->dev, map, 0);
	EXPECT_EQ(-EFAULT, a.ret);
	EXPECT_EQ(queued, buildid_cache_stat("deferrals_queued"))
		TH_LOG("a miss on a FUSE file queued a fill");
	munmap(map, 4096);
	close(fd);

	/* A reader of the hung server; umount -f aborts its read. */
	reader = fork();
	ASSERT_LE(0, reader);
	if (!reader) {
		char buf[64];
		int rfd = open(path, O_RDONLY | O_CLOEXEC);

		_exit(rfd >= 0 && pread(rfd, buf, sizeof(buf), 0) == sizeof(buf) ? 0 : 1);
	}
	for (i = 0; i < 1000 && !fuse_held(&srv); i++)
		usleep(10000);
	ASSERT_NE(0, fuse_held(&srv)) TH_LOG("the read never reached the server");
	forced = umount2(mnt, MNT_FORCE);
	ASSERT_EQ(reader, waitpid(reader, &status, 0));
	EXPECT_EQ(1, WEXITSTATUS(status)) TH_LOG("umount -f did not abort the held read");
	if (forced)
		EXPECT_EQ(0, umount2(mnt, MNT_DETACH));
	fuse_stop(&srv);
	EXPECT_EQ(0, buildid_cache_drain());
	if (!cache_was)
		buildid_cache_set(0);
}

#define HUNG_FS 6

/*
 * ext4 on read-only loop devices over image files that a FUSE server holds
 * (FUSE direct I/O: every read of the loop device reaches the server):
 * when the server hangs, the deferred fills of their files block in the
 * loop device.  More of them hang than there are fill workers (4): each
 * still gets a worker, the fills of a file system that works go on,
 * umount(2) and umount -f of a hung one return EBUSY after a bounded wait,
 * and umount -l returns 0 at once.  Once the server answers, the fills end
 * and everything unmounts.  The fills stay blocked for about 10 s, well
 * below the hung task detector's 120 s.
 */
TEST_F_TIMEOUT(dev, hung_file_systems, 300)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x200, .size = 4096 };
	char back[PATH_MAX + 16], fmnt[PATH_MAX + 16], path[PATH_MAX + 64];
	char cmd[3 * PATH_MAX];
	struct {
		char loop_dev[64];
		char mnt[PATH_MAX + 16];
		bool mounted;
		void *map;
		int fd;
	} fs[HUNG_FS] = {};
	unsigned long want = 0, held;
	struct fuse_server srv;
	struct loop_fs healthy;
	int cache_was, i, tries, fd;
	struct answer a;
	void *map;

	cache_was = buildid_cache_set(1);
	ASSERT_LE(0, cache_was) TH_LOG("CONFIG_BUILDID_CACHE");
	snprintf(back, sizeof(back), "%s/hung-back", self->dir);
	snprintf(fmnt, sizeof(fmnt), "%s/hung-fuse", self->dir);
	ASSERT_EQ(0, mkdir(back, 0700));
	for (i = 0; i < HUNG_FS; i++) {
		snprintf(path, sizeof(path), "%s/src%d", self->dir, i);
		ASSERT_EQ(0, mkdir(path, 0700));
		snprintf(path, sizeof(path), "%s/src%d/hung.so", self->dir, i);
		build_id_pattern(&c.id, 20, 0x60 + i);
		ASSERT_EQ(0, elf_craft_file(path, &c));
		snprintf(path, sizeof(path), "%s/fs%d.img", back, i);
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, ftruncate(fd, 8 << 20));
		close(fd);
		snprintf(cmd, sizeof(cmd), "mkfs.ext4 -q -d '%s/src%d' '%s' >/dev/null 2>&1",
			 self->dir, i, path);
		ASSERT_EQ(0, system(cmd));
	}
	ASSERT_EQ(0, fuse_serve(&srv, back, fmnt)) TH_LOG("FUSE: %m");
	for (i = 0; i < HUNG_FS; i++) {
		char image[32];

		snprintf(image, sizeof(image), "fs%d.img", i);
		want |= 1UL << fuse_node_index(back, image);
		snprintf(path, sizeof(path), "%s/%s", fmnt, image);
		ASSERT_EQ(0, loop_attach(path, true, fs[i].loop_dev, sizeof(fs[i].loop_dev)));
		snprintf(fs[i].mnt, sizeof(fs[i].mnt), "%s/hung%d", self->dir, i);
		ASSERT_EQ(0, mkdir(fs[i].mnt, 0700));
		ASSERT_EQ(0, mount(fs[i].loop_dev, fs[i].mnt, "ext4", MS_RDONLY, NULL))
			TH_LOG("mount %s: %m", fs[i].loop_dev);
		fs[i].mounted = true;
		snprintf(path, sizeof(path), "%s/hung.so", fs[i].mnt);
		fs[i].fd = open(path, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, fs[i].fd);
		fs[i].map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fs[i].fd, 0);
		ASSERT_NE(MAP_FAILED, fs[i].map);
		ASSERT_EQ(0, file_pages_cached(fs[i].fd, c.size));
	}

	/* And a file system that works. */
	snprintf(path, sizeof(path), "%s/healthy", self->dir);
	ASSERT_EQ(0, mkdir(path, 0700));
	ASSERT_EQ(0, loop_fs_mount(&healthy, path, "ext4", 16));
	snprintf(path, sizeof(path), "%s/ok.so", healthy.mnt);
	build_id_pattern(&c.id, 20, 0x70);
	ASSERT_EQ(0, elf_craft_file(path, &c));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, fsync(fd));
	ASSERT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED));

	/*
	 * From here on, nothing stops the test before the server answers
	 * again.  Misses queue fills again and again, as samples do: each
	 * hung file system gets a worker.
	 */
	fuse_hang(&srv);
	for (tries = 0; tries < 100 && (fuse_held_nodes(&srv) & want) != want; tries++) {
		for (i = 0; i < HUNG_FS; i++)
			ask(self->dev, fs[i].map, 0);
		usleep(300 * 1000);
	}
	held = fuse_held_nodes(&srv) & want;
	EXPECT_EQ(want, held) TH_LOG("%d of %d hung file systems got a fill worker",
				     __builtin_popcountl(held), HUNG_FS);

	/* A file system that works still gets its fills. */
	for (tries = 0; tries < 100; tries++) {
		a = ask(self->dev, map, 0);
		if (!a.ret)
			break;
		usleep(200 * 1000);
	}
	EXPECT_EQ(0, a.ret) TH_LOG("the hung fills held every worker");
	EXPECT_TRUE(!a.ret && build_id_equal(&c.id, a.id.data, a.id.size));
	munmap(map, 4096);
	close(fd);
	EXPECT_EQ(0, loop_fs_umount(&healthy));

	/* Only the blocked fills hold the hung file systems now. */
	for (i = 0; i < HUNG_FS; i++) {
		munmap(fs[i].map, 4096);
		close(fs[i].fd);
	}
	EXPECT_EQ(-1, umount(fs[0].mnt));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-1, umount2(fs[1].mnt, MNT_FORCE));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(0, umount2(fs[2].mnt, MNT_DETACH));
	fs[2].mounted = false;

	/* The server answers: the fills end, and everything unmounts. */
	EXPECT_TRUE(fuse_resume(&srv));
	EXPECT_EQ(0, buildid_cache_drain());
	for (i = 0; i < HUNG_FS; i++) {
		if (fs[i].mounted)
			EXPECT_EQ(0, umount(fs[i].mnt)) TH_LOG("%s: %m", fs[i].mnt);
		snprintf(cmd, sizeof(cmd), "losetup -d '%s'", fs[i].loop_dev);
		EXPECT_EQ(0, system(cmd));
	}
	fuse_stop(&srv);
	if (!cache_was)
		buildid_cache_set(0);
}

/*
 * mmap(PROT_EXEC) reads nothing for the cache: with the cache on, mapping a
 * file whose data sits behind a server that answers no read returns as it
 * does with the cache off.  The file is on ext4, which the cache keeps, on
 * a read-only loop device over an image that the FUSE server holds.  A
 * child maps it; it must return within MMAP_DEADLINE_S (it takes
 * microseconds: the deadline tells a wait on the server from a slow
 * machine).  A kernel that parses in mmap() blocks the child until the
 * server answers.
 */
#define MMAP_DEADLINE_S 5

/*
 * Forks a child that maps @fd PROT_EXEC; true if it returned in time.  A
 * child still waiting is left in *@waiting (else 0) for the caller to reap.
 */
static bool mmap_exec_returns(int fd, double *seconds, pid_t *waiting)
{
	uint64_t start = now_ns();
	int status = 0, i;
	pid_t child;

	*waiting = 0;
	child = fork();
	if (child < 0)
		return false;
	if (!child) {
		void *map = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

		_exit(map == MAP_FAILED ? 2 : 0);
	}
	for (i = 0; i < MMAP_DEADLINE_S * 100; i++) {
		if (waitpid(child, &status, WNOHANG) == child)
			break;
		usleep(10000);
	}
	*seconds = (now_ns() - start) / 1e9;
	if (i == MMAP_DEADLINE_S * 100) {
		*waiting = child;
		return false;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST_F_TIMEOUT(dev, mmap_exec_waits_for_no_read, 120)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x200, .size = 4096 };
	char back[PATH_MAX + 16], fmnt[PATH_MAX + 16], mnt[PATH_MAX + 16];
	char path[PATH_MAX + 64], cmd[3 * PATH_MAX], loop_dev[64];
	double off_s = 0, on_s = 0;
	pid_t off_child, on_child;
	bool off_ok, on_ok;
	struct fuse_server srv;
	int cache_was, fd;

	cache_was = buildid_cache_set(0);
	ASSERT_LE(0, cache_was) TH_LOG("CONFIG_BUILDID_CACHE");
	snprintf(back, sizeof(back), "%s/stall-back", self->dir);
	snprintf(fmnt, sizeof(fmnt), "%s/stall-fuse", self->dir);
	snprintf(mnt, sizeof(mnt), "%s/stall", self->dir);
	ASSERT_EQ(0, mkdir(back, 0700));
	ASSERT_EQ(0, mkdir(mnt, 0700));
	snprintf(path, sizeof(path), "%s/src", self->dir);
	ASSERT_EQ(0, mkdir(path, 0700));
	snprintf(path, sizeof(path), "%s/src/stalled.so", self->dir);
	build_id_pattern(&c.id, 20, 0x7a);
	ASSERT_EQ(0, elf_craft_file(path, &c));
	snprintf(path, sizeof(path), "%s/fs.img", back);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, 8 << 20));
	close(fd);
	snprintf(cmd, sizeof(cmd), "mkfs.ext4 -q -d '%s/src' '%s' >/dev/null 2>&1",
		 self->dir, path);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, fuse_serve(&srv, back, fmnt)) TH_LOG("FUSE: %m");
	snprintf(path, sizeof(path), "%s/fs.img", fmnt);
	ASSERT_EQ(0, loop_attach(path, true, loop_dev, sizeof(loop_dev)));
	ASSERT_EQ(0, mount(loop_dev, mnt, "ext4", MS_RDONLY, NULL))
		TH_LOG("mount %s: %m", loop_dev);
	snprintf(path, sizeof(path), "%s/stalled.so", mnt);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	/* Nothing of the file is in the page cache: any read goes to the server. */
	ASSERT_EQ(0, file_pages_cached(fd, c.size));

	fuse_hang(&srv);
	off_ok = mmap_exec_returns(fd, &off_s, &off_child);
	buildid_cache_set(1);
	on_ok = mmap_exec_returns(fd, &on_s, &on_child);
	buildid_cache_set(0);
	/* Whatever happened, the server answers before anything can fail. */
	EXPECT_TRUE(fuse_resume(&srv));
	if (off_child)
		waitpid(off_child, NULL, 0);
	if (on_child)
		waitpid(on_child, NULL, 0);
	TH_LOG("mmap(PROT_EXEC) with the server hung: %.3f s with the cache off, %.3f s on",
	       off_s, on_s);
	EXPECT_TRUE(off_ok) TH_LOG("mmap waited with the cache off");
	EXPECT_TRUE(on_ok) TH_LOG("mmap waited for the server with the cache on");
	EXPECT_EQ(0, file_pages_cached(fd, c.size)) TH_LOG("mmap read the file");

	close(fd);
	EXPECT_EQ(0, buildid_cache_drain());
	EXPECT_EQ(0, umount(mnt)) TH_LOG("%s: %m", mnt);
	snprintf(cmd, sizeof(cmd), "losetup -d '%s'", loop_dev);
	EXPECT_EQ(0, system(cmd));
	fuse_stop(&srv);
	if (cache_was)
		buildid_cache_set(1);
}

/*
 * A private mapping of /dev/zero keeps the device as its file: no parser
 * may read it or look up its page cache; every one says "no build ID".
 * 6.12's C parser read it in sleepable mode and answered -EFAULT in
 * nofault mode.
 */
TEST_F(dev, non_regular_files)
{
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	struct procmap_query q;
	unsigned char id[BUILD_ID_MAX];
	struct mapping m;
	unsigned int p;
	int maps;
	void *map;

	ASSERT_LE(0, fd);
	map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	/* The VMA has the device as its file, or the case tests nothing. */
	ASSERT_EQ(0, maps_find(getpid(), (uintptr_t)map, &m));
	ASSERT_STREQ("/dev/zero", m.path);
	for (p = 0; p < ARRAY_SIZE(parsers); p++) {
		struct answer a = ask(self->dev, map, parsers[p].flags);

		EXPECT_EQ(-EINVAL, a.ret) TH_LOG("%s", parsers[p].name);
	}
	EXPECT_EQ(-EINVAL, ask(self->dev, map, 0).ret) TH_LOG("Rust, with the cache");
	maps = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, maps);
	ASSERT_EQ(0, procmap_query(maps, (uintptr_t)map, &q, id, sizeof(id)));
	EXPECT_EQ(0, q.build_id_size);
	close(maps);
	munmap(map, 4096);
	close(fd);
}

/*
 * ELF offsets of 2^63 and more are negative file positions.  __kernel_read()
 * does not check the position, and at a negative one the buffered read of
 * ext4 and XFS retries for ever (filemap_get_pages() computes an empty
 * range; on XFS the first such read also leaves a folio that is not
 * uptodate).  Every entry that reads a file must refuse them, promptly: a
 * sleepable parse (Rust and C), PROCMAP_QUERY, and a nofault miss with the
 * fill it queues.  Each entry runs twice in a child that SIGALRM kills: a loop in
 * the kernel, which a fatal signal ends, is a failed case, not a hung run.
 */
enum negative_entry {
	NEG_SLEEPABLE_RUST,
	NEG_SLEEPABLE_C,
	NEG_PROCMAP_QUERY,
	NEG_NOFAULT_FILL,
	NEG_ENTRIES,
};

static const char *const negative_entry_names[NEG_ENTRIES] = {
	"Rust sleepable parse", "C sleepable parse", "PROCMAP_QUERY",
	"nofault miss and its fill",
};

/* The entry once: 0, or a code for the child's exit status. */
static int negative_entry_once(int dev, const char *path, enum negative_entry entry)
{
	unsigned char build_id[BUILD_ID_MAX];
	struct procmap_query q;
	int fd, maps, err;
	struct answer a;
	void *map;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 10;
	map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return 11;
	switch (entry) {
	case NEG_SLEEPABLE_RUST:
	case NEG_SLEEPABLE_C:
		a = ask(dev, map, BUILDID_SLEEPABLE | (entry == NEG_SLEEPABLE_C ?
			BUILDID_VMA_C_REFERENCE : BUILDID_VMA_UNCACHED));
		/* No build ID: a short read, as tmpfs gives at these offsets. */
		if (a.ret != -EIO && a.ret != -EINVAL)
			return 12;
		break;
	case NEG_PROCMAP_QUERY:
		maps = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
		if (maps < 0)
			return 13;
		err = procmap_query(maps, (uintptr_t)map, &q, build_id, sizeof(build_id));
		close(maps);
		if (err || q.build_id_size)
			return 14;
		break;
	case NEG_NOFAULT_FILL:
		if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
			return 15;
		a = ask(dev, map, 0);
		if (!a.ret)
			return 16;
		if (buildid_cache_drain())
			return 17;
		break;
	default:
		return 18;
	}
	munmap(map, 4096);
	close(fd);
	return 0;
}

/* The entry twice, in a child given @seconds: 0, or what went wrong. */
static int negative_entry_run(int dev, const char *path, enum negative_entry entry,
			      unsigned int seconds)
{
	int status, err;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		alarm(seconds);
		err = negative_entry_once(dev, path, entry);
		_exit(err ?: negative_entry_once(dev, path, entry));
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static void negative_positions_on(struct __test_metadata *_metadata, int dev,
				  const char *dir)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x200, .size = 4096 };
	static const char *const variants[] = { "e_phoff", "p_offset" };
	unsigned int v, entry;

	build_id_pattern(&c.id, 20, 0x3c);
	for (v = 0; v < ARRAY_SIZE(variants); v++) {
		for (entry = 0; entry < NEG_ENTRIES; entry++) {
			char path[PATH_MAX + 64];
			unsigned char *img;
			Elf64_Phdr note;
			size_t len;
			int err;

			img = elf_craft_image(&c, &len);
			ASSERT_NE(NULL, img);
			if (v == 0) {
				/* The program headers at 2^63. */
				uint64_t phoff = 1ULL << 63;

				memcpy(img + offsetof(Elf64_Ehdr, e_phoff), &phoff, sizeof(phoff));
			} else {
				/*
				 * A PT_NOTE at -256 with 512 bytes: its end, 256, fits
				 * in the 32 bits C computes it in, so the note walk
				 * starts at a negative position.
				 */
				memcpy(&note, img + c.phoff + sizeof(note), sizeof(note));
				note.p_offset = -256ULL;
				note.p_filesz = 512;
				memcpy(img + c.phoff + sizeof(note), &note, sizeof(note));
			}
			snprintf(path, sizeof(path), "%s/negative-%s-%u.so", dir, variants[v],
				 entry);
			err = write_file(path, img, len);
			free(img);
			ASSERT_EQ(0, err);
			/* Written back, so that reads go to the file system. */
			ASSERT_TRUE(evict_file(path, 0))
				TH_LOG("page 0 of %s stayed in the page cache", path);
			err = negative_entry_run(dev, path, entry, 20);
			EXPECT_EQ(0, err) TH_LOG("%s at a negative position, %s: %s %d",
						 variants[v], negative_entry_names[entry],
						 err > 128 ? "killed by signal" : "status",
						 err > 128 ? err - 128 : err);
		}
	}
}

/* The cases on a loop-mounted @fstype of @mib MiB, with the build ID cache on. */
static void negative_positions_fs(struct __test_metadata *_metadata,
				  struct _test_data_dev *self, const char *fstype,
				  unsigned int mib)
{
	char base[PATH_MAX + 32];
	int cache_was = buildid_cache_set(1);
	struct loop_fs fs;

	ASSERT_LE(0, cache_was) TH_LOG("CONFIG_BUILDID_CACHE");
	snprintf(base, sizeof(base), "%s/%s", self->dir, fstype);
	ASSERT_EQ(0, mkdir(base, 0700));
	ASSERT_EQ(0, loop_fs_mount(&fs, base, fstype, mib))
		TH_LOG("%s on a loop device: its config option and mkfs.%s", fstype, fstype);
	negative_positions_on(_metadata, self->dev, fs.mnt);
	EXPECT_EQ(0, buildid_cache_drain());
	EXPECT_EQ(0, loop_fs_umount(&fs));
	if (!cache_was)
		buildid_cache_set(0);
}

TEST_F_TIMEOUT(dev, negative_positions_ext4, 300)
{
	negative_positions_fs(_metadata, self, "ext4", 16);
}

/* mkfs.xfs makes nothing smaller than 300 MiB. */
TEST_F_TIMEOUT(dev, negative_positions_xfs, 300)
{
	negative_positions_fs(_metadata, self, "xfs", 320);
}

/*
 * Every slab allocation of this task fails (failslab) while the sleepable
 * parsers read an evicted file: the Rust and C parsers give the same answer
 * (on ext4 both say -EINVAL, "no build ID"), nothing is left behind (the
 * harness checks kmemleak and the log), and once allocations work again
 * every parser, the cached one included, finds the ID: no failed fill left
 * an entry.
 */
TEST_F(dev, failslab_sleepable)
{
	static const uint32_t flags[] = {
		BUILDID_VMA_UNCACHED | BUILDID_SLEEPABLE,
		BUILDID_VMA_C_REFERENCE | BUILDID_SLEEPABLE,
		BUILDID_SLEEPABLE,
	};
	struct elf_craft c = { .phoff = 0x40, .note_off = 2 * 4096 + 0x10, .size = 70 * 4096 };
	struct answer a[ARRAY_SIZE(flags)];
	unsigned int i, failed = 0;
	int fd, make_it_fail, probability;
	void *map;

	/*
	 * A page fault of this task's own code or libraries while its slab
	 * allocations fail could not read the page in (9p needs them), and
	 * would kill it with SIGBUS: lock what is mapped now, before the file
	 * under test is mapped, whose pages must stay evictable.
	 */
	ASSERT_EQ(0, mlockall(MCL_CURRENT)) TH_LOG("mlockall: %m");
	build_id_pattern(&c.id, 20, 0x71);
	fd = evicted_file(self->dir, "failslab.elf", &c, &map);
	ASSERT_LE(0, fd);
	/* The task filter first: armed without it, every allocation fails. */
	ASSERT_EQ(0, fault_injection_arm("failslab", false))
		TH_LOG("CONFIG_FAILSLAB and CONFIG_FAULT_INJECTION_DEBUG_FS");
	ASSERT_EQ(0, write_string("/sys/kernel/debug/failslab/task-filter", "Y"));
	ASSERT_EQ(0, write_string("/sys/kernel/debug/failslab/ignore-gfp-wait", "N"));
	/* Opened now: opening a file allocates, which will fail. */
	make_it_fail = open("/proc/thread-self/make-it-fail", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, make_it_fail);
	probability = open("/sys/kernel/debug/failslab/probability", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, probability);
	ASSERT_EQ(0, fault_injection_arm("failslab", true));
	ASSERT_EQ(1, write(make_it_fail, "1", 1));
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		a[i] = ask(self->dev, map, flags[i]);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	}
	ASSERT_EQ(1, write(make_it_fail, "0", 1));
	ASSERT_EQ(1, write(probability, "0", 1));
	close(make_it_fail);
	close(probability);
	write_string("/sys/kernel/debug/failslab/task-filter", "N");
	munlockall();

	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		TH_LOG("parser %u under failslab: %d", i, a[i].ret);
		if (a[i].ret)
			failed++;
		else
			EXPECT_TRUE(build_id_equal(&c.id, a[i].id.data, a[i].id.size))
				TH_LOG("parser %u", i);
	}
	EXPECT_TRUE(same_answer(&a[0], &a[1])) TH_LOG("Rust %d, C %d", a[0].ret, a[1].ret);
	EXPECT_LT(0, failed) TH_LOG("no allocation failed: the test tested nothing");
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		a[i] = ask(self->dev, map, flags[i]);
		EXPECT_EQ(0, a[i].ret) TH_LOG("parser %u, allocations working", i);
		EXPECT_TRUE(build_id_equal(&c.id, a[i].id.data, a[i].id.size))
			TH_LOG("parser %u, allocations working", i);
	}
	munmap(map, 4096);
	close(fd);
}

static void on_signal(int sig)
{
}

struct busy_bench {
	int dev, fd;
	bool stop;		/* __atomic: the test thread sets it */
	unsigned int calls;
	int err;		/* the first error, other than -EINTR */
	int interrupted;	/* calls that returned -EINTR */
};

/* Sleepable Rust parses, 10 million at a time, until stopped. */
static void *bench_until_stopped(void *arg)
{
	struct busy_bench *b = arg;

	while (!__atomic_load_n(&b->stop, __ATOMIC_RELAXED)) {
		struct buildid_bench q = {
			.size = sizeof(q), .fd = b->fd, .flags = BUILDID_UNCACHED,
			.mode = BUILDID_BENCH_SLEEPABLE, .iterations = 10000000,
		};
		int err = ioctl_err(b->dev, BUILDID_IOC_BENCH, &q);

		if (err == -EINTR)
			b->interrupted++;
		else if (err && !b->err)
			b->err = err;
		b->calls++;
	}
	return NULL;
}

/*
 * The benchmark ioctl runs for minutes at 10 million parses: a signal ends
 * it with -EINTR; meanwhile the module cannot be unloaded (the open device
 * pins it), and unloading works once the device is closed.
 */
TEST_F_TIMEOUT(dev, busy_ioctls_signal_and_unload, 300)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct busy_bench b = { .dev = self->dev };
	unsigned int i;
	pthread_t thread;

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));	/* no SA_RESTART */
	b.fd = open(self->lib, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, b.fd);
	ASSERT_EQ(0, pthread_create(&thread, NULL, bench_until_stopped, &b));
	for (i = 0; i < 5; i++) {
		usleep(200000);
		EXPECT_NE(0, system("modprobe -r rust_buildid 2>/dev/null")) TH_LOG("round %u", i);
		ASSERT_EQ(0, pthread_kill(thread, SIGUSR1));
	}
	__atomic_store_n(&b.stop, true, __ATOMIC_RELAXED);
	/* The last call may have started after the last signal. */
	for (i = 0; i < 100 && pthread_kill(thread, SIGUSR1) == 0; i++) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (!pthread_timedjoin_np(thread, NULL, &ts))
			break;
	}
	EXPECT_EQ(0, b.err);
	EXPECT_LE(4, b.interrupted) TH_LOG("%u calls, %d interrupted", b.calls, b.interrupted);
	close(b.fd);
	close(self->dev);
	self->dev = -1;
	EXPECT_EQ(0, system("modprobe -r rust_buildid"));
	EXPECT_EQ(0, system("modprobe rust_buildid"));
	self->dev = open_buildid_dev();
	ASSERT_LE(0, self->dev);
}

/*
 * Twenty rounds: each load of the module takes about 5 s in the test
 * kernel (KASAN, lockdep, TCG).
 */
TEST_F_TIMEOUT(dev, load_unload_20, 300)
{
	struct buildid_file_query q = { .size = sizeof(q), .flags = BUILDID_SLEEPABLE };
	unsigned int i;
	int dev;

	q.fd = open(self->lib, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, q.fd);
	/* An open file pins the module. */
	EXPECT_NE(0, system("modprobe -r rust_buildid 2>/dev/null"));
	close(self->dev);
	self->dev = -1;
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, system("modprobe -r rust_buildid")) TH_LOG("round %u", i);
		ASSERT_EQ(0, system("modprobe rust_buildid")) TH_LOG("round %u", i);
		dev = open("/dev/buildid", O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, dev) TH_LOG("round %u: /dev/buildid: %m", i);
		ASSERT_EQ(0, ioctl_err(dev, BUILDID_IOC_FILE, &q));
		close(dev);
	}
	EXPECT_TRUE(build_id_equal(&self->lib_id, q.build_id, q.build_id_size));
	self->dev = open_buildid_dev();
	close(q.fd);
}

TEST_HARNESS_MAIN
