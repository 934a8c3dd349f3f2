// SPDX-License-Identifier: GPL-2.0
/*
 * perf record --buildid-mmap: the kernel puts the build ID of each file
 * mapping into its PERF_RECORD_MMAP2 record, with the nofault entry point.
 * The target maps libraries after it has started, while perf records; each
 * record must carry the build ID found in the file.  Uses perf from $PERF
 * or PATH, and the same event opened directly for the build ID cache's
 * cases.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "buildid_util.h"

static const char * const libs[] = {
	"libbuildid_sha1.so", "libbuildid_md5.so", "libbuildid_fast.so",
};

/* For the cache's cases, also a library whose note is on a later page. */
static const char * const cached_libs[] = {
	"libbuildid_sha1.so", "libbuildid_md5.so", "libbuildid_fast.so",
	"libbuildid_far_note.so",
};

static const char *perf_binary(void)
{
	const char *perf = getenv("PERF");

	return perf && *perf ? perf : "perf";
}

/*
 * The build ID in the first r-xp MMAP2 record of @path, as hex, or "";
 * the record itself goes to @record for the log.
 */
static void mmap2_build_id(FILE *script, const char *path, char *hex, size_t len,
			   char *record, size_t record_len)
{
	char line[8192], suffix[4 * PATH_MAX];

	hex[0] = '\0';
	snprintf(record, record_len, "(none)");
	snprintf(suffix, sizeof(suffix), " r-xp %s\n", path);
	rewind(script);
	while (fgets(line, sizeof(line), script)) {
		char *id, *end;
		size_t n = strlen(line), s = strlen(suffix);

		if (!strstr(line, "PERF_RECORD_MMAP2") || n < s || strcmp(line + n - s, suffix))
			continue;
		record[0] = '\0';
		strncat(record, line, record_len - 1);
		id = strstr(line, " <");
		end = id ? strchr(id, '>') : NULL;
		if (!end)
			return;
		*end = '\0';
		snprintf(hex, len, "%s", id + 2);
		return;
	}
}

/* The output of @cmd in a temporary file, or NULL if it failed. */
static FILE *capture(const char *cmd)
{
	FILE *out = tmpfile(), *p;
	char buf[8192];
	size_t n;

	if (!out)
		return NULL;
	p = popen(cmd, "r");
	if (!p) {
		fclose(out);
		return NULL;
	}
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		fwrite(buf, 1, n, out);
	if (pclose(p)) {
		fclose(out);
		return NULL;
	}
	return out;
}

/*
 * A fixture for TEST_F_TIMEOUT: perf record alone takes 14 s on the debug
 * test kernel under TCG, and with perf script the case ran past the
 * harness' 30 s default.
 */
FIXTURE(perf) {
	struct cache_switch cache;
	char tmpfs[PATH_MAX];
};

FIXTURE_SETUP(perf) {}

FIXTURE_TEARDOWN(perf)
{
	cache_switch_restore(&self->cache);
	if (self->tmpfs[0] && (umount2(self->tmpfs, MNT_DETACH) || rmdir(self->tmpfs)))
		TH_LOG("could not remove %s", self->tmpfs);
}

TEST_F_TIMEOUT(perf, mmap2_records_carry_build_ids, 300)
{
	char work[PATH_MAX], cmd[8 * PATH_MAX], hex[48], got[64], record[1024];
	char paths[ARRAY_SIZE(libs)][PATH_MAX + 32];
	const char *perf = perf_binary();
	FILE *script;
	unsigned int i;

	snprintf(cmd, sizeof(cmd), "%s version >/dev/null 2>&1", perf);
	if (system(cmd))
		SKIP(return, "%s is not installed", perf);

	snprintf(work, sizeof(work), "%s/perf.XXXXXX", scratch_dir());
	ASSERT_NE(NULL, mkdtemp(work));

	/*
	 * The record is made with the nofault entry point when the library is
	 * mapped: copies on the scratch file system, where ld.so's read of the
	 * header leaves it in the page cache (9p without a cache does not).
	 */
	for (i = 0; i < ARRAY_SIZE(libs); i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/%s", work, libs[i]);
		ASSERT_EQ(0, copy_file(test_file(libs[i]), paths[i]));
	}
	snprintf(cmd, sizeof(cmd),
		 "%s record -q --buildid-mmap -e cpu-clock -o %s/perf.data -- %s %s %s %s",
		 perf, work, test_file("buildid_perf_target"), paths[0], paths[1], paths[2]);
	ASSERT_EQ(0, system(cmd)) TH_LOG("%s", cmd);

	snprintf(cmd, sizeof(cmd), "%s script -D -i %s/perf.data 2>/dev/null", perf, work);
	script = capture(cmd);
	ASSERT_NE(NULL, script) TH_LOG("%s", cmd);

	for (i = 0; i < ARRAY_SIZE(libs); i++) {
		struct build_id want;

		ASSERT_EQ(0, elf_build_id_from_sections(paths[i], &want));
		build_id_hex(&want, hex, sizeof(hex));
		mmap2_build_id(script, paths[i], got, sizeof(got), record, sizeof(record));
		EXPECT_STREQ(hex, got) TH_LOG("%s: MMAP2 record: %s", libs[i], record);
	}
	fclose(script);
	if (remove_tree(work))
		TH_LOG("could not remove %s", work);
}

struct lib_records {
	const char *paths[ARRAY_SIZE(cached_libs)];
	unsigned int records[ARRAY_SIZE(cached_libs)];
	struct build_id got[ARRAY_SIZE(cached_libs)];
};

static void note_lib_record(void *arg, const char *path, uint64_t addr,
			    const unsigned char *id, unsigned int size)
{
	struct lib_records *r = arg;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cached_libs); i++) {
		if (strcmp(path, r->paths[i]))
			continue;
		r->records[i]++;
		r->got[i].size = size;
		memcpy(r->got[i].data, id, size);
	}
}

/*
 * With the build ID cache on, buildid_perf_target maps the libraries in
 * @dir (on @fstype) twice under a perf event with build IDs, after a query
 * of each (PROCMAP_QUERY, as a profiler's first look) filled the cache: the
 * first run right away, the second after their pages were evicted (where
 * the file system can drop them).  Every record of both runs must carry
 * the ID that the file's section headers give, and no run may have needed
 * a fill.  On 9p the queries' mappings stay until the end: 9p without a
 * cache gives a file a new inode whenever nothing holds the old one, and
 * the old inode takes its entry along.
 */
static void expect_cached_records(struct __test_metadata *_metadata,
				  struct _test_data_perf *self, const char *dir,
				  const char *fstype)
{
	char paths[ARRAY_SIZE(cached_libs)][PATH_MAX + 32], type[32], got[48], want_hex[48];
	char *argv[ARRAY_SIZE(cached_libs) + 2] = {}, target[PATH_MAX];
	struct build_id want[ARRAY_SIZE(cached_libs)];
	void *held[ARRAY_SIZE(cached_libs)];
	struct lib_records r = {};
	long hits = 0, fills = 0, now;
	unsigned int i, run;

	ASSERT_EQ(0, fs_type_of(dir, type, sizeof(type)));
	ASSERT_STREQ(fstype, type) TH_LOG("%s", dir);
	ASSERT_EQ(0, cache_switch_set(&self->cache, true));
	/* The program too, so that every file of the test is on @fstype. */
	snprintf(target, sizeof(target), "%s/buildid_perf_target", dir);
	if (strcmp(target, test_file("buildid_perf_target")))
		ASSERT_EQ(0, copy_file(test_file("buildid_perf_target"), target));
	argv[0] = target;
	for (i = 0; i < ARRAY_SIZE(cached_libs); i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/%s", dir, cached_libs[i]);
		if (strcmp(paths[i], test_file(cached_libs[i])))
			ASSERT_EQ(0, copy_file(test_file(cached_libs[i]), paths[i]));
		ASSERT_EQ(0, elf_build_id_from_sections(paths[i], &want[i]));
		r.paths[i] = paths[i];
		argv[i + 1] = paths[i];
	}
	for (i = 0; i < ARRAY_SIZE(cached_libs); i++) {
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC);

		ASSERT_LE(0, fd) TH_LOG("%s", paths[i]);
		held[i] = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		ASSERT_NE(MAP_FAILED, held[i]) TH_LOG("%s", paths[i]);
		ASSERT_EQ(0, buildid_cache_ask(held[i])) TH_LOG("%s", paths[i]);
	}
	fills = buildid_cache_stat("fills");
	ASSERT_LE(0, fills);

	for (run = 0; run < 2; run++) {
		memset(r.records, 0, sizeof(r.records));
		if (run) {
			/* ext4 can drop them; tmpfs pages are the data itself. */
			ASSERT_EQ(0, buildid_cache_drain());
			for (i = 0; i < ARRAY_SIZE(cached_libs); i++) {
				bool evicted = evict_file(paths[i], 0);

				if (!strcmp(fstype, "ext4"))
					EXPECT_TRUE(evicted) TH_LOG("%s: header page", paths[i]);
			}
			hits = buildid_cache_stat("hits");
			ASSERT_LE(0, hits);
		}
		ASSERT_EQ(0, perf_exec_mappings(argv, note_lib_record, &r));
		for (i = 0; i < ARRAY_SIZE(cached_libs); i++) {
			build_id_hex(&want[i], want_hex, sizeof(want_hex));
			build_id_hex(&r.got[i], got, sizeof(got));
			EXPECT_EQ(1, r.records[i]) TH_LOG("run %u: %s", run, paths[i]);
			EXPECT_TRUE(build_id_equal(&want[i], r.got[i].data, r.got[i].size))
				TH_LOG("run %u: %s: MMAP2 has '%s', the file %s", run, paths[i],
				       got, want_hex);
		}
	}
	/* The second run's IDs came from the cache: perf looked each library up. */
	now = buildid_cache_stat("hits");
	EXPECT_LE(hits + (long)ARRAY_SIZE(cached_libs), now)
		TH_LOG("hits %ld, then %ld", hits, now);
	/* ... and the entries of the queries were still there. */
	now = buildid_cache_stat("fills");
	EXPECT_EQ(fills, now) TH_LOG("the runs needed %ld fills", now - fills);
	for (i = 0; i < ARRAY_SIZE(cached_libs); i++)
		munmap(held[i], 4096);
	ASSERT_EQ(0, buildid_cache_drain());
	if (strcmp(dir, self_dir())) {
		for (i = 0; i < ARRAY_SIZE(cached_libs); i++)
			unlink(paths[i]);
		unlink(target);
	}
}

TEST_F_TIMEOUT(perf, cached_mmap2_records_9p, 120)
{
	expect_cached_records(_metadata, self, self_dir(), "9p");
}

TEST_F_TIMEOUT(perf, cached_mmap2_records_ext4, 120)
{
	expect_cached_records(_metadata, self, scratch_dir(), "ext4");
}

TEST_F_TIMEOUT(perf, cached_mmap2_records_tmpfs, 120)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/tmpfs.XXXXXX", scratch_dir());
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, mount("tmpfs", dir, "tmpfs", 0, NULL));
	snprintf(self->tmpfs, sizeof(self->tmpfs), "%s", dir);
	expect_cached_records(_metadata, self, dir, "tmpfs");
}

TEST_HARNESS_MAIN
