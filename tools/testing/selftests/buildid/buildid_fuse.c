// SPDX-License-Identifier: GPL-2.0
/*
 * The FUSE server of buildid_fuse.h.  One process, one thread: it reads a
 * request, answers it or, for a read while the test says hang, keeps it
 * unanswered until the test says resume (and sends SIGUSR1 to get it out
 * of read(2)).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buildid_fuse.h"

#define MAX_FILES	(8 * sizeof(unsigned long))
#define MAX_HELD	256
#define MAX_READ	(128 * 1024)

struct held_read {
	uint64_t unique, nodeid, offset;
	uint32_t size;
};

struct server {
	int dev, dirfd, files;
	struct dirent **names;
	struct fuse_control *control;
	struct held_read held[MAX_HELD];
	int nr_held;
	char *data;
};

static int only_regular(const struct dirent *d)
{
	return d->d_type == DT_REG;
}

static void reply(struct server *s, uint64_t unique, int error, const void *data, size_t len)
{
	struct fuse_out_header out = {
		.len = sizeof(out) + (error ? 0 : len), .error = error, .unique = unique,
	};
	struct iovec iov[2] = {
		{ .iov_base = &out, .iov_len = sizeof(out) },
		{ .iov_base = (void *)data, .iov_len = error ? 0 : len },
	};

	/* ENOENT: the request was interrupted or the connection aborted. */
	if (writev(s->dev, iov, 2) < 0 && errno != ENOENT)
		perror("writev to /dev/fuse");
}

static int node_stat(struct server *s, uint64_t nodeid, struct fuse_attr *attr)
{
	struct stat st;

	memset(attr, 0, sizeof(*attr));
	if (nodeid == FUSE_ROOT_ID) {
		attr->ino = FUSE_ROOT_ID;
		attr->mode = S_IFDIR | 0755;
		attr->nlink = 2;
		return 0;
	}
	if (nodeid < 2 || nodeid - 2 >= (uint64_t)s->files ||
	    fstatat(s->dirfd, s->names[nodeid - 2]->d_name, &st, 0))
		return -ENOENT;
	attr->ino = nodeid;
	attr->size = st.st_size;
	attr->blocks = st.st_blocks;
	attr->mtime = st.st_mtim.tv_sec;
	attr->mtimensec = st.st_mtim.tv_nsec;
	attr->ctime = st.st_ctim.tv_sec;
	attr->ctimensec = st.st_ctim.tv_nsec;
	attr->mode = S_IFREG | 0444;
	attr->nlink = 1;
	attr->blksize = 4096;
	return 0;
}

static void answer_read(struct server *s, const struct held_read *r)
{
	ssize_t n = -1;
	int fd;

	fd = openat(s->dirfd, s->names[r->nodeid - 2]->d_name, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = pread(fd, s->data, r->size > MAX_READ ? MAX_READ : r->size, r->offset);
		close(fd);
	}
	reply(s, r->unique, n < 0 ? -EIO : 0, s->data, n < 0 ? 0 : n);
}

static void answer_held(struct server *s)
{
	int i;

	for (i = 0; i < s->nr_held; i++)
		answer_read(s, &s->held[i]);
	s->nr_held = 0;
	__atomic_store_n(&s->control->held_nodes, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&s->control->held, 0, __ATOMIC_RELEASE);
}

static void handle(struct server *s, const struct fuse_in_header *in, const void *arg)
{
	switch (in->opcode) {
	case FUSE_INIT: {
		const struct fuse_init_in *init = arg;
		struct fuse_init_out out = {
			.major = FUSE_KERNEL_VERSION, .minor = FUSE_KERNEL_MINOR_VERSION,
			.max_readahead = init->max_readahead, .max_background = 16,
			.congestion_threshold = 12, .max_write = MAX_READ, .time_gran = 1,
			.max_pages = MAX_READ / 4096,
		};

		reply(s, in->unique, 0, &out, sizeof(out));
		return;
	}
	case FUSE_LOOKUP: {
		struct fuse_entry_out out = { .entry_valid = 3600, .attr_valid = 3600 };
		int i;

		for (i = 0; i < s->files; i++)
			if (in->nodeid == FUSE_ROOT_ID && !strcmp(arg, s->names[i]->d_name))
				break;
		if (i == s->files || node_stat(s, i + 2, &out.attr)) {
			reply(s, in->unique, -ENOENT, NULL, 0);
			return;
		}
		out.nodeid = i + 2;
		reply(s, in->unique, 0, &out, sizeof(out));
		return;
	}
	case FUSE_GETATTR: {
		struct fuse_attr_out out = { .attr_valid = 3600 };
		int err = node_stat(s, in->nodeid, &out.attr);

		reply(s, in->unique, err, &out, sizeof(out));
		return;
	}
	case FUSE_OPEN: {
		const char *name = in->nodeid >= 2 && in->nodeid - 2 < (uint64_t)s->files ?
				   s->names[in->nodeid - 2]->d_name : NULL;
		struct fuse_open_out out = { .fh = in->nodeid };
		size_t len = name ? strlen(name) : 0;

		if (!name) {
			reply(s, in->unique, -EISDIR, NULL, 0);
			return;
		}
		if (len > 4 && !strcmp(name + len - 4, ".img"))
			out.open_flags = FOPEN_DIRECT_IO;
		reply(s, in->unique, 0, &out, sizeof(out));
		return;
	}
	case FUSE_READ: {
		const struct fuse_read_in *read_in = arg;
		struct held_read r = {
			.unique = in->unique, .nodeid = in->nodeid,
			.offset = read_in->offset, .size = read_in->size,
		};

		if (in->nodeid < 2 || in->nodeid - 2 >= (uint64_t)s->files) {
			reply(s, in->unique, -EIO, NULL, 0);
		} else if (__atomic_load_n(&s->control->hang, __ATOMIC_ACQUIRE) &&
			   s->nr_held < MAX_HELD) {
			s->held[s->nr_held++] = r;
			__atomic_fetch_or(&s->control->held_nodes, 1UL << (in->nodeid - 2),
					  __ATOMIC_RELEASE);
			__atomic_store_n(&s->control->held, s->nr_held, __ATOMIC_RELEASE);
		} else {
			answer_read(s, &r);
		}
		return;
	}
	case FUSE_STATFS: {
		struct fuse_statfs_out out = { .st = { .bsize = 4096, .namelen = 255 } };

		reply(s, in->unique, 0, &out, sizeof(out));
		return;
	}
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_FLUSH:
	case FUSE_OPENDIR:
		reply(s, in->unique, 0, NULL, 0);
		return;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		return;
	default:
		reply(s, in->unique, -ENOSYS, NULL, 0);
	}
}

static void wake(int sig)
{
}

static void serve(struct server *s)
{
	size_t size = MAX_READ + 4096;
	char *buf = malloc(size);
	struct sigaction sa = { .sa_handler = wake };

	/* No SA_RESTART: SIGUSR1 gets the server out of read(2). */
	sigaction(SIGUSR1, &sa, NULL);
	s->data = malloc(MAX_READ);
	if (!buf || !s->data)
		_exit(1);
	for (;;) {
		ssize_t n;

		if (!__atomic_load_n(&s->control->hang, __ATOMIC_ACQUIRE) && s->nr_held)
			answer_held(s);
		n = read(s->dev, buf, size);
		if (n < 0 && errno == ENODEV)
			_exit(0);
		if (n < (ssize_t)sizeof(struct fuse_in_header))
			continue;
		handle(s, (struct fuse_in_header *)buf, buf + sizeof(struct fuse_in_header));
	}
}

int fuse_node_index(const char *dir, const char *name)
{
	struct dirent **names;
	int n = scandir(dir, &names, only_regular, alphasort), i, index = -ENOENT;

	for (i = 0; i < n; i++) {
		if (!strcmp(names[i]->d_name, name))
			index = i;
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	return index;
}

int fuse_serve(struct fuse_server *srv, const char *dir, const char *mnt)
{
	struct server s = { .nr_held = 0 };
	char opts[128];
	int err;

	memset(srv, 0, sizeof(*srv));
	snprintf(srv->mnt, sizeof(srv->mnt), "%s", mnt);
	srv->control = mmap(NULL, sizeof(*srv->control), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (srv->control == MAP_FAILED)
		return -errno;
	s.control = srv->control;
	s.files = scandir(dir, &s.names, only_regular, alphasort);
	if (s.files < 0 || s.files > (int)MAX_FILES)
		return -EINVAL;
	s.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	s.dev = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (s.dirfd < 0 || s.dev < 0)
		return -errno;
	if (mkdir(mnt, 0755) && errno != EEXIST)
		return -errno;
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other",
		 s.dev);
	if (mount("buildid-fuse", mnt, "fuse", MS_NOSUID | MS_NODEV, opts))
		return -errno;
	srv->pid = fork();
	if (srv->pid < 0) {
		err = -errno;
		umount2(mnt, MNT_DETACH);
		return err;
	}
	if (!srv->pid) {
		/* A test killed on timeout must not leave reads held for ever. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
			_exit(1);
		serve(&s);
	}
	close(s.dev);
	close(s.dirfd);
	return 0;
}

void fuse_hang(struct fuse_server *srv)
{
	__atomic_store_n(&srv->control->hang, 1, __ATOMIC_RELEASE);
}

int fuse_held(struct fuse_server *srv)
{
	return __atomic_load_n(&srv->control->held, __ATOMIC_ACQUIRE);
}

unsigned long fuse_held_nodes(struct fuse_server *srv)
{
	return __atomic_load_n(&srv->control->held_nodes, __ATOMIC_ACQUIRE);
}

bool fuse_resume(struct fuse_server *srv)
{
	struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	int i;

	__atomic_store_n(&srv->control->hang, 0, __ATOMIC_RELEASE);
	for (i = 0; i < 1000 && fuse_held(srv); i++) {
		kill(srv->pid, SIGUSR1);
		nanosleep(&tick, NULL);
	}
	return !fuse_held(srv);
}

void fuse_stop(struct fuse_server *srv)
{
	if (srv->pid > 0) {
		kill(srv->pid, SIGKILL);
		waitpid(srv->pid, NULL, 0);
		srv->pid = 0;
	}
	if (srv->mnt[0])
		umount2(srv->mnt, MNT_DETACH);
	srv->mnt[0] = '\0';
}
