// SPDX-License-Identifier: GPL-2.0
/*
 * The exited-process problem, end to end: a profiler samples user stacks
 * as bare IPs while short-lived processes run, and symbolizes them after
 * every process is gone, with nothing but what `buildid record-exits`
 * wrote.  Every frame in a file-backed executable mapping (according to
 * the process' own /proc/self/maps) must resolve to the mapping's path and
 * file offset, with the build ID that the file's section headers give.
 * And the recorder, under as many exits per second as two processes can
 * fork, accounts for every process: printed with all its mappings, or
 * counted as lost.
 *
 * BUILDID_TOOL is the path of tools/buildid's `buildid`.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../kselftest_harness.h"
#include "buildid_bpf.h"
#include "buildid_util.h"
#include "exit_sampler.h"

#define WORKERS 300
#define WORKERS_AT_ONCE 4
#define SAMPLE_PERIOD_NS 250000
#define MAX_CPUS 64

/* One line of the recorder's --json output. */
struct recorded {
	char event[8];
	uint64_t time_ns;
	pid_t pid;
	uint64_t start, end, offset;
	char path[PATH_MAX];
	char build_id[2 * BUILD_ID_MAX + 1];	/* "" for null */
	unsigned int list;			/* lines of one list share it */
};

struct recording {
	struct recorded *lines;
	unsigned int nr;
};

/* The recorder's summary line on stderr. */
struct recorder_summary {
	unsigned long processes, mappings;
	unsigned long lost_mappings, lost_ends, walks_failed, malformed, incomplete;
	unsigned long exits_missed, execs_missed;
};

FIXTURE(exits) {
	char dir[PATH_MAX];
	char out[PATH_MAX + 16], err[PATH_MAX + 16];
	pid_t recorder;
	struct recording rec;
	struct recorder_summary summary;
};

/* The value of "@key": in a flat JSON object, unquoted; -ENOENT if absent. */
static int json_get(const char *line, const char *key, char *buf, size_t len)
{
	char pattern[64];
	const char *p;
	size_t n = 0;

	snprintf(pattern, sizeof(pattern), "\"%s\":", key);
	p = strstr(line, pattern);
	if (!p)
		return -ENOENT;
	p += strlen(pattern);
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++) {
			if (*p == '\\' && p[1])
				p++;
			if (n + 1 < len)
				buf[n++] = *p;
		}
	} else {
		for (; *p && *p != ',' && *p != '}'; p++)
			if (n + 1 < len)
				buf[n++] = *p;
	}
	buf[n] = 0;
	return *p ? 0 : -EINVAL;
}

static int parse_recorded(const char *line, struct recorded *r)
{
	char v[64];

	if (json_get(line, "event", r->event, sizeof(r->event)) ||
	    json_get(line, "time_ns", v, sizeof(v)))
		return -EINVAL;
	r->time_ns = strtoull(v, NULL, 0);
	if (json_get(line, "pid", v, sizeof(v)))
		return -EINVAL;
	r->pid = atoi(v);
	if (json_get(line, "start", v, sizeof(v)))
		return -EINVAL;
	r->start = strtoull(v, NULL, 0);
	if (json_get(line, "end", v, sizeof(v)))
		return -EINVAL;
	r->end = strtoull(v, NULL, 0);
	if (json_get(line, "offset", v, sizeof(v)))
		return -EINVAL;
	r->offset = strtoull(v, NULL, 0);
	if (json_get(line, "path", r->path, sizeof(r->path)) ||
	    json_get(line, "build_id", r->build_id, sizeof(r->build_id)))
		return -EINVAL;
	if (!strcmp(r->build_id, "null"))
		r->build_id[0] = 0;
	return 0;
}

/*
 * The recorder prints a process' list in one piece: a new list starts
 * where the event or the pid changes.  -errno for a line it cannot parse.
 */
static int read_recording(const char *path, struct recording *rec)
{
	char line[PATH_MAX + 512];
	unsigned int list = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct recorded *r, *prev;

		r = realloc(rec->lines, (rec->nr + 1) * sizeof(*r));
		if (!r) {
			fclose(f);
			return -ENOMEM;
		}
		rec->lines = r;
		r += rec->nr;
		if (parse_recorded(line, r)) {
			fclose(f);
			return -EBADMSG;
		}
		prev = rec->nr ? r - 1 : NULL;
		if (prev && (prev->pid != r->pid || strcmp(prev->event, r->event)))
			list++;
		r->list = list;
		rec->nr++;
	}
	fclose(f);
	return 0;
}

/* The earliest time of list @list, which starts at line @first. */
static uint64_t list_time(const struct recording *rec, unsigned int first)
{
	uint64_t t = rec->lines[first].time_ns;
	unsigned int i;

	for (i = first; i < rec->nr && rec->lines[i].list == rec->lines[first].list; i++)
		if (rec->lines[i].time_ns < t)
			t = rec->lines[i].time_ns;
	return t;
}

/*
 * How a profiler symbolizes a sample of @pid at @time_ns: the first list
 * of @pid recorded after the sample is the image the sample was taken in.
 * Without one, the sample is of a thread that ran on after a group exit
 * was recorded (the others are killed after the first one's do_exit()):
 * the last exit list of @pid before it (*@after_exit).  The mapping of
 * that list that holds @ip, or NULL; *@lists_seen says whether @pid has
 * such a list at all.
 */
static const struct recorded *resolve(const struct recording *rec, pid_t pid,
				      uint64_t time_ns, uint64_t ip, bool *lists_seen,
				      bool *after_exit)
{
	unsigned int i, first = UINT_MAX, last_exit = UINT_MAX;
	uint64_t best = UINT64_MAX, latest = 0;

	for (i = 0; i < rec->nr; i++) {
		uint64_t t;

		if (rec->lines[i].pid != pid || (i && rec->lines[i - 1].list == rec->lines[i].list))
			continue;
		t = list_time(rec, i);
		if (t > time_ns && t < best) {
			best = t;
			first = i;
		}
		if (t <= time_ns && t >= latest && !strcmp(rec->lines[i].event, "exit")) {
			latest = t;
			last_exit = i;
		}
	}
	*after_exit = first == UINT_MAX && last_exit != UINT_MAX;
	if (*after_exit)
		first = last_exit;
	*lists_seen = first != UINT_MAX;
	for (i = first; i < rec->nr && rec->lines[i].list == rec->lines[first].list; i++)
		if (rec->lines[i].start <= ip && ip < rec->lines[i].end)
			return &rec->lines[i];
	return NULL;
}

/* Does the recording have a list of @event for @pid? */
static bool recorded_event(const struct recording *rec, pid_t pid, const char *event)
{
	unsigned int i;

	for (i = 0; i < rec->nr; i++)
		if (rec->lines[i].pid == pid && !strcmp(rec->lines[i].event, event))
			return true;
	return false;
}

static pid_t start_recorder(const char *tool, const char *out, const char *err)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || dup2(fd, 2) < 0)
		_exit(127);
	/* Not exit_symbolize: its forks' exec lists would stand for the workers'. */
	execl(tool, tool, "record-exits", "--json", "--comm", "^exit_(worker|stress)", "-o", out,
	      NULL);
	fprintf(stderr, "exec %s: %m\n", tool);
	_exit(127);
}

static void show_file(const char *what, const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("# %s: %s", what, line);
	fclose(f);
}

/* The number just before @label in @line ("5 processes,"), or ULONG_MAX. */
static unsigned long count_before(const char *line, const char *label)
{
	const char *p = strstr(line, label), *end = p;

	if (!p)
		return ULONG_MAX;
	while (p > line && isdigit((unsigned char)p[-1]))
		p--;
	return p == end ? ULONG_MAX : strtoul(p, NULL, 10);
}

/*
 * SIGTERM, as a service manager stops it; its status, and its summary in
 * *@s.  -ETIMEDOUT if it does not stop within a minute.
 */
static int stop_recorder(struct _test_data_exits *self)
{
	int status, i;
	struct recorder_summary *s = &self->summary;
	char line[1024];
	FILE *f;

	kill(self->recorder, SIGTERM);
	for (i = 0; i < 600 && waitpid(self->recorder, &status, WNOHANG) == 0; i++)
		usleep(100000);
	if (i == 600)
		return -ETIMEDOUT;
	self->recorder = 0;
	show_file("recorder", self->err);
	f = fopen(self->err, "r");
	if (!f)
		return -errno;
	memset(s, 0xff, sizeof(*s));
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "processes incomplete"))
			continue;
		s->processes = count_before(line, " processes,");
		s->mappings = count_before(line, " mappings;");
		s->lost_mappings = count_before(line, " mappings,");
		s->lost_ends = count_before(line, " processes' ends");
		s->walks_failed = count_before(line, " walks failed");
		s->malformed = count_before(line, " records malformed");
		s->incomplete = count_before(line, " processes incomplete");
		s->exits_missed = count_before(line, " exits and");
		s->execs_missed = count_before(line, " execs not seen");
	}
	fclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static bool summary_read(const struct recorder_summary *s)
{
	return s->processes != ULONG_MAX && s->mappings != ULONG_MAX &&
	       s->lost_mappings != ULONG_MAX && s->lost_ends != ULONG_MAX &&
	       s->walks_failed != ULONG_MAX && s->malformed != ULONG_MAX &&
	       s->incomplete != ULONG_MAX && s->exits_missed != ULONG_MAX &&
	       s->execs_missed != ULONG_MAX;
}

/* What the recorder knows it lost. */
static unsigned long summary_losses(const struct recorder_summary *s)
{
	return s->lost_mappings + s->lost_ends + s->walks_failed + s->malformed + s->incomplete;
}

FIXTURE_SETUP(exits)
{
	const char *tool = getenv("BUILDID_TOOL");
	static const char * const bins[] = { "exit_worker", "exit_worker_exec" };
	char path[PATH_MAX + 32];
	unsigned int i;

	if (!tool || !*tool)
		SKIP(return, "BUILDID_TOOL (the path of tools/buildid's buildid) is not set");
	snprintf(self->dir, sizeof(self->dir), "%s/exits.XXXXXX", scratch_dir());
	ASSERT_NE(NULL, mkdtemp(self->dir)) TH_LOG("mkdtemp in %s: %m", scratch_dir());
	for (i = 0; i < ARRAY_SIZE(bins); i++) {
		snprintf(path, sizeof(path), "%s/%s", self->dir, bins[i]);
		ASSERT_EQ(0, copy_file(test_file(bins[i]), path)) TH_LOG("copy %s", bins[i]);
	}
	snprintf(self->out, sizeof(self->out), "%s/recorded", self->dir);
	snprintf(self->err, sizeof(self->err), "%s/recorder.err", self->dir);
	self->recorder = start_recorder(tool, self->out, self->err);
	ASSERT_LT(0, self->recorder);
	/* Loading and verifying its programs takes a few seconds under TCG. */
	for (i = 0; i < 1200 && !file_contains(self->err, "recording"); i++) {
		int status;

		if (waitpid(self->recorder, &status, WNOHANG) == self->recorder) {
			self->recorder = 0;
			show_file("recorder", self->err);
			ASSERT_TRUE(false) TH_LOG("the recorder exited with status %#x", status);
		}
		usleep(100000);
	}
	ASSERT_TRUE(file_contains(self->err, "recording")) {
		show_file("recorder", self->err);
	}
}

FIXTURE_TEARDOWN(exits)
{
	if (self->recorder > 0) {
		kill(self->recorder, SIGKILL);
		waitpid(self->recorder, NULL, 0);
	}
	free(self->rec.lines);
	if (self->dir[0])
		remove_tree(self->dir);
}

/* The truth about one image of a worker: its own /proc/self/maps. */
struct image_maps {
	struct mapping *m;
	unsigned int nr;
};

static int read_image_maps(const char *path, struct image_maps *im)
{
	char line[PATH_MAX + 128];
	FILE *f = fopen(path, "r");

	im->nr = 0;
	im->m = NULL;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct mapping *m = realloc(im->m, (im->nr + 1) * sizeof(*m));
		int pos = 0;

		if (!m) {
			fclose(f);
			return -ENOMEM;
		}
		im->m = m;
		m += im->nr;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %*s %*s %n",
			   &m->start, &m->end, m->perms, &m->offset, &pos) < 4 || !pos) {
			fclose(f);
			return -EBADMSG;
		}
		snprintf(m->path, sizeof(m->path), "%s", line + pos);
		m->path[strcspn(m->path, "\n")] = 0;
		im->nr++;
	}
	fclose(f);
	return 0;
}

static const struct mapping *image_mapping(const struct image_maps *im, uint64_t ip)
{
	unsigned int i;

	for (i = 0; i < im->nr; i++)
		if (im->m[i].start <= ip && ip < im->m[i].end)
			return &im->m[i];
	return NULL;
}

/* Build IDs of the files, from their section headers, looked up once per path. */
struct id_memo {
	char path[8][PATH_MAX];
	char hex[8][2 * BUILD_ID_MAX + 1];
	unsigned int nr;
};

static const char *section_build_id(struct id_memo *memo, const char *path)
{
	struct build_id id;
	unsigned int i;

	for (i = 0; i < memo->nr; i++)
		if (!strcmp(memo->path[i], path))
			return memo->hex[i];
	if (memo->nr == ARRAY_SIZE(memo->path))
		return "(too many files)";
	snprintf(memo->path[i], sizeof(memo->path[i]), "%s", path);
	if (elf_build_id_from_sections(path, &id))
		snprintf(memo->hex[i], sizeof(memo->hex[i]), "(none)");
	else
		build_id_hex(&id, memo->hex[i], sizeof(memo->hex[i]));
	memo->nr++;
	return memo->hex[i];
}

enum worker_mode { MODE_EXIT, MODE_KILL, MODE_EXEC, MODES };
static const char *const mode_names[MODES] = { "exit", "kill", "exec" };

struct worker {
	pid_t pid;
	enum worker_mode mode;
	unsigned int threads;
	bool killed, done, failed;
	struct image_maps image[2];	/* exit_worker's, and after an exec exit_worker_exec's */
	unsigned long frames[2];	/* resolved, per image */
};

struct samples {
	struct exit_sample *s;
	unsigned int nr;
};

static int keep_sample(void *ctx, void *data, size_t size)
{
	struct samples *all = ctx;
	struct exit_sample *s;

	if (size < sizeof(*s))
		return -EBADMSG;
	s = realloc(all->s, (all->nr + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	all->s = s;
	memcpy(&all->s[all->nr++], data, sizeof(*s));
	return 0;
}

/* cpu-clock on every CPU, each running the sampler; the number of CPUs, or -errno. */
static int attach_sampler(struct bpf_program *prog, struct bpf_link **links)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = SAMPLE_PERIOD_NS,
	};
	int cpus = libbpf_num_possible_cpus(), cpu, fd;

	if (cpus < 0)
		return cpus;
	for (cpu = 0; cpu < cpus && cpu < MAX_CPUS; cpu++) {
		fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)	/* a possible CPU that is not online */
				continue;
			return -errno;
		}
		links[cpu] = bpf_program__attach_perf_event(prog, fd);
		if (!links[cpu]) {
			close(fd);
			return -errno ?: -EINVAL;
		}
	}
	return cpu;
}

static pid_t start_worker(const char *dir, unsigned int index, struct worker *w)
{
	char bin[PATH_MAX + 16], idx[16], threads[16];
	pid_t pid;

	snprintf(bin, sizeof(bin), "%s/exit_worker", dir);
	snprintf(idx, sizeof(idx), "%u", index);
	snprintf(threads, sizeof(threads), "%u", w->threads);
	pid = fork();
	if (!pid) {
		execl(bin, "exit_worker", mode_names[w->mode], idx, dir, threads, NULL);
		_exit(127);
	}
	return pid;
}

/*
 * Runs the workers, WORKERS_AT_ONCE at a time; kills the "kill" ones once
 * they said they are ready.  The number of workers that did not end as
 * their mode says.
 */
static unsigned int run_workers(const char *dir, struct worker *w, unsigned int n)
{
	unsigned int next = 0, running = 0, done = 0, bad = 0, i;

	while (done < n) {
		int status;
		pid_t pid;

		while (running < WORKERS_AT_ONCE && next < n) {
			w[next].pid = start_worker(dir, next, &w[next]);
			if (w[next].pid < 0) {
				w[next].failed = true;
				w[next].done = true;
				bad++;
				done++;
			} else {
				running++;
			}
			next++;
		}
		for (i = 0; i < next; i++) {
			char ready[PATH_MAX + 32];

			if (w[i].mode != MODE_KILL || w[i].killed || w[i].done)
				continue;
			snprintf(ready, sizeof(ready), "%s/ready.%u", dir, i);
			if (!access(ready, F_OK)) {
				kill(w[i].pid, SIGKILL);
				w[i].killed = true;
			}
		}
		for (i = 0; i < next; i++) {
			if (w[i].done || w[i].failed)
				continue;
			pid = waitpid(w[i].pid, &status, WNOHANG);
			if (pid <= 0)
				continue;
			w[i].done = true;
			w[i].failed = w[i].mode == MODE_KILL ?
				!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) :
				!(WIFEXITED(status) && WEXITSTATUS(status) == 0);
			if (w[i].failed) {
				printf("# worker %u (%s, pid %d) ended with status %#x\n", i,
				       mode_names[w[i].mode], pid, status);
				bad++;
			}
			running--;
			done++;
		}
		usleep(1000);
	}
	return bad;
}

static int worker_of(const struct worker *w, unsigned int n, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (w[i].pid == pid)
			return i;
	return -1;
}

TEST_F_TIMEOUT(exits, symbolized_after_exit, 900)
{
	struct bpf_link *links[MAX_CPUS] = {};
	unsigned long frames = 0, in_files = 0, unresolved = 0, wrong = 0, not_in_files = 0;
	unsigned long per_file[3] = {}, uncovered = 0, unrecorded = 0, bad_samples = 0;
	unsigned long after_exit_frames = 0;
	struct exit_sampler_counts counts;
	struct samples all = {};
	struct worker *w = calloc(WORKERS, sizeof(*w));
	struct id_memo *memo = calloc(1, sizeof(*memo));
	struct ring_buffer *ring;
	struct bpf_object *obj;
	unsigned int i, j, k;
	int cpus, key = 0;

	ASSERT_NE(NULL, w);
	ASSERT_NE(NULL, memo);
	obj = bpf_object__open_file(test_file("exit_sampler.bpf.o"), NULL);
	ASSERT_NE(NULL, obj) TH_LOG("open exit_sampler.bpf.o: %m");
	ASSERT_EQ(0, bpf_object__load(obj));
	ring = ring_buffer__new(bpf_object__find_map_fd_by_name(obj, "samples"),
				keep_sample, &all, NULL);
	ASSERT_NE(NULL, ring);
	cpus = attach_sampler(bpf_object__find_program_by_name(obj, "sample"), links);
	ASSERT_LT(0, cpus) TH_LOG("cpu-clock sampling: %s", strerror(-cpus));

	for (i = 0; i < WORKERS; i++) {
		w[i].mode = i % MODES;
		w[i].threads = i % 4 == 3 ? 2 : 1;
	}
	EXPECT_EQ(0, run_workers(self->dir, w, WORKERS));

	/* Every worker is gone: what the profiler has are IPs. */
	for (i = 0; i < (unsigned int)cpus; i++)
		bpf_link__destroy(links[i]);
	EXPECT_LE(0, ring_buffer__consume(ring));
	ASSERT_EQ(0, bpf_map_lookup_elem(bpf_map__fd(bss_map_of(obj)), &key, &counts));
	ring_buffer__free(ring);
	bpf_object__close(obj);

	ASSERT_EQ(0, stop_recorder(self));
	ASSERT_TRUE(summary_read(&self->summary));
	EXPECT_EQ(0, summary_losses(&self->summary));
	ASSERT_EQ(0, read_recording(self->out, &self->rec));

	for (i = 0; i < WORKERS; i++) {
		char path[PATH_MAX + 64];

		for (j = 0; j < 2; j++) {
			if (j && w[i].mode != MODE_EXEC)
				continue;
			snprintf(path, sizeof(path), "%s/maps.%u.%s", self->dir, i,
				 j ? "exec" : "worker");
			EXPECT_EQ(0, read_image_maps(path, &w[i].image[j])) TH_LOG("%s", path);
		}
		/* Everyone's exit, and the exec'ed ones' old image, were recorded. */
		if (!recorded_event(&self->rec, w[i].pid, "exit") ||
		    (w[i].mode == MODE_EXEC && !recorded_event(&self->rec, w[i].pid, "exec"))) {
			printf("# worker %u (%s, pid %d) not recorded\n", i,
			       mode_names[w[i].mode], w[i].pid);
			unrecorded++;
		}
	}

	for (i = 0; i < all.nr; i++) {
		const struct exit_sample *s = &all.s[i];
		int wi = worker_of(w, WORKERS, s->tgid);
		/* The truth: which image the sample is of, from the command it ran. */
		unsigned int image = !strcmp(s->comm, "exit_worker_exe");

		if (wi < 0 || (strcmp(s->comm, "exit_worker") && !image)) {
			bad_samples++;
			continue;
		}
		for (k = 0; k < s->nr && k < SAMPLE_MAX_FRAMES; k++) {
			const struct mapping *m = image_mapping(&w[wi].image[image], s->ips[k]);
			const struct recorded *r;
			uint64_t got_off, want_off;
			const char *want;
			bool seen, after_exit;

			if (!s->ips[k])
				continue;
			frames++;
			if (!m || m->perms[2] != 'x' || m->path[0] != '/') {
				not_in_files++;
				continue;
			}
			in_files++;
			r = resolve(&self->rec, s->tgid, s->time_ns, s->ips[k], &seen, &after_exit);
			if (!r) {
				if (unresolved++ < 10)
					printf("# unresolved: pid %u, %" PRIu64 " ns, ip %#" PRIx64 "\n"
					       "#   in %s (%s)\n", s->tgid, (uint64_t)s->time_ns,
					       (uint64_t)s->ips[k], m->path, seen ?
					       "not in the list recorded after it" : "no list after it");
				continue;
			}
			want = section_build_id(memo, m->path);
			got_off = r->offset + (s->ips[k] - r->start);
			want_off = m->offset + (s->ips[k] - m->start);
			if (strcmp(r->path, m->path) || got_off != want_off ||
			    strcmp(r->build_id, want)) {
				if (wrong++ < 10)
					printf("# wrong: pid %u ip %#" PRIx64 ":\n"
					       "#   recorded %s+%#" PRIx64 " %s\n"
					       "#   truth %s+%#" PRIx64 " %s\n",
					       s->tgid, (uint64_t)s->ips[k], r->path, got_off,
					       r->build_id[0] ? r->build_id : "(none)", m->path,
					       want_off, want);
				continue;
			}
			w[wi].frames[image]++;
			after_exit_frames += after_exit;
			if (strstr(m->path, "/exit_worker_exec"))
				per_file[1]++;
			else if (strstr(m->path, "/exit_worker"))
				per_file[0]++;
			else
				per_file[2]++;
		}
	}
	for (i = 0; i < WORKERS; i++)
		if (!w[i].frames[0] || (w[i].mode == MODE_EXEC && !w[i].frames[1]))
			uncovered++;

	printf("# %u processes, all gone before symbolizing: %u exited, %u killed,\n"
	       "# %u exec'ed exit_worker_exec first; %u with two threads\n", WORKERS,
	       (WORKERS + 2) / 3, (WORKERS + 1) / 3, WORKERS / 3, WORKERS / 4);
	printf("# %u samples, %lu frames (not taken: %llu of the workers in the kernel;\n"
	       "# %llu lost, %llu without a stack)\n", all.nr, frames,
	       (unsigned long long)counts.kernel_mode, (unsigned long long)counts.lost,
	       (unsigned long long)counts.no_stack);
	printf("# %lu frames in file-backed executable mappings: %lu resolved and right\n"
	       "# (%lu in exit_worker, %lu in exit_worker_exec, %lu in libraries),\n"
	       "# %lu unresolved, %lu wrong; %lu elsewhere (vdso, anonymous)\n",
	       in_files, per_file[0] + per_file[1] + per_file[2], per_file[0], per_file[1],
	       per_file[2], unresolved, wrong, not_in_files);
	printf("# %lu resolved frames were sampled after their group exit was recorded\n",
	       after_exit_frames);
	printf("# %lu processes not recorded, %lu without a resolved frame in each image,\n"
	       "# %lu samples of no worker\n", unrecorded, uncovered, bad_samples);
	EXPECT_EQ(0, unrecorded);
	EXPECT_EQ(0, unresolved);
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(0, bad_samples);
	/*
	 * A worker's samples may all land while it is in the kernel (under
	 * TCG 10703 of 16304 samples did in one run, and one worker of 300
	 * had no resolved frame in one of its images): allow 1%, so that
	 * what is checked is that symbolization was exercised, not the
	 * scheduler.
	 */
	EXPECT_GE((unsigned long)(WORKERS / 100), uncovered);
	EXPECT_LT(0, per_file[2]) TH_LOG("no frame in a shared library");
	for (i = 0; i < WORKERS; i++)
		for (j = 0; j < 2; j++)
			free(w[i].image[j].m);
	free(all.s);
	free(memo);
	free(w);
}

#define STRESS_FORKERS 2
#define STRESS_EXITS_EACH 2500

/* The executable file mappings of this process, which its forks inherit. */
static unsigned int exec_file_mappings(void)
{
	struct image_maps im;
	unsigned int i, n = 0;

	if (read_image_maps("/proc/self/maps", &im))
		return 0;
	for (i = 0; i < im.nr; i++)
		n += im.m[i].perms[2] == 'x' && im.m[i].path[0] == '/';
	free(im.m);
	return n;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

TEST_F_TIMEOUT(exits, fork_storm, 900)
{
	unsigned int total = STRESS_FORKERS * STRESS_EXITS_EACH, nr = 0, i, j;
	unsigned long missing = 0, partial = 0, wrong_ids = 0, losses;
	unsigned int want = exec_file_mappings();
	pid_t *pids = calloc(total, sizeof(*pids)), forkers[STRESS_FORKERS];
	unsigned int *seen = calloc(total, sizeof(*seen));
	struct id_memo *memo = calloc(1, sizeof(*memo));
	uint64_t t0, t1;
	int fds[2], status;

	ASSERT_NE(NULL, pids);
	ASSERT_NE(NULL, seen);
	ASSERT_NE(NULL, memo);
	ASSERT_LT(0, want);
	ASSERT_EQ(0, pipe(fds));
	t0 = now_ns();
	for (i = 0; i < STRESS_FORKERS; i++) {
		forkers[i] = fork();
		ASSERT_LE(0, forkers[i]);
		if (!forkers[i]) {
			close(fds[0]);
			prctl(PR_SET_NAME, "exit_forker");
			fork_exits_then_exit(STRESS_EXITS_EACH, "exit_stress", fds[1]);
		}
	}
	close(fds[1]);
	while (nr < total && read(fds[0], &pids[nr], sizeof(pids[nr])) == sizeof(pids[nr]))
		nr++;
	close(fds[0]);
	for (i = 0; i < STRESS_FORKERS; i++) {
		ASSERT_EQ(forkers[i], waitpid(forkers[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
	t1 = now_ns();
	ASSERT_EQ(total, nr);

	ASSERT_EQ(0, stop_recorder(self));
	ASSERT_TRUE(summary_read(&self->summary));
	ASSERT_EQ(0, read_recording(self->out, &self->rec));

	/* Each child's exit: how many of its mappings were printed, all right. */
	qsort(pids, nr, sizeof(pids[0]), cmp_pid);
	for (i = 0; i < self->rec.nr; i++) {
		const struct recorded *r = &self->rec.lines[i];
		pid_t *p = bsearch(&r->pid, pids, nr, sizeof(pids[0]), cmp_pid);

		if (!p || strcmp(r->event, "exit"))
			continue;
		seen[p - pids]++;
		if (strcmp(r->build_id, section_build_id(memo, r->path)) && wrong_ids++ < 10)
			printf("# pid %d: %s has %s, its sections %s\n", r->pid, r->path,
			       r->build_id[0] ? r->build_id : "no build ID",
			       section_build_id(memo, r->path));
	}
	for (j = 0; j < nr; j++) {
		missing += !seen[j];
		partial += seen[j] && seen[j] != want;
	}
	losses = summary_losses(&self->summary);
	printf("# %u processes exited in %.2f s: %.0f exits per second,\n"
	       "# %u executable file mappings each\n", nr, (t1 - t0) / 1e9,
	       nr / ((t1 - t0) / 1e9), want);
	printf("# recorded: %lu complete, %lu incomplete, %lu missing; the recorder counted\n"
	       "# %lu mappings and %lu ends lost, %lu walks failed, %lu malformed,\n"
	       "# %lu incomplete, at most %lu exits not seen\n", nr - missing - partial, partial,
	       missing,
	       self->summary.lost_mappings, self->summary.lost_ends,
	       self->summary.walks_failed, self->summary.malformed, self->summary.incomplete,
	       self->summary.exits_missed);
	/* Whatever it could not keep up with, it said so. */
	EXPECT_LE(missing + partial, losses + self->summary.exits_missed);
	EXPECT_EQ(0, self->summary.malformed);
	EXPECT_EQ(0, wrong_ids);
	EXPECT_LT(0, nr - missing - partial);
	free(memo);
	free(seen);
	free(pids);
}

TEST_HARNESS_MAIN
