// SPDX-License-Identifier: GPL-2.0
/*
 * perf record --buildid-mmap: the kernel puts the build ID of each file
 * mapping into its PERF_RECORD_MMAP2 record, with the nofault entry point.
 * The target maps libraries after it has started, while perf records; each
 * record must carry the build ID found in the file.  Uses perf from $PERF
 * or PATH.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "buildid_util.h"

static const char * const libs[] = {
	"libbuildid_sha1.so", "libbuildid_md5.so", "libbuildid_fast.so",
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
 * No state: a fixture only for TEST_F_TIMEOUT.  perf record alone takes
 * 14 s on the debug test kernel under TCG, and with perf script the case
 * ran past the harness' 30 s default.
 */
FIXTURE(perf) {};
FIXTURE_SETUP(perf) {}
FIXTURE_TEARDOWN(perf) {}

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

TEST_HARNESS_MAIN
