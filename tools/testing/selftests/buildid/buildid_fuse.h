/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A FUSE server, spoken to over /dev/fuse without libfuse, that serves the
 * regular files of one directory read-only and can stop answering reads:
 * a hung server, on demand.  Files named *.img are opened for direct I/O,
 * so that every read of them, a loop device's included, reaches the server.
 */
#ifndef BUILDID_FUSE_H
#define BUILDID_FUSE_H

#include <stdbool.h>
#include <sys/types.h>

/* Shared with the server process, which writes what the test reads with fuse_held*(). */
struct fuse_control {
	/* Set: reads are held, not answered; cleared: the held ones are answered. */
	int hang;
	/* How many reads are held now. */
	int held;
	/* Bit n set: a read of the file with node ID n + 2 is held. */
	unsigned long held_nodes;
};

struct fuse_server {
	pid_t pid;
	char mnt[4096];
	struct fuse_control *control;
};

/* Mounts a server of @dir's files on @mnt (made if missing). 0 or -errno. */
int fuse_serve(struct fuse_server *srv, const char *dir, const char *mnt);
/* Holds every read from now on. */
void fuse_hang(struct fuse_server *srv);
/* Answers the held reads, and the later ones; false if they are still held after 10 s. */
bool fuse_resume(struct fuse_server *srv);
/* How many reads are held now. */
int fuse_held(struct fuse_server *srv);
/* Bit n set: a read of the n-th file of the served directory (fuse_node_index()) is held. */
unsigned long fuse_held_nodes(struct fuse_server *srv);
/* The node ID of @name's file, as held_nodes counts it: its index in @dir's listing. */
int fuse_node_index(const char *dir, const char *name);
/* Stops the server (which aborts the connection) and detaches its mount. */
void fuse_stop(struct fuse_server *srv);

#endif
