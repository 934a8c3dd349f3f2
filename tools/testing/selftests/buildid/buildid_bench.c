// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmarks of the build ID code, each reported as a ratio measured side
 * by side in one run: the Rust implementation against the C reference
 * (through /dev/buildid, samples/rust/rust_buildid.rs), PROCMAP_QUERY
 * against parsing /proc/self/maps, and bpf_get_stack() with and without
 * build IDs.  Run by the project's "make bench" in a kernel without debug
 * options; prints Markdown.  Not a test: it asserts nothing about speed.
 *
 * Usage: buildid_bench LARGE_ELF   (files are copied to BUILDID_SCRATCH_DIR)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "buildid_dev.h"
#include "buildid_util.h"
#include "buildid_probe.h"
#include "buildid_stack.h"

DEFINE_PROBE_FUNC(buildid_probe);
DEFINE_CALL_PROBE;

static const char * const mode_names[] = { "nofault", "sleepable", "memory" };

#define ROUNDS 5

static int dev;

static void die(const char *what)
{
	fprintf(stderr, "buildid_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Kernel-side time of @iterations parses; exits on failure. */
static uint64_t kbench(int fd, int mode, int c_ref, unsigned int iterations,
		       uint64_t off, uint32_t len)
{
	struct buildid_bench b = {
		.size = sizeof(b), .flags = c_ref, .fd = fd, .mode = mode,
		.iterations = iterations, .offset = off, .length = len,
	};

	if (ioctl(dev, BUILDID_IOC_BENCH, &b))
		die("BUILDID_IOC_BENCH");
	if (b.result <= 0) {
		fprintf(stderr, "buildid_bench: %s parse failed: %d\n", mode_names[mode], b.result);
		exit(1);
	}
	return b.total_ns;
}

static void row(const char *what, const char *mode, double rust, double c)
{
	printf("| %s | %s | %.0f | %.0f | %.2f |\n", what, mode, rust, c, c / rust);
}

/* Best of ROUNDS rounds for each implementation, interleaved; ns per parse. */
static void cached_row(const char *what, const char *path, int mode, unsigned int iterations)
{
	uint64_t best[2] = { UINT64_MAX, UINT64_MAX }, off = 0;
	uint32_t len = 0;
	int fd, r, impl;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(path);
	if (mode == BUILDID_BENCH_MEMORY) {
		long note = elf_build_id_note_offset(path);

		if (note < 0) {
			errno = -note;
			die("note offset");
		}
		off = note;
		len = 12 + 4 + BUILD_ID_MAX;
	}
	/* Bring the headers in, then measure. */
	kbench(fd, BUILDID_BENCH_SLEEPABLE, 0, 1, 0, 0);
	for (r = 0; r < ROUNDS; r++) {
		for (impl = 0; impl < 2; impl++) {
			uint64_t t = kbench(fd, mode, impl, iterations, off, len);

			if (t < best[impl])
				best[impl] = t;
		}
	}
	close(fd);
	row(what, mode_names[mode], (double)best[0] / iterations, (double)best[1] / iterations);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Sleepable parses of a file whose pages are dropped before each one; the
 * median of each implementation, which go first in turns (I/O times vary).
 */
static void evicted_row(const char *what, const char *path, unsigned int iterations)
{
	uint64_t *times[2];
	unsigned int i;
	int fd, k;

	times[0] = calloc(iterations, sizeof(uint64_t));
	times[1] = calloc(iterations, sizeof(uint64_t));
	if (!times[0] || !times[1])
		die("calloc");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(path);
	for (i = 0; i < iterations; i++) {
		for (k = 0; k < 2; k++) {
			int impl = (i + k) % 2;

			if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
				die("fadvise");
			times[impl][i] = kbench(fd, BUILDID_BENCH_SLEEPABLE, impl, 1, 0, 0);
		}
	}
	close(fd);
	qsort(times[0], iterations, sizeof(uint64_t), cmp_u64);
	qsort(times[1], iterations, sizeof(uint64_t), cmp_u64);
	row(what, "sleepable, evicted (median)", (double)times[0][iterations / 2],
	    (double)times[1][iterations / 2]);
	free(times[0]);
	free(times[1]);
}

static const char *scratch_copy(const char *src, const char *name)
{
	static char paths[8][PATH_MAX + 64];
	static unsigned int next;
	char *p = paths[next++ % 8];

	snprintf(p, sizeof(paths[0]), "%s/%s", scratch_dir(), name);
	if (copy_file(src, p))
		die(src);
	return p;
}

static void parser_rows(const char *large)
{
	const char *small = scratch_copy(test_file("libbuildid_sha1.so"), "small.so");
	const char *far = scratch_copy(test_file("libbuildid_far_note.so"), "far_note.so");
	const char *big = scratch_copy(large, "large.elf");

	printf("\n### The parser: Rust against the C reference\n\n");
	printf("Nanoseconds per parse inside the kernel (best of %d rounds, each implementation\n"
	       "timed by the same ioctl of `/dev/buildid`); the last column is C time / Rust\n"
	       "time, above 1 when Rust is faster.\n\n", ROUNDS);
	printf("| file | mode | Rust ns | C ns | C/Rust |\n|---|---|---:|---:|---:|\n");
	cached_row("small library (16 KiB)", small, BUILDID_BENCH_NOFAULT, 20000);
	cached_row("large binary", big, BUILDID_BENCH_NOFAULT, 20000);
	cached_row("note beyond the first page", far, BUILDID_BENCH_NOFAULT, 20000);
	cached_row("small library (16 KiB)", small, BUILDID_BENCH_SLEEPABLE, 20000);
	cached_row("large binary", big, BUILDID_BENCH_SLEEPABLE, 20000);
	cached_row("note beyond the first page", far, BUILDID_BENCH_SLEEPABLE, 20000);
	evicted_row("small library (16 KiB)", small, 200);
	evicted_row("note beyond the first page", far, 200);
	cached_row("small library notes", small, BUILDID_BENCH_MEMORY, 100000);
}

struct text_vma {
	uint64_t start, end;
};

/* Read and parse all of /proc/self/maps, then find each address in it. */
static unsigned int resolve_text(const uint64_t *addrs, unsigned int n, struct text_vma *vmas,
				 unsigned int max)
{
	static char buf[1 << 20];
	unsigned int nr = 0, found = 0, i;
	size_t len = 0;
	ssize_t got;
	char *p;
	int fd;

	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("/proc/self/maps");
	while ((got = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += got;
	close(fd);
	buf[len] = '\0';
	for (p = buf; *p && nr < max; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		char *end;

		vmas[nr].start = strtoull(p, &end, 16);
		vmas[nr].end = strtoull(end + 1, &end, 16);
		nr++;
	}
	for (i = 0; i < n; i++) {
		unsigned int lo = 0, hi = nr;

		while (lo < hi) {
			unsigned int mid = (lo + hi) / 2;

			if (addrs[i] < vmas[mid].start)
				hi = mid;
			else if (addrs[i] >= vmas[mid].end)
				lo = mid + 1;
			else {
				found++;
				break;
			}
		}
	}
	return found;
}

static unsigned int resolve_ioctl(int maps_fd, const uint64_t *addrs, unsigned int n,
				  bool build_ids)
{
	unsigned char id[BUILD_ID_MAX];
	char name[PATH_MAX];
	unsigned int found = 0, i;

	for (i = 0; i < n; i++) {
		struct procmap_query q = {
			.size = sizeof(q), .query_addr = addrs[i],
			.vma_name_addr = (uintptr_t)name, .vma_name_size = sizeof(name),
			.build_id_addr = build_ids ? (uintptr_t)id : 0,
			.build_id_size = build_ids ? sizeof(id) : 0,
		};

		if (!ioctl(maps_fd, PROCMAP_QUERY, &q))
			found++;
	}
	return found;
}

static void procmap_rows(void)
{
	enum { MAPPINGS = 600, ADDRS = 4000 };
	static struct text_vma vmas[4 * MAPPINGS];
	static uint64_t addrs[ADDRS];
	struct elf_craft c = { .phoff = 0x40, .note_off = 0x100, .size = MAPPINGS * 4096UL };
	enum { REREAD_ADDRS = 200 };
	uint64_t best[4] = { UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX };
	char path[PATH_MAX + 16];
	double once, per, ioctl_ns;
	unsigned int i, r, found[3];
	int fd, maps_fd;

	snprintf(path, sizeof(path), "%s/mapped.elf", scratch_dir());
	build_id_pattern(&c.id, 20, 0x42);
	if (elf_craft_file(path, &c))
		die(path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(path);
	/* One page per VMA; top-down placement keeps them from merging. */
	for (i = 0; i < MAPPINGS; i++) {
		void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, (off_t)i * 4096);

		if (m == MAP_FAILED)
			die("mmap");
		addrs[i % ADDRS] = (uintptr_t)m + 64;
	}
	close(fd);
	srandom(1);
	for (i = MAPPINGS; i < ADDRS; i++)
		addrs[i] = addrs[random() % MAPPINGS] + (random() % 4000);
	maps_fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (maps_fd < 0)
		die("/proc/self/maps");

	for (r = 0; r < ROUNDS; r++) {
		uint64_t t0 = now_ns(), t1, t2, t3;

		found[0] = resolve_text(addrs, ADDRS, vmas, 4 * MAPPINGS);
		t1 = now_ns();
		found[1] = resolve_ioctl(maps_fd, addrs, ADDRS, false);
		t2 = now_ns();
		found[2] = resolve_ioctl(maps_fd, addrs, ADDRS, true);
		t3 = now_ns();
		if (t1 - t0 < best[0])
			best[0] = t1 - t0;
		if (t2 - t1 < best[1])
			best[1] = t2 - t1;
		if (t3 - t2 < best[2])
			best[2] = t3 - t2;
		/* A profiler that cannot keep a copy: the text again for each address. */
		for (i = 0; i < REREAD_ADDRS; i++)
			resolve_text(&addrs[i], 1, vmas, 4 * MAPPINGS);
		if (now_ns() - t3 < best[3])
			best[3] = now_ns() - t3;
	}
	close(maps_fd);
	if (found[0] != ADDRS || found[1] != ADDRS || found[2] != ADDRS) {
		fprintf(stderr, "buildid_bench: resolved %u/%u/%u of %u addresses\n",
			found[0], found[1], found[2], ADDRS);
		exit(1);
	}
	printf("\n### PROCMAP_QUERY against /proc/self/maps text\n\n");
	printf("Resolving %d addresses in a process with more than %d mappings (best of %d\n"
	       "rounds): the text way reads and parses all of `/proc/self/maps` once, then\n"
	       "binary-searches (or, as a profiler must when mappings change under it, reads\n"
	       "it again for each address); the ioctl way asks once per address (with the VMA\n"
	       "name, and optionally the build ID).  The ratios are time per address of the\n"
	       "text way over the method's: above 1 when the method is faster.\n\n",
	       ADDRS, MAPPINGS, ROUNDS);
	once = (double)best[0] / ADDRS;
	per = (double)best[3] / REREAD_ADDRS;
	printf("| method | ns per address | text read once / method | text read per address / method |\n"
	       "|---|---:|---:|---:|\n");
	printf("| /proc/self/maps text, read once | %.0f | 1.00 | %.0f |\n", once, per / once);
	printf("| /proc/self/maps text, read per address (%d addresses) | %.0f | %.4f | 1.00 |\n",
	       REREAD_ADDRS, per, once / per);
	ioctl_ns = (double)best[1] / ADDRS;
	printf("| PROCMAP_QUERY | %.0f | %.2f | %.0f |\n", ioctl_ns, once / ioctl_ns,
	       per / ioctl_ns);
	ioctl_ns = (double)best[2] / ADDRS;
	printf("| PROCMAP_QUERY with build ID | %.0f | %.2f | %.0f |\n", ioctl_ns,
	       once / ioctl_ns, per / ioctl_ns);
}

static double per_call(struct bpf_object *obj, const char *prog_name, unsigned int calls)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = "buildid_probe");
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, prog_name);
	struct bpf_link *link = NULL;
	uint64_t t0, best = UINT64_MAX;
	unsigned int i, r;

	if (!prog)
		die(prog_name);
	if (strcmp(prog_name, "none")) {
		link = bpf_program__attach_uprobe_opts(prog, getpid(), "/proc/self/exe",
						       PROBE_BODY_OFFSET, &opts);
		if (!link)
			die(prog_name);
	}
	for (r = 0; r < ROUNDS; r++) {
		t0 = now_ns();
		for (i = 0; i < calls; i++)
			call_probe(buildid_probe);
		if (now_ns() - t0 < best)
			best = now_ns() - t0;
	}
	bpf_link__destroy(link);
	return (double)best / calls;
}

static void bpf_rows(void)
{
	struct stack_test_data data = {};
	struct bpf_object *obj;
	struct bpf_map *map, *bss = NULL;
	double ips, nofault, sleepable;
	int key = 0;

	obj = bpf_object__open_file(test_file("buildid_stack.bpf.o"), NULL);
	if (!obj || bpf_object__load(obj))
		die("buildid_stack.bpf.o");
	bpf_object__for_each_map(map, obj) {
		const char *name = bpf_map__name(map);

		if (strlen(name) >= 4 && !strcmp(name + strlen(name) - 4, ".bss"))
			bss = map;
	}
	if (!bss)
		die(".bss");
	data.target_tgid = getpid();
	if (bpf_map_update_elem(bpf_map__fd(bss), &key, &data, BPF_ANY))
		die("update .bss");
	ips = per_call(obj, "uprobe_stack_ips", 2000);
	nofault = per_call(obj, "uprobe_stack", 2000);
	sleepable = per_call(obj, "uprobe_stack_sleepable", 2000);
	if (bpf_map_lookup_elem(bpf_map__fd(bss), &key, &data))
		die("lookup .bss");
	if (data.uprobe.frames[0].status != BPF_STACK_BUILD_ID_VALID ||
	    data.uprobe_sleepable.frames[0].status != BPF_STACK_BUILD_ID_VALID) {
		fprintf(stderr, "buildid_bench: the probes did not resolve build IDs\n");
		exit(1);
	}
	bpf_object__close(obj);

	printf("\n### bpf_get_stack() with BPF_F_USER_BUILD_ID\n\n");
	printf("Wall time per call of a uprobed function whose program records the user\n"
	       "stack (best of %d rounds of 2000 calls; the uprobe itself is in every row).\n\n",
	       ROUNDS);
	printf("| program | ns per call | relative to IPs only |\n|---|---:|---:|\n");
	printf("| bpf_get_stack(), IPs only | %.0f | 1.00 |\n", ips);
	printf("| bpf_get_stack() + build IDs, uprobe (nofault) | %.0f | %.2f |\n",
	       nofault, nofault / ips);
	printf("| bpf_get_stack() + build IDs, uprobe.s (sleepable) | %.0f | %.2f |\n",
	       sleepable, sleepable / ips);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: buildid_bench LARGE_ELF\n");
		return 2;
	}
	dev = open("/dev/buildid", O_RDONLY | O_CLOEXEC);
	if (dev < 0 && !system("modprobe rust_buildid"))
		dev = open("/dev/buildid", O_RDONLY | O_CLOEXEC);
	if (dev < 0)
		die("/dev/buildid");
	setvbuf(stdout, NULL, _IOLBF, 0);
	parser_rows(argv[1]);
	procmap_rows();
	bpf_rows();
	return 0;
}
