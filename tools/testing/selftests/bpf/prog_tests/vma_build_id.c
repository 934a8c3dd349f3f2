// SPDX-License-Identifier: GPL-2.0
/*
 * What bpf_vma_build_id() returns, from each source of trusted VMAs: the
 * build ID that libelf reads from the same file, zero-padded; -ERANGE for
 * a buffer too small, -EINVAL for a file that is not ELF or has no build
 * ID note, -ENOENT for an anonymous mapping; the buffer zeroed on error.
 *
 * The files are memfds, so that their data is in the page cache, which is
 * all that the kfunc reads besides the build ID cache, whatever file system
 * the tests run from.  -EAGAIN (the data not in the page cache) is not
 * tested: nothing here can keep a file's data out of the page cache.
 */
#include <elf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <test_progs.h>
#include "trace_helpers.h"
#include "vma_build_id.skel.h"

/* A binary of the selftests, built with a build ID. */
#define ELF_FILE "urandom_read"

enum { ITERATOR, ITER_PROGRAM, FIND_VMA_CALLBACK, SOURCES };

static const char * const source_names[SOURCES] = {
	[ITERATOR] = "task_vma iterator",
	[ITER_PROGRAM] = "iter/task_vma program",
	[FIND_VMA_CALLBACK] = "bpf_find_vma() callback",
};

/* No call of the kfunc returns it. */
#define NOT_CALLED 12345

static bool run_iter_program(struct vma_build_id *skel)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo = {};
	struct bpf_link *link;
	char buf[64];
	int iter_fd, len;

	linfo.task.pid = getpid();
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	link = bpf_program__attach_iter(skel->progs.iter_program, &opts);
	if (!ASSERT_OK_PTR(link, "attach iter/task_vma"))
		return false;
	iter_fd = bpf_iter_create(bpf_link__fd(link));
	if (!ASSERT_OK_FD(iter_fd, "create iter/task_vma")) {
		bpf_link__destroy(link);
		return false;
	}
	while ((len = read(iter_fd, buf, sizeof(buf))) > 0)
		;
	close(iter_fd);
	bpf_link__destroy(link);
	return ASSERT_OK(len, "read iter/task_vma");
}

static bool run_syscall_program(struct bpf_program *prog)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (!ASSERT_OK(bpf_prog_test_run_opts(bpf_program__fd(prog), &opts),
		       bpf_program__name(prog)))
		return false;
	return ASSERT_OK(opts.retval, bpf_program__name(prog));
}

static bool all_zero(const unsigned char *buf, size_t size)
{
	while (size--)
		if (*buf++)
			return false;
	return true;
}

/*
 * Each source's calls on the VMA that maps addr return want (the length of
 * want_id, or an error), with want_id and zeroes in the buffer.
 */
static void check_vma(struct vma_build_id *skel, const void *addr, int want,
		      const unsigned char *want_id)
{
	struct vma_build_id__bss *bss = skel->bss;
	int s;

	bss->addr = (unsigned long)addr;
	for (s = 0; s < SOURCES; s++) {
		bss->ret[s] = NOT_CALLED;
		bss->small_ret[s] = NOT_CALLED;
		memset(bss->id[s], 0xff, sizeof(bss->id[s]));
		memset(bss->small_id[s], 0xff, sizeof(bss->small_id[s]));
	}
	if (!run_syscall_program(skel->progs.iterator) ||
	    !run_iter_program(skel) ||
	    !run_syscall_program(skel->progs.find_vma_callback))
		return;

	for (s = 0; s < SOURCES; s++) {
		int want_id_size = want > 0 ? want : 0;
		char name[64];

		snprintf(name, sizeof(name), "%s, 32 bytes", source_names[s]);
		if (ASSERT_EQ(bss->ret[s], want, name)) {
			if (want_id_size)
				ASSERT_OK(memcmp(bss->id[s], want_id, want_id_size), name);
			ASSERT_TRUE(all_zero(bss->id[s] + want_id_size,
					     sizeof(bss->id[s]) - want_id_size), name);
		}
		/* Every build ID is longer than 8 bytes. */
		snprintf(name, sizeof(name), "%s, 8 bytes", source_names[s]);
		if (ASSERT_EQ(bss->small_ret[s], want > 0 ? -ERANGE : want, name))
			ASSERT_TRUE(all_zero(bss->small_id[s], sizeof(bss->small_id[s])), name);
	}
}

/* A read-only private mapping of a memfd that holds size bytes of data. */
static void *map_memfd(const void *data, size_t size)
{
	void *addr = MAP_FAILED;
	int fd;

	fd = memfd_create("vma_build_id", MFD_CLOEXEC);
	if (!ASSERT_OK_FD(fd, "memfd_create"))
		return MAP_FAILED;
	if (ASSERT_EQ(write(fd, data, size), (ssize_t)size, "write memfd")) {
		addr = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		ASSERT_NEQ(addr, MAP_FAILED, "mmap memfd");
	}
	close(fd);
	return addr;
}

static void *read_file(const char *path, size_t *size)
{
	void *data = NULL;
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!ASSERT_OK_FD(fd, path))
		return NULL;
	if (ASSERT_OK(fstat(fd, &st), "fstat") && ASSERT_GT(st.st_size, 0, "size"))
		data = malloc(st.st_size);
	if (data && !ASSERT_EQ(read(fd, data, st.st_size), st.st_size, "read")) {
		free(data);
		data = NULL;
	}
	close(fd);
	*size = data ? st.st_size : 0;
	return data;
}

static void test_elf(struct vma_build_id *skel, const void *elf, size_t size)
{
	unsigned char want_id[BPF_BUILD_ID_SIZE];
	int want;
	void *addr;

	want = read_build_id(ELF_FILE, (char *)want_id, sizeof(want_id));
	if (!ASSERT_EQ(want, BPF_BUILD_ID_SIZE, "read_build_id"))
		return;
	addr = map_memfd(elf, size);
	if (addr == MAP_FAILED)
		return;
	/* An address in the middle of the mapping, not at its start. */
	check_vma(skel, addr + (size - 1) / 2, want, want_id);
	munmap(addr, size);
}

/* The same file with no program headers, and so no notes. */
static void test_no_note(struct vma_build_id *skel, const void *elf, size_t size)
{
	Elf64_Ehdr *ehdr;
	void *addr;

	if (!ASSERT_GE(size, sizeof(*ehdr), "ELF header size"))
		return;
	ehdr = malloc(size);
	if (!ASSERT_OK_PTR(ehdr, "malloc"))
		return;
	memcpy(ehdr, elf, size);
	if (!ASSERT_EQ(ehdr->e_ident[EI_CLASS], ELFCLASS64, "ELFCLASS64"))
		goto out;
	ehdr->e_phnum = 0;
	addr = map_memfd(ehdr, size);
	if (addr == MAP_FAILED)
		goto out;
	check_vma(skel, addr, -EINVAL, NULL);
	munmap(addr, size);
out:
	free(ehdr);
}

static void test_not_elf(struct vma_build_id *skel)
{
	char text[4096];
	void *addr;

	memset(text, 'x', sizeof(text));
	addr = map_memfd(text, sizeof(text));
	if (addr == MAP_FAILED)
		return;
	check_vma(skel, addr, -EINVAL, NULL);
	munmap(addr, sizeof(text));
}

static void test_anonymous(struct vma_build_id *skel)
{
	size_t size = getpagesize();
	void *addr;

	addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_NEQ(addr, MAP_FAILED, "mmap anonymous"))
		return;
	check_vma(skel, addr, -ENOENT, NULL);
	munmap(addr, size);
}

void test_vma_build_id(void)
{
	struct vma_build_id *skel;
	size_t size;
	void *elf;

	skel = vma_build_id__open_and_load();
	if (!ASSERT_OK_PTR(skel, "vma_build_id__open_and_load"))
		return;
	elf = read_file(ELF_FILE, &size);
	if (elf && test__start_subtest("elf"))
		test_elf(skel, elf, size);
	if (elf && test__start_subtest("no-note"))
		test_no_note(skel, elf, size);
	if (test__start_subtest("not-elf"))
		test_not_elf(skel);
	if (test__start_subtest("anonymous"))
		test_anonymous(skel);
	free(elf);
	vma_build_id__destroy(skel);
}
