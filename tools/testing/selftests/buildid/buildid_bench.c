// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmarks of the build ID code, each reported as a ratio measured side
 * by side in one run: the Rust implementation against the C reference
 * (through /dev/buildid, samples/rust/rust_buildid.rs), bpf_get_stack()
 * with and without build IDs, the build ID cache's availability and costs.
 * PROCMAP_QUERY against /proc/<pid>/maps text is procmap_bench.c.  Run by
 * the project's "make bench" in a kernel without debug options; prints
 * Markdown, and "PLOT" lines for the harness' picture.  Not a test: it
 * asserts nothing about speed.
 *
 * Usage: buildid_bench LARGE_ELF [SECTION]...   (files are copied to
 * BUILDID_SCRATCH_DIR); SECTION is parser, bpf, availability, busy or overhead,
 * all of them if none is named.
 */
#define _GNU_SOURCE
#include <assert.h>
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
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <linux/buildid_dev.h>
#include <linux/perf_event.h>
#include "buildid_bpf.h"
#include "buildid_util.h"
#include "buildid_probe.h"
#include "buildid_stack.h"
#include "bpf_vma_build_id.h"

DEFINE_PROBE_FUNC(buildid_probe);
DEFINE_CALL_PROBE;

static const char * const mode_names[] = {
	"nofault", "sleepable", "memory", "empty", "VMA lockless", "VMA trylock",
	"RCU read lock",
};

#define PARSE_ROUNDS 25
#define EVICTED_PARSES 200
#define BPF_ROUNDS 31
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int dev;

static void die(const char *what)
{
	fprintf(stderr, "buildid_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* What BUILDID_IOC_BENCH times, as its flags select it. */
enum impl { RUST_CACHE, C_REF, RUST_PARSE, NR_IMPLS };
static const uint32_t impl_flags[NR_IMPLS] = {
	[RUST_CACHE] = 0, [C_REF] = BUILDID_C_REFERENCE, [RUST_PARSE] = BUILDID_UNCACHED,
};

/*
 * Kernel-side time of @iterations parses, which must all give @want (a
 * build ID size, or -EINVAL for a file without one); exits otherwise.
 */
static uint64_t kbench_giving(int fd, int mode, enum impl impl, unsigned int iterations,
			      uint64_t off, uint32_t len, int want)
{
	struct buildid_bench b = {
		.size = sizeof(b), .flags = impl_flags[impl], .fd = fd, .mode = mode,
		.iterations = iterations, .offset = off, .length = len,
	};

	if (ioctl(dev, BUILDID_IOC_BENCH, &b))
		die("BUILDID_IOC_BENCH");
	if (want < 0 ? b.result != want : b.result <= 0) {
		fprintf(stderr, "buildid_bench: %s parse gave %d, not %d\n", mode_names[mode],
			b.result, want);
		exit(1);
	}
	return b.total_ns;
}

/* Kernel-side time of @iterations parses; exits on failure. */
static uint64_t kbench(int fd, int mode, enum impl impl, unsigned int iterations,
		       uint64_t off, uint32_t len)
{
	return kbench_giving(fd, mode, impl, iterations, off, len, 1);
}

/*
 * Kernel-side time of @iterations rounds of the ioctl's loop without a
 * lookup: BUILDID_BENCH_EMPTY or BUILDID_BENCH_RCU_READ_LOCK.
 */
static uint64_t kbench_no_lookup(int fd, int mode, unsigned int iterations)
{
	struct buildid_bench b = {
		.size = sizeof(b), .fd = fd, .mode = mode, .iterations = iterations,
	};

	if (ioctl(dev, BUILDID_IOC_BENCH, &b))
		die(mode_names[mode]);
	return b.total_ns;
}

/* Kernel-side time of @iterations rounds of the ioctl's loop without a parse. */
static uint64_t kbench_loop(int fd, unsigned int iterations)
{
	return kbench_no_lookup(fd, BUILDID_BENCH_EMPTY, iterations);
}

static void row(const char *what, const char *mode, struct spread rust, struct spread c)
{
	printf("| %s | %s | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f |\n", what, mode, rust.min,
	       rust.median, c.min, c.median, c.min / rust.min, c.median / rust.median);
	printf("PLOT\tC time / Rust time (median)\t%s, %s\t%.3f\n", what, mode,
	       c.median / rust.median);
}

/* Turns the build ID cache on or off; exits if there is none. */
static void cache_switch(int on)
{
	int old = buildid_cache_set(on);

	if (old < 0) {
		errno = -old;
		die("/proc/sys/kernel/buildid_cache/enabled");
	}
}

/* One file and mode, timed for each implementation. */
struct parse_times {
	const char *what;
	int mode;
	int fd;
	unsigned int iterations;
	uint64_t off;		/* the notes, for BUILDID_BENCH_MEMORY */
	uint32_t len;
	unsigned int rounds;
	uint64_t runs[NR_IMPLS][PARSE_ROUNDS];
	uint64_t loop_runs[PARSE_ROUNDS];	/* the ioctl's loop without a parse */
	uint64_t rcu_runs[PARSE_ROUNDS];	/* the loop and the RCU read lock */
	struct spread ns[NR_IMPLS];		/* ns per parse */
	struct spread loop_ns, rcu_ns;
};

/*
 * Opens @path and brings its headers into the page cache and its build ID
 * into the build ID cache.  The memory mode has no file to cache:
 * RUST_CACHE is not timed for it.
 */
static void cached_row_setup(struct parse_times *t, const char *what, const char *path,
			     int mode, unsigned int iterations)
{
	memset(t, 0, sizeof(*t));
	t->what = what;
	t->mode = mode;
	t->iterations = iterations;
	t->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->fd < 0)
		die(path);
	if (mode == BUILDID_BENCH_MEMORY) {
		long note = elf_build_id_note_offset(path);

		if (note < 0) {
			errno = -note;
			die("note offset");
		}
		t->off = note;
		t->len = 12 + 4 + BUILD_ID_MAX;
	}
	kbench(t->fd, BUILDID_BENCH_SLEEPABLE, RUST_CACHE, 1, 0, 0);
}

/* One round: each implementation once, and the loop alone. */
static void cached_row_round(struct parse_times *t)
{
	int impl;

	t->loop_runs[t->rounds] = kbench_loop(t->fd, t->iterations);
	for (impl = 0; impl < NR_IMPLS; impl++) {
		if (impl == RUST_CACHE && t->mode == BUILDID_BENCH_MEMORY)
			continue;
		t->runs[impl][t->rounds] = kbench(t->fd, t->mode, impl, t->iterations,
						  t->off, t->len);
	}
	t->rcu_runs[t->rounds] = kbench_no_lookup(t->fd, BUILDID_BENCH_RCU_READ_LOCK,
						  t->iterations);
	t->rounds++;
}

static void cached_row_finish(struct parse_times *t)
{
	int impl;

	close(t->fd);
	for (impl = 0; impl < NR_IMPLS; impl++)
		t->ns[impl] = spread_of(t->runs[impl], t->rounds, t->iterations);
	t->loop_ns = spread_of(t->loop_runs, t->rounds, t->iterations);
	t->rcu_ns = spread_of(t->rcu_runs, t->rounds, t->iterations);
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
			times[impl][i] = kbench(fd, BUILDID_BENCH_SLEEPABLE,
						impl ? C_REF : RUST_PARSE, 1, 0, 0);
		}
	}
	close(fd);
	row(what, "sleepable, evicted", spread_of(times[0], iterations, 1),
	    spread_of(times[1], iterations, 1));
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

/*
 * The worst file for the parser's bounds: 256 PT_NOTE program headers, each
 * over the same 3.4 MiB of zeroes (empty notes), and no build ID.  Before
 * the note walk was bounded a parse read 256 times 300000 note headers of
 * it; now it reads 256 program headers and 256 note headers.
 */
#define HOSTILE_NOTES_OFF	0x4000
#define HOSTILE_NOTES_SIZE	(3400 << 10)

static const char *hostile_notes_file(void)
{
	static char path[PATH_MAX + 64];
	Elf64_Ehdr ehdr = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
			     EV_CURRENT },
		.e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
		.e_phoff = sizeof(Elf64_Ehdr), .e_ehsize = sizeof(Elf64_Ehdr),
		.e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 256,
	};
	Elf64_Phdr phdr = {
		.p_type = PT_NOTE, .p_offset = HOSTILE_NOTES_OFF,
		.p_filesz = HOSTILE_NOTES_SIZE, .p_align = 4,
	};
	static const char zeroes[8 << 10];
	off_t off;
	int fd, i;

	snprintf(path, sizeof(path), "%s/hostile_notes.elf", scratch_dir());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0)
		die(path);
	if (write(fd, &ehdr, sizeof(ehdr)) != sizeof(ehdr))
		die("write");
	for (i = 0; i < ehdr.e_phnum; i++)
		if (write(fd, &phdr, sizeof(phdr)) != sizeof(phdr))
			die("write");
	/*
	 * Zeroes written, not holes, from the end of the program headers on:
	 * a hole has no folio, and a hole block in a written page leaves the
	 * page not uptodate (ext4 with 1 KiB blocks): a nofault parse stops
	 * there with -EFAULT.
	 */
	off = sizeof(ehdr) + ehdr.e_phnum * sizeof(phdr);
	if (pwrite(fd, zeroes, HOSTILE_NOTES_OFF - off, off) != HOSTILE_NOTES_OFF - off)
		die("write");
	for (off = HOSTILE_NOTES_OFF; off < HOSTILE_NOTES_OFF + HOSTILE_NOTES_SIZE;
	     off += sizeof(zeroes))
		if (pwrite(fd, zeroes, sizeof(zeroes), off) != sizeof(zeroes))
			die("write");
	close(fd);
	return path;
}

/* Reads @fd from start to end, into its page cache. */
static void read_whole(int fd)
{
	static char buf[64 << 10];
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0)
		off += n;
	if (n < 0)
		die("read");
}

/* The parse of the file above, in @mode: Rust and C, median and minimum. */
static void hostile_row(const char *path, int mode, unsigned int iterations)
{
	uint64_t runs[2][PARSE_ROUNDS];
	unsigned int r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die(path);
	/*
	 * Every page uptodate: written back, dropped and read again, since a
	 * page that was only partly written is not, and a parse that reads it
	 * through ->read_iter does not make it so.
	 */
	if (fdatasync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		die("evict");
	read_whole(fd);
	kbench_giving(fd, BUILDID_BENCH_SLEEPABLE, RUST_PARSE, 1, 0, 0, -EINVAL);
	for (r = 0; r < PARSE_ROUNDS; r++) {
		runs[0][r] = kbench_giving(fd, mode, RUST_PARSE, iterations, 0, 0, -EINVAL);
		runs[1][r] = kbench_giving(fd, mode, C_REF, iterations, 0, 0, -EINVAL);
	}
	close(fd);
	row("256 PT_NOTE over 3.4 MiB of empty notes, no build ID", mode_names[mode],
	    spread_of(runs[0], PARSE_ROUNDS, iterations),
	    spread_of(runs[1], PARSE_ROUNDS, iterations));
}

static void parser_rows(const char *large)
{
	const char *small = scratch_copy(test_file("libbuildid_sha1.so"), "small.so");
	const char *far = scratch_copy(test_file("libbuildid_far_note.so"), "far_note.so");
	const char *big = scratch_copy(large, "large.elf");
	const char *hostile;
	struct parse_times t[7];
	unsigned int i, r;

	cached_row_setup(&t[0], "small library (16 KiB)", small, BUILDID_BENCH_NOFAULT, 4000);
	cached_row_setup(&t[1], "large binary", big, BUILDID_BENCH_NOFAULT, 4000);
	cached_row_setup(&t[2], "note beyond the first page", far, BUILDID_BENCH_NOFAULT, 4000);
	cached_row_setup(&t[3], "small library (16 KiB)", small, BUILDID_BENCH_SLEEPABLE, 4000);
	cached_row_setup(&t[4], "large binary", big, BUILDID_BENCH_SLEEPABLE, 4000);
	cached_row_setup(&t[5], "note beyond the first page", far, BUILDID_BENCH_SLEEPABLE, 4000);
	cached_row_setup(&t[6], "small library notes", small, BUILDID_BENCH_MEMORY, 20000);
	/*
	 * Under TCG the guest can run at half speed for seconds at a time:
	 * each round times every row once, so that each row's runs come
	 * from the whole span of the measurement.
	 */
	for (r = 0; r < PARSE_ROUNDS; r++)
		for (i = 0; i < ARRAY_SIZE(t); i++)
			cached_row_round(&t[i]);
	for (i = 0; i < ARRAY_SIZE(t); i++)
		cached_row_finish(&t[i]);

	printf("\n### The parser: Rust against the C reference\n\n");
	printf("Nanoseconds per parse inside the kernel, the minimum and the median of %d\n"
	       "rounds (each round times every row and implementation once with the same\n"
	       "ioctl of `/dev/buildid`, the Rust parser with the build ID cache bypassed;\n"
	       "\"evicted\": %d parses each, the page cache dropped before every one).  The\n"
	       "ratios are C time / Rust time of the minimum and of the median, above 1 when\n"
	       "Rust is faster.  The last two rows are the worst file for the bounds on a\n"
	       "parse (256 program headers, 256 note headers): 256 PT_NOTE segments over the\n"
	       "same 3.4 MiB of empty notes, which kept 6.12's parse reading for seconds.\n\n",
	       PARSE_ROUNDS, EVICTED_PARSES);
	printf("| file | mode | Rust min ns | Rust median ns | C min ns | C median ns | C/Rust, min | C/Rust, median |\n"
	       "|---|---|---:|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < 6; i++)
		row(t[i].what, mode_names[t[i].mode], t[i].ns[RUST_PARSE], t[i].ns[C_REF]);
	evicted_row("small library (16 KiB)", small, EVICTED_PARSES);
	evicted_row("note beyond the first page", far, EVICTED_PARSES);
	row(t[6].what, mode_names[t[6].mode], t[6].ns[RUST_PARSE], t[6].ns[C_REF]);
	hostile = hostile_notes_file();
	hostile_row(hostile, BUILDID_BENCH_NOFAULT, 200);
	hostile_row(hostile, BUILDID_BENCH_SLEEPABLE, 200);
	unlink(hostile);

	printf("\n### The build ID cache: a hit against a parse\n\n");
	printf("The same files and rounds as above (the C parse columns repeat them).  A hit\n"
	       "is a lookup of the file's inode in the cache, which is how every caller of the\n"
	       "kernel gets a build ID while the cache is on; a parse reads the ELF headers\n"
	       "from the page cache.  \"Loop\" is the benchmark ioctl's own cost per iteration\n"
	       "(no parse), which every column includes.  The ratios are hit / C parse of the\n"
	       "minimum, of the median, and of the minimum net of the loop.  The cache is\n"
	       "meant to stay below 0.1.\n\n");
	printf("| file | mode | hit min ns | hit median ns | C parse min ns | C parse median ns | loop min ns | hit / C, min | hit / C, median | hit / C, min net of the loop |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < 6; i++) {
		struct spread hit = t[i].ns[RUST_CACHE], c = t[i].ns[C_REF];

		printf("| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.3f | %.3f | %.3f |\n",
		       t[i].what, mode_names[t[i].mode], hit.min, hit.median, c.min, c.median,
		       t[i].loop_ns.min, hit.min / c.min, hit.median / c.median,
		       (hit.min - t[i].loop_ns.min) / (c.min - t[i].loop_ns.min));
	}

	printf("\nWhere a nofault hit's time goes: the minima of the same rounds, and the RCU\n"
	       "read-side critical section that every hit takes around its lookup, taken and\n"
	       "dropped alone in the same loop (`BUILDID_BENCH_RCU_READ_LOCK`, net of the\n"
	       "loop).  In Rust it is two calls of the C helpers `rust_helper_rcu_read_lock()`\n"
	       "and `rust_helper_rcu_read_unlock()`, empty functions in this kernel (no\n"
	       "preemptible RCU, no lockdep) that 6.12's Rust cannot inline.  \"The rest\" is\n"
	       "the hit without the loop and the read lock: the call of the parse, the\n"
	       "table probe, the call that reads the inode's stamp, the comparisons.  The\n"
	       "ratios are to the C parse net of the loop.\n\n");
	printf("| file | hit min ns | loop min ns | RCU read lock min ns | the rest ns | C parse min net of the loop ns | hit net of the loop / C | the rest / C |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < 3; i++) {
		double hit = t[i].ns[RUST_CACHE].min, loop = t[i].loop_ns.min;
		double lock = t[i].rcu_ns.min - loop, c = t[i].ns[C_REF].min - loop;

		printf("| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.3f | %.3f |\n", t[i].what, hit,
		       loop, lock, hit - loop - lock, c, (hit - loop) / c, (hit - loop - lock) / c);
	}
}

/* Times @calls calls of the probed function with @prog_name attached. */
static uint64_t probe_run(struct bpf_object *obj, const char *prog_name, unsigned int calls)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = "buildid_probe");
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, prog_name);
	struct bpf_link *link;
	unsigned int i;
	uint64_t t0;

	if (!prog)
		die(prog_name);
	link = bpf_program__attach_uprobe_opts(prog, getpid(), "/proc/self/exe",
					       PROBE_BODY_OFFSET, &opts);
	if (!link)
		die(prog_name);
	t0 = now_ns();
	for (i = 0; i < calls; i++)
		call_probe(buildid_probe);
	t0 = now_ns() - t0;
	bpf_link__destroy(link);
	return t0;
}

enum { BPF_CALLS = 2000 };

/*
 * Loads buildid_stack.bpf.o and sets its data to @data, recording this
 * process; returns the fd of its .bss map, where the data is.
 */
static int load_stack_programs(struct bpf_object **obj, struct stack_test_data *data)
{
	struct bpf_map *bss;
	int key = 0;

	*obj = bpf_object__open_file(test_file("buildid_stack.bpf.o"), NULL);
	if (!*obj || bpf_object__load(*obj))
		die("buildid_stack.bpf.o");
	bss = bss_map_of(*obj);
	if (!bss)
		die(".bss");
	data->target_tgid = getpid();
	if (bpf_map_update_elem(bpf_map__fd(bss), &key, data, BPF_ANY))
		die("update .bss");
	return bpf_map__fd(bss);
}

enum { FRAME_ROUNDS = 25, FRAME_LOOKUPS = 20000 };

/*
 * The lookup of one frame as kernel/bpf/stackmap.c makes it, timed in the
 * kernel's loop: without mmap_lock, and under mmap_read_trylock().
 */
static struct spread frame_lookup_rows(void)
{
	static const int modes[] = {
		BUILDID_BENCH_EMPTY, BUILDID_BENCH_VMA_LOCKLESS, BUILDID_BENCH_VMA_TRYLOCK,
	};
	static const char * const what[] = {
		"the benchmark's loop alone",
		"without mmap_lock: `buildid_cache_vma_lookup()`",
		"`mmap_read_trylock()`, `vma_lookup()`, `build_id_parse_nofault()`, unlock",
	};
	uint64_t runs[ARRAY_SIZE(modes)][FRAME_ROUNDS];
	uint64_t addr = (uintptr_t)buildid_probe;
	struct spread ns[ARRAY_SIZE(modes)];
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	unsigned int r, k;

	if (fd < 0)
		die("/proc/self/exe");
	/* One lookup alone first: a miss (or a failed trylock) makes kbench() exit. */
	for (k = 1; k < ARRAY_SIZE(modes); k++)
		kbench(fd, modes[k], RUST_CACHE, 1, addr, 0);
	for (r = 0; r < FRAME_ROUNDS; r++)
		for (k = 0; k < ARRAY_SIZE(modes); k++)
			runs[k][r] = modes[k] == BUILDID_BENCH_EMPTY ?
				kbench_loop(fd, FRAME_LOOKUPS) :
				kbench(fd, modes[k], RUST_CACHE, FRAME_LOOKUPS, addr, 0);
	close(fd);
	for (k = 0; k < ARRAY_SIZE(modes); k++)
		ns[k] = spread_of(runs[k], FRAME_ROUNDS, FRAME_LOOKUPS);

	printf("\nOne frame's lookup, in a loop in the kernel (`BUILDID_IOC_BENCH`, %d rounds of\n"
	       "%d lookups of an address in this benchmark's own code, whose build ID is\n"
	       "cached): what the rows above pay per VMA, without the uprobe around it.\n\n",
	       FRAME_ROUNDS, FRAME_LOOKUPS);
	printf("| lookup | min ns | median ns |\n|---|---:|---:|\n");
	for (k = 0; k < ARRAY_SIZE(modes); k++)
		printf("| %s | %.0f | %.0f |\n", what[k], ns[k].min, ns[k].median);
	return ns[1];
}

enum { KFUNC_ROUNDS = 25, KFUNC_CALLS = 20000 };

/* Kernel-side time of @calls calls of bpf_vma_build_id() (or turns of the loop alone). */
static uint64_t kfunc_run(struct bpf_object *obj, int bss, unsigned int calls, bool kfunc)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, "bench_vma_build_id");
	struct vma_test_data data = {
		.pid = getpid(), .addr = (uintptr_t)buildid_probe,
		.bench_calls = calls, .bench_kfunc = kfunc,
	};
	int key = 0;

	if (!prog || bpf_map_update_elem(bss, &key, &data, BPF_ANY) ||
	    bpf_prog_test_run_opts(bpf_program__fd(prog), &opts) ||
	    bpf_map_lookup_elem(bss, &key, &data))
		die("bench_vma_build_id");
	if (kfunc && data.bench_ret != 20) {
		fprintf(stderr, "buildid_bench: bpf_vma_build_id() returned %d\n", data.bench_ret);
		exit(1);
	}
	return data.bench_ns;
}

/*
 * bpf_vma_build_id() on the VMA of this benchmark's code, in a loop in a
 * BPF program: a cache hit, and with the cache off the nofault parse of
 * the page cache; net of the loop, against what bpf_get_stack() pays per
 * frame (@frame) and per call (@stack, build IDs minus IPs only).
 */
static void vma_kfunc_rows(struct spread frame, struct spread stack)
{
	static const char * const what[] = { "cache hit", "nofault parse (cache off)" };
	uint64_t runs[3][KFUNC_ROUNDS];
	struct spread ns[3];
	struct bpf_object *obj;
	unsigned int r, k;
	int bss;

	obj = bpf_object__open_file(test_file("bpf_vma_build_id.bpf.o"), NULL);
	if (!obj || bpf_object__load(obj))
		die("bpf_vma_build_id.bpf.o");
	bss = bpf_map__fd(bss_map_of(obj));
	/* A first call misses and queues the fill: the rounds then hit. */
	kfunc_run(obj, bss, 1, true);
	if (buildid_cache_drain())
		die("buildid_cache_drain");
	for (k = 0; k < 2; k++) {
		cache_switch(!k);
		for (r = 0; r < KFUNC_ROUNDS; r++) {
			if (!k)
				runs[2][r] = kfunc_run(obj, bss, KFUNC_CALLS, false);
			runs[k][r] = kfunc_run(obj, bss, KFUNC_CALLS, true);
		}
	}
	cache_switch(1);
	bpf_object__close(obj);
	for (k = 0; k < 3; k++)
		ns[k] = spread_of(runs[k], KFUNC_ROUNDS, KFUNC_CALLS);

	printf("\n### bpf_vma_build_id()\n\n");
	printf("The kfunc on one VMA (this benchmark's code), called %d times in a loop of a\n"
	       "BPF program, %d rounds; net of the loop alone (%.0f ns min).  For comparison,\n"
	       "what bpf_get_stack() pays for build IDs: one frame's lockless lookup (above),\n"
	       "and per call the uprobe rows' build IDs minus IPs only (every frame of the stack).\n\n",
	       KFUNC_CALLS, KFUNC_ROUNDS, ns[2].min);
	printf("| per VMA | min ns | median ns |\n|---|---:|---:|\n");
	for (k = 0; k < 2; k++)
		printf("| bpf_vma_build_id(), %s | %.0f | %.0f |\n", what[k],
		       ns[k].min - ns[2].min, ns[k].median - ns[2].median);
	printf("| bpf_get_stack(), one frame's lockless lookup | %.0f | %.0f |\n",
	       frame.min, frame.median);
	printf("| bpf_get_stack() + build IDs minus IPs only, per call | %.0f | %.0f |\n",
	       stack.min, stack.median);
}

/* How many answers stackmap's lockless pass remembers (STACK_MAP_LOCKLESS_RANGES). */
#define STACKMAP_REMEMBERED 4

/*
 * How many lockless lookups stackmap makes for the user stack @ips of this
 * process: a frame in a VMA that one of its last answers covered takes that
 * answer; a frame outside any file mapping gets no answer to remember.
 * @nr_vmas gets the number of distinct file VMAs.
 */
static unsigned int stack_lookups(const uint64_t *ips, unsigned int n, unsigned int *nr_vmas)
{
	uint64_t seen[STACKMAP_REMEMBERED], start[STACK_MAX_FRAMES];
	unsigned int i, j, lookups = 0, answers = 0;
	struct mapping m;

	if (n > STACK_MAX_FRAMES)
		n = STACK_MAX_FRAMES;
	*nr_vmas = 0;
	for (i = 0; i < n; i++) {
		/* No file VMA: a lookup that finds none, no answer to remember. */
		if (maps_find(getpid(), ips[i], &m) || m.path[0] != '/') {
			start[i] = 0;
			lookups++;
			continue;
		}
		start[i] = m.start;
		for (j = 0; j < i && start[j] != start[i]; j++)
			;
		*nr_vmas += j == i;
		for (j = 0; j < answers && j < STACKMAP_REMEMBERED; j++)
			if (seen[j] == start[i])
				break;
		if (j < answers && j < STACKMAP_REMEMBERED)
			continue;
		lookups++;
		seen[answers++ % STACKMAP_REMEMBERED] = start[i];
	}
	return lookups;
}

/*
 * What the nofault uprobe row's build IDs cost per call (@stack, its minimum
 * minus IPs only's, @ips), split into its lockless lookups at the one-frame
 * row's time (@frame) and the rest.
 */
static void stack_breakdown(double stack, double ips, double frame, const uint64_t *trace,
			    unsigned int frames)
{
	unsigned int vmas, lookups = stack_lookups(trace, frames, &vmas);
	double rest = stack - lookups * frame;

	printf("\nWhere the nofault row's build IDs go, per call (minima): its user stack has\n"
	       "%u frames in %u VMAs, and stackmap's lockless pass looks up %u of them (a\n"
	       "frame in a VMA that one of its last %d answers covered takes that answer),\n"
	       "counted at the one-frame row's time, a loop that keeps everything it touches\n"
	       "cached.  \"The rest\" is everything else that build IDs add: 32-byte entries\n"
	       "instead of 8-byte IPs, the pass over the frames, and what the lookups cost\n"
	       "beyond their time in that loop when they run once in a uprobe.  Its ratio is\n"
	       "what the row would be if the lookups cost nothing in that loop.\n\n",
	       frames, vmas, lookups, STACKMAP_REMEMBERED);
	printf("| per call of bpf_get_stack() | min ns | relative to IPs only |\n|---|---:|---:|\n");
	printf("| IPs only | %.0f | 1.00 |\n", ips);
	printf("| build IDs minus IPs only | %.0f | %.2f |\n", stack, (ips + stack) / ips);
	printf("| %u lockless lookups, at the one-frame row's time | %.0f | |\n", lookups,
	       lookups * frame);
	printf("| the rest | %.0f | %.2f |\n", rest, (ips + rest) / ips);
}

static void bpf_rows(void)
{
	static const char * const progs[] = {
		"uprobe_stack_ips", "uprobe_stack", "uprobe_stack_sleepable",
	};
	static const char * const what[] = {
		"bpf_get_stack(), IPs only",
		"bpf_get_stack() + build IDs, uprobe (nofault)",
		"bpf_get_stack() + build IDs, uprobe.s (sleepable)",
	};
	uint64_t runs[ARRAY_SIZE(progs)][BPF_ROUNDS];
	double paired[ARRAY_SIZE(progs)];
	struct spread ns[ARRAY_SIZE(progs)], frame;
	struct stack_test_data data = {};
	struct bpf_object *obj;
	unsigned int r, k, p, frames;
	int key = 0, bss;

	bss = load_stack_programs(&obj, &data);
	/* Each round runs the three programs, in an order that rotates. */
	for (r = 0; r < BPF_ROUNDS; r++)
		for (k = 0; k < ARRAY_SIZE(progs); k++) {
			p = (k + r) % ARRAY_SIZE(progs);
			runs[p][r] = probe_run(obj, progs[p], BPF_CALLS);
		}
	if (bpf_map_lookup_elem(bss, &key, &data))
		die("lookup .bss");
	if (data.uprobe.frames[0].status != BPF_STACK_BUILD_ID_VALID ||
	    data.uprobe_sleepable.frames[0].status != BPF_STACK_BUILD_ID_VALID) {
		fprintf(stderr, "buildid_bench: the probes did not resolve build IDs\n");
		exit(1);
	}
	bpf_object__close(obj);
	for (p = 0; p < ARRAY_SIZE(progs); p++)
		paired[p] = paired_ratio(runs[p], runs[0], BPF_ROUNDS);
	for (p = 0; p < ARRAY_SIZE(progs); p++)
		ns[p] = spread_of(runs[p], BPF_ROUNDS, BPF_CALLS);

	printf("\n### bpf_get_stack() with BPF_F_USER_BUILD_ID\n\n");
	printf("Wall time per call of a uprobed function whose program records the user\n"
	       "stack: the minimum and the median of %d rounds of %d calls, each round\n"
	       "running the three programs one after the other in an order that rotates\n"
	       "(the uprobe itself is in every row).  The ratios are to IPs only, of the\n"
	       "minimum, of the median, and the median of the rounds' own ratios (each\n"
	       "round's time over the IPs only time of the same round, which cancels\n"
	       "what slows a whole round down).\n\n", BPF_ROUNDS, BPF_CALLS);
	printf("| program | min ns | median ns | relative, min | relative, median | relative, median of the rounds |\n"
	       "|---|---:|---:|---:|---:|---:|\n");
	for (p = 0; p < ARRAY_SIZE(progs); p++)
		printf("| %s | %.0f | %.0f | %.2f | %.2f | %.2f |\n", what[p], ns[p].min,
		       ns[p].median, ns[p].min / ns[0].min, ns[p].median / ns[0].median,
		       paired[p]);
	frame = frame_lookup_rows();
	vma_kfunc_rows(frame, (struct spread){
		ns[1].min - ns[0].min, ns[1].median - ns[0].median });
	/* The build ID row's frames, whose IPs the IPs only row recorded. */
	frames = data.uprobe.ret / sizeof(struct bpf_stack_build_id);
	if (data.uprobe_ips.ret < 0 || frames * sizeof(uint64_t) > (size_t)data.uprobe_ips.ret) {
		fprintf(stderr, "buildid_bench: the IPs only probe recorded fewer frames\n");
		exit(1);
	}
	stack_breakdown(ns[1].min - ns[0].min, ns[0].min, frame.min,
			(const uint64_t *)data.uprobe_ips.frames, frames);
}

/*
 * Availability: how often a nofault caller (perf, BPF, NMI) gets a build ID
 * for a real process' executable mappings.
 */

#define MAX_EXEC_FILES 64

/* Distinct files with an executable mapping, as the perf records name them. */
struct exec_files {
	unsigned int nr;
	char path[MAX_EXEC_FILES][PATH_MAX];
};

struct mmap2_tally {
	unsigned int records, with_id, wrong;
	struct exec_files *files;
};

static void tally_mapping(void *arg, const char *path, uint64_t addr,
			  const unsigned char *id, unsigned int size)
{
	struct mmap2_tally *t = arg;
	struct build_id want;
	unsigned int i;

	t->records++;
	if (size) {
		t->with_id++;
		if (elf_build_id_from_sections(path, &want) || !build_id_equal(&want, id, size))
			t->wrong++;
	}
	if (!t->files)
		return;
	for (i = 0; i < t->files->nr; i++)
		if (!strcmp(t->files->path[i], path))
			return;
	if (t->files->nr < MAX_EXEC_FILES)
		snprintf(t->files->path[t->files->nr++], PATH_MAX, "%s", path);
}

static char *const perf_python[] = {
	"python3", "-c", "import ssl, sqlite3, ctypes, decimal, json", NULL,
};

/* perf record --buildid-mmap of perf_python, with cold caches. */
static void perf_mmap2(int cache_on, struct mmap2_tally *t)
{
	int err;

	cache_switch(cache_on);
	err = drop_all_caches();
	if (err) {
		errno = -err;
		die("/proc/sys/vm/drop_caches");
	}
	err = perf_exec_mappings(perf_python, tally_mapping, t);
	if (err) {
		errno = -err;
		die("perf MMAP2 records of python3");
	}
	if (t->wrong) {
		fprintf(stderr, "buildid_bench: %u MMAP2 records with a wrong build ID\n",
			t->wrong);
		exit(1);
	}
}

/* Copies the files onto the scratch file system, bind-mounted over the originals. */
static void bind_copies(const struct exec_files *f, bool on)
{
	char copy[PATH_MAX + 64];
	unsigned int i;

	for (i = 0; i < f->nr; i++) {
		if (!on) {
			if (umount2(f->path[i], 0))
				die(f->path[i]);
			continue;
		}
		snprintf(copy, sizeof(copy), "%s/exec-file-%u", scratch_dir(), i);
		if (copy_file(f->path[i], copy) || mount(copy, f->path[i], NULL, MS_BIND, NULL))
			die(f->path[i]);
	}
}

struct availability {
	unsigned int mappings, cached, cached_unknown, pageout_failed, wrong;
	unsigned int found[NR_IMPLS];
};

struct vma_range {
	uint64_t start, end;
	char path[PATH_MAX];
	bool exec;
	struct build_id want;	/* of an exec mapping's file, read before the eviction */
	long note;
};

/* The file mappings of @pid from its maps text. */
static unsigned int file_vmas(pid_t pid, struct vma_range *v, unsigned int max)
{
	char name[64], line[PATH_MAX + 256];
	unsigned int nr = 0;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/maps", pid);
	f = fopen(name, "re");
	if (!f)
		die(name);
	while (nr < max && fgets(line, sizeof(line), f)) {
		char *p = line, *path = strchr(line, '/');

		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		v[nr].start = strtoull(p, &p, 16);
		v[nr].end = strtoull(p + 1, &p, 16);
		v[nr].exec = p[3] == 'x';
		snprintf(v[nr].path, sizeof(v[nr].path), "%s", path);
		nr++;
	}
	fclose(f);
	return nr;
}

/* The VMA query's flags for each implementation: it parses the VMA's file, as perf and BPF do. */
static const uint32_t vma_flags[NR_IMPLS] = {
	[RUST_CACHE] = 0, [C_REF] = BUILDID_VMA_C_REFERENCE, [RUST_PARSE] = BUILDID_VMA_UNCACHED,
};

/*
 * python3 after its imports, its pages paged out with process_madvise() and
 * the clean rest dropped from the page cache: a nofault parse of each
 * executable mapping by each implementation.
 */
static void pageout_availability(struct availability *a)
{
	static struct vma_range v[512];
	static const enum impl order[] = { C_REF, RUST_PARSE, RUST_CACHE };
	int in[2], out[2], pidfd, fd;
	unsigned int k;
	unsigned int nr, i;
	char ready[16];
	pid_t pid;
	long page = sysconf(_SC_PAGESIZE);

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execlp("python3", "python3", "-c",
		       "import ssl, sqlite3, ctypes, sys; print('ready', flush=True); sys.stdin.read()",
		       NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (read(out[0], ready, sizeof(ready)) < 5 || strncmp(ready, "ready", 5))
		die("python3 did not start");

	nr = file_vmas(pid, v, ARRAY_SIZE(v));
	/* Reading the files for the expected IDs brings them in: before the eviction. */
	for (i = 0; i < nr; i++) {
		if (!v[i].exec)
			continue;
		v[i].note = elf_build_id_note_offset(v[i].path);
		if (elf_build_id_from_sections(v[i].path, &v[i].want) || v[i].note < 0)
			die(v[i].path);
	}
	/*
	 * A profiler's first look, while the pages are there: one nofault
	 * lookup of each mapping, whose parse queues the fill (mmap() fills
	 * nothing).  Without the cache it changes nothing.
	 */
	for (i = 0; i < nr; i++) {
		struct buildid_vma_query q = {
			.size = sizeof(q), .pid = pid, .addr = v[i].start,
			.flags = vma_flags[RUST_CACHE],
		};

		if (v[i].exec)
			ioctl(dev, BUILDID_IOC_VMA, &q);
	}
	if (buildid_cache_drain())
		die("drain the cache's fills");
	pidfd = syscall(__NR_pidfd_open, pid, 0);
	if (pidfd < 0)
		die("pidfd_open");
	memset(a, 0, sizeof(*a));
	/* One range at a time: a mapping that cannot be paged out fails alone. */
	for (i = 0; i < nr; i++) {
		struct iovec iov = {
			.iov_base = (void *)(uintptr_t)v[i].start, .iov_len = v[i].end - v[i].start,
		};

		if (syscall(__NR_process_madvise, pidfd, &iov, 1, MADV_PAGEOUT, 0) < 0)
			a->pageout_failed++;
	}
	close(pidfd);
	for (i = 0; i < nr; i++) {
		fd = open(v[i].path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
			die(v[i].path);
		close(fd);
	}

	for (i = 0; i < nr; i++) {
		int header, note_page;

		if (!v[i].exec)
			continue;
		a->mappings++;
		header = file_page_cached(v[i].path, 0);
		note_page = file_page_cached(v[i].path, v[i].note & ~(page - 1));
		if (header < 0 || note_page < 0)
			a->cached_unknown++;
		else if (header && note_page)
			a->cached++;
		/* Parses first: a lookup that misses queues a fill, which reads the file. */
		for (k = 0; k < ARRAY_SIZE(order); k++) {
			struct buildid_vma_query q = {
				.size = sizeof(q), .pid = pid, .addr = v[i].start,
				.flags = vma_flags[order[k]],
			};

			if (ioctl(dev, BUILDID_IOC_VMA, &q))
				continue;
			if (build_id_equal(&v[i].want, q.build_id, q.build_id_size))
				a->found[order[k]]++;
			else
				a->wrong++;
		}
	}
	close(in[1]);
	close(out[0]);
	waitpid(pid, NULL, 0);
	if (a->wrong) {
		fprintf(stderr, "buildid_bench: %u wrong build IDs\n", a->wrong);
		exit(1);
	}
}

static void share(unsigned int k, unsigned int n)
{
	printf(" %u/%u (%.0f%%) |", k, n, n ? 100.0 * k / n : 0.0);
}

static void availability_rows(void)
{
	static struct exec_files files;
	struct mmap2_tally perf[2][2] = {};
	struct availability pageout[2];
	const char *where[2] = { "overlayfs over 9p (vng's /usr)", "ext4" };
	int fs, on;

	for (fs = 0; fs < 2; fs++) {
		for (on = 0; on < 2; on++) {
			perf[fs][on].files = fs ? NULL : &files;
			perf_mmap2(on, &perf[fs][on]);
		}
		cache_switch(1);
		pageout_availability(&pageout[fs]);
		if (!fs)
			bind_copies(&files, true);
	}
	/* Queued fills hold the files open. */
	if (buildid_cache_drain())
		die("drain the cache's fills");
	bind_copies(&files, false);

	printf("\n### Build IDs after the page cache dropped them\n\n");
	printf("python3 after `import ssl, sqlite3, ctypes` and one nofault lookup of each\n"
	       "of its executable mappings (a profiler's first look: `mmap()` fills no\n"
	       "cache, a lookup's parse queues the fill), its pages paged out with\n"
	       "`process_madvise(MADV_PAGEOUT)` and the rest of its files dropped with\n"
	       "`POSIX_FADV_DONTNEED`; then one nofault parse of each executable mapping's\n"
	       "file (`vm_file`, as perf and BPF parse it: for overlayfs the layer below).\n"
	       "\"Still cached\" counts the mappings whose ELF header and note pages stayed in\n"
	       "the page cache anyway (pages that other processes map are not paged out).\n"
	       "The cache's answers are compared with the files' notes (any mismatch fails\n"
	       "the run).  No caller here gives up before looking: these rows have no\n"
	       "`mmap_read_trylock()` (stackmap's BPF helpers do, and fall back to IPs when\n"
	       "it fails, with or without the cache).\n\n");
	printf("| libraries on | exec mappings | still cached | C | Rust, no cache | Rust, cache |\n"
	       "|---|---:|---:|---:|---:|---:|\n");
	for (fs = 0; fs < 2; fs++) {
		printf("| %s | %u |", where[fs], pageout[fs].mappings);
		if (pageout[fs].cached_unknown)
			printf(" unknown for %u |", pageout[fs].cached_unknown);
		else
			share(pageout[fs].cached, pageout[fs].mappings);
		share(pageout[fs].found[C_REF], pageout[fs].mappings);
		share(pageout[fs].found[RUST_PARSE], pageout[fs].mappings);
		share(pageout[fs].found[RUST_CACHE], pageout[fs].mappings);
		printf("\n");
	}
	for (fs = 0; fs < 2; fs++)
		if (pageout[fs].pageout_failed)
			printf("\n%s: MADV_PAGEOUT failed for %u of the process' file mappings.\n",
			       where[fs], pageout[fs].pageout_failed);

	printf("\n### perf MMAP2 records with build IDs, first mmap\n\n");
	printf("What `perf record --buildid-mmap` gets for `python3 -c 'import ssl, sqlite3,\n"
	       "ctypes, decimal, json'` started with cold caches (`drop_caches`): the share of\n"
	       "executable MMAP2 records that carry a build ID (records are compared with\n"
	       "the files' notes; any mismatch fails the run).  perf asks\n"
	       "`build_id_parse_nofault()`, which this kernel serves from Rust, so the C\n"
	       "reference has no row of its own; without the cache the Rust parser finds\n"
	       "what C finds (the differential tests hold it to that).  `mmap()` fills no\n"
	       "cache: a record gets what the page cache has, with the cache on too, unless\n"
	       "something asked for the file before (each record's miss queues the fill\n"
	       "for the next one); the difference between the columns is what the first\n"
	       "start of a program loses.  The ext4 row runs the same files copied to\n"
	       "ext4 and bind-mounted over the originals.\n\n");
	printf("| libraries on | cache off | cache on |\n|---|---:|---:|\n");
	for (fs = 0; fs < 2; fs++) {
		printf("| %s |", where[fs]);
		share(perf[fs][0].with_id, perf[fs][0].records);
		share(perf[fs][1].with_id, perf[fs][1].records);
		printf("\n");
	}
}

/*
 * BPF stack build IDs in a busy process: a cpu-clock perf_event program
 * (hard interrupt context, the nofault path) samples a thread that runs
 * code from a file on ext4 while another thread maps, touches and unmaps
 * anonymous memory in a loop, as allocators do.
 */

#define LOCKLESS_VMA "/sys/kernel/debug/buildid_cache/lockless_vma"
#define BUSY_SAMPLES 300
#define BUSY_PAGE 4096UL

struct busy_thread {
	bool stop;		/* __atomic */
	unsigned int cycles;	/* __atomic */
	int err;
};

static void *busy_until_stopped(void *arg)
{
	struct busy_thread *b = arg;

	while (!__atomic_load_n(&b->stop, __ATOMIC_RELAXED) && !b->err) {
		b->err = busy_anon_once();
		__atomic_fetch_add(&b->cycles, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

struct busy_cell {
	unsigned int samples, valid;
	double cycles_per_s;
};

/* Exits unless the program headers' page is cached and the note's as @note_cached says. */
static void busy_check_pages(const char *path, bool note_cached)
{
	if (file_page_cached(path, BUSY_PAGE) != 1 ||
	    file_page_cached(path, 2 * BUSY_PAGE) != note_cached) {
		fprintf(stderr, "buildid_bench: %s: the program headers' page is not cached, or the note's page is %scached\n",
			path, note_cached ? "not " : "");
		exit(1);
	}
}

/*
 * Maps @path, leaves its note's page in
 * the page cache or drops it, and samples the spin loop in it until
 * BUSY_SAMPLES samples landed there, while a busy thread runs.
 */
static void busy_cell(struct bpf_object *obj, int bss, struct stack_test_data *data,
		      const char *path, bool note_cached, struct busy_cell *cell)
{
	const uint64_t note_page = 2 * BUSY_PAGE;
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, "perf_race");
	struct busy_thread b = {};
	void (*spin)(unsigned long count);
	unsigned char id[20];
	struct bpf_link *link;
	pthread_t thread;
	uint64_t t0;
	int fd, pfd, key = 0;
	time_t deadline;
	void *map;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !prog)
		die(path);
	map = mmap(NULL, BUSY_PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		die("mmap the spin file");
	/* The program headers' page is read in both rows; the C-like parse needs it. */
	if (pread(fd, &key, sizeof(key), BUSY_PAGE) != sizeof(key) ||
	    (note_cached && pread(fd, &key, sizeof(key), note_page) != sizeof(key)))
		die("read the spin file");
	/* A page under writeback stays: the file was just written. */
	if (!note_cached) {
		if (fsync(fd))
			die("fsync the spin file");
		errno = posix_fadvise(fd, note_page, BUSY_PAGE, POSIX_FADV_DONTNEED);
		if (errno)
			die("drop the note's page");
	}
	key = 0;
	busy_check_pages(path, note_cached);
	spin = (void *)((char *)map + 0x100);
	memcpy(id, data->race.ids[0], sizeof(id));
	data->race = (struct race_result){
		.start = (uintptr_t)spin, .end = (uintptr_t)spin + sizeof(spin_code),
		.map_start = (uintptr_t)map,
	};
	memcpy(data->race.ids[0], id, sizeof(id));
	memcpy(data->race.ids[1], id, sizeof(id));
	if (bpf_map_update_elem(bss, &key, data, BPF_ANY))
		die("update .bss");
	pfd = perf_cpu_clock_open();
	if (pfd < 0) {
		errno = -pfd;
		die("perf_event_open cpu-clock");
	}
	link = bpf_program__attach_perf_event(prog, pfd);
	if (!link)
		die("attach perf_race");
	if (pthread_create(&thread, NULL, busy_until_stopped, &b))
		die("pthread_create");
	ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0);
	t0 = now_ns();
	deadline = time(NULL) + 120;
	while (time(NULL) < deadline) {
		spin(2000000);
		if (bpf_map_lookup_elem(bss, &key, data))
			die("lookup .bss");
		if (data->race.samples >= BUSY_SAMPLES)
			break;
	}
	ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0);
	__atomic_store_n(&b.stop, true, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	cell->cycles_per_s = b.cycles * 1e9 / (now_ns() - t0);
	bpf_link__destroy(link);
	close(pfd);
	if (bpf_map_lookup_elem(bss, &key, data))
		die("lookup .bss");
	if (b.err) {
		errno = -b.err;
		die("the busy thread");
	}
	if (data->race.wrong || data->race.failed) {
		fprintf(stderr, "buildid_bench: %u wrong and %u failed samples in the busy process\n",
			data->race.wrong, data->race.failed);
		exit(1);
	}
	if (!b.cycles) {
		fprintf(stderr, "buildid_bench: the busy thread made no cycle\n");
		exit(1);
	}
	cell->samples = data->race.samples;
	cell->valid = data->race.seen[0] + data->race.seen[1];
	/* Nothing here reads the file: the cell measured what its row says. */
	busy_check_pages(path, note_cached);
	munmap(map, BUSY_PAGE);
	close(fd);
}

static void busy_process_rows(void)
{
	static const struct {
		int cache, lockless;
		const char *what;
	} configs[] = {
		{ 0, 0, "no cache, `mmap_read_trylock()` (as C)" },
		{ 1, 0, "cache, `mmap_read_trylock()`" },
		{ 1, 1, "cache, lockless VMA lookup" },
	};
	struct elf_craft c = { .phoff = BUSY_PAGE, .note_off = 2 * BUSY_PAGE + 0x10,
			       .size = 3 * BUSY_PAGE, .code_off = 0x100, .code = spin_code,
			       .code_size = sizeof(spin_code) };
	struct busy_cell cells[2][ARRAY_SIZE(configs)] = {};
	struct stack_test_data data = {};
	char path[PATH_MAX + 16], type[32];
	double cycles = 0;
	struct bpf_object *obj;
	unsigned int k, n = 0;
	int bss, cached;

	if (fs_type_of(scratch_dir(), type, sizeof(type)) || strcmp(type, "ext4"))
		die("BUILDID_SCRATCH_DIR is not on ext4");
	build_id_pattern(&c.id, 20, 0xb0);
	snprintf(path, sizeof(path), "%s/busy.elf", scratch_dir());
	if (elf_craft_file(path, &c))
		die(path);
	bss = load_stack_programs(&obj, &data);
	memcpy(data.race.ids[0], c.id.data, 20);
	for (k = 0; k < ARRAY_SIZE(configs); k++) {
		cache_switch(configs[k].cache);
		if (write_string(LOCKLESS_VMA, configs[k].lockless ? "1" : "0"))
			die(LOCKLESS_VMA);
		for (cached = 1; cached >= 0; cached--) {
			busy_cell(obj, bss, &data, path, cached, &cells[!cached][k]);
			cycles += cells[!cached][k].cycles_per_s;
			n++;
		}
	}
	cache_switch(1);
	if (write_string(LOCKLESS_VMA, "1"))
		die(LOCKLESS_VMA);
	bpf_object__close(obj);
	unlink(path);

	printf("\n### BPF stack build IDs in a busy process\n\n");
	printf("A cpu-clock perf_event program (hard interrupt context, so the nofault\n"
	       "path) calls `bpf_get_stack()` with build IDs on a thread that runs code\n"
	       "from a file on ext4, while another thread of the process maps, touches\n"
	       "and unmaps anonymous memory in a loop, as allocators do (%.0f cycles\n"
	       "a second, each taking `mmap_lock` for writing twice).  Each cell: of the\n"
	       "samples in that code (%d, or as many as two minutes gave), those whose\n"
	       "frame came back VALID (with the file's build ID and the right offset;\n"
	       "any other ID or offset fails the run), the rest being IPs only.  The\n"
	       "file is mapped anew for each cell; with the cache on, the samples of the\n"
	       "first cell, whose nofault parses succeed, queue the fill.  \"dropped\"\n"
	       "then drops the page of the note from the page cache, as reclaim does to\n"
	       "pages nobody maps (the code's page stays, it is running).  The first column is what C does: a\n"
	       "parse of the page cache under `mmap_read_trylock()`, which fails while a\n"
	       "writer holds the lock or waits for it.  The share the trylock loses\n"
	       "depends on how long the writer holds the lock: the debug kernel of\n"
	       "`make test` loses more (`perf_event_busy_process` logs it).\n\n",
	       n ? cycles / n : 0, BUSY_SAMPLES);
	printf("| note's page |");
	for (k = 0; k < ARRAY_SIZE(configs); k++)
		printf(" %s |", configs[k].what);
	printf("\n|---|");
	for (k = 0; k < ARRAY_SIZE(configs); k++)
		printf("---:|");
	printf("\n");
	for (cached = 1; cached >= 0; cached--) {
		printf("| %s |", cached ? "in the page cache" : "dropped");
		for (k = 0; k < ARRAY_SIZE(configs); k++)
			share(cells[!cached][k].valid, cells[!cached][k].samples);
		printf("\n");
	}
}

/* Costs of the cache outside lookups: its hooks in mmap, exec and inode eviction. */

enum {
	MMAP_CALLS = 2000, FIRST_MMAPS = 300, EXECS = 20, INODES = 2000, CACHED_INODES = 300,
	WRITE_OPENS = 2000, TRUNCATES = 2000, MAPPERS = 2
};

/* A multiple of the six orders of the three sides (measure_overheads()). */
#define OVERHEAD_ROUNDS 42

/*
 * The sides of a round: the cache off, on, and off again, a control that
 * shows how far two sides that run the same code differ.
 */
enum overhead_side { SIDE_OFF, SIDE_ON, SIDE_OFF_AGAIN, NR_SIDES };

static void map_exec(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *m;

	if (fd < 0)
		die(path);
	m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		die("mmap");
	munmap(m, 4096);
	close(fd);
}

static void run_true(void)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (!pid) {
		execl("/bin/true", "true", NULL);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
}

/* Creates (and with @fill, parses into the cache) @n copies of @src in @dir. */
static void make_files(const char *dir, const char *src, unsigned int n, bool fill)
{
	char path[PATH_MAX + 32];
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct buildid_file_query q = { .size = sizeof(q), .flags = BUILDID_SLEEPABLE };

		snprintf(path, sizeof(path), "%s/f%u", dir, i);
		if (src ? copy_file(src, path) : write_file(path, "", 0))
			die(path);
		if (!fill)
			continue;
		q.fd = open(path, O_RDONLY | O_CLOEXEC);
		if (q.fd < 0 || ioctl(dev, BUILDID_IOC_FILE, &q))
			die(path);
		close(q.fd);
	}
}

/* Maps the first of @n files in @dir, @MAPPERS processes at once, each its share. */
static void map_exec_parallel(const char *dir, unsigned int n)
{
	char path[PATH_MAX + 32];
	unsigned int p, i;
	pid_t pid[MAPPERS];

	for (p = 0; p < MAPPERS; p++) {
		pid[p] = fork();
		if (pid[p] < 0)
			die("fork");
		if (pid[p])
			continue;
		for (i = p; i < n; i += MAPPERS) {
			snprintf(path, sizeof(path), "%s/f%u", dir, i);
			map_exec(path);
		}
		_exit(0);
	}
	for (p = 0; p < MAPPERS; p++)
		waitpid(pid[p], NULL, 0);
}

static uint64_t unlink_files(const char *dir, unsigned int n)
{
	char path[PATH_MAX + 32];
	uint64_t t0 = now_ns();
	unsigned int i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%u", dir, i);
		if (unlink(path))
			die(path);
	}
	return now_ns() - t0;
}

enum overhead {
	MMAP_HIT, MMAP_FIRST, MMAP_FIRST_PARALLEL, EXEC, EVICT_PLAIN, EVICT_CACHED, OPEN_WRITE,
	TRUNCATE, NR_OVERHEADS
};

/*
 * ns per operation on each side; @paired: the median of the rounds' ratios
 * of [SIDE_ON] and [SIDE_OFF_AGAIN] to [SIDE_OFF].
 */
static void measure_overheads(const char *lib, const char *copies, const char *copies2,
			      const char *tmp, struct spread ns[NR_OVERHEADS][NR_SIDES],
			      double paired[NR_OVERHEADS][NR_SIDES])
{
	static const unsigned int per[NR_OVERHEADS] = {
		MMAP_CALLS, FIRST_MMAPS, FIRST_MMAPS, EXECS, INODES, CACHED_INODES, WRITE_OPENS,
		TRUNCATES,
	};
	static const unsigned int side_orders[][NR_SIDES] = {
		{ SIDE_OFF, SIDE_ON, SIDE_OFF_AGAIN }, { SIDE_ON, SIDE_OFF_AGAIN, SIDE_OFF },
		{ SIDE_OFF_AGAIN, SIDE_OFF, SIDE_ON }, { SIDE_OFF, SIDE_OFF_AGAIN, SIDE_ON },
		{ SIDE_OFF_AGAIN, SIDE_ON, SIDE_OFF }, { SIDE_ON, SIDE_OFF, SIDE_OFF_AGAIN },
	};
	static_assert(OVERHEAD_ROUNDS % ARRAY_SIZE(side_orders) == 0,
		      "every order of the sides runs as often");
	uint64_t runs[NR_OVERHEADS][NR_SIDES][OVERHEAD_ROUNDS];
	char path[PATH_MAX + 32];
	struct stat st;
	unsigned int r, i, side, k;
	uint64_t t0;

	for (r = 0; r < OVERHEAD_ROUNDS; r++) {
		for (k = 0; k < NR_SIDES; k++) {
			/*
			 * The six orders of the sides in turn: each side runs first,
			 * second and last, after each of the others, as often.
			 */
			side = side_orders[r % ARRAY_SIZE(side_orders)][k];
			/*
			 * Off empties the cache: every copy is mapped for the first time
			 * again.  Both off sides come from on, so that they differ in
			 * nothing but their place in the round.
			 */
			if (side != SIDE_ON)
				cache_switch(1);
			cache_switch(side == SIDE_ON);
			/* Let the switch's RCU callbacks and text patching settle first. */
			usleep(200000);
			t0 = now_ns();
			for (i = 0; i < MMAP_CALLS; i++)
				map_exec(lib);
			t0 = now_ns() - t0;
			runs[MMAP_HIT][side][r] = t0;

			t0 = now_ns();
			for (i = 0; i < FIRST_MMAPS; i++) {
				snprintf(path, sizeof(path), "%s/f%u", copies, i);
				map_exec(path);
			}
			t0 = now_ns() - t0;
			runs[MMAP_FIRST][side][r] = t0;

			t0 = now_ns();
			map_exec_parallel(copies2, FIRST_MMAPS);
			runs[MMAP_FIRST_PARALLEL][side][r] = now_ns() - t0;

			t0 = now_ns();
			for (i = 0; i < EXECS; i++)
				run_true();
			t0 = now_ns() - t0;
			runs[EXEC][side][r] = t0;

			make_files(tmp, NULL, INODES, false);
			t0 = unlink_files(tmp, INODES);
			runs[EVICT_PLAIN][side][r] = t0;

			make_files(tmp, lib, CACHED_INODES, true);
			t0 = unlink_files(tmp, CACHED_INODES);
			runs[EVICT_CACHED][side][r] = t0;

			/* Write access: the hook in do_dentry_open(). */
			snprintf(path, sizeof(path), "%s/f0", copies);
			t0 = now_ns();
			for (i = 0; i < WRITE_OPENS; i++) {
				int fd = open(path, O_WRONLY | O_CLOEXEC);

				if (fd < 0)
					die(path);
				close(fd);
			}
			runs[OPEN_WRITE][side][r] = now_ns() - t0;

			/* The hook in vfs_truncate(), to the same size. */
			if (stat(path, &st))
				die(path);
			t0 = now_ns();
			for (i = 0; i < TRUNCATES; i++) {
				if (truncate(path, st.st_size))
					die(path);
			}
			runs[TRUNCATE][side][r] = now_ns() - t0;
		}
	}
	cache_switch(1);
	/* The rounds' own ratios first: spread_of() sorts the runs. */
	for (k = 0; k < NR_OVERHEADS; k++)
		for (side = 0; side < NR_SIDES; side++)
			paired[k][side] = paired_ratio(runs[k][side], runs[k][SIDE_OFF],
						       OVERHEAD_ROUNDS);
	for (k = 0; k < NR_OVERHEADS; k++)
		for (side = 0; side < NR_SIDES; side++)
			ns[k][side] = spread_of(runs[k][side], OVERHEAD_ROUNDS, per[k]);
}

static void overhead_rows(void)
{
	static const char * const what[NR_OVERHEADS] = {
		"mmap(PROT_EXEC) + munmap of one file, again and again",
		"mmap(PROT_EXEC) + munmap, first of a file",
		"the same from 2 processes at once (wall time per file)",
		"fork + exec /bin/true + wait",
		"unlink of a tmpfs file (inode eviction)",
		"unlink of a tmpfs file with a cached build ID",
		"open(O_WRONLY) + close of an ext4 file",
		"truncate() of an ext4 file to its size",
	};
	char copies[PATH_MAX], copies2[PATH_MAX + 8], tmp[PATH_MAX];
	struct spread ns[NR_OVERHEADS][NR_SIDES];
	double paired[NR_OVERHEADS][NR_SIDES];
	const char *lib;
	unsigned int k;

	lib = scratch_copy(test_file("libbuildid_sha1.so"), "mapped.so");
	snprintf(copies, sizeof(copies), "%s/copies", scratch_dir());
	snprintf(copies2, sizeof(copies2), "%s/copies2", scratch_dir());
	snprintf(tmp, sizeof(tmp), "%s/tmpfs", scratch_dir());
	if ((mkdir(copies, 0755) && errno != EEXIST) || (mkdir(copies2, 0755) && errno != EEXIST) ||
	    (mkdir(tmp, 0755) && errno != EEXIST) || mount("tmpfs", tmp, "tmpfs", 0, NULL))
		die("scratch directories");
	make_files(copies, lib, FIRST_MMAPS, false);
	make_files(copies2, lib, FIRST_MMAPS, false);
	measure_overheads(lib, copies, copies2, tmp, ns, paired);
	if (umount2(tmp, 0))
		die(tmp);

	printf("\n### The cache's hooks: mmap, exec, inode eviction and write access\n\n");
	printf("Time per operation with the cache off and on, the minimum and the median\n"
	       "of %d rounds.  Each round runs three sides one after the other: the cache\n"
	       "off, on, and off again, in each of their six orders in turn.  Each off\n"
	       "side turns the cache on and then off (which empties it), so that the two\n"
	       "run the same code after the same switch.  \"On, no consumer\": nothing\n"
	       "asks for a build ID while the rows are timed; only the files of the\n"
	       "cached-ID row were asked for before (a sleepable query each, outside the\n"
	       "timing).  mmap(PROT_EXEC) and exec have no hook (the cache fills on demand\n"
	       "only): their rows show that they pay nothing.  An inode's eviction looks\n"
	       "it up and drops its entry, unless the cache is empty (then it reads the\n"
	       "entry count only).  The library is the 16 KiB one on ext4, in the page\n"
	       "cache; exec runs /bin/true from vng's /usr.  Write access (open for write,\n"
	       "truncate) counts a grant only while a fill runs, and looks the inode up if\n"
	       "the cache is not empty.  The ratios are on / off of the minimum, of the\n"
	       "median, and the median of the rounds' own ratios (on / off within each\n"
	       "round, which cancels what slows a whole round down).  The control is the\n"
	       "same three ratios of off again / off: two sides that run the same code\n"
	       "differ by that much in this run, so an on / off ratio within the control's\n"
	       "distance of 1.00 is no measured cost.\n\n",
	       OVERHEAD_ROUNDS);
	printf("| operation | off min ns | off median ns | on, no consumer, min ns | on, no consumer, median ns | on / off, min | on / off, median | on / off, median of the rounds | control, min | control, median | control, median of the rounds |\n"
	       "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (k = 0; k < NR_OVERHEADS; k++) {
		const struct spread *off = &ns[k][SIDE_OFF], *on = &ns[k][SIDE_ON];
		const struct spread *again = &ns[k][SIDE_OFF_AGAIN];

		printf("| %s | %.0f | %.0f | %.0f | %.0f | ", what[k], off->min, off->median,
		       on->min, on->median);
		printf("%.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", on->min / off->min,
		       on->median / off->median, paired[k][SIDE_ON], again->min / off->min,
		       again->median / off->median, paired[k][SIDE_OFF_AGAIN]);
	}
}

/* Whether the command line asks for @section: no section named means all. */
/*
 * What `buildid record-exits` costs the processes that exit: fork(),
 * _exit() and waitpid() one after the other, without the recorder and
 * with it (tools/buildid's binary, $BUILDID_TOOL), in alternating rounds.
 */
enum { EXIT_ROUNDS = 5, EXITS_PER_ROUND = 200 };

static uint64_t exits_run(unsigned int n)
{
	uint64_t t0 = now_ns();
	unsigned int i;

	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (!pid)
			_exit(0);
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			die("fork");
	}
	return now_ns() - t0;
}

/* What the recorder said when it stopped last, and its summary line. */
static char recorder_said[4096], recorder_summary[1024];

/* The recorder, writing to /dev/null, once it records; its messages go to @err. */
static pid_t recorder_start(const char *tool, const char *err)
{
	unsigned int i;
	pid_t pid;

	/* What the last one said must not read as this one's start. */
	unlink(err);
	pid = fork();
	if (!pid) {
		int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(127);
		execl(tool, tool, "record-exits", "-o", "/dev/null", NULL);
		_exit(127);
	}
	for (i = 0; i < 1200 && !file_contains(err, "recording"); i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			break;
		usleep(100000);
	}
	if (!file_contains(err, "recording")) {
		fprintf(stderr, "buildid_bench: %s record-exits did not start\n", tool);
		exit(1);
	}
	return pid;
}

/*
 * A storm: two processes fork STORM_EXITS children in all, each exiting at
 * once; the exits per second.
 */
enum { STORM_EXITS = 5000 };

static double exit_storm(void)
{
	uint64_t t0 = now_ns();
	pid_t forkers[2];
	unsigned int k;

	for (k = 0; k < 2; k++) {
		forkers[k] = fork();
		if (forkers[k] < 0)
			die("fork");
		if (!forkers[k])
			fork_exits_then_exit(STORM_EXITS / 2, NULL, -1);
	}
	/* Not wait(): the recorder may be a child of this process too. */
	for (k = 0; k < 2; k++)
		if (waitpid(forkers[k], NULL, 0) != forkers[k])
			die("waitpid");
	return STORM_EXITS / ((now_ns() - t0) / 1e9);
}

/* Stops the recorder; the ns its exit programs ran per process it recorded. */
static double recorder_stop(pid_t pid, const char *err)
{
	unsigned long processes = 0, calls = 0, each = 0;
	char line[1024];
	int status;
	FILE *f;

	recorder_said[0] = 0;
	recorder_summary[0] = 0;
	if (kill(pid, SIGTERM) || waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status))
		die("buildid record-exits");
	f = fopen(err, "r");
	if (!f)
		die(err);
	while (fgets(line, sizeof(line), f)) {
		unsigned long n, c, e;

		if (sscanf(line, "buildid record-exits: %lu processes,", &n) == 1)
			processes = n;
		if (sscanf(line, "buildid record-exits: do_exit(): %lu calls of the programs, %lu ns each",
			   &c, &e) == 2) {
			calls = c;
			each = e;
		}
		if (strstr(line, "processes incomplete"))
			snprintf(recorder_summary, sizeof(recorder_summary), "%s", line);
		strncat(recorder_said, line, sizeof(recorder_said) - strlen(recorder_said) - 1);
	}
	fclose(f);
	if (!processes || !calls) {
		fprintf(stderr, "%sbuildid_bench: no counts in what the recorder said (above)\n",
			recorder_said);
		exit(1);
	}
	return (double)calls * each / processes;
}

static void exit_rows(void)
{
	const char *tool = getenv("BUILDID_TOOL");
	uint64_t runs[3][EXIT_ROUNDS];
	struct spread ns[3];
	char err[PATH_MAX];
	unsigned int r, k;
	double storm[2];
	pid_t rec;

	if (!tool) {
		fprintf(stderr, "buildid_bench: set BUILDID_TOOL to tools/buildid's binary\n");
		exit(1);
	}
	snprintf(err, sizeof(err), "%s/recorder.err", scratch_dir());
	if (write_string("/proc/sys/kernel/bpf_stats_enabled", "1"))
		die("bpf_stats_enabled");
	for (r = 0; r < EXIT_ROUNDS; r++) {
		runs[0][r] = exits_run(EXITS_PER_ROUND);
		rec = recorder_start(tool, err);
		runs[1][r] = exits_run(EXITS_PER_ROUND);
		runs[2][r] = recorder_stop(rec, err) * EXITS_PER_ROUND;
	}
	storm[0] = exit_storm();
	rec = recorder_start(tool, err);
	storm[1] = exit_storm();
	recorder_stop(rec, err);
	write_string("/proc/sys/kernel/bpf_stats_enabled", "0");
	for (k = 0; k < 3; k++)
		ns[k] = spread_of(runs[k], EXIT_ROUNDS, EXITS_PER_ROUND);

	printf("\n### buildid record-exits\n\n");
	printf("What the recorder costs each exiting process: %d rounds of %d fork(),\n"
	       "_exit() and waitpid() one after the other (the child has this benchmark's\n"
	       "executable mappings), without the recorder, then with it; and the time\n"
	       "its do_exit() programs ran per process recorded (`kernel.bpf_stats_enabled`,\n"
	       "which adds its own clock reads).\n\n", EXIT_ROUNDS, EXITS_PER_ROUND);
	printf("| per exiting process | min us | median us | relative, min | relative, median |\n"
	       "|---|---:|---:|---:|---:|\n");
	printf("| fork, exit and wait, no recorder | %.1f | %.1f | 1.00 | 1.00 |\n",
	       ns[0].min / 1e3, ns[0].median / 1e3);
	printf("| the same, recorder running | %.1f | %.1f | %.2f | %.2f |\n",
	       ns[1].min / 1e3, ns[1].median / 1e3, ns[1].min / ns[0].min,
	       ns[1].median / ns[0].median);
	printf("| the recorder's programs, per recorded exit | %.1f | %.1f | | |\n",
	       ns[2].min / 1e3, ns[2].median / 1e3);
	printf("PLOT\ttime with / without buildid record-exits (median)\tfork, exit and wait\t%.3f\n",
	       ns[1].median / ns[0].median);
	printf("\nA storm: two processes fork %d children in all as fast as they can, each\n"
	       "exiting at once (at most 32 waiting to be reaped per process), without and\n"
	       "with the recorder (its default ring buffer), once each.\n\n",
	       STORM_EXITS);
	printf("| storm | exits per second |\n|---|---:|\n");
	printf("| no recorder | %.0f |\n| recorder running | %.0f |\n\n", storm[0], storm[1]);
	printf("What the recorder said (its children and the two forkers are the processes):\n\n"
	       "    %s\n", recorder_summary);
}

static bool wanted(int argc, char **argv, const char *section)
{
	int i;

	for (i = 2; i < argc; i++)
		if (!strcmp(argv[i], section))
			return true;
	return argc == 2;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: buildid_bench LARGE_ELF [parser|bpf|availability|busy|overhead|exits]...\n");
		return 2;
	}
	dev = open_buildid_dev();
	if (dev < 0)
		die("/dev/buildid");
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The kernel's default; the rows that need it off say so. */
	cache_switch(1);
	if (wanted(argc, argv, "parser"))
		parser_rows(argv[1]);
	if (wanted(argc, argv, "bpf"))
		bpf_rows();
	if (wanted(argc, argv, "availability"))
		availability_rows();
	if (wanted(argc, argv, "busy"))
		busy_process_rows();
	if (wanted(argc, argv, "overhead"))
		overhead_rows();
	if (wanted(argc, argv, "exits"))
		exit_rows();
	return 0;
}
