// SPDX-License-Identifier: GPL-2.0
/*
 * A short-lived process of exit_symbolize:
 *
 *	exit_worker exit|kill|exec INDEX DIR THREADS
 *
 * It writes its /proc/self/maps to DIR/maps.INDEX.IMAGE (the truth that
 * the recorder's output is checked against, taken once the mappings are
 * final), burns CPU in a call chain of its own and in libc with THREADS
 * threads, and then returns from main(), burns on until it is killed
 * (after creating DIR/ready.INDEX), or execs exit_worker_exec.  This file
 * is built twice: exit_worker_exec (EXEC_IMAGE) is a second binary with
 * a build ID of its own.  Built with -fno-inline, so that each function
 * is a frame of the samples' stacks.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef EXEC_IMAGE
#define IMAGE "exec"
#define BURN_MS 40
#else
#define IMAGE "worker"
#define BURN_MS 30
#endif

/* Keeps @x alive, so the work that computed it is done. */
static inline void keep(unsigned long x)
{
	asm volatile("" : : "r" (x));
}

static int compare_ints(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Frames in libc (qsort), which calls back into this file. */
static void burn_in_libc(unsigned int seed)
{
	int values[64];
	unsigned int i;

	for (i = 0; i < 64; i++)
		values[i] = (int)((seed + i) * 2654435761u);
	qsort(values, 64, sizeof(values[0]), compare_ints);
	keep((unsigned long)values[seed % 64]);
}

static void burn_here(unsigned int seed)
{
	unsigned long x = seed;
	unsigned int i;

	for (i = 0; i < 20000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	keep(x);
}

static void burn_once(unsigned int seed)
{
	burn_here(seed);
	burn_in_libc(seed);
}

/* CPU time: under TCG a thread may wait long for a CPU, and get no samples. */
static unsigned long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/* Burns for @ms milliseconds, or for ever if @ms is 0. */
static void burn(unsigned int ms)
{
	unsigned long long end = now_ms() + ms;
	unsigned int seed = 0;

	while (!ms || now_ms() < end)
		burn_once(seed++);
}

static void *burn_thread(void *arg)
{
	(void)arg;
	burn(0);
	return NULL;
}

/* Writes @len bytes of @buf to DIR/NAME through a rename, so a reader sees all or nothing. */
static int publish(const char *dir, const char *name, const char *buf, size_t len)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	int fd, ok;

	snprintf(tmp, sizeof(tmp), "%s/.%s", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	ok = write(fd, buf, len) == (ssize_t)len;
	if (close(fd) || !ok)
		return -1;
	return rename(tmp, path);
}

static int publish_maps(const char *dir, const char *index)
{
	static char buf[1 << 16];
	char name[64];
	size_t len = 0;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += n;
	close(fd);
	if (n < 0 || len == sizeof(buf))
		return -1;
	snprintf(name, sizeof(name), "maps.%s.%s", index, IMAGE);
	return publish(dir, name, buf, len);
}

int main(int argc, char **argv)
{
	char exec_path[PATH_MAX], name[64];
	pthread_t thread;
	ssize_t len;
	int i;

	if (argc != 5) {
		fprintf(stderr, "usage: %s exit|kill|exec INDEX DIR THREADS\n", argv[0]);
		return 2;
	}
	for (i = 1; i < atoi(argv[4]); i++) {
		if (pthread_create(&thread, NULL, burn_thread, NULL)) {
			perror("pthread_create");
			return 1;
		}
	}
	if (publish_maps(argv[3], argv[2])) {
		perror("exit_worker: writing maps");
		return 1;
	}
	burn(BURN_MS);
	if (!strcmp(argv[1], "kill")) {
		snprintf(name, sizeof(name), "ready.%s", argv[2]);
		if (publish(argv[3], name, "", 0)) {
			perror("exit_worker: ready");
			return 1;
		}
		burn(0);
	}
	if (!strcmp(argv[1], "exec")) {
		len = readlink("/proc/self/exe", exec_path, sizeof(exec_path) - 32);
		if (len < 0)
			return 1;
		exec_path[len] = 0;
		snprintf(exec_path + len, 32, "_exec");
		argv[0] = exec_path;
		argv[1] = "exit";
		execv(exec_path, argv);
		perror("exit_worker: exec");
		return 1;
	}
	return 0;
}
