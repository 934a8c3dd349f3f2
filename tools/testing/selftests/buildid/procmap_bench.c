// SPDX-License-Identifier: GPL-2.0
/*
 * What a symbolizer pays to turn a profile's addresses into (mapping, file
 * offset, path, build ID): /proc/<pid>/maps text parsed in user space
 * against the PROCMAP_QUERY ioctl, on the addresses of a real profile of a
 * real process.  Both sides produce the same answer for every address (the
 * run fails otherwise), each the way a careful symbolizer does it:
 *
 * - addresses are sorted; the ioctl side asks once per needed mapping with
 *   PROCMAP_QUERY_COVERING_OR_NEXT_VMA and reuses the answer for the
 *   addresses that follow, the text side reads the maps text only up to
 *   the last address and parses the whole line only of the mappings it needs;
 * - build IDs: the ioctl side asks the kernel for them, the text side reads
 *   the notes from the mapped files (through /proc/<pid>/map_files/, then
 *   the path), once per needed mapping or through a cache keyed by device,
 *   inode and mtime, as blazesym and tools/buildid's --fallback do;
 * - full enumeration, perf's synthesize: all mappings, and executable
 *   file-backed mappings only.
 *
 * The profile: perf_event_open() task-clock sampling of every thread of the
 * process, user IP and frame-pointer callchain (what "perf record -g" gets).
 * While it is measured the process is stopped (SIGSTOP), so that both sides
 * see the same mappings; a process started here is killed at the end.
 *
 * Usage: procmap_bench [-n SAMPLES] [-s SECONDS] [-r ROUNDS] [-o DIR] [-d] WORKLOAD...
 *   NAME=cmd:COMMAND     start "sh -c COMMAND" (it should exec the program
 *                        to profile), wait for its first line on stdout,
 *                        then profile it
 *   NAME=pid:PID         profile a running process
 *   NAME=pid:PID:FILE    the addresses of FILE (hex, one per line) in PID
 *   -n  samples to take (2000), or all that -s SECONDS (60) allow
 *   -r  timed rounds (21)
 *   -o  write each workload's sorted addresses to DIR/NAME.addrs
 *   -d  print each address' resolution to stderr
 * Prints Markdown tables, and "PLOT" lines for the harness' picture.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/perf_event.h>

#include "buildid_util.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SAMPLE_HZ 997		/* not a multiple of the tick */
#define MAX_STACK 64
#define MAX_THREADS 64
#define RING_PAGES 64
#define MAX_VMAS 8192
#define MAX_WORKLOADS 8
/* User addresses on x86-64; a callchain entry above is not a user address. */
#define USER_ADDR_END (1ULL << 47)

static unsigned int rounds = 21;
static bool dump;
/*
 * On any exit: the process started last is killed, a given process that
 * was stopped here continues, the kernel's cache switch is put back.
 */
static pid_t started_pid, stopped_pid;
static struct cache_switch kernel_cache;

static void clean_up(void)
{
	if (started_pid > 0) {
		kill(started_pid, SIGKILL);
		waitpid(started_pid, NULL, 0);
		started_pid = 0;
	}
	if (stopped_pid > 0) {
		kill(stopped_pid, SIGCONT);
		stopped_pid = 0;
	}
	cache_switch_restore(&kernel_cache);
}

static void exit_on_signal(int sig)
{
	exit(128 + sig);
}

static void die(const char *what)
{
	fprintf(stderr, "procmap_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void fail(const char *fmt, const char *what)
{
	fprintf(stderr, "procmap_bench: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\n");
	exit(1);
}

struct addr_set {
	uint64_t *v;
	size_t n, cap;
};

static void addr_add(struct addr_set *s, uint64_t addr)
{
	if (!addr || addr >= USER_ADDR_END)
		return;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 4096;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			die("realloc");
	}
	s->v[s->n++] = addr;
}

/* The profile */

struct sampler {
	int fd;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size;
};

static int sampler_open(struct sampler *s, pid_t tid)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK, .freq = 1, .sample_freq = SAMPLE_HZ,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN,
		.exclude_kernel = 1, .exclude_hv = 1, .exclude_callchain_kernel = 1,
		.sample_max_stack = MAX_STACK,
	};
	long page = sysconf(_SC_PAGESIZE);
	void *m;

	s->fd = syscall(__NR_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (s->fd < 0)
		return -errno;
	m = mmap(NULL, (RING_PAGES + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (m == MAP_FAILED) {
		close(s->fd);
		return -errno;
	}
	s->meta = m;
	s->data = (unsigned char *)m + page;
	s->size = RING_PAGES * page;
	return 0;
}

/* Takes the samples out of the ring buffer: the IP and the user callchain. */
static void sampler_drain(struct sampler *s, struct addr_set *out, unsigned long *samples,
			  unsigned long *lost)
{
	uint64_t head = __atomic_load_n(&s->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = s->meta->data_tail;
	uint64_t rec[MAX_STACK + 8];

	while (tail < head) {
		struct perf_event_header hdr;
		uint64_t i, n, len;

		for (i = 0; i < sizeof(hdr); i++)
			((unsigned char *)&hdr)[i] = s->data[(tail + i) % s->size];
		len = hdr.size < sizeof(rec) ? hdr.size : sizeof(rec);
		for (i = 0; i < len; i++)
			((unsigned char *)rec)[i] = s->data[(tail + i) % s->size];
		tail += hdr.size;
		if (hdr.type == PERF_RECORD_LOST) {
			*lost += rec[2];
			continue;
		}
		if (hdr.type != PERF_RECORD_SAMPLE || len < 24)
			continue;
		(*samples)++;
		/* rec[1] = ip, rec[2] = nr, then nr entries starting with the IP */
		n = rec[2];
		if (n > (len - 24) / 8)
			n = (len - 24) / 8;
		if (!n)
			addr_add(out, rec[1]);
		for (i = 0; i < n; i++)
			if (rec[3 + i] < (uint64_t)PERF_CONTEXT_MAX)
				addr_add(out, rec[3 + i]);
	}
	__atomic_store_n(&s->meta->data_tail, tail, __ATOMIC_RELEASE);
}

/*
 * Samples every thread of @pid until it has @want samples or @seconds have
 * passed; returns the sorted addresses and the time taken.
 */
static double profile(pid_t pid, unsigned long want, double seconds, struct addr_set *out,
		      unsigned long *samples)
{
	static struct sampler s[MAX_THREADS];
	unsigned int nr = 0, i;
	unsigned long lost = 0;
	uint64_t start, end;
	char dir[64];
	struct dirent *de;
	int err;
	DIR *d;

	*samples = 0;
	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	d = opendir(dir);
	if (!d)
		die(dir);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (nr == MAX_THREADS) {
			fprintf(stderr, "procmap_bench: %s: only the first %d threads sampled\n",
				dir, MAX_THREADS);
			break;
		}
		/* A thread may exit meanwhile. */
		err = sampler_open(&s[nr], atoi(de->d_name));
		if (!err)
			nr++;
		else if (err != -ESRCH)
			fprintf(stderr, "procmap_bench: perf_event_open of thread %s: %s\n",
				de->d_name, strerror(-err));
	}
	closedir(d);
	if (!nr)
		fail("could not sample any thread of %s", dir);
	start = now_ns();
	end = start + (uint64_t)(seconds * 1e9);
	while (now_ns() < end && *samples < want) {
		usleep(20000);
		for (i = 0; i < nr; i++)
			sampler_drain(&s[i], out, samples, &lost);
	}
	for (i = 0; i < nr; i++) {
		ioctl(s[i].fd, PERF_EVENT_IOC_DISABLE, 0);
		sampler_drain(&s[i], out, samples, &lost);
		munmap(s[i].meta, (RING_PAGES + 1) * sysconf(_SC_PAGESIZE));
		close(s[i].fd);
	}
	if (lost)
		fprintf(stderr, "procmap_bench: %lu samples lost\n", lost);
	if (!out->n)
		fail("no samples of %s", dir);
	qsort(out->v, out->n, sizeof(out->v[0]), cmp_u64);
	return (now_ns() - start) / 1e9;
}

/* What a symbolizer wants to know of a mapping */

struct vma {
	uint64_t start, end, pgoff;
	bool exec;
	/* the text side could not open the file: a build ID only the kernel can give */
	bool unreadable;
	struct build_id id;
	char name[PATH_MAX];
};

struct resolution {
	unsigned int nr;
	struct vma vmas[MAX_VMAS];
	int *at;	/* for each address: its mapping in vmas[], or -1 */
};

static struct vma *new_vma(struct resolution *r)
{
	if (r->nr == MAX_VMAS)
		fail("more than %s mappings", "MAX_VMAS");
	r->vmas[r->nr].id.size = 0;
	r->vmas[r->nr].unreadable = false;
	return &r->vmas[r->nr++];
}

/* Build IDs in user space, as a symbolizer without PROCMAP_QUERY reads them */

/*
 * The GNU build ID note in @len bytes of notes, as lib/buildid.c walks them:
 * a bad build ID note is skipped, where buildid_util's reader of expected
 * values rejects the file.
 */
static int find_build_id_note(const unsigned char *notes, size_t len, struct build_id *id)
{
	size_t off = 0;

	while (off + sizeof(Elf64_Nhdr) <= len) {
		Elf64_Nhdr nh;		/* the same layout as Elf32_Nhdr */
		size_t name, desc;

		memcpy(&nh, notes + off, sizeof(nh));
		name = off + sizeof(nh);
		desc = name + ((nh.n_namesz + 3ULL) & ~3ULL);
		if (desc > len)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    nh.n_descsz && nh.n_descsz <= BUILD_ID_MAX && desc + nh.n_descsz <= len &&
		    !memcmp(notes + name, "GNU", 4)) {
			id->size = nh.n_descsz;
			memcpy(id->data, notes + desc, nh.n_descsz);
			return 0;
		}
		off = desc + ((nh.n_descsz + 3ULL) & ~3ULL);
	}
	return -ENODATA;
}

/* A PT_NOTE segment, read whole, searched for the build ID. */
static int note_segment_build_id(int fd, uint64_t off, uint64_t size, struct build_id *id)
{
	static unsigned char small[4096];
	unsigned char *notes = size <= sizeof(small) ? small : malloc(size);
	ssize_t got;
	int err;

	if (!notes || size > (64 << 20))
		return -ENOMEM;
	got = pread(fd, notes, size, off);
	err = got < 0 ? -errno : find_build_id_note(notes, got, id);
	if (notes != small)
		free(notes);
	return err;
}

/* The GNU build ID note of an ELF file (either class), from its program headers. */
static int elf_read_build_id(int fd, struct build_id *id)
{
	static unsigned char phdrs[65535 * sizeof(Elf64_Phdr)];
	union {
		Elf32_Ehdr e32;
		Elf64_Ehdr e64;
	} eh;
	bool is64;
	uint64_t phoff;
	unsigned int i, phnum, phsize;

	if (pread(fd, &eh, sizeof(eh), 0) < (ssize_t)sizeof(eh.e32) ||
	    memcmp(eh.e64.e_ident, ELFMAG, SELFMAG))
		return -ENOEXEC;
	is64 = eh.e64.e_ident[EI_CLASS] == ELFCLASS64;
	if (!is64 && eh.e32.e_ident[EI_CLASS] != ELFCLASS32)
		return -ENOEXEC;
	phoff = is64 ? eh.e64.e_phoff : eh.e32.e_phoff;
	phnum = is64 ? eh.e64.e_phnum : eh.e32.e_phnum;
	phsize = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	if ((is64 ? eh.e64.e_phentsize : eh.e32.e_phentsize) != phsize)
		return -ENOEXEC;
	if (pread(fd, phdrs, (size_t)phnum * phsize, phoff) != (ssize_t)phnum * phsize)
		return -EIO;
	for (i = 0; i < phnum; i++) {
		Elf64_Phdr p64;
		Elf32_Phdr p32;

		if (is64) {
			memcpy(&p64, phdrs + i * phsize, sizeof(p64));
		} else {
			memcpy(&p32, phdrs + i * phsize, sizeof(p32));
			p64.p_type = p32.p_type;
			p64.p_offset = p32.p_offset;
			p64.p_filesz = p32.p_filesz;
		}
		if (p64.p_type == PT_NOTE &&
		    !note_segment_build_id(fd, p64.p_offset, p64.p_filesz, id))
			return 0;
	}
	return -ENODATA;
}

/*
 * The mapped file itself through map_files (needs CAP_SYS_ADMIN), else its
 * path; regular files only (a device's open could block or act).
 */
static void mapped_path(pid_t pid, const struct vma *v, char *link, size_t len)
{
	snprintf(link, len, "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)v->start, (unsigned long long)v->end);
}

static int open_mapped(pid_t pid, const struct vma *v)
{
	char link[96];
	struct stat st;
	int fd;

	mapped_path(pid, v, link, sizeof(link));
	fd = open(link, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		fd = open(v->name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

static int stat_mapped(pid_t pid, const struct vma *v, struct stat *st)
{
	char link[96];

	mapped_path(pid, v, link, sizeof(link));
	if (stat(link, st) && stat(v->name, st))
		return -errno;
	return S_ISREG(st->st_mode) ? 0 : -EINVAL;
}

/* The notes of the mapped file; "unreadable" when user space cannot open it. */
static void read_mapped_build_id(pid_t pid, struct vma *v, struct build_id *id)
{
	int fd = open_mapped(pid, v);

	id->size = 0;
	if (fd < 0) {
		v->unreadable = true;
		return;
	}
	if (elf_read_build_id(fd, id))
		id->size = 0;
	close(fd);
}

enum ids { NO_IDS, IDS_UNCACHED, IDS_CACHED };

struct id_cache_entry {
	bool used, unreadable;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	struct build_id id;
};

/* A symbolizer's cache of build IDs, kept across batches. */
static struct id_cache_entry id_cache[4096];

static void id_cache_clear(void)
{
	memset(id_cache, 0, sizeof(id_cache));
}

/* A hit costs one stat() of the mapped file; a miss reads its notes. */
static void text_build_id(pid_t pid, struct vma *v, enum ids ids)
{
	struct id_cache_entry *e;
	struct stat st;
	unsigned int h, probes;

	v->id.size = 0;
	if (v->name[0] != '/')
		return;
	if (ids == IDS_UNCACHED) {
		read_mapped_build_id(pid, v, &v->id);
		return;
	}
	if (stat_mapped(pid, v, &st)) {
		v->unreadable = true;
		return;
	}
	h = (st.st_ino * 0x9e3779b1u) ^ st.st_dev;
	for (probes = 0; probes < ARRAY_SIZE(id_cache); probes++, h++) {
		e = &id_cache[h % ARRAY_SIZE(id_cache)];
		if (!e->used) {
			e->used = true;
			e->dev = st.st_dev;
			e->ino = st.st_ino;
			e->mtime = st.st_mtim;
			read_mapped_build_id(pid, v, &e->id);
			e->unreadable = v->unreadable;
			break;
		}
		if (e->dev == st.st_dev && e->ino == st.st_ino &&
		    e->mtime.tv_sec == st.st_mtim.tv_sec && e->mtime.tv_nsec == st.st_mtim.tv_nsec)
			break;
	}
	if (probes == ARRAY_SIZE(id_cache)) {	/* full: no caching */
		read_mapped_build_id(pid, v, &v->id);
		return;
	}
	v->id = e->id;
	v->unreadable = e->unreadable;
}

/* /proc/<pid>/maps text */

/*
 * The maps text of the process measured, kept open from batch to batch as a
 * profiler keeps it (the ioctl side keeps its fd too), read in pieces of
 * 8 KiB, a buffered reader's size, so that the kernel formats little more
 * than what is read.
 */
struct maps_text {
	int fd;
	size_t len, pos;
	bool eof;
	char buf[PATH_MAX + 8192];
};

static struct maps_text maps;

static void maps_text_rewind(struct maps_text *t)
{
	if (lseek(t->fd, 0, SEEK_SET))
		die("lseek maps");
	t->len = 0;
	t->pos = 0;
	t->eof = false;
}

/* The next line, without its newline; NULL at the end. */
static char *maps_text_line(struct maps_text *t)
{
	char *nl;

	for (;;) {
		nl = memchr(t->buf + t->pos, '\n', t->len - t->pos);
		if (nl) {
			char *line = t->buf + t->pos;

			*nl = '\0';
			t->pos = nl + 1 - t->buf;
			return line;
		}
		if (t->eof)
			return NULL;
		memmove(t->buf, t->buf + t->pos, t->len - t->pos);
		t->len -= t->pos;
		t->pos = 0;
		if (t->len > sizeof(t->buf) - 8192)
			fail("a maps line longer than %s", "PATH_MAX");
		for (;;) {
			ssize_t got = read(t->fd, t->buf + t->len, 8192);

			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0)
				die("read maps");
			t->len += got;
			t->eof = !got;
			break;
		}
	}
}

static uint64_t parse_hex(char **p)
{
	uint64_t v = 0;
	char *s = *p;

	for (;; s++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else
			break;
		v = v << 4 | d;
	}
	*p = s;
	return v;
}

/* The rest of a line after "start-end ": perms, offset, device, inode, name. */
static void parse_rest(char *p, struct vma *v)
{
	v->exec = p[2] == 'x';
	p += 5;
	v->pgoff = parse_hex(&p);
	p = strchr(p + 1, ' ');		/* after the device */
	while (p && *++p && *p != ' ')	/* the inode */
		;
	while (p && *p == ' ')
		p++;
	snprintf(v->name, sizeof(v->name), "%s", p ? p : "");
	/* seq_path() escapes a path's newlines as \012 */
	for (p = v->name; (p = strstr(p, "\\012")); p++) {
		*p = '\n';
		memmove(p + 1, p + 4, strlen(p + 4) + 1);
	}
}

/* The mappings of the sorted @addrs from the text, read only as far as needed. */
static void text_resolve(pid_t pid, const struct addr_set *a, enum ids ids, struct resolution *r)
{
	size_t i = 0;
	char *line;

	r->nr = 0;
	maps_text_rewind(&maps);
	while (i < a->n && (line = maps_text_line(&maps))) {
		uint64_t start = parse_hex(&line), end;
		struct vma *v;

		line++;
		end = parse_hex(&line);
		for (; i < a->n && a->v[i] < start; i++)
			r->at[i] = -1;
		if (i == a->n || a->v[i] >= end)
			continue;
		v = new_vma(r);
		v->start = start;
		v->end = end;
		parse_rest(line + 1, v);
		if (ids)
			text_build_id(pid, v, ids);
		for (; i < a->n && a->v[i] < end; i++)
			r->at[i] = r->nr - 1;
	}
	for (; i < a->n; i++)
		r->at[i] = -1;
}

/* Every mapping (or the executable file-backed ones) from the text. */
static void text_enumerate(pid_t pid, bool exec_files, enum ids ids, struct resolution *r)
{
	char *line;

	r->nr = 0;
	maps_text_rewind(&maps);
	while ((line = maps_text_line(&maps))) {
		uint64_t start = parse_hex(&line), end;
		struct vma *v;

		line++;
		end = parse_hex(&line);
		/* [vsyscall] is no VMA: PROCMAP_QUERY does not report it */
		if (start >= USER_ADDR_END)
			continue;
		if (exec_files && (line[3] != 'x' || !strchr(line, '/')))
			continue;
		v = new_vma(r);
		v->start = start;
		v->end = end;
		parse_rest(line + 1, v);
		if (exec_files && v->name[0] != '/') {
			r->nr--;	/* "/" was not in the name */
			continue;
		}
		if (ids)
			text_build_id(pid, v, ids);
	}
}

/* PROCMAP_QUERY */

static bool query(int maps_fd, uint64_t addr, uint64_t flags, bool ids, struct vma *v)
{
	struct procmap_query q = {
		.size = sizeof(q), .query_flags = flags | PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
		.query_addr = addr,
		.vma_name_addr = (uintptr_t)v->name, .vma_name_size = sizeof(v->name),
		.build_id_addr = ids ? (uintptr_t)v->id.data : 0,
		.build_id_size = ids ? BUILD_ID_MAX : 0,
	};

	if (ioctl(maps_fd, PROCMAP_QUERY, &q)) {
		if (errno != ENOENT)
			die("PROCMAP_QUERY");
		return false;
	}
	v->start = q.vma_start;
	v->end = q.vma_end;
	v->pgoff = q.vma_offset;
	v->exec = q.vma_flags & PROCMAP_QUERY_VMA_EXECUTABLE;
	v->id.size = ids ? q.build_id_size : 0;
	if (!q.vma_name_size)
		v->name[0] = '\0';
	return true;
}

/* One query per needed mapping: the answer serves every address below its end. */
static void ioctl_resolve(int maps_fd, const struct addr_set *a, bool ids, struct resolution *r)
{
	struct vma *cur = NULL;
	bool beyond_last = false;
	size_t i;

	r->nr = 0;
	for (i = 0; i < a->n; i++) {
		uint64_t addr = a->v[i];

		if ((!cur || addr >= cur->end) && !beyond_last) {
			cur = new_vma(r);
			if (!query(maps_fd, addr, 0, ids, cur)) {
				r->nr--;
				cur = NULL;
				beyond_last = true;
			}
		}
		/* Below the start: the next mapping, none covers the address. */
		r->at[i] = cur && addr >= cur->start && addr < cur->end ? cur - r->vmas : -1;
	}
}

static void ioctl_enumerate(int maps_fd, bool exec_files, bool ids, struct resolution *r)
{
	uint64_t flags = exec_files ?
		PROCMAP_QUERY_VMA_EXECUTABLE | PROCMAP_QUERY_FILE_BACKED_VMA : 0;
	uint64_t addr = 0;

	r->nr = 0;
	for (;;) {
		struct vma *v = new_vma(r);

		if (!query(maps_fd, addr, flags, ids, v)) {
			r->nr--;
			return;
		}
		addr = v->end;
	}
}

/* The same answer; a build ID that user space could not read is the kernel's alone. */
static bool vma_equal(const struct vma *text, const struct vma *ioc)
{
	return text->start == ioc->start && text->end == ioc->end && text->pgoff == ioc->pgoff &&
	       !strcmp(text->name, ioc->name) &&
	       (text->unreadable || (text->id.size == ioc->id.size &&
				     !memcmp(text->id.data, ioc->id.data, ioc->id.size)));
}

static void print_vma(const char *side, const struct vma *v)
{
	char hex[2 * BUILD_ID_MAX + 1];

	build_id_hex(&v->id, hex, sizeof(hex));
	fprintf(stderr, "  %s: %llx-%llx %llx %s %s\n", side, (unsigned long long)v->start,
		(unsigned long long)v->end, (unsigned long long)v->pgoff, v->name, hex);
}

/* Both sides must give each address the same answer. */
static void check_resolutions(const char *what, const struct addr_set *a,
			      const struct resolution *text, const struct resolution *ioc)
{
	size_t i;

	for (i = 0; i < a->n; i++) {
		int x = text->at[i], y = ioc->at[i];

		if (x < 0 && y < 0)
			continue;
		if (x >= 0 && y >= 0 && vma_equal(&text->vmas[x], &ioc->vmas[y]))
			continue;
		fprintf(stderr, "procmap_bench: %s: the text and PROCMAP_QUERY differ at %llx\n",
			what, (unsigned long long)a->v[i]);
		if (x >= 0)
			print_vma("text", &text->vmas[x]);
		if (y >= 0)
			print_vma("PROCMAP_QUERY", &ioc->vmas[y]);
		exit(1);
	}
}

static void check_enumerations(const char *what, const struct resolution *text,
			       const struct resolution *ioc)
{
	unsigned int i;

	for (i = 0; i < text->nr || i < ioc->nr; i++) {
		if (i < text->nr && i < ioc->nr && vma_equal(&text->vmas[i], &ioc->vmas[i]))
			continue;
		fprintf(stderr, "procmap_bench: %s: mapping %u differs (%u in the text, %u from PROCMAP_QUERY)\n",
			what, i, text->nr, ioc->nr);
		if (i < text->nr)
			print_vma("text", &text->vmas[i]);
		if (i < ioc->nr)
			print_vma("PROCMAP_QUERY", &ioc->vmas[i]);
		exit(1);
	}
}

/* What is timed: text and ioctl pairs, each producing the same answers */

enum method {
	SYM_TEXT, SYM_IOCTL,
	SYM_TEXT_IDS, SYM_IOCTL_IDS,			/* user-space cache; kernel cache on */
	SYM_TEXT_IDS_UNCACHED, SYM_IOCTL_IDS_UNCACHED,	/* no cache; kernel cache off */
	ALL_TEXT, ALL_IOCTL,
	EXEC_TEXT, EXEC_IOCTL,
	EXEC_TEXT_IDS, EXEC_IOCTL_IDS,
	EXEC_TEXT_IDS_UNCACHED, EXEC_IOCTL_IDS_UNCACHED,
	NR_METHODS
};

/*
 * How each method works: the text or the ioctl, for the profile's addresses
 * or every mapping (of executable files only), with which build IDs.  An
 * "uncached" method runs with the kernel's build ID cache off.
 */
static const struct method_def {
	bool ioctl, enumerate, exec_files;
	enum ids ids;
	bool uncached;
	const char *label;	/* of a text method's row, the pair's */
} methods[NR_METHODS] = {
	[SYM_TEXT] = { false, false, false, NO_IDS, false, "mapping, offset, path" },
	[SYM_IOCTL] = { true, false, false, NO_IDS, false },
	[SYM_TEXT_IDS] = { false, false, false, IDS_CACHED, false, "+ build ID, cached" },
	[SYM_IOCTL_IDS] = { true, false, false, IDS_CACHED, false },
	[SYM_TEXT_IDS_UNCACHED] = { false, false, false, IDS_UNCACHED, true,
				    "+ build ID, uncached" },
	[SYM_IOCTL_IDS_UNCACHED] = { true, false, false, IDS_UNCACHED, true },
	[ALL_TEXT] = { false, true, false, NO_IDS, false, "all" },
	[ALL_IOCTL] = { true, true, false, NO_IDS, false },
	[EXEC_TEXT] = { false, true, true, NO_IDS, false, "executable file" },
	[EXEC_IOCTL] = { true, true, true, NO_IDS, false },
	[EXEC_TEXT_IDS] = { false, true, true, IDS_CACHED, false,
			    "executable file + build ID, cached" },
	[EXEC_IOCTL_IDS] = { true, true, true, IDS_CACHED, false },
	[EXEC_TEXT_IDS_UNCACHED] = { false, true, true, IDS_UNCACHED, true,
				     "executable file + build ID, uncached" },
	[EXEC_IOCTL_IDS_UNCACHED] = { true, true, true, IDS_UNCACHED, true },
};

struct workload {
	char name[64];
	pid_t pid;
	bool started;		/* by us: killed at the end */
	int out_fd;
	struct addr_set addrs;
	unsigned long samples;
	double seconds;
	/* what the profile needs */
	unsigned int unique, needed, files_needed;
	/* needed file mappings whose file user space could not open */
	unsigned int unreadable;
	unsigned int enumerated[2];	/* all mappings, executable file mappings */
	uint64_t *ns[NR_METHODS];	/* per round */
	struct spread us[NR_METHODS];
	double to_sym_ioctl[NR_METHODS];	/* the median of the rounds' ratios to SYM_IOCTL */
};

static struct resolution res[2];

static void run_method(struct workload *w, int maps_fd, enum method m, struct resolution *r)
{
	const struct method_def *d = &methods[m];

	if (d->ioctl && d->enumerate)
		ioctl_enumerate(maps_fd, d->exec_files, d->ids != NO_IDS, r);
	else if (d->ioctl)
		ioctl_resolve(maps_fd, &w->addrs, d->ids != NO_IDS, r);
	else if (d->enumerate)
		text_enumerate(w->pid, d->exec_files, d->ids, r);
	else
		text_resolve(w->pid, &w->addrs, d->ids, r);
}

/* Set when the kernel has no build ID cache: then "cache on" runs without one. */
static bool no_kernel_cache;

static void switch_kernel_cache(int on)
{
	int err;

	if (no_kernel_cache)
		return;
	err = cache_switch_set(&kernel_cache, on);
	if (err == -ENOENT || (!err && !kernel_cache.switched)) {
		no_kernel_cache = true;
		return;
	}
	if (err) {
		errno = -err;
		die("/proc/sys/kernel/buildid_cache/enabled");
	}
}

/* Every method once, untimed: the answers of each pair must agree. */
static void check_pairs(struct workload *w, int maps_fd)
{
	unsigned int m;

	for (m = 0; m < NR_METHODS; m += 2) {
		switch_kernel_cache(!methods[m].uncached);
		run_method(w, maps_fd, m, &res[0]);
		run_method(w, maps_fd, m + 1, &res[1]);
		if (!methods[m].enumerate)
			check_resolutions(methods[m].label, &w->addrs, &res[0], &res[1]);
		else
			check_enumerations(methods[m].label, &res[0], &res[1]);
		if (m == ALL_TEXT || m == EXEC_TEXT)
			w->enumerated[m == EXEC_TEXT] = res[0].nr;
	}
}

/* What the profile needs: distinct addresses, mappings and files. */
static void describe(struct workload *w, int maps_fd)
{
	unsigned int i, j;
	size_t k;

	run_method(w, maps_fd, SYM_TEXT_IDS, &res[0]);
	w->needed = res[0].nr;
	w->files_needed = 0;
	w->unreadable = 0;
	for (i = 0; i < res[0].nr; i++) {
		w->unreadable += res[0].vmas[i].unreadable;
		for (j = 0; j < i; j++)
			if (!strcmp(res[0].vmas[i].name, res[0].vmas[j].name))
				break;
		if (j == i && res[0].vmas[i].name[0] == '/')
			w->files_needed++;
	}
	w->unique = 0;
	for (k = 0; k < w->addrs.n; k++)
		if (!k || w->addrs.v[k] != w->addrs.v[k - 1])
			w->unique++;
	if (dump)
		for (k = 0; k < w->addrs.n; k++) {
			const struct vma *v = res[0].at[k] < 0 ? NULL : &res[0].vmas[res[0].at[k]];
			char hex[2 * BUILD_ID_MAX + 1] = "";

			if (v)
				build_id_hex(&v->id, hex, sizeof(hex));
			fprintf(stderr, "%s %llx ", w->name, (unsigned long long)w->addrs.v[k]);
			if (!v)
				fprintf(stderr, "unmapped\n");
			else
				fprintf(stderr, "%llx-%llx +%llx %s %s\n",
					(unsigned long long)v->start, (unsigned long long)v->end,
					(unsigned long long)(w->addrs.v[k] - v->start + v->pgoff),
					v->name, hex);
		}
}

static void measure(struct workload *w)
{
	unsigned int r, k, m, off;
	char path[64];
	int maps_fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", w->pid);
	maps_fd = open(path, O_RDONLY | O_CLOEXEC);
	maps.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (maps_fd < 0 || maps.fd < 0)
		die(path);
	res[0].at = calloc(w->addrs.n, sizeof(int));
	res[1].at = calloc(w->addrs.n, sizeof(int));
	for (m = 0; m < NR_METHODS; m++)
		w->ns[m] = calloc(rounds, sizeof(uint64_t));
	if (!res[0].at || !res[1].at || !w->ns[NR_METHODS - 1])
		die("calloc");
	/* A new process: its files are not in the user-space cache. */
	id_cache_clear();
	check_pairs(w, maps_fd);
	describe(w, maps_fd);

	/*
	 * Each round runs every method once, in an order that rotates from
	 * round to round: those with the kernel's cache on, then those with it
	 * off.  After each switch every method of the phase runs once untimed
	 * (the cache, turned on again, starts empty).
	 */
	for (r = 0; r < rounds; r++) {
		for (off = 0; off < 2; off++) {
			switch_kernel_cache(!off);
			/* Let the switch's RCU callbacks and text patching settle. */
			usleep(100000);
			for (m = 0; m < NR_METHODS; m++)
				if (methods[m].uncached == off)
					run_method(w, maps_fd, m, &res[0]);
			for (k = 0; k < NR_METHODS; k++) {
				uint64_t t0;

				m = (k + r) % NR_METHODS;
				if (methods[m].uncached != off)
					continue;
				t0 = now_ns();
				run_method(w, maps_fd, m, &res[0]);
				w->ns[m][r] = now_ns() - t0;
			}
		}
	}
	cache_switch_restore(&kernel_cache);
	close(maps_fd);
	close(maps.fd);
	for (m = 0; m < NR_METHODS; m++)
		w->to_sym_ioctl[m] = paired_ratio(w->ns[m], w->ns[SYM_IOCTL], rounds);
	for (m = 0; m < NR_METHODS; m++) {
		w->us[m] = spread_of(w->ns[m], rounds, 1000);
		free(w->ns[m]);
	}
	free(res[0].at);
	free(res[1].at);
}

/* Workloads */

static void start_command(struct workload *w, const char *command)
{
	char line[256];
	int out[2];
	ssize_t got;

	if (pipe2(out, O_CLOEXEC))
		die("pipe");
	w->pid = fork();
	if (w->pid < 0)
		die("fork");
	if (!w->pid) {
		dup2(out[1], 1);
		execl("/bin/sh", "sh", "-c", command, NULL);
		_exit(127);
	}
	close(out[1]);
	w->started = true;
	started_pid = w->pid;
	w->out_fd = out[0];
	/* Its first line says that it is ready. */
	got = read(out[0], line, sizeof(line));
	if (got <= 0)
		fail("%s printed nothing", command);
}

static void read_addresses(struct workload *w, const char *file)
{
	char line[64];
	FILE *f = fopen(file, "re");

	if (!f)
		die(file);
	while (fgets(line, sizeof(line), f))
		addr_add(&w->addrs, strtoull(line, NULL, 16));
	fclose(f);
	if (!w->addrs.n)
		fail("no addresses in %s", file);
	qsort(w->addrs.v, w->addrs.n, sizeof(w->addrs.v[0]), cmp_u64);
}

static void write_addresses(const struct workload *w, const char *dir)
{
	char path[PATH_MAX];
	size_t i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.addrs", dir, w->name);
	f = fopen(path, "we");
	if (!f)
		die(path);
	for (i = 0; i < w->addrs.n; i++)
		fprintf(f, "%llx\n", (unsigned long long)w->addrs.v[i]);
	if (fclose(f))
		die(path);
}

/* NAME=cmd:COMMAND, NAME=pid:PID or NAME=pid:PID:FILE */
/* The state letter of /proc/<pid>/stat, 0 when it is gone (or a zombie). */
static char process_state(pid_t pid)
{
	char path[64], buf[512], *paren;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return 0;
	buf[got] = '\0';
	paren = strrchr(buf, ')');
	if (!paren || !paren[1] || paren[2] == 'Z')
		return 0;
	return paren[2];
}

static void setup_workload(struct workload *w, const char *spec, unsigned long samples,
			   double seconds)
{
	const char *eq = strchr(spec, '=');
	char *end;

	if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof(w->name))
		fail("bad workload %s", spec);
	memcpy(w->name, spec, eq - spec);
	if (!strncmp(eq + 1, "cmd:", 4)) {
		start_command(w, eq + 5);
	} else if (!strncmp(eq + 1, "pid:", 4)) {
		w->pid = strtol(eq + 5, &end, 10);
		if (w->pid <= 0 || (*end && *end != ':'))
			fail("bad workload %s", spec);
		if (*end)
			read_addresses(w, end + 1);
	} else {
		fail("bad workload %s", spec);
	}
	if (!w->addrs.n)
		w->seconds = profile(w->pid, samples, seconds, &w->addrs, &w->samples);
	/* Still, so that both sides see the same mappings. */
	if (process_state(w->pid) == 'T')
		fail("%s was stopped already: it would be continued at the end", spec);
	if (kill(w->pid, SIGSTOP))
		fail("%s exited before it could be measured", spec);
	if (!w->started)
		stopped_pid = w->pid;
	while (process_state(w->pid) != 'T') {
		if (!process_state(w->pid))
			fail("%s exited before it could be measured", spec);
		usleep(1000);
	}
}

static void finish_workload(struct workload *w)
{
	clean_up();
	if (w->started)
		close(w->out_fd);
}

/* Reporting */

/* Text against ioctl, one row per process and text method of @rows. */
static void pair_table(const char *column, const struct workload *ws, unsigned int nr,
		       const enum method *rows, unsigned int nr_rows)
{
	unsigned int i, k;

	printf("| process | %s | text min µs | text median µs | PROCMAP_QUERY min µs | PROCMAP_QUERY median µs | text / ioctl, min | text / ioctl, median |\n"
	       "|---|---|---:|---:|---:|---:|---:|---:|\n", column);
	for (i = 0; i < nr; i++)
		for (k = 0; k < nr_rows; k++) {
			const struct method_def *d = &methods[rows[k]];
			const struct spread *text = &ws[i].us[rows[k]], *ioc = text + 1;
			char count[32] = "";

			if (d->enumerate && d->ids == NO_IDS)
				snprintf(count, sizeof(count), " (%u)",
					 ws[i].enumerated[d->exec_files]);
			printf("| %s | %s%s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n",
			       ws[i].name, d->label, count, text->min, text->median,
			       ioc->min, ioc->median,
			       text->min / ioc->min, text->median / ioc->median);
		}
}

static void plot_line(const char *group, const struct workload *w, const char *what,
		      enum method text)
{
	printf("PLOT\t%s\t%s: %s\t%.3f\n", group, w->name, what,
	       w->us[text].median / w->us[text + 1].median);
}

static void report(struct workload *ws, unsigned int nr)
{
	static const enum method symbolize[] = {
		SYM_TEXT, SYM_TEXT_IDS, SYM_TEXT_IDS_UNCACHED,
	};
	static const enum method enumerate[] = {
		ALL_TEXT, EXEC_TEXT, EXEC_TEXT_IDS, EXEC_TEXT_IDS_UNCACHED,
	};
	unsigned int i;

	printf("\n### Symbolizing a profile: PROCMAP_QUERY against /proc/<pid>/maps text\n\n");
	printf("The addresses of a profile of a real process (`perf_event_open()` task-clock\n"
	       "sampling at %d Hz of all its threads, user IP and frame-pointer callchain of\n"
	       "up to %d entries, as `perf record -g` gets them; samples in the kernel, such\n"
	       "as page faults while a program loads, are not taken), sorted, turned into the\n"
	       "mapping, file offset and path of each address, and in the build ID rows its\n"
	       "file's build ID, both ways with the same answers (compared; any difference\n"
	       "fails the run), the process stopped meanwhile:\n\n"
	       "- **PROCMAP_QUERY**: one `PROCMAP_QUERY_COVERING_OR_NEXT_VMA` query per\n"
	       "  needed mapping, whose answer serves the addresses below its end.\n"
	       "- **Text**: `/proc/<pid>/maps`, kept open and read from its start in pieces\n"
	       "  of 8 KiB up to the last address, only the lines of needed mappings parsed\n"
	       "  past their range; build IDs read from the files in user space (through\n"
	       "  `/proc/<pid>/map_files/`), once per needed mapping (\"uncached\") or\n"
	       "  through a cache keyed by device, inode and mtime that is kept across\n"
	       "  batches, one `stat()` of the `map_files` link per needed mapping.\n"
	       "- **Kernel side**: build IDs from the kernel's cache (on by default), or with\n"
	       "  it off (`kernel.buildid_cache.enabled=0`), parsed from the page cache for\n"
	       "  every query, as C does, in the \"uncached\" rows.\n\n", SAMPLE_HZ, MAX_STACK);
	printf("| process | mappings | exec file mappings | profile | addresses | unique | mappings needed | files needed |\n"
	       "|---|---:|---:|---|---:|---:|---:|---:|\n");
	for (i = 0; i < nr; i++) {
		char prof[64] = "given";

		if (ws[i].seconds)
			snprintf(prof, sizeof(prof), "%lu samples in %.1f s", ws[i].samples,
				 ws[i].seconds);
		printf("| %s | %u | %u | %s | %zu | %u | %u | %u |\n", ws[i].name,
		       ws[i].enumerated[0], ws[i].enumerated[1], prof, ws[i].addrs.n,
		       ws[i].unique, ws[i].needed,
		       ws[i].files_needed);
	}
	printf("\nMicroseconds per batch (all the addresses once), minimum and median of %u\n"
	       "rounds; each round runs every method once, the order rotating; the ratios are\n"
	       "text / PROCMAP_QUERY of the minimum and of the median: above 1 when the ioctl\n"
	       "is faster.\n\n", rounds);
	pair_table("batch", ws, nr, symbolize, ARRAY_SIZE(symbolize));

	printf("\n### Full enumeration (perf's synthesize): PROCMAP_QUERY against text\n\n");
	printf("Every mapping of the same stopped processes, as `perf record` synthesizes\n"
	       "MMAP2 records for a running process: the whole text parsed, against\n"
	       "`PROCMAP_QUERY_COVERING_OR_NEXT_VMA` queries from address 0, each asking from\n"
	       "the end of the last answer (`[vsyscall]`, which is no VMA, left out of the\n"
	       "text); then only executable file-backed mappings (the text side skips other\n"
	       "lines after their permissions, the ioctl filters with\n"
	       "`PROCMAP_QUERY_VMA_EXECUTABLE | PROCMAP_QUERY_FILE_BACKED_VMA`), and those\n"
	       "with build IDs, cached and uncached as above.  Same rounds and ratios.\n\n");
	pair_table("mappings", ws, nr, enumerate, ARRAY_SIZE(enumerate));

	printf("\n### PROCMAP_QUERY: the price of build IDs\n\n");
	printf("The ioctl batches above, relative to the batch without build IDs (the ratio\n"
	       "columns use the minimum and median next to them, and the median of the\n"
	       "rounds' own ratios: each batch over the batch without build IDs of the same\n"
	       "round, which cancels what slows a whole round down).  With the kernel's\n"
	       "cache a build ID is a hit; without it each needed mapping's file headers\n"
	       "are parsed from the page cache, as the C implementation does.\n\n");
	printf("| process | PROCMAP_QUERY batch | min µs | median µs | relative, min | relative, median | relative, median of the rounds |\n"
	       "|---|---|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < nr; i++) {
		static const enum method rows[] = {
			SYM_IOCTL, SYM_IOCTL_IDS, SYM_IOCTL_IDS_UNCACHED
		};
		static const char * const what[] = {
			"without build IDs", "with build IDs, cache on", "with build IDs, cache off",
		};
		unsigned int k;

		for (k = 0; k < ARRAY_SIZE(rows); k++)
			printf("| %s | %s | %.1f | %.1f | %.2f | %.2f | %.2f |\n", ws[i].name,
			       what[k], ws[i].us[rows[k]].min, ws[i].us[rows[k]].median,
			       ws[i].us[rows[k]].min / ws[i].us[SYM_IOCTL].min,
			       ws[i].us[rows[k]].median / ws[i].us[SYM_IOCTL].median,
			       ws[i].to_sym_ioctl[rows[k]]);
	}
	if (no_kernel_cache)
		printf("\nThis kernel has no build ID cache: every PROCMAP_QUERY build ID was parsed.\n");
	for (i = 0; i < nr; i++)
		if (ws[i].unreadable)
			printf("\n%s: user space could not open the files of %u needed mappings,\n"
			       "whose build IDs only PROCMAP_QUERY gave.\n",
			       ws[i].name, ws[i].unreadable);
	printf("\n");
	for (i = 0; i < nr; i++) {
		plot_line("text / PROCMAP_QUERY (median)", &ws[i], "symbolize", SYM_TEXT);
		plot_line("text / PROCMAP_QUERY (median)", &ws[i], "symbolize + build IDs",
			  SYM_TEXT_IDS);
		plot_line("text / PROCMAP_QUERY (median)", &ws[i], "enumerate exec files",
			  EXEC_TEXT);
	}
}

int main(int argc, char **argv)
{
	static struct workload ws[MAX_WORKLOADS];
	const char *out_dir = NULL;
	unsigned long samples = 2000;
	double seconds = 60;
	unsigned int nr = 0, i;
	int opt;

	while ((opt = getopt(argc, argv, "n:s:r:o:d")) != -1) {
		switch (opt) {
		case 'n':
			samples = strtoul(optarg, NULL, 10);
			break;
		case 's':
			seconds = atof(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'o':
			out_dir = optarg;
			break;
		case 'd':
			dump = true;
			break;
		default:
			goto usage;
		}
	}
	if (optind == argc || argc - optind > MAX_WORKLOADS || seconds <= 0 || !rounds ||
	    !samples)
		goto usage;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	atexit(clean_up);
	signal(SIGINT, exit_on_signal);
	signal(SIGTERM, exit_on_signal);
	signal(SIGHUP, exit_on_signal);
	for (i = 0; i < (unsigned int)(argc - optind); i++) {
		setup_workload(&ws[nr], argv[optind + i], samples, seconds);
		nr++;
		if (out_dir)
			write_addresses(&ws[nr - 1], out_dir);
		measure(&ws[nr - 1]);
		finish_workload(&ws[nr - 1]);
	}
	report(ws, nr);
	return 0;
usage:
	fprintf(stderr, "usage: procmap_bench [-n SAMPLES] [-s SECONDS] [-r ROUNDS] [-o DIR] [-d] NAME=cmd:COMMAND|NAME=pid:PID[:FILE]...\n");
	return 2;
}
