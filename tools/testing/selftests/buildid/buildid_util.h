/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space side of the build ID selftests: an ELF note reader that works
 * from the section headers (the kernel works from the program headers, so
 * the two do not share a mistake), an ELF writer for crafted files, and
 * PROCMAP_QUERY and /proc/self/maps helpers.
 */
#ifndef BUILDID_SELFTEST_UTIL_H
#define BUILDID_SELFTEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/fs.h>

#define BUILD_ID_MAX 20

struct build_id {
	unsigned int size;
	unsigned char data[BUILD_ID_MAX];
};

/* 0 and @id filled, -ENOENT without a build ID note, -errno otherwise. */
int elf_build_id_from_sections(const char *path, struct build_id *id);
void build_id_hex(const struct build_id *id, char *buf, size_t len);
bool build_id_equal(const struct build_id *a, const unsigned char *data,
		    unsigned int size);

/* Offset of the first SHT_NOTE section holding the GNU build ID, or -errno. */
long elf_build_id_note_offset(const char *path);

struct elf_craft {
	bool elf32;
	uint64_t phoff;		/* where the program headers go */
	uint64_t note_off;	/* where the build ID note goes */
	struct build_id id;	/* id.size == 0: no note at all */
	uint64_t size;		/* file size, at least the end of the note */
	uint64_t code_off;	/* optional machine code, e.g. for a PROT_EXEC map */
	const void *code;
	size_t code_size;
};

/* Lay out an ET_DYN file byte by byte; returns a malloc()ed image. */
unsigned char *elf_craft_image(const struct elf_craft *c, size_t *len);
int write_file(const char *path, const void *buf, size_t len);
int elf_craft_file(const char *path, const struct elf_craft *c);
/*
 * The same file written piece by piece over a hole of its size, then
 * synced (so that its pages are clean and can be evicted); 0 or -errno.
 */
int elf_craft_sparse_file(const char *path, const struct elf_craft *c);
void build_id_pattern(struct build_id *id, unsigned int size, unsigned char seed);

/* PROCMAP_QUERY for @addr in /proc/self/maps (@maps_fd); returns 0 or -errno. */
int procmap_query(int maps_fd, uint64_t addr, struct procmap_query *q,
		  unsigned char *build_id, uint32_t build_id_size);

struct mapping {
	uint64_t start, end, offset;
	char perms[5];
	char path[4096];
};

/* The /proc/<pid>/maps line covering @addr, parsed from the text. */
int maps_find(pid_t pid, uint64_t addr, struct mapping *m);
/* File offset of @addr according to the text of /proc/self/maps. */
int64_t file_offset_of(const void *addr);

/*
 * Page out every mapping of @path in this process and drop its clean pages
 * from the page cache; true if the page at file offset @off is gone.  Tries
 * again for about 200 ms before it returns false: a page that cannot go
 * (tmpfs, running code) costs the caller that long.
 */
bool evict_file(const char *path, uint64_t off);
/*
 * 1 if the page at file offset @off of @path is in the page cache, 0 if it
 * is not, -errno if that could not be found out (open, mmap or mincore
 * failed): callers compare with 1 or 0, so an error never reads as either.
 */
int file_page_cached(const char *path, uint64_t off);

int copy_file(const char *from, const char *to);
/* rm -rf @dir; returns the status of the command. */
int remove_tree(const char *dir);
/* Directory of the running executable (where the test files are built). */
const char *self_dir(void);
/* Full path of @name next to the running executable. */
const char *test_file(const char *name);
/* Directory for files the test writes; BUILDID_SCRATCH_DIR overrides. */
const char *scratch_dir(void);

/* sync, then drop clean page cache, dentries and inodes; 0 or -errno. */
int drop_all_caches(void);

/* File system type (as in /proc/self/mounts) of the mount holding @path. */
int fs_type_of(const char *path, char *type, size_t len);

/*
 * A new file system made by mkfs.@fstype on a loop device over a sparse
 * image of @mib MiB, which lives on a tmpfs mounted at @base (an existing
 * directory); the file system is mounted at @base/mnt.
 */
struct loop_fs {
	char base[PATH_MAX];
	char mnt[PATH_MAX + 8];
	char image[PATH_MAX + 16];
	char loop_dev[64];
};

/* Attaches @image to a free loop device, whose path goes to @dev; 0 or -errno. */
int loop_attach(const char *image, bool read_only, char *dev, size_t len);
/* 0, or -errno (-ENOEXEC: mkfs.@fstype failed or is not installed). */
int loop_fs_mount(struct loop_fs *fs, const char *base, const char *fstype, unsigned int mib);
/* Undoes loop_fs_mount() as far as it got; 0 or -errno of the first failure. */
int loop_fs_umount(struct loop_fs *fs);

/*
 * The number of pages of @fd's first @size bytes that are in the page
 * cache (mincore() of a mapping never faulted in), or -errno.
 */
long file_pages_cached(int fd, uint64_t size);
/*
 * The orders of the folios that cache @fd's first @size bytes, as a mask
 * (bit k: a folio of 2^k pages), from /proc/self/pagemap and
 * /proc/kpageflags; the pages are faulted in through a mapping that is
 * gone on return.  Needs CAP_SYS_ADMIN.  0 on failure (no folio at all).
 */
unsigned int file_folio_orders(int fd, uint64_t size);

/*
 * The build ID cache switch (/proc/sys/kernel/buildid_cache/enabled):
 * sets it and returns the old value, or -errno (-ENOENT without
 * CONFIG_BUILDID_CACHE).  Turning it off empties the cache.
 */
int buildid_cache_set(int on);
/* The same for the size limit (kernel.buildid_cache.max_entries). */
long buildid_cache_set_max_entries(long max);
/*
 * A test's changes of the switch: the first old value, to put back at the
 * end.  Tests of the reader turn the cache off, since a cached answer would
 * not read the file.
 */
struct cache_switch {
	bool switched;
	int was;
};

/*
 * buildid_cache_set() that remembers, then buildid_cache_drain(); 0 or -errno
 * (off without the cache is 0).
 */
int cache_switch_set(struct cache_switch *s, int on);
void cache_switch_restore(struct cache_switch *s);
/* Waits for the cache's queued fills, which hold file references. */
int buildid_cache_drain(void);
/*
 * Asks for the build ID of our mapping at @addr as a profiler would
 * (PROCMAP_QUERY, a sleepable parse), which fills the cache: mmap() does
 * not.  0 or -errno.
 */
int buildid_cache_ask(const void *addr);
/* Writes @value to the file at @path; 0 or -errno. */
int write_string(const char *path, const char *value);
/*
 * Arms the fault injection attributes /sys/kernel/debug/@name
 * (fail_make_request, failslab, ...) to fail every time, silently, or
 * disarms them; 0 or -errno (-ENOENT without CONFIG_FAULT_INJECTION_DEBUG_FS
 * or the attribute's option).
 */
int fault_injection_arm(const char *name, bool on);
/* A counter of /sys/kernel/debug/buildid_cache/stats ("hits", ...), or -errno. */
long buildid_cache_stat(const char *name);
/* /dev/buildid, loading the sample module if needed; the fd, or -1 with errno set. */
int open_buildid_dev(void);

/*
 * What perf record --buildid-mmap records: runs @argv (PATH searched) under
 * a perf event with attr.mmap2 and attr.build_id, enabled at its exec, and
 * calls @fn for each PERF_RECORD_MMAP2 of an executable file mapping, with
 * the build ID the kernel put in it (@size 0: none).  0, or -errno: the
 * event could not be opened, the command failed (-ECHILD), records were
 * lost (-ENOSPC) or malformed (-EBADMSG).
 */
typedef void (*exec_mapping_fn)(void *arg, const char *path, uint64_t addr,
				const unsigned char *build_id, unsigned int size);
int perf_exec_mappings(char *const argv[], exec_mapping_fn fn, void *arg);

/* x86-64 machine code that spins %rdi times, then returns: void spin(unsigned long). */
extern const unsigned char spin_code[7];

/*
 * What allocators do: mmap(), touch and munmap() 16 anonymous pages, which
 * holds mmap_lock for writing most of the time; 0 or -errno.
 */
int busy_anon_once(void);

/* Whether the first 4 KiB of the file at @path hold @text (false if unreadable). */
bool file_contains(const char *path, const char *text);

/*
 * The body of a process that forks @n children as fast as it can, each
 * exiting at once (renamed @child_comm first, unless NULL), with at most 32
 * not yet reaped; each child's pid goes to @pid_fd unless it is -1.  Exits
 * 0 once every child is reaped, 1 if a fork or a write failed.
 */
void fork_exits_then_exit(unsigned int n, const char *child_comm, int pid_fd);

/* A cpu-clock perf event of this thread, user mode, 1 kHz, disabled; the fd or -errno. */
int perf_cpu_clock_open(void);

/* Benchmarks: CLOCK_MONOTONIC, and the minimum and median of runs. */
uint64_t now_ns(void);
int cmp_u64(const void *a, const void *b);
struct spread {
	double min, median;
};

struct spread spread_of(uint64_t *runs, unsigned int n, double per);
/* The median of @num[r] / @den[r] over the @n rounds r, each pair timed in the same round. */
double paired_ratio(const uint64_t *num, const uint64_t *den, unsigned int n);

#endif
