// SPDX-License-Identifier: GPL-2.0
/*
 * Build IDs in BPF stack traces: bpf_get_stack(), bpf_get_stackid() and
 * bpf_get_task_stack() with user build IDs, from non-sleepable programs
 * (page cache only) and sleepable ones (may read the file), uprobes on
 * this binary and on a shared library, perf_event programs (hard interrupt),
 * a tracepoint program in NMI, and the VMA edge cases of
 * kernel/bpf/stackmap.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/buildid_dev.h>

#include "../kselftest_harness.h"
#include "buildid_bpf.h"
#include "buildid_util.h"
#include "buildid_probe.h"
#include "buildid_stack.h"

#define PAGE 4096UL
#define LOCKLESS_VMA "/sys/kernel/debug/buildid_cache/lockless_vma"

DEFINE_PROBE_FUNC(buildid_probe);

DEFINE_CALL_PROBE;

FIXTURE(stack) {
	struct bpf_object *obj;
	struct bpf_map *data_map;
	struct bpf_link *links[4];
	unsigned int nr_links;
	struct stack_test_data data;
	char exe[PATH_MAX];
	struct build_id exe_id;
	char dir[PATH_MAX];
	char tmpfs[PATH_MAX + 8];
	struct cache_switch cache;
};

static int read_data(struct _test_data_stack *self)
{
	int key = 0;

	return bpf_map_lookup_elem(bpf_map__fd(self->data_map), &key, &self->data);
}

static int reset_data(struct _test_data_stack *self)
{
	int key = 0;

	memset(&self->data, 0, sizeof(self->data));
	self->data.target_tgid = getpid();
	self->data.self_tid = gettid();
	self->data.record_ips = 1;
	return bpf_map_update_elem(bpf_map__fd(self->data_map), &key, &self->data, BPF_ANY);
}

FIXTURE_SETUP(stack)
{
	ssize_t n;

	n = readlink("/proc/self/exe", self->exe, sizeof(self->exe) - 1);
	ASSERT_LT(0, n);
	self->exe[n] = '\0';
	ASSERT_EQ(0, elf_build_id_from_sections(self->exe, &self->exe_id));

	snprintf(self->dir, sizeof(self->dir), "%s/bpfstack.XXXXXX", scratch_dir());
	ASSERT_NE(NULL, mkdtemp(self->dir)) TH_LOG("mkdtemp in %s: %m", scratch_dir());

	self->obj = bpf_object__open_file(test_file("buildid_stack.bpf.o"), NULL);
	ASSERT_NE(NULL, self->obj) TH_LOG("open buildid_stack.bpf.o: %m");
	ASSERT_EQ(0, bpf_object__load(self->obj)) TH_LOG("load buildid_stack.bpf.o");
	self->data_map = bss_map_of(self->obj);
	ASSERT_NE(NULL, self->data_map);
	ASSERT_EQ(sizeof(struct stack_test_data), bpf_map__value_size(self->data_map));
	ASSERT_EQ(0, reset_data(self));
	self->nr_links = 0;
	self->tmpfs[0] = '\0';
}

FIXTURE_TEARDOWN(stack)
{
	cache_switch_restore(&self->cache);
	if (self->tmpfs[0])
		umount2(self->tmpfs, MNT_DETACH);
	while (self->nr_links)
		bpf_link__destroy(self->links[--self->nr_links]);
	bpf_object__close(self->obj);
	if (remove_tree(self->dir))
		TH_LOG("could not remove %s", self->dir);
}

/* Attach @prog_name to the probe body of @func in @binary. */
static int attach_probe(struct _test_data_stack *self, const char *prog_name,
			const char *binary, const char *func)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = func);
	struct bpf_program *prog;
	struct bpf_link *link;

	prog = bpf_object__find_program_by_name(self->obj, prog_name);
	if (!prog || self->nr_links == 4)
		return -ENOENT;
	link = bpf_program__attach_uprobe_opts(prog, getpid(), binary, PROBE_BODY_OFFSET, &opts);
	if (!link)
		return -errno;
	self->links[self->nr_links++] = link;
	return 0;
}

static void detach_all(struct _test_data_stack *self)
{
	while (self->nr_links)
		bpf_link__destroy(self->links[--self->nr_links]);
}

/*
 * Frame @i of @f, recorded with build IDs, against the same stack recorded
 * without them in the same program run (@ips, as many bytes as @ips_ret).
 * Its offset must be the one /proc/self/maps gives for the frame's IP, and
 * @offset too when the caller knows it from a symbol (-1 if not).
 */
static void expect_frame(struct __test_metadata *_metadata, const char *what,
			 const struct bpf_stack_build_id *f, unsigned int i,
			 const __u64 *ips, long ips_ret,
			 const struct build_id *want, int64_t offset)
{
	struct build_id got = { .size = want->size };
	char got_hex[48], want_hex[48];
	int64_t ip_offset;

	memcpy(got.data, f[i].build_id, sizeof(got.data));
	build_id_hex(&got, got_hex, sizeof(got_hex));
	build_id_hex(want, want_hex, sizeof(want_hex));
	EXPECT_EQ(BPF_STACK_BUILD_ID_VALID, f[i].status) TH_LOG("%s: status %d", what, f[i].status);
	EXPECT_TRUE(build_id_equal(want, f[i].build_id, want->size))
		TH_LOG("%s: build ID %s, want %s", what, got_hex, want_hex);
	ASSERT_LT((long)i, ips_ret / (long)sizeof(*ips))
		TH_LOG("%s: the stack without build IDs has %ld bytes", what, ips_ret);
	ip_offset = file_offset_of((const void *)(uintptr_t)ips[i]);
	ASSERT_LE(0, ip_offset) TH_LOG("%s: IP %#llx is in no mapping of /proc/self/maps", what,
				       (unsigned long long)ips[i]);
	EXPECT_EQ(ip_offset, f[i].offset)
		TH_LOG("%s: offset %#llx, but IP %#llx is at file offset %#llx", what,
		       (unsigned long long)f[i].offset, (unsigned long long)ips[i],
		       (unsigned long long)ip_offset);
	if (offset >= 0)
		EXPECT_EQ(offset, f[i].offset)
			TH_LOG("%s: offset %#llx, want %#llx", what,
			       (unsigned long long)f[i].offset, (unsigned long long)offset);
}

static void expect_result_frame(struct __test_metadata *_metadata, const char *what,
				const struct stack_result *res, unsigned int i,
				const struct build_id *want, int64_t offset)
{
	expect_frame(_metadata, what, res->frames, i, res->ips, res->ips_ret, want, offset);
}

/* Frame 0 at the probe in this binary, frame 1 in call_probe(). */
static void check_binary_stack(struct __test_metadata *_metadata,
			       struct _test_data_stack *self, const struct stack_result *res)
{
	ASSERT_EQ(1, res->hits);
	ASSERT_LE((long)(2 * sizeof(res->frames[0])), res->ret)
		TH_LOG("helper returned %ld", res->ret);
	expect_result_frame(_metadata, "frame 0", res, 0, &self->exe_id,
			    file_offset_of(buildid_probe) + PROBE_BODY_OFFSET);
	expect_result_frame(_metadata, "frame 1", res, 1, &self->exe_id,
			    file_offset_of(call_probe) + CALL_PROBE_RETURN);
}

TEST_F(stack, uprobe_cached)
{
	ASSERT_EQ(0, attach_probe(self, "uprobe_stack", self->exe, "buildid_probe"));
	call_probe(buildid_probe);
	ASSERT_EQ(0, read_data(self));
	check_binary_stack(_metadata, self, &self->data.uprobe);
}

TEST_F(stack, uprobe_sleepable_cached)
{
	ASSERT_EQ(0, attach_probe(self, "uprobe_stack_sleepable", self->exe, "buildid_probe"));
	call_probe(buildid_probe);
	ASSERT_EQ(0, read_data(self));
	check_binary_stack(_metadata, self, &self->data.uprobe_sleepable);
}

TEST_F(stack, stackid_map)
{
	struct bpf_stack_build_id frames[STACK_MAX_FRAMES];
	struct bpf_map *map;
	__u32 id;

	ASSERT_EQ(0, attach_probe(self, "uprobe_stackid", self->exe, "buildid_probe"));
	call_probe(buildid_probe);
	ASSERT_EQ(0, read_data(self));
	ASSERT_EQ(1, self->data.stackid_hits);
	ASSERT_LE(0, self->data.stackid) TH_LOG("bpf_get_stackid: %ld", self->data.stackid);
	map = bpf_object__find_map_by_name(self->obj, "stackmap");
	ASSERT_NE(NULL, map);
	id = self->data.stackid;
	ASSERT_EQ(0, bpf_map_lookup_elem(bpf_map__fd(map), &id, frames));
	expect_frame(_metadata, "stackmap frame 0", frames, 0, self->data.stackid_ips.ips,
		     self->data.stackid_ips.ips_ret, &self->exe_id,
		     file_offset_of(buildid_probe) + PROBE_BODY_OFFSET);
}

/*
 * A copy of libbuildid_sha1.so at @path, loaded: its build ID in @id and
 * its probe function in @probe.  NULL if any step failed.
 */
static void *load_probe_lib(struct __test_metadata *_metadata, const char *path,
			    struct build_id *id, void (**probe)(void))
{
	void *handle;

	if (copy_file(test_file("libbuildid_sha1.so"), path) ||
	    elf_build_id_from_sections(path, id))
		return NULL;
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		TH_LOG("dlopen %s: %s", path, dlerror());
		return NULL;
	}
	*probe = (void (*)(void))dlsym(handle, "buildid_lib_probe");
	if (!*probe) {
		dlclose(handle);
		return NULL;
	}
	return handle;
}

/*
 * A library whose header page is not in the page cache when the probe
 * fires.  Without the build ID cache, the non-sleepable helper gives up on
 * that frame and keeps the IP, the sleepable one reads the page.  With it,
 * both find the build ID that a query before the eviction cached (mmap()
 * caches nothing), and nothing reads the page.
 */
static void evicted_library(struct __test_metadata *_metadata, struct _test_data_stack *self,
			    const char *dir, bool sleepable, bool page_cache_reads, bool cache)
{
	const char *prog = sleepable ? "uprobe_stack_sleepable" : "uprobe_stack";
	const struct stack_result *res;
	char path[PATH_MAX + 32];
	void (*probe)(void);
	struct build_id lib_id;
	void *handle;

	ASSERT_EQ(0, cache_switch_set(&self->cache, cache));
	snprintf(path, sizeof(path), "%s/evicted_%d.so", dir, sleepable);
	handle = load_probe_lib(_metadata, path, &lib_id, &probe);
	ASSERT_NE(NULL, handle);
	ASSERT_EQ(0, attach_probe(self, prog, path, "buildid_lib_probe"));
	if (cache)
		ASSERT_EQ(0, buildid_cache_ask(probe));
	ASSERT_TRUE(evict_file(path, 0)) TH_LOG("page 0 of %s stayed in the page cache", path);

	call_probe(probe);
	ASSERT_EQ(0, read_data(self));
	res = sleepable ? &self->data.uprobe_sleepable : &self->data.uprobe;
	ASSERT_EQ(1, res->hits);
	ASSERT_LE((long)(2 * sizeof(res->frames[0])), res->ret);
	if (cache) {
		expect_result_frame(_metadata, "library frame", res, 0, &lib_id,
				    file_offset_of(probe) + PROBE_BODY_OFFSET);
		EXPECT_EQ(0, file_page_cached(path, 0)) TH_LOG("the page cache, not the cache, answered");
	} else if (sleepable) {
		expect_result_frame(_metadata, "library frame", res, 0, &lib_id,
				    file_offset_of(probe) + PROBE_BODY_OFFSET);
		if (page_cache_reads)
			EXPECT_EQ(1, file_page_cached(path, 0));
	} else {
		EXPECT_EQ(BPF_STACK_BUILD_ID_IP, res->frames[0].status);
		EXPECT_EQ((uintptr_t)probe + PROBE_BODY_OFFSET, res->frames[0].ip);
		ASSERT_LE((long)sizeof(res->ips[0]), res->ips_ret);
		EXPECT_EQ(res->ips[0], res->frames[0].ip);
		EXPECT_EQ(0, file_page_cached(path, 0)) TH_LOG("nofault read the file");
	}
	/* The caller's frame, in a file that is cached, resolves either way. */
	expect_result_frame(_metadata, "caller frame", res, 1, &self->exe_id,
			    file_offset_of(call_probe) + CALL_PROBE_RETURN);
	detach_all(self);
	dlclose(handle);
}

TEST_F(stack, uprobe_evicted_nofault)
{
	evicted_library(_metadata, self, self->dir, false, true, false);
}

TEST_F(stack, uprobe_evicted_sleepable)
{
	evicted_library(_metadata, self, self->dir, true, true, false);
}

/* Our variant of test_progs' build_id nofault-paged-out, with the cache on. */
TEST_F(stack, uprobe_evicted_nofault_cached)
{
	evicted_library(_metadata, self, self->dir, false, false, true);
}

TEST_F(stack, uprobe_evicted_sleepable_cached)
{
	evicted_library(_metadata, self, self->dir, true, false, true);
}

/*
 * Both helpers, nofault and sleepable, in one call of a library on
 * @fstype with the cache on: a query of the library's mapping filled the
 * cache, lookups answer the frames, and the library's frame has the ID in
 * the file.
 */
static void cached_library(struct __test_metadata *_metadata, struct _test_data_stack *self,
			   const char *dir, const char *fstype)
{
	char path[PATH_MAX + 32], type[32];
	struct build_id lib_id;
	void (*probe)(void);
	unsigned int sleepable;
	void *handle;
	long hits;

	ASSERT_EQ(0, fs_type_of(dir, type, sizeof(type)));
	ASSERT_STREQ(fstype, type) TH_LOG("%s", dir);
	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	snprintf(path, sizeof(path), "%s/cached_lib.so", dir);
	handle = load_probe_lib(_metadata, path, &lib_id, &probe);
	ASSERT_NE(NULL, handle);
	ASSERT_EQ(0, attach_probe(self, "uprobe_stack", path, "buildid_lib_probe"));
	ASSERT_EQ(0, attach_probe(self, "uprobe_stack_sleepable", path, "buildid_lib_probe"));
	ASSERT_EQ(0, buildid_cache_ask(probe));

	hits = buildid_cache_stat("hits");
	ASSERT_LE(0, hits);
	call_probe(probe);
	EXPECT_LE(hits + 2, buildid_cache_stat("hits"));
	ASSERT_EQ(0, read_data(self));
	for (sleepable = 0; sleepable < 2; sleepable++) {
		const struct stack_result *res = sleepable ? &self->data.uprobe_sleepable :
							     &self->data.uprobe;

		ASSERT_EQ(1, res->hits);
		expect_result_frame(_metadata, sleepable ? "sleepable" : "nofault", res, 0,
				    &lib_id, file_offset_of(probe) + PROBE_BODY_OFFSET);
	}
	detach_all(self);
	dlclose(handle);
	unlink(path);
}

TEST_F(stack, uprobe_cached_library_9p)
{
	cached_library(_metadata, self, self_dir(), "9p");
}

TEST_F(stack, uprobe_cached_library_tmpfs)
{
	snprintf(self->tmpfs, sizeof(self->tmpfs), "%s/tmpfs", self->dir);
	ASSERT_EQ(0, mkdir(self->tmpfs, 0755));
	ASSERT_EQ(0, mount("tmpfs", self->tmpfs, "tmpfs", 0, "size=1m"));
	cached_library(_metadata, self, self->tmpfs, "tmpfs");
}

static int lockdep_debug_locks(void)
{
	char line[256];
	int val = -1;
	FILE *f = fopen("/proc/lockdep_stats", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " debug_locks: %d", &val) == 1)
			break;
	fclose(f);
	return val;
}

/*
 * The sleepable path must not read a file under mmap_lock: 9p takes the
 * inode lock to read, and a write to 9p takes it before faulting in the
 * user buffer, so lockdep sees the cycle if the parse runs under the lock.
 */
TEST_F(stack, sleepable_read_without_mmap_lock)
{
	const char *dir = self_dir();
	char fstype[32];

	if (fs_type_of(dir, fstype, sizeof(fstype)) || strcmp(fstype, "9p"))
		SKIP(return, "%s is not on 9p, whose reads take the inode lock", dir);
	if (lockdep_debug_locks() != 1)
		SKIP(return, "lockdep is not enabled or already turned off");

	/* copy_file() writes to 9p: the inode lock, then a user page fault. */
	/* Without the cache, which would answer without reading the file. */
	evicted_library(_metadata, self, dir, true, false, false);
	EXPECT_EQ(1, lockdep_debug_locks()) TH_LOG("lockdep reported a problem, see dmesg");
	unlink(test_file("evicted_1.so"));
}

/* A perf_event program on the software cpu-clock, sampling this process. */
/*
 * A cpu-clock event of this thread, user mode only, every millisecond of
 * its CPU time, with the perf_event program @prog_name attached; disabled.
 * Returns the event's fd.
 */
static int attach_cpu_clock(struct __test_metadata *_metadata, struct _test_data_stack *self,
			    const char *prog_name)
{
	struct bpf_program *prog;
	struct bpf_link *link;
	int fd;

	fd = perf_cpu_clock_open();
	if (fd < 0)
		TH_LOG("perf_event_open cpu-clock: %s", strerror(-fd));
	prog = bpf_object__find_program_by_name(self->obj, prog_name);
	link = fd >= 0 && prog ? bpf_program__attach_perf_event(prog, fd) : NULL;
	if (!link) {
		TH_LOG("attaching %s to cpu-clock failed", prog_name);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	self->links[self->nr_links++] = link;
	return fd;
}

/*
 * Runs the perf_event program on a cpu-clock event of this process until it
 * takes one sample in user mode, in the spin loop below.
 */
static void sample_spinning(struct __test_metadata *_metadata, struct _test_data_stack *self)
{
	unsigned long spin = 0;
	unsigned int round;
	int pfd;

	ASSERT_EQ(0, reset_data(self));
	pfd = attach_cpu_clock(_metadata, self, "perf_stack");
	ASSERT_LE(0, pfd);
	ASSERT_EQ(0, ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0));
	for (round = 0; round < 100 && !self->data.perf.hits; round++) {
		for (unsigned long i = 0; i < 10000000; i++) {
			spin += i;
			asm volatile("" : "+r" (spin));
		}
		ASSERT_EQ(0, read_data(self));
	}
	detach_all(self);
	close(pfd);
	ASSERT_EQ(1, self->data.perf.hits);
}

/* The sample of sample_spinning(): its first frame is this binary's, with its ID. */
static void check_spinning_sample(struct __test_metadata *_metadata,
				  struct _test_data_stack *self)
{
	const struct bpf_stack_build_id *f = self->data.perf.frames;
	struct mapping text, sampled_fn;

	ASSERT_LE((long)sizeof(*f), self->data.perf.ret);
	/*
	 * Sampled while spinning in this program: the sampled IP is in this
	 * binary's text, and its offset comes from /proc/self/maps.
	 */
	ASSERT_LE((long)sizeof(self->data.perf.ips[0]), self->data.perf.ips_ret);
	ASSERT_EQ(0, maps_find(getpid(), self->data.perf.ips[0], &text));
	EXPECT_STREQ(self->exe, text.path);
	ASSERT_EQ(0, maps_find(getpid(), (uintptr_t)check_binary_stack, &sampled_fn));
	EXPECT_EQ(sampled_fn.start, text.start) TH_LOG("sampled outside this binary's text");
	expect_result_frame(_metadata, "sampled frame", &self->data.perf, 0, &self->exe_id, -1);
}

/*
 * A perf_event program in atomic context (a cpu-clock sample: hrtimer
 * interrupt).  With the cache on, a first sample may miss (an earlier test
 * may have emptied the cache) and queue fills; once they are done, a second
 * sample is answered from the cache: hits go up, misses do not (nothing
 * else in the guest asks for build IDs meanwhile).
 */
TEST_F(stack, perf_event_cpu_clock)
{
	long hits, misses;

	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	sample_spinning(_metadata, self);
	check_spinning_sample(_metadata, self);
	ASSERT_EQ(0, buildid_cache_drain());
	hits = buildid_cache_stat("hits");
	misses = buildid_cache_stat("misses");
	ASSERT_LE(0, hits);
	ASSERT_LE(0, misses);
	sample_spinning(_metadata, self);
	check_spinning_sample(_metadata, self);
	EXPECT_LT(hits, buildid_cache_stat("hits"));
	EXPECT_EQ(misses, buildid_cache_stat("misses")) TH_LOG("a frame was not cached");
}

static void *block_on_pipe(void *arg)
{
	int *fds = arg;
	char c;

	fds[2] = gettid();
	return (void *)(long)read(fds[0], &c, 1);
}

/*
 * bpf_get_task_stack() from a task iterator: user stacks of another task
 * are not walked (-EOPNOTSUPP in 6.12, no build ID of a foreign mm); the
 * iterating task's own stack is, in both the plain and the sleepable
 * iterator.
 */
TEST_F(stack, task_stack_iterator)
{
	static const char * const progs[] = { "task_stack", "task_stack_sleepable" };
	int fds[3] = { -1, -1, 0 };
	struct build_id libc_id;
	struct mapping libc;
	pthread_t thread;
	unsigned int i;

	ASSERT_EQ(0, maps_find(getpid(), (uintptr_t)read, &libc));
	ASSERT_EQ(0, elf_build_id_from_sections(libc.path, &libc_id));
	ASSERT_EQ(0, pipe(fds));
	ASSERT_EQ(0, pthread_create(&thread, NULL, block_on_pipe, fds));
	while (!__atomic_load_n(&fds[2], __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(100000);

	for (i = 0; i < 2; i++) {
		const struct stack_result *res;
		struct bpf_program *prog;
		struct bpf_link *link;
		char buf[64];
		int iter;

		ASSERT_EQ(0, reset_data(self));
		self->data.target_tid = fds[2];
		ASSERT_EQ(0, bpf_map_update_elem(bpf_map__fd(self->data_map), &(int){0},
						 &self->data, BPF_ANY));
		prog = bpf_object__find_program_by_name(self->obj, progs[i]);
		ASSERT_NE(NULL, prog);
		link = bpf_program__attach_iter(prog, NULL);
		ASSERT_NE(NULL, link) TH_LOG("attach %s", progs[i]);
		iter = bpf_iter_create(bpf_link__fd(link));
		ASSERT_LE(0, iter);
		while (read(iter, buf, sizeof(buf)) > 0)
			;
		close(iter);
		bpf_link__destroy(link);
		ASSERT_EQ(0, read_data(self));

		if (i == 0) {
			EXPECT_EQ(1, self->data.task_other.hits);
			EXPECT_EQ(-EOPNOTSUPP, self->data.task_other.ret);
		}
		res = i ? &self->data.task_self_sleepable : &self->data.task_self;
		ASSERT_EQ(1, res->hits) TH_LOG("%s", progs[i]);
		ASSERT_LE((long)sizeof(res->frames[0]), res->ret) TH_LOG("%s", progs[i]);
		/* Frame 0 is the read() system call, inside libc. */
		expect_result_frame(_metadata, progs[i], res, 0, &libc_id, -1);
	}
	ASSERT_EQ(1, write(fds[1], "x", 1));
	pthread_join(thread, NULL);
	close(fds[0]);
	close(fds[1]);
}

/*
 * Two crafted ELF files, A and B, whose code pages are mapped back to back,
 * so that A's VMA ends where B's begins.  A's last instruction is a call,
 * so a return address equals A's vm_end and belongs to B.  The stack at the
 * probe, innermost first: this binary, A (inner), B (start), this binary.
 */
static const unsigned char code_a_inner[] = {
	0x55,			/* push %rbp */
	0x48, 0x89, 0xe5,	/* mov %rsp,%rbp */
	0xff, 0xd6,		/* call *%rsi: the probe */
	0x5d,			/* pop %rbp */
	0xc3,			/* ret */
};

static const unsigned char code_a_outer[] = {
	0x55,			/* push %rbp */
	0x48, 0x89, 0xe5,	/* mov %rsp,%rbp */
	0xff, 0xd7,		/* call *%rdi: inner; returns to A's vm_end */
};

static const unsigned char code_b[] = {
	0x5d,			/* pop %rbp: outer's frame */
	0xc3,			/* ret */
};

static void vma_boundary(struct __test_metadata *_metadata, struct _test_data_stack *self,
			 bool sleepable)
{
	const char *prog = sleepable ? "uprobe_stack_sleepable" : "uprobe_stack";
	unsigned char code[PAGE];
	struct elf_craft a = { .phoff = 0x40, .note_off = 0x100, .code_off = PAGE,
			       .code = code, .code_size = PAGE };
	struct elf_craft b = { .phoff = 0x40, .note_off = 0x100, .code_off = PAGE,
			       .code = code_b, .code_size = sizeof(code_b) };
	char path_a[PATH_MAX + 8], path_b[PATH_MAX + 8];
	void (*outer)(void *inner, void (*probe)(void));
	const struct stack_result *res;
	unsigned char *area;
	int fd_a, fd_b;

	memset(code, 0xcc, sizeof(code));
	memcpy(code, code_a_inner, sizeof(code_a_inner));
	memcpy(code + PAGE - sizeof(code_a_outer), code_a_outer, sizeof(code_a_outer));
	build_id_pattern(&a.id, 20, 0xa0);
	build_id_pattern(&b.id, 16, 0xb0);
	snprintf(path_a, sizeof(path_a), "%s/a.elf", self->dir);
	snprintf(path_b, sizeof(path_b), "%s/b.elf", self->dir);
	ASSERT_EQ(0, elf_craft_file(path_a, &a));
	ASSERT_EQ(0, elf_craft_file(path_b, &b));

	area = mmap(NULL, 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, area);
	fd_a = open(path_a, O_RDONLY | O_CLOEXEC);
	fd_b = open(path_b, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd_a);
	ASSERT_LE(0, fd_b);
	ASSERT_EQ(area, mmap(area, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED,
			     fd_a, PAGE));
	ASSERT_EQ(area + PAGE, mmap(area + PAGE, PAGE, PROT_READ | PROT_EXEC,
				    MAP_PRIVATE | MAP_FIXED, fd_b, PAGE));
	close(fd_a);
	close(fd_b);

	ASSERT_EQ(0, attach_probe(self, prog, self->exe, "buildid_probe"));
	outer = (void *)(area + PAGE - sizeof(code_a_outer));
	outer(area, buildid_probe);
	ASSERT_EQ(0, read_data(self));
	res = sleepable ? &self->data.uprobe_sleepable : &self->data.uprobe;
	ASSERT_EQ(1, res->hits);
	ASSERT_LE((long)(4 * sizeof(res->frames[0])), res->ret);
	expect_result_frame(_metadata, "frame 0 (probe)", res, 0, &self->exe_id,
			    file_offset_of(buildid_probe) + PROBE_BODY_OFFSET);
	expect_result_frame(_metadata, "frame 1 (A)", res, 1, &a.id, PAGE + 6);
	expect_result_frame(_metadata, "frame 2 (B at A's vm_end)", res, 2, &b.id, PAGE);
	expect_result_frame(_metadata, "frame 3 (caller)", res, 3, &self->exe_id, -1);
	detach_all(self);
	munmap(area, 2 * PAGE);
}

TEST_F(stack, vma_boundary_nofault)
{
	vma_boundary(_metadata, self, false);
}

TEST_F(stack, vma_boundary_sleepable)
{
	vma_boundary(_metadata, self, true);
}

/* What a thread that changes the sampled code's file or mapping shares with the test. */
struct race_control {
	bool stop;		/* __atomic: the test thread sets it */
	unsigned int changes;	/* __atomic: the test thread reads it */
	int err;
};

struct racer {
	struct race_control ctl;
	const char *path;
	const unsigned char *img[2];
	size_t len;
};

/*
 * Takes turns with the two images: truncates the file to its first page
 * (the ELF header and the code being run, the same in both), writes the
 * rest of the other image back in whole pages, syncs and evicts it.
 */
static void *rewrite_until_stopped(void *arg)
{
	struct racer *r = arg;
	unsigned int turn = 1;

	while (!__atomic_load_n(&r->ctl.stop, __ATOMIC_RELAXED) && !r->ctl.err) {
		const unsigned char *img = r->img[turn % 2];
		size_t tail = r->len - PAGE;
		int fd = open(r->path, O_WRONLY | O_CLOEXEC);

		if (fd < 0) {
			r->ctl.err = -errno;
			break;
		}
		if (ftruncate(fd, PAGE) || pwrite(fd, img + PAGE, tail, PAGE) != (ssize_t)tail ||
		    fsync(fd))
			r->ctl.err = errno ? -errno : -EIO;
		close(fd);
		/* Some time with the new pages cached, some with them gone. */
		usleep(2000 * (turn % 3));
		fd = open(r->path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			posix_fadvise(fd, PAGE, 0, POSIX_FADV_DONTNEED);
			close(fd);
		}
		__atomic_fetch_add(&r->ctl.changes, 1, __ATOMIC_RELAXED);
		turn++;
		usleep(1000 * (turn % 2));
	}
	return NULL;
}

/* Where the samples of a race come from. */
enum sample_source {
	/* a cpu-clock event of this thread: hard interrupt context */
	CPU_CLOCK,
	/*
	 * NMIs: another thread asks for the NMI backtrace of every other CPU
	 * (sysrq 'l', which also prints each CPU's registers to the kernel
	 * log), and the nmi_race program runs in each NMI
	 */
	NMI_BACKTRACE,
};

/* The samples a race takes at least, by source: NMIs come one per backtrace. */
static const unsigned int race_samples[] = { [CPU_CLOCK] = 300, [NMI_BACKTRACE] = 100 };

/* Asks for an NMI backtrace of the other CPUs every 2 ms; counts them as changes. */
static void *send_nmis_until_stopped(void *arg)
{
	struct race_control *ctl = arg;
	int fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		ctl->err = -errno;
		return NULL;
	}
	while (!__atomic_load_n(&ctl->stop, __ATOMIC_RELAXED)) {
		if (write(fd, "l", 1) != 1) {
			ctl->err = -errno;
			break;
		}
		__atomic_fetch_add(&ctl->changes, 1, __ATOMIC_RELAXED);
		usleep(2000);
	}
	close(fd);
	return NULL;
}

/* Attaches the program that takes the race's samples from @source; 0 or -1. */
static int attach_race_source(struct __test_metadata *_metadata, struct _test_data_stack *self,
			      enum sample_source source, int *perf_fd)
{
	struct bpf_program *prog;
	struct bpf_link *link;

	*perf_fd = -1;
	if (source == CPU_CLOCK) {
		*perf_fd = attach_cpu_clock(_metadata, self, "perf_race");
		return *perf_fd < 0 ? -1 : 0;
	}
	prog = bpf_object__find_program_by_name(self->obj, "nmi_race");
	link = prog ? bpf_program__attach(prog) : NULL;
	if (!link) {
		TH_LOG("attaching nmi_race to nmi:nmi_handler failed");
		return -1;
	}
	self->links[self->nr_links++] = link;
	return 0;
}

/*
 * For NMI samples: this thread alone on the last CPU it may use, every other
 * thread of the process on the first, so that the NMI backtrace that another
 * thread asks for lands where @spin runs.  Saves this thread's CPUs in @saved.
 */
static int pin_for_nmis(cpu_set_t *saved)
{
	int first = -1, last = -1, cpu;
	struct dirent *d;
	cpu_set_t set;
	DIR *dir;

	if (sched_getaffinity(0, sizeof(*saved), saved))
		return -errno;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (CPU_ISSET(cpu, saved)) {
			if (first < 0)
				first = cpu;
			last = cpu;
		}
	}
	if (first == last)
		return -ENXIO;
	CPU_ZERO(&set);
	CPU_SET(last, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -errno;
	dir = opendir("/proc/self/task");
	if (!dir)
		return -errno;
	CPU_ZERO(&set);
	CPU_SET(first, &set);
	while ((d = readdir(dir))) {
		pid_t tid = atoi(d->d_name);

		if (tid > 0 && tid != gettid() && sched_setaffinity(tid, sizeof(set), &set)) {
			closedir(dir);
			return -errno;
		}
	}
	closedir(dir);
	return 0;
}

/*
 * Runs @spin, the code in self->data.race's range, with samples from
 * @source while @change changes its file or mapping on another thread:
 * until race_samples[@source] samples, @want_changes changes and, with
 * @want_both, a VALID sample of each file; two minutes at most.  Returns
 * the rounds of @spin.
 */
static unsigned int sample_race(struct __test_metadata *_metadata,
				struct _test_data_stack *self, enum sample_source source,
				void (*spin)(unsigned long count), void *(*change)(void *),
				void *arg, struct race_control *ctl, unsigned int want_changes,
				bool want_both)
{
	const struct race_result *race = &self->data.race;
	struct race_control nmis = {};
	unsigned int round = 0;
	pthread_t thread, sender;
	int pinned = 0;
	cpu_set_t cpus;
	time_t deadline;
	int fd, key = 0;

	if (bpf_map_update_elem(bpf_map__fd(self->data_map), &key, &self->data, BPF_ANY)) {
		TH_LOG("cannot set up the race: %m");
		ctl->err = -errno;
		return 0;
	}
	if (attach_race_source(_metadata, self, source, &fd) ||
	    pthread_create(&thread, NULL, change, arg)) {
		ctl->err = -EINVAL;
		return 0;
	}
	if (source == NMI_BACKTRACE) {
		if (pthread_create(&sender, NULL, send_nmis_until_stopped, &nmis))
			nmis.err = -EAGAIN;
		else
			nmis.err = 0;
		if (!nmis.err)
			pinned = pin_for_nmis(&cpus);
		if (pinned)
			TH_LOG("pinning threads for NMIs: %s (two CPUs are needed)",
			       strerror(-pinned));
	}
	if (fd >= 0)
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	deadline = time(NULL) + 120;
	for (; time(NULL) < deadline && !nmis.err && !pinned; round++) {
		spin(2000000);
		if (read_data(self))
			break;
		if (race->samples >= race_samples[source] &&
		    __atomic_load_n(&ctl->changes, __ATOMIC_RELAXED) >= want_changes &&
		    (!want_both || (race->seen[0] && race->seen[1])))
			break;
	}
	if (fd >= 0)
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (source == NMI_BACKTRACE && nmis.err != -EAGAIN) {
		__atomic_store_n(&nmis.stop, true, __ATOMIC_RELAXED);
		pthread_join(sender, NULL);
		TH_LOG("%u NMI backtraces asked for", nmis.changes);
		sched_setaffinity(0, sizeof(cpus), &cpus);
	}
	if (nmis.err)
		TH_LOG("sending NMIs: %s", strerror(-nmis.err));
	if (nmis.err || pinned)
		ctl->err = nmis.err ?: pinned;
	__atomic_store_n(&ctl->stop, true, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	detach_all(self);
	if (fd >= 0)
		close(fd);
	if (read_data(self))
		ctl->err = -EIO;
	return round;
}

/* No sample of a race got another status, ID or offset than one file's. */
static void expect_no_wrong_frame(struct __test_metadata *_metadata,
				  struct _test_data_stack *self)
{
	const struct race_result *race = &self->data.race;
	struct build_id wrong = { .size = 20 };
	char hex[48];

	memcpy(wrong.data, race->wrong_id, 20);
	build_id_hex(&wrong, hex, sizeof(hex));
	EXPECT_EQ(0, race->wrong)
		TH_LOG("last wrong answer: status %d, ID %s, offset %#llx at ip %#llx (mapping at %#llx)",
		       race->wrong_status, hex, (unsigned long long)race->wrong_offset,
		       (unsigned long long)race->wrong_ip, (unsigned long long)race->map_start);
	EXPECT_EQ(0, race->failed);
}

/*
 * bpf_get_stack() with build IDs from a perf_event program (a cpu-clock
 * sample: hard interrupt context) while the process runs code from a file
 * that another thread truncates, rewrites with another build ID and
 * evicts, over and over: every answer is one of the two IDs or an IP,
 * never another ID or status.  With the cache on, nofault misses also
 * queue fills that race with the writer.
 */
static void perf_race(struct __test_metadata *_metadata, struct _test_data_stack *self,
		      bool cache)
{
	struct elf_craft c = { .phoff = PAGE, .note_off = 2 * PAGE + 0x10, .size = 3 * PAGE,
			       .code_off = 0x100, .code = spin_code,
			       .code_size = sizeof(spin_code) };
	char path[PATH_MAX + 16], type[32];
	struct racer r = { .path = path };
	unsigned char *img[2];
	struct build_id ids[2];
	void (*spin)(unsigned long count);
	unsigned int round, i;
	size_t len[2];
	void *map;
	int fd;

	ASSERT_EQ(0, fs_type_of(self->dir, type, sizeof(type)));
	ASSERT_STREQ("ext4", type) TH_LOG("BUILDID_SCRATCH_DIR is not on ext4");
	for (i = 0; i < 2; i++) {
		build_id_pattern(&ids[i], 20, 0xc0 + 0x10 * i);
		c.id = ids[i];
		img[i] = elf_craft_image(&c, &len[i]);
		ASSERT_NE(NULL, img[i]);
		r.img[i] = img[i];
	}
	ASSERT_EQ(len[0], len[1]);
	ASSERT_EQ(0, memcmp(img[0], img[1], PAGE)) TH_LOG("the first pages differ");
	r.len = len[0];
	snprintf(path, sizeof(path), "%s/race.elf", self->dir);
	ASSERT_EQ(0, write_file(path, img[0], len[0]));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	map = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	close(fd);
	spin = (void *)((char *)map + c.code_off);
	spin(1);

	ASSERT_EQ(0, cache_switch_set(&self->cache, cache));
	ASSERT_EQ(0, reset_data(self));
	self->data.race.start = (uintptr_t)spin;
	self->data.race.end = (uintptr_t)spin + sizeof(spin_code);
	self->data.race.map_start = (uintptr_t)map;
	for (i = 0; i < 2; i++)
		memcpy(self->data.race.ids[i], ids[i].data, 20);
	round = sample_race(_metadata, self, CPU_CLOCK, spin, rewrite_until_stopped, &r, &r.ctl, 20,
			    false);
	munmap(map, PAGE);
	free(img[0]);
	free(img[1]);

	TH_LOG("%u rounds, %u samples, %u rewrites: %u with the first ID, %u the second, %u IP only, %u failed",
	       round, self->data.race.samples, r.ctl.changes, self->data.race.seen[0],
	       self->data.race.seen[1], self->data.race.ip_only, self->data.race.failed);
	EXPECT_EQ(0, r.ctl.err);
	expect_no_wrong_frame(_metadata, self);
	EXPECT_LT(0, self->data.race.seen[0] + self->data.race.seen[1]);
	EXPECT_LT(0, self->data.race.ip_only) TH_LOG("no sample saw the file changing");
	EXPECT_LE(10, r.ctl.changes);
}

TEST_F_TIMEOUT(stack, perf_event_race_rewrite, 600)
{
	perf_race(_metadata, self, false);
}

TEST_F_TIMEOUT(stack, perf_event_race_rewrite_cached, 600)
{
	perf_race(_metadata, self, true);
}

enum mapping_change {
	/* mmap(MAP_FIXED) of the other file over the code's page */
	REMAP_MMAP,
	/* the other file mapped elsewhere, then mremap(MREMAP_FIXED) over it */
	REMAP_MREMAP,
	/*
	 * mprotect() of the code's page, the second of its mapping: splits the
	 * VMA, which then starts at the code's page with the page offset moved
	 * (both changed in place), then merges it back
	 */
	SPLIT_MPROTECT,
	/*
	 * nothing near the code: mmap(), touch and munmap() of anonymous
	 * memory elsewhere, as allocators do; mmap_lock is still held for
	 * writing most of the time
	 */
	BUSY_ANON,
};

struct remapper {
	struct race_control ctl;
	void *addr;		/* the code's page */
	int fd[2];
	enum mapping_change change;
};

/* File k is mapped where its copy of the code is, page k. */
static void *change_mapping_until_stopped(void *arg)
{
	struct remapper *r = arg;
	unsigned int turn = 1;

	while (!__atomic_load_n(&r->ctl.stop, __ATOMIC_RELAXED) && !r->ctl.err) {
		unsigned int k = turn % 2;
		void *p = MAP_FAILED;

		switch (r->change) {
		case REMAP_MMAP:
			p = mmap(r->addr, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED,
				 r->fd[k], k * PAGE);
			break;
		case REMAP_MREMAP:
			p = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, r->fd[k],
				 k * PAGE);
			if (p != MAP_FAILED)
				p = mremap(p, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, r->addr);
			break;
		case SPLIT_MPROTECT:
			if (!mprotect(r->addr, PAGE, PROT_READ | PROT_EXEC | (k ? PROT_WRITE : 0)))
				p = r->addr;
			break;
		case BUSY_ANON:
			errno = -busy_anon_once();
			p = errno ? MAP_FAILED : r->addr;
			break;
		}
		if (p != r->addr)
			r->ctl.err = p == MAP_FAILED ? -errno : -EFAULT;
		__atomic_fetch_add(&r->ctl.changes, 1, __ATOMIC_RELAXED);
		turn++;
		if (r->change != BUSY_ANON)
			usleep(300 * (turn % 4));
	}
	return NULL;
}

/*
 * The lookup that the stack helpers make for a frame, without mmap_lock,
 * asked through /dev/buildid as fast as one thread can: a sample rate of
 * 1 kHz rarely lands in a writer's few stores to a VMA, this does.  Each
 * answer is sorted as perf_race sorts a sample.
 */
struct prober {
	int dev;
	uint64_t addr;
	const struct race_result *race;
	bool stop;			/* __atomic: the test thread sets it */
	unsigned int valid[2], again, gap, wrong;
	uint64_t wrong_offset;
};

static void *probe_until_stopped(void *arg)
{
	struct prober *p = arg;
	const struct race_result *race = p->race;

	while (!__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
		struct buildid_vma_query q = {
			.size = sizeof(q), .flags = BUILDID_VMA_LOCKLESS, .addr = p->addr,
		};
		uint64_t rel = p->addr - race->map_start;
		unsigned int k;

		if (ioctl(p->dev, BUILDID_IOC_VMA, &q)) {
			if (errno == EAGAIN)
				p->again++;
			else if (errno == ENOENT)
				p->gap++;
			else
				p->wrong++;
			continue;
		}
		for (k = 0; k < 2; k++) {
			if (q.build_id_size == 20 && !memcmp(q.build_id, race->ids[k], 20) &&
			    q.vma_offset == rel + race->pgoff[k])
				break;
		}
		if (k < 2) {
			p->valid[k]++;
		} else {
			p->wrong++;
			p->wrong_offset = q.vma_offset;
		}
	}
	return NULL;
}

/*
 * bpf_get_stack() with build IDs from a perf_event program (hard interrupt
 * context) while the process runs code at an address whose mapping another
 * thread keeps changing: two ELF files with the same code and different
 * build IDs, the code at page 0 of one and page 1 of the other, mapped in
 * turn at one address from those pages (or one mapping split and merged
 * around it).  mmap_lock is held for writing much of the time, and the
 * frames are read without it: every VALID frame has one file's build ID
 * with the offset from that file's mapping, and each file is seen.  A
 * third thread asks the same lookup through /dev/buildid in a loop, with
 * the same verdict.
 */
static void perf_mapping_race(struct __test_metadata *_metadata, struct _test_data_stack *self,
			      enum mapping_change change, bool lockless_vma,
			      enum sample_source source)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 2 * PAGE + 0x10, .size = 3 * PAGE,
			       .code = spin_code, .code_size = sizeof(spin_code) };
	struct remapper r = { .change = change };
	struct prober probe = { .race = &self->data.race };
	char path[PATH_MAX + 16], type[32];
	pthread_t prober;
	void (*spin)(unsigned long count);
	struct build_id ids[2];
	long lockless, locked;
	unsigned int round, k;
	void *map;

	ASSERT_EQ(0, fs_type_of(self->dir, type, sizeof(type)));
	ASSERT_STREQ("ext4", type) TH_LOG("BUILDID_SCRATCH_DIR is not on ext4");
	for (k = 0; k < 2; k++) {
		build_id_pattern(&ids[k], 20, 0xd0 + 0x10 * k);
		c.id = ids[k];
		c.code_off = k * PAGE + 0x100;
		snprintf(path, sizeof(path), "%s/remap-%u.elf", self->dir, k);
		ASSERT_EQ(0, elf_craft_file(path, &c));
		r.fd[k] = open(path, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, r.fd[k]);
	}
	if (change == SPLIT_MPROTECT) {
		/* Pages 0 and 1 of file 1: the code is in the second. */
		map = mmap(NULL, 2 * PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, r.fd[1], 0);
		ASSERT_NE(MAP_FAILED, map);
		r.addr = (char *)map + PAGE;
	} else {
		map = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, r.fd[0], 0);
		ASSERT_NE(MAP_FAILED, map);
		r.addr = map;
	}
	spin = (void *)((char *)r.addr + 0x100);
	spin(1);

	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	ASSERT_EQ(0, reset_data(self));
	self->data.race.start = (uintptr_t)spin;
	self->data.race.end = (uintptr_t)spin + sizeof(spin_code);
	/* Where file offset pgoff[k] is mapped, split or not. */
	self->data.race.map_start = (uintptr_t)map;
	for (k = 0; k < 2; k++) {
		memcpy(self->data.race.ids[k], ids[k].data, 20);
		self->data.race.pgoff[k] = change == SPLIT_MPROTECT ? 0 : k * PAGE;
	}
	lockless = buildid_cache_stat("vma_lockless");
	ASSERT_LE(0, lockless);
	locked = buildid_cache_stat("vma_locked");
	ASSERT_LE(0, locked);
	probe.dev = open_buildid_dev();
	ASSERT_LE(0, probe.dev) TH_LOG("/dev/buildid: %m (CONFIG_SAMPLE_RUST_BUILDID)");
	probe.addr = (uintptr_t)spin;
	ASSERT_EQ(0, pthread_create(&prober, NULL, probe_until_stopped, &probe));
	if (!lockless_vma)
		ASSERT_EQ(0, write_string(LOCKLESS_VMA, "0"));
	round = sample_race(_metadata, self, source, spin, change_mapping_until_stopped, &r, &r.ctl,
			    50, change == REMAP_MMAP || change == REMAP_MREMAP);
	if (!lockless_vma)
		ASSERT_EQ(0, write_string(LOCKLESS_VMA, "1"));
	__atomic_store_n(&probe.stop, true, __ATOMIC_RELAXED);
	pthread_join(prober, NULL);
	close(probe.dev);
	munmap(map, change == SPLIT_MPROTECT ? 2 * PAGE : PAGE);
	close(r.fd[0]);
	close(r.fd[1]);

	TH_LOG("%u rounds, %u samples, %u changes: %u with the first ID, %u the second, %u IP only, %ld frames without mmap_lock",
	       round, self->data.race.samples, r.ctl.changes, self->data.race.seen[0],
	       self->data.race.seen[1], self->data.race.ip_only,
	       buildid_cache_stat("vma_lockless") - lockless);
	TH_LOG("probes: %u and %u valid, %u retry, %u in no mapping, %u wrong",
	       probe.valid[0], probe.valid[1], probe.again, probe.gap, probe.wrong);
	TH_LOG("lockless_vma %d: %u of %u samples VALID", lockless_vma,
	       self->data.race.seen[0] + self->data.race.seen[1], self->data.race.samples);
	EXPECT_EQ(0, r.ctl.err);
	/* NMIs that never came would leave nothing to check. */
	if (source == NMI_BACKTRACE)
		EXPECT_LE(race_samples[source], self->data.race.samples);
	expect_no_wrong_frame(_metadata, self);
	EXPECT_EQ(0, probe.wrong) TH_LOG("last wrong offset %#llx",
					 (unsigned long long)probe.wrong_offset);
	EXPECT_LE(50, r.ctl.changes);
	if (!lockless_vma) {
		/* Switched off, the lockless pass does not run at all. */
		EXPECT_EQ(lockless, buildid_cache_stat("vma_lockless"));
		EXPECT_EQ(locked, buildid_cache_stat("vma_locked"));
		return;
	}
	EXPECT_LT(0, probe.valid[0] + probe.valid[1]);
	EXPECT_LT(lockless, buildid_cache_stat("vma_lockless")) TH_LOG("no frame was read without mmap_lock");
	switch (change) {
	case SPLIT_MPROTECT:
		EXPECT_LT(0, self->data.race.seen[1]);
		break;
	case BUSY_ANON:
		EXPECT_LT(0, self->data.race.seen[0]);
		break;
	default:
		EXPECT_LT(0, self->data.race.seen[0]);
		EXPECT_LT(0, self->data.race.seen[1]);
	}
}

TEST_F_TIMEOUT(stack, perf_event_race_remap_mmap, 600)
{
	perf_mapping_race(_metadata, self, REMAP_MMAP, true, CPU_CLOCK);
}

TEST_F_TIMEOUT(stack, perf_event_race_remap_mremap, 600)
{
	perf_mapping_race(_metadata, self, REMAP_MREMAP, true, CPU_CLOCK);
}

TEST_F_TIMEOUT(stack, perf_event_race_split_mprotect, 600)
{
	perf_mapping_race(_metadata, self, SPLIT_MPROTECT, true, CPU_CLOCK);
}

/*
 * A busy process: another thread maps, touches and unmaps anonymous memory
 * in a loop.  With the lockless lookup off, samples lose their build IDs
 * whenever that thread holds mmap_lock; with it on, they need not.  Only
 * that lockless lookups happened and that no answer was wrong is checked:
 * the shares are in the log (and are a benchmark's business).
 */
TEST_F_TIMEOUT(stack, perf_event_busy_process, 600)
{
	perf_mapping_race(_metadata, self, BUSY_ANON, false, CPU_CLOCK);
	perf_mapping_race(_metadata, self, BUSY_ANON, true, CPU_CLOCK);
}

/*
 * Samples in NMI, which is where a hardware profiler's samples are taken:
 * the lookup without mmap_lock runs in NMI, and with it off, the trylock
 * path with its unlock deferred to irq_work.  While the mapping changes
 * under the code, and in a busy process.
 */
TEST_F_TIMEOUT(stack, nmi_race_remap_mmap, 600)
{
	perf_mapping_race(_metadata, self, REMAP_MMAP, true, NMI_BACKTRACE);
}

TEST_F_TIMEOUT(stack, nmi_busy_process, 600)
{
	perf_mapping_race(_metadata, self, BUSY_ANON, false, NMI_BACKTRACE);
	perf_mapping_race(_metadata, self, BUSY_ANON, true, NMI_BACKTRACE);
}

/*
 * A stack that leaves this binary for a library and comes back, both files
 * cached: frame 0 at the probe, frame 1 in the library's
 * buildid_lib_call(), frame 2 in this test.  The nofault pass answers frame
 * 2 with the answer it found for frame 0, not the previous one.
 */
TEST_F(stack, uprobe_back_and_forth_cached)
{
	void (*lib_call)(void (*probe)(void));
	const struct stack_result *res;
	char path[PATH_MAX + 32];
	struct build_id lib_id;
	void (*probe)(void);
	void *handle;

	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	snprintf(path, sizeof(path), "%s/back_and_forth.so", self->dir);
	handle = load_probe_lib(_metadata, path, &lib_id, &probe);
	ASSERT_NE(NULL, handle);
	lib_call = (void (*)(void (*)(void)))dlsym(handle, "buildid_lib_call");
	ASSERT_NE(NULL, lib_call) TH_LOG("dlsym buildid_lib_call: %s", dlerror());
	ASSERT_EQ(0, buildid_cache_ask(probe));
	ASSERT_EQ(0, buildid_cache_ask(buildid_probe));
	ASSERT_EQ(0, attach_probe(self, "uprobe_stack", self->exe, "buildid_probe"));

	lib_call(buildid_probe);
	ASSERT_EQ(0, read_data(self));
	res = &self->data.uprobe;
	ASSERT_EQ(1, res->hits);
	ASSERT_LE((long)(3 * sizeof(res->frames[0])), res->ret);
	expect_result_frame(_metadata, "frame 0 (probe)", res, 0, &self->exe_id,
			    file_offset_of(buildid_probe) + PROBE_BODY_OFFSET);
	expect_result_frame(_metadata, "frame 1 (library)", res, 1, &lib_id,
			    file_offset_of(lib_call) + CALL_PROBE_RETURN);
	expect_result_frame(_metadata, "frame 2 (this binary again)", res, 2, &self->exe_id, -1);
	detach_all(self);
	dlclose(handle);
}

TEST_HARNESS_MAIN
