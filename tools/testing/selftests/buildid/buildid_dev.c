// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/buildid, the Rust build ID sample driver (samples/rust/rust_buildid.rs,
 * CONFIG_SAMPLE_RUST_BUILDID): every ioctl against build IDs computed in
 * user space, the copy_struct_from_user() rules for its size-prefixed
 * arguments, permissions, and loading and unloading the module.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "buildid_dev.h"
#include "buildid_util.h"

static int open_device(void)
{
	int fd = open("/dev/buildid", O_RDONLY | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT && !system("modprobe rust_buildid"))
		fd = open("/dev/buildid", O_RDONLY | O_CLOEXEC);
	return fd;
}

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
	self->dev = open_device();
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
	struct mapping m;
	void *handle, *sym;

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
	q.flags = 8;
	EXPECT_EQ(-EINVAL, ioctl_err(self->dev, BUILDID_IOC_VMA, &q));
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
	q.addr = (uintptr_t)open_device;
	EXPECT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_VMA, &q));
	EXPECT_TRUE(build_id_equal(&exe_id, q.build_id, q.build_id_size));
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	/* Gone: no such process. */
	EXPECT_EQ(-ESRCH, ioctl_err(self->dev, BUILDID_IOC_VMA, &q));

	/* Without root, another user's process is off limits, one's own is not. */
	EXPECT_EQ(0, as_nobody(query_pid1, self->dev, (void *)(uintptr_t)0x400000));
	EXPECT_EQ(0, as_nobody(query_own, self->dev, (void *)open_device));
}

static int bench_as_nobody(int dev, void *arg)
{
	struct buildid_bench *b = arg;

	return ioctl_err(dev, BUILDID_IOC_BENCH, b) == -EPERM ? 0 : 1;
}

TEST_F(dev, bench)
{
	static const uint32_t impls[] = { 0, BUILDID_C_REFERENCE, BUILDID_UNCACHED };
	struct buildid_bench b = { .size = sizeof(b), .iterations = 100 };
	unsigned int mode, impl;
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
	b.mode = BUILDID_BENCH_EMPTY;
	b.result = -1;
	EXPECT_EQ(0, ioctl_err(self->dev, BUILDID_IOC_BENCH, &b));
	EXPECT_EQ(0, b.result);
	b.mode = BUILDID_BENCH_EMPTY + 1;
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

TEST_F_TIMEOUT(dev, load_unload_100, 600)
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
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, system("modprobe -r rust_buildid")) TH_LOG("round %u", i);
		ASSERT_EQ(0, system("modprobe rust_buildid")) TH_LOG("round %u", i);
		dev = open("/dev/buildid", O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, dev) TH_LOG("round %u: /dev/buildid: %m", i);
		ASSERT_EQ(0, ioctl_err(dev, BUILDID_IOC_FILE, &q));
		close(dev);
	}
	EXPECT_TRUE(build_id_equal(&self->lib_id, q.build_id, q.build_id_size));
	self->dev = open_device();
	close(q.fd);
}

TEST_HARNESS_MAIN
