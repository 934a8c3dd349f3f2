// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_vma_build_id(): the build ID of a VMA's file, for BPF programs that
 * walk a process' mappings (the open-coded task_vma iterator, iter/task_vma
 * programs).  Each answer is compared with the
 * build ID that the ELF section headers give (as readelf -n reads it).
 * The verifier's rules for it are tested in selftests/bpf
 * (progs/verifier_vma_build_id.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../kselftest_harness.h"
#include "buildid_bpf.h"
#include "buildid_util.h"
#include "bpf_vma_build_id.h"

#define PAGE 4096UL

FIXTURE(vma) {
	struct bpf_object *obj;
	struct bpf_map *data_map;
	struct vma_test_data data;
	pid_t child;
	int child_pipe;
	char dir[PATH_MAX];
	struct cache_switch cache;
};

static int set_data(struct _test_data_vma *self, int pid, uint64_t addr)
{
	int key = 0;

	memset(&self->data, 0, sizeof(self->data));
	self->data.pid = pid;
	self->data.addr = addr;
	return bpf_map_update_elem(bpf_map__fd(self->data_map), &key, &self->data, BPF_ANY);
}

static int read_data(struct _test_data_vma *self)
{
	int key = 0;

	return bpf_map_lookup_elem(bpf_map__fd(self->data_map), &key, &self->data);
}

/* Runs the syscall program @name once; 0 or -errno. */
static int run_program(struct _test_data_vma *self, const char *name)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct bpf_program *prog = bpf_object__find_program_by_name(self->obj, name);

	if (!prog)
		return -ENOENT;
	return bpf_prog_test_run_opts(bpf_program__fd(prog), &opts) ? -errno : 0;
}

FIXTURE_SETUP(vma)
{
	int fds[2];

	snprintf(self->dir, sizeof(self->dir), "%s/vmabuildid.XXXXXX", scratch_dir());
	ASSERT_NE(NULL, mkdtemp(self->dir)) TH_LOG("mkdtemp in %s: %m", scratch_dir());
	self->obj = bpf_object__open_file(test_file("bpf_vma_build_id.bpf.o"), NULL);
	ASSERT_NE(NULL, self->obj) TH_LOG("open bpf_vma_build_id.bpf.o: %m");
	ASSERT_EQ(0, bpf_object__load(self->obj))
		TH_LOG("load bpf_vma_build_id.bpf.o (a kernel without bpf_vma_build_id()?)");
	self->data_map = bss_map_of(self->obj);
	ASSERT_NE(NULL, self->data_map);
	ASSERT_EQ(sizeof(struct vma_test_data), bpf_map__value_size(self->data_map));

	/* Another process with this one's mappings, waiting for the pipe to close. */
	ASSERT_EQ(0, pipe(fds));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		char c;

		close(fds[1]);
		_exit(read(fds[0], &c, 1) < 0);
	}
	close(fds[0]);
	self->child_pipe = fds[1];
}

FIXTURE_TEARDOWN(vma)
{
	cache_switch_restore(&self->cache);
	close(self->child_pipe);
	waitpid(self->child, NULL, 0);
	bpf_object__close(self->obj);
	if (remove_tree(self->dir))
		TH_LOG("could not remove %s", self->dir);
}

/* The result for the VMA that starts at @start, or NULL. */
static const struct vma_result *result_at(const struct vma_test_data *d, uint64_t start)
{
	for (unsigned int i = 0; i < d->nr && i < VMA_MAX; i++) {
		if (d->vmas[i].start == start)
			return &d->vmas[i];
	}
	return NULL;
}

/*
 * Every line of /proc/@pid/maps against the programs' results: a file's
 * executable mapping has that file's build ID, an anonymous one -ENOENT.
 * Returns the number of executable file mappings checked.
 */
static unsigned int check_against_maps(struct __test_metadata *_metadata,
				       const struct vma_test_data *d, pid_t pid)
{
	unsigned int files = 0, anon = 0;
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, ino;
		char perms[5], dev[16], file[PATH_MAX] = "";
		const struct vma_result *r;
		struct build_id want;
		char hex[48];

		if (sscanf(line, "%llx-%llx %4s %llx %15s %llu %4095s", &start, &end, perms, &off,
			   dev, &ino, file) < 6)
			continue;
		if (!strcmp(file, "[vsyscall]"))
			continue;	/* not a VMA: a fixed page the kernel shows */
		r = result_at(d, start);
		ASSERT_NE(NULL, r) TH_LOG("no result for %s", line);
		EXPECT_EQ(end, r->end);
		if (!ino) {
			if (!file[0]) {
				EXPECT_EQ(-ENOENT, r->ret) TH_LOG("anonymous %s", line);
				anon++;
			}
			continue;
		}
		if (perms[2] != 'x')
			continue;
		ASSERT_EQ(0, elf_build_id_from_sections(file, &want)) TH_LOG("%s", file);
		build_id_hex(&want, hex, sizeof(hex));
		EXPECT_EQ((int)want.size, r->ret) TH_LOG("%s", line);
		EXPECT_TRUE(build_id_equal(&want, r->id, want.size))
			TH_LOG("%s: not %s", file, hex);
		EXPECT_EQ(off / PAGE, r->pgoff);
		files++;
	}
	fclose(f);
	EXPECT_LT(0, anon) TH_LOG("no anonymous mapping seen");
	return files;
}

/* The open-coded iterator from a syscall program, over another process. */
TEST_F(vma, open_coded_iterator)
{
	unsigned int files;

	ASSERT_EQ(0, set_data(self, self->child, 0));
	ASSERT_EQ(0, run_program(self, "iterate_vmas"));
	ASSERT_EQ(0, read_data(self));
	ASSERT_EQ(0, self->data.err);
	ASSERT_EQ(0, self->data.more);
	files = check_against_maps(_metadata, &self->data, self->child);
	EXPECT_LE(3, files) TH_LOG("this binary, libc and ld.so at least");
	TH_LOG("%u VMAs, %u executable file mappings", self->data.nr, files);
}

/* An iter/task_vma program: its VMA comes with mmap_lock held. */
TEST_F(vma, iter_task_vma)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info_len = sizeof(union bpf_iter_link_info));
	union bpf_iter_link_info info = { .task.pid = self->child };
	struct bpf_program *prog = bpf_object__find_program_by_name(self->obj, "seq_vmas");
	struct bpf_link *link;
	char buf[256];
	int fd;

	ASSERT_NE(NULL, prog);
	ASSERT_EQ(0, set_data(self, self->child, 0));
	opts.link_info = &info;
	link = bpf_program__attach_iter(prog, &opts);
	ASSERT_NE(NULL, link);
	fd = bpf_iter_create(bpf_link__fd(link));
	ASSERT_LE(0, fd);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	bpf_link__destroy(link);
	ASSERT_EQ(0, read_data(self));
	ASSERT_EQ(0, self->data.more);
	EXPECT_LE(3, check_against_maps(_metadata, &self->data, self->child));
}

/*
 * The VMA of a function of this binary, from an iterator started at its
 * address; then the same VMA after the iterator is destroyed.
 */
TEST_F(vma, vma_at_address)
{
	struct build_id want;
	struct mapping m;
	char exe[PATH_MAX];
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, n);
	exe[n] = '\0';
	ASSERT_EQ(0, elf_build_id_from_sections(exe, &want));
	ASSERT_EQ(0, maps_find(self->child, (uintptr_t)check_against_maps, &m));
	ASSERT_EQ(0, set_data(self, self->child, (uintptr_t)check_against_maps));
	ASSERT_EQ(0, run_program(self, "vma_at"));
	ASSERT_EQ(0, read_data(self));
	ASSERT_EQ(0, self->data.err);
	ASSERT_EQ(1, self->data.nr);
	EXPECT_EQ(m.start, self->data.vmas[0].start);
	EXPECT_EQ((int)want.size, self->data.vmas[0].ret);
	EXPECT_TRUE(build_id_equal(&want, self->data.vmas[0].id, want.size));
	/* A buffer too small for the ID, and one larger: zeroed, and zero-padded. */
	EXPECT_EQ(-ERANGE, self->data.ret_small);
	EXPECT_EQ((int)want.size, self->data.ret_large);
	EXPECT_TRUE(build_id_equal(&want, self->data.large, want.size));
	for (unsigned int i = want.size; i < sizeof(self->data.large); i++)
		EXPECT_EQ(0, self->data.large[i]);
}

/* The same VMA in a bpf_find_vma() callback, which runs under mmap_lock. */
TEST_F(vma, find_vma_callback)
{
	struct build_id want;
	struct mapping m;

	ASSERT_EQ(0, elf_build_id_from_sections(test_file("bpf_vma_build_id"), &want));
	ASSERT_EQ(0, maps_find(self->child, (uintptr_t)check_against_maps, &m));
	ASSERT_EQ(0, set_data(self, self->child, (uintptr_t)check_against_maps));
	ASSERT_EQ(0, run_program(self, "find_vma_at"));
	ASSERT_EQ(0, read_data(self));
	ASSERT_EQ(0, self->data.err);
	ASSERT_EQ(1, self->data.nr);
	EXPECT_EQ(m.start, self->data.vmas[0].start);
	EXPECT_EQ((int)want.size, self->data.vmas[0].ret);
	EXPECT_TRUE(build_id_equal(&want, self->data.vmas[0].id, want.size));
	EXPECT_EQ(-ERANGE, self->data.ret_small);
	EXPECT_EQ((int)want.size, self->data.ret_large);
}

/* What vma_at gives for the mapping at @addr in this process. */
static int vma_build_id_at(struct _test_data_vma *self, void *addr, unsigned char *id)
{
	int err = set_data(self, getpid(), (uintptr_t)addr);

	err = err ?: run_program(self, "vma_at");
	err = err ?: read_data(self);
	if (err)
		return err;
	if (self->data.err || self->data.nr != 1)
		return -EPROTO;
	memcpy(id, self->data.vmas[0].id, 20);
	return self->data.vmas[0].ret;
}

/*
 * A file whose note left the page cache: -EAGAIN without the cache, which
 * then fills on the miss; the cache's answer is the file's ID.
 */
TEST_F(vma, evicted_file)
{
	struct elf_craft c = { .phoff = 0x40, .note_off = 2 * PAGE + 0x10, .size = 3 * PAGE,
			       .code_off = 0x100, .code = spin_code,
			       .code_size = sizeof(spin_code) };
	char path[PATH_MAX + 16];
	unsigned char id[20];
	void *map;
	int fd;

	build_id_pattern(&c.id, 20, 0x5a);
	snprintf(path, sizeof(path), "%s/evicted.elf", self->dir);
	ASSERT_EQ(0, elf_craft_file(path, &c));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	map = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	close(fd);

	ASSERT_EQ(0, cache_switch_set(&self->cache, false));
	ASSERT_TRUE(evict_file(path, c.note_off));
	EXPECT_EQ(-EAGAIN, vma_build_id_at(self, map, id));
	EXPECT_EQ(0, id[0]);

	/* On: the first look misses and queues a fill that reads the file. */
	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	EXPECT_EQ(-EAGAIN, vma_build_id_at(self, map, id));
	ASSERT_EQ(0, buildid_cache_drain());
	ASSERT_TRUE(evict_file(path, c.note_off));
	EXPECT_EQ(20, vma_build_id_at(self, map, id));
	EXPECT_TRUE(build_id_equal(&c.id, id, 20));
	EXPECT_EQ(0, file_page_cached(path, c.note_off)) TH_LOG("the answer read the file");
	munmap(map, PAGE);
}

/* A file without a build ID note, and one that is not ELF: -EINVAL, also cached. */
TEST_F(vma, no_build_id)
{
	struct elf_craft c = { .phoff = 0x40, .size = 2 * PAGE };
	char text[PAGE], path[2][PATH_MAX + 16];
	unsigned char id[20];
	int k;

	memset(text, 'x', sizeof(text));
	snprintf(path[0], sizeof(path[0]), "%s/none.elf", self->dir);
	snprintf(path[1], sizeof(path[1]), "%s/text", self->dir);
	ASSERT_EQ(0, elf_craft_file(path[0], &c));
	ASSERT_EQ(0, write_file(path[1], text, sizeof(text)));
	for (k = 0; k < 2; k++) {
		for (int on = 0; on < 2; on++) {
			int fd = open(path[k], O_RDONLY | O_CLOEXEC);
			void *map;

			ASSERT_LE(0, fd);
			map = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
			close(fd);
			ASSERT_NE(MAP_FAILED, map);
			ASSERT_EQ(0, cache_switch_set(&self->cache, on));
			EXPECT_EQ(-EINVAL, vma_build_id_at(self, map, id)) TH_LOG("%s", path[k]);
			/* With the cache on, the answer of the fill the miss queued. */
			ASSERT_EQ(0, buildid_cache_drain());
			EXPECT_EQ(-EINVAL, vma_build_id_at(self, map, id)) TH_LOG("%s", path[k]);
			munmap(map, PAGE);
		}
	}
}

TEST_HARNESS_MAIN
