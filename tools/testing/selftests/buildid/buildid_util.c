// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the build ID selftests.  Everything that computes an
 * expected build ID lives here and never asks the kernel: linked files are
 * read through their section headers, crafted files carry the ID they were
 * written with.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "buildid_util.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

static unsigned char *read_whole(const char *path, size_t *len)
{
	unsigned char *buf = NULL;
	struct stat st;
	size_t done = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || st.st_size <= 0)
		goto out;
	buf = malloc(st.st_size);
	if (!buf)
		goto out;
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + done, st.st_size - done);

		if (n <= 0) {
			free(buf);
			buf = NULL;
			goto out;
		}
		done += n;
	}
	*len = done;
out:
	close(fd);
	return buf;
}

static size_t align4(size_t v)
{
	return (v + 3) & ~(size_t)3;
}

/* Offset of the GNU build ID note inside [off, off + size), or -ENOENT. */
static long find_gnu_note(const unsigned char *buf, size_t len, uint64_t off,
			  uint64_t size, struct build_id *id)
{
	uint64_t end = off + size;

	if (off > len || size > len - off)
		return -EINVAL;
	while (end - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		uint64_t name = off + sizeof(nh), desc;

		memcpy(&nh, buf + off, sizeof(nh));
		desc = name + align4(nh.n_namesz);
		if (desc > end || nh.n_descsz > end - desc)
			return -EINVAL;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(buf + name, "GNU", 4)) {
			if (!nh.n_descsz || nh.n_descsz > BUILD_ID_MAX)
				return -EINVAL;
			if (id) {
				id->size = nh.n_descsz;
				memcpy(id->data, buf + desc, nh.n_descsz);
			}
			return off;
		}
		off = desc + align4(nh.n_descsz);
	}
	return -ENOENT;
}

static long sections_build_id(const unsigned char *buf, size_t len, struct build_id *id)
{
	uint64_t shoff, shnum, shentsize, i;
	bool elf64;

	if (len < EI_NIDENT || memcmp(buf, ELFMAG, SELFMAG))
		return -EINVAL;
	elf64 = buf[EI_CLASS] == ELFCLASS64;
	if (elf64) {
		Elf64_Ehdr eh;

		if (len < sizeof(eh))
			return -EINVAL;
		memcpy(&eh, buf, sizeof(eh));
		shoff = eh.e_shoff;
		shnum = eh.e_shnum;
		shentsize = eh.e_shentsize;
		if (shentsize != sizeof(Elf64_Shdr))
			return -EINVAL;
	} else {
		Elf32_Ehdr eh;

		if (len < sizeof(eh))
			return -EINVAL;
		memcpy(&eh, buf, sizeof(eh));
		shoff = eh.e_shoff;
		shnum = eh.e_shnum;
		shentsize = eh.e_shentsize;
		if (shentsize != sizeof(Elf32_Shdr))
			return -EINVAL;
	}
	if (shoff > len || shnum * shentsize > len - shoff)
		return -EINVAL;

	for (i = 0; i < shnum; i++) {
		uint64_t type, off, size;
		long found;

		if (elf64) {
			Elf64_Shdr sh;

			memcpy(&sh, buf + shoff + i * shentsize, sizeof(sh));
			type = sh.sh_type;
			off = sh.sh_offset;
			size = sh.sh_size;
		} else {
			Elf32_Shdr sh;

			memcpy(&sh, buf + shoff + i * shentsize, sizeof(sh));
			type = sh.sh_type;
			off = sh.sh_offset;
			size = sh.sh_size;
		}
		if (type != SHT_NOTE)
			continue;
		found = find_gnu_note(buf, len, off, size, id);
		if (found != -ENOENT)
			return found;
	}
	return -ENOENT;
}

int elf_build_id_from_sections(const char *path, struct build_id *id)
{
	unsigned char *buf;
	size_t len;
	long ret;

	buf = read_whole(path, &len);
	if (!buf)
		return -errno ?: -EIO;
	ret = sections_build_id(buf, len, id);
	free(buf);
	return ret < 0 ? ret : 0;
}

long elf_build_id_note_offset(const char *path)
{
	unsigned char *buf;
	size_t len;
	long ret;

	buf = read_whole(path, &len);
	if (!buf)
		return -errno ?: -EIO;
	ret = sections_build_id(buf, len, NULL);
	free(buf);
	return ret;
}

void build_id_hex(const struct build_id *id, char *buf, size_t len)
{
	unsigned int i;

	if (!len)
		return;
	buf[0] = '\0';
	for (i = 0; i < id->size && 2 * i + 2 < len; i++)
		snprintf(buf + 2 * i, 3, "%02x", id->data[i]);
}

bool build_id_equal(const struct build_id *a, const unsigned char *data,
		    unsigned int size)
{
	return a->size == size && !memcmp(a->data, data, size);
}

void build_id_pattern(struct build_id *id, unsigned int size, unsigned char seed)
{
	unsigned int i;

	id->size = size;
	memset(id->data, 0, sizeof(id->data));
	for (i = 0; i < size; i++)
		id->data[i] = seed + 17 * i + 1;
}

/* The size of @c's file; 0 if it cannot be laid out. */
static uint64_t elf_craft_size(const struct elf_craft *c)
{
	size_t ehsize = c->elf32 ? sizeof(Elf32_Ehdr) : sizeof(Elf64_Ehdr);
	size_t phentsize = c->elf32 ? sizeof(Elf32_Phdr) : sizeof(Elf64_Phdr);
	unsigned int phnum = c->id.size ? 2 : 1;
	size_t note_len = sizeof(Elf64_Nhdr) + 4 + align4(c->id.size);
	uint64_t size = c->size;

	if (c->phoff < ehsize)
		return 0;
	if (size < c->phoff + phnum * phentsize)
		size = c->phoff + phnum * phentsize;
	if (c->id.size && size < c->note_off + note_len)
		size = c->note_off + note_len;
	if (c->code && size < c->code_off + c->code_size)
		size = c->code_off + c->code_size;
	if (c->elf32 && size > UINT32_MAX)
		return 0;
	return size;
}

/* Where elf_craft_pieces() puts each piece: 0 or -errno. */
typedef int (*elf_put_fn)(void *ctx, uint64_t off, const void *buf, size_t len);

/*
 * The ELF header and program headers of elf_craft_pieces(), for one class:
 * the same fields in the 32- and 64-bit types.
 */
#define ELF_CRAFT_HEADERS(ehdr_t, phdr_t, class, machine)				\
({											\
	ehdr_t eh = {									\
		.e_type = ET_DYN, .e_machine = (machine), .e_version = EV_CURRENT,	\
		.e_phoff = c->phoff, .e_ehsize = ehsize,				\
		.e_phentsize = phentsize, .e_phnum = phnum,				\
	};										\
	phdr_t ph[2] = {								\
		{ .p_type = PT_LOAD, .p_filesz = size, .p_memsz = size,			\
		  .p_flags = PF_R | PF_X, .p_align = 0x1000 },				\
		{ .p_type = PT_NOTE, .p_offset = c->note_off,				\
		  .p_vaddr = c->note_off, .p_filesz = note_len,				\
		  .p_memsz = note_len, .p_flags = PF_R, .p_align = 4 },		\
	};										\
											\
	memcpy(eh.e_ident, ELFMAG, SELFMAG);						\
	eh.e_ident[EI_CLASS] = (class);							\
	eh.e_ident[EI_DATA] = ELFDATA2LSB;						\
	eh.e_ident[EI_VERSION] = EV_CURRENT;						\
	put(ctx, 0, &eh, sizeof(eh)) ?: put(ctx, c->phoff, ph, phnum * phentsize);	\
})

/* Puts the pieces of @c's image, a file of @size bytes, through @put. */
static int elf_craft_pieces(const struct elf_craft *c, uint64_t size, elf_put_fn put, void *ctx)
{
	size_t ehsize = c->elf32 ? sizeof(Elf32_Ehdr) : sizeof(Elf64_Ehdr);
	size_t phentsize = c->elf32 ? sizeof(Elf32_Phdr) : sizeof(Elf64_Phdr);
	unsigned int phnum = c->id.size ? 2 : 1;
	size_t note_len = sizeof(Elf64_Nhdr) + 4 + align4(c->id.size);
	Elf64_Nhdr nh = { .n_namesz = 4, .n_descsz = c->id.size,
			  .n_type = NT_GNU_BUILD_ID };
	int err;

	err = c->elf32 ? ELF_CRAFT_HEADERS(Elf32_Ehdr, Elf32_Phdr, ELFCLASS32, EM_386) :
			 ELF_CRAFT_HEADERS(Elf64_Ehdr, Elf64_Phdr, ELFCLASS64, EM_X86_64);
	if (!err && c->id.size)
		err = put(ctx, c->note_off, &nh, sizeof(nh)) ?:
		      put(ctx, c->note_off + sizeof(nh), "GNU", 4) ?:
		      put(ctx, c->note_off + sizeof(nh) + 4, c->id.data, c->id.size);
	if (!err && c->code)
		err = put(ctx, c->code_off, c->code, c->code_size);
	return err;
}

static int put_memory(void *ctx, uint64_t off, const void *buf, size_t len)
{
	memcpy((unsigned char *)ctx + off, buf, len);
	return 0;
}

unsigned char *elf_craft_image(const struct elf_craft *c, size_t *len)
{
	uint64_t size = elf_craft_size(c);
	unsigned char *img;

	if (!size || size > SIZE_MAX)
		return NULL;
	img = calloc(1, size);
	if (!img)
		return NULL;
	elf_craft_pieces(c, size, put_memory, img);
	*len = size;
	return img;
}

/*
 * Writes whole pages, each read back and overlaid with its part of @buf:
 * a write of part of a page over a hole leaves the folio not uptodate on a
 * file system whose blocks are smaller than a page (ext4 with 1 KiB blocks),
 * and the nofault readers do not read such folios.
 */
static int put_file(void *ctx, uint64_t off, const void *buf, size_t len)
{
	int fd = *(int *)ctx;
	uint64_t page_off;

	for (page_off = off & ~4095ULL; page_off < off + len; page_off += 4096) {
		uint64_t from = off > page_off ? off : page_off;
		uint64_t to = off + len < page_off + 4096 ? off + len : page_off + 4096;
		unsigned char page[4096] = {};
		ssize_t n = pread(fd, page, sizeof(page), page_off);

		if (n < 0)
			return -errno;
		memcpy(page + (from - page_off), (const char *)buf + (from - off), to - from);
		if ((uint64_t)n < to - page_off)
			n = to - page_off;
		if (pwrite(fd, page, n, page_off) != n)
			return errno ? -errno : -EIO;
	}
	return 0;
}

int elf_craft_sparse_file(const char *path, const struct elf_craft *c)
{
	uint64_t size = elf_craft_size(c);
	int fd, err;

	if (!size)
		return -EINVAL;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0)
		return -errno;
	err = ftruncate(fd, size) ? -errno : elf_craft_pieces(c, size, put_file, &fd);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

int write_file(const char *path, const void *buf, size_t len)
{
	size_t done = 0;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);

		if (n < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		done += n;
	}
	return close(fd) ? -errno : 0;
}

int elf_craft_file(const char *path, const struct elf_craft *c)
{
	unsigned char *img;
	size_t len;
	int ret;

	img = elf_craft_image(c, &len);
	if (!img)
		return -EINVAL;
	ret = write_file(path, img, len);
	free(img);
	return ret;
}

int procmap_query(int maps_fd, uint64_t addr, struct procmap_query *q,
		  unsigned char *build_id, uint32_t build_id_size)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->query_addr = addr;
	q->build_id_addr = (uintptr_t)build_id;
	q->build_id_size = build_id_size;
	return ioctl(maps_fd, PROCMAP_QUERY, q) ? -errno : 0;
}

int maps_find(pid_t pid, uint64_t addr, struct mapping *m)
{
	char path[64], line[4096 + 256];
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		int name_at = 0;

		if (sscanf(line, "%llx-%llx %4s %llx %*s %*u %n", &start, &end,
			   m->perms, &off, &name_at) < 4)
			continue;
		if (addr < start || addr >= end)
			continue;
		m->start = start;
		m->end = end;
		m->offset = off;
		m->path[0] = '\0';
		if (name_at) {
			snprintf(m->path, sizeof(m->path), "%s", line + name_at);
			m->path[strcspn(m->path, "\n")] = '\0';
		}
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

int64_t file_offset_of(const void *addr)
{
	struct mapping m;

	if (maps_find(getpid(), (uintptr_t)addr, &m))
		return -1;
	return (uintptr_t)addr - m.start + m.offset;
}

int file_page_cached(const char *path, uint64_t off)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char vec = 0;
	void *map;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	off &= ~(uint64_t)(page - 1);
	map = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, off);
	ret = map == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	/* mincore() reports the page cache for a file mapping never faulted in. */
	if (mincore(map, page, &vec))
		ret = -errno;
	munmap(map, page);
	return ret ?: (vec & 1);
}

/* MADV_PAGEOUT every mapping of @path in this process. */
static void page_out_mappings(const char *path)
{
	char line[4096 + 256];
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end;
		int name_at = 0;

		if (sscanf(line, "%llx-%llx %*s %*s %*s %*u %n", &start, &end, &name_at) < 2 ||
		    !name_at)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line + name_at, path))
			continue;
		madvise((void *)(uintptr_t)start, end - start, MADV_PAGEOUT);
	}
	fclose(f);
}

#define EVICT_ROUNDS 20

bool evict_file(const char *path, uint64_t off)
{
	int fd, round;

	/*
	 * Both calls skip a folio that someone holds for a moment (reclaim
	 * or compaction isolating it, a racing lock): page 0 of a file just
	 * written on XFS once stayed cached after one round.  A reference
	 * that stays, a leak, still fails every round.
	 */
	for (round = 0; round < EVICT_ROUNDS; round++) {
		if (round)
			usleep(10000);
		page_out_mappings(path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return false;
		fdatasync(fd);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
		if (file_page_cached(path, off) == 0)
			return true;
	}
	return false;
}

int copy_file(const char *from, const char *to)
{
	unsigned char *buf;
	size_t len;
	int ret;

	buf = read_whole(from, &len);
	if (!buf)
		return -errno ?: -EIO;
	ret = write_file(to, buf, len);
	free(buf);
	return ret;
}

int remove_tree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

const char *self_dir(void)
{
	static char dir[PATH_MAX];

	if (!dir[0]) {
		ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);

		if (n <= 0)
			return ".";
		dir[n] = '\0';
		dirname(dir);
	}
	return dir;
}

const char *test_file(const char *name)
{
	static char path[4][PATH_MAX + 64];
	static unsigned int next;
	char *p = path[next++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", self_dir(), name);
	return p;
}

const char *scratch_dir(void)
{
	const char *dir = getenv("BUILDID_SCRATCH_DIR");

	return dir && *dir ? dir : self_dir();
}

int drop_all_caches(void)
{
	int fd, err = 0;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "3", 1) != 1)
		err = -errno;
	close(fd);
	return err;
}

int fs_type_of(const char *path, char *type, size_t len)
{
	char real[PATH_MAX], dir[PATH_MAX], fs[64];
	size_t best = 0;
	int ret = -ENOENT;
	FILE *f;

	if (!realpath(path, real))
		return -errno;
	f = fopen("/proc/self/mounts", "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%*s %4095s %63s %*[^\n]\n", dir, fs) == 2) {
		size_t n = strlen(dir);

		if (strncmp(real, dir, n) || (real[n] != '/' && real[n] && n > 1))
			continue;
		if (n >= best) {
			best = n;
			snprintf(type, len, "%s", fs);
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

/* Writes @value to the sysctl file @path; its old value, or -errno. */
static long sysctl_swap(const char *path, long value)
{
	char buf[32] = {}, *end;
	long old;
	int fd, n;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	errno = 0;
	if (read(fd, buf, sizeof(buf) - 1) <= 0)
		goto fail;
	old = strtol(buf, &end, 10);
	if (end == buf || old < 0 || *end != '\n') {
		errno = EBADMSG;
		goto fail;
	}
	n = snprintf(buf, sizeof(buf), "%ld\n", value);
	if (pwrite(fd, buf, n, 0) != n)
		goto fail;
	close(fd);
	return old;
fail:
	old = errno ? -errno : -EIO;
	close(fd);
	return old;
}

int buildid_cache_set(int on)
{
	return sysctl_swap("/proc/sys/kernel/buildid_cache/enabled", !!on);
}

long buildid_cache_set_max_entries(long max)
{
	return sysctl_swap("/proc/sys/kernel/buildid_cache/max_entries", max);
}

int cache_switch_set(struct cache_switch *s, int on)
{
	int was = buildid_cache_set(on);

	if (was == -ENOENT && !on)
		return 0;
	if (was < 0)
		return was;
	if (!s->switched)
		s->was = was;
	s->switched = true;
	/* No fill queued before the switch lands after it. */
	return buildid_cache_drain();
}

void cache_switch_restore(struct cache_switch *s)
{
	if (s->switched)
		buildid_cache_set(s->was);
	s->switched = false;
}

/* A file of debugfs, mounting debugfs if needed. */
static int open_debugfs(const char *name, int flags)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/debug/%s", name);
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT &&
	    mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) == 0)
		fd = open(path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int open_cache_debugfs(const char *name, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "buildid_cache/%s", name);
	return open_debugfs(path, flags);
}

int loop_attach(const char *image, bool read_only, char *dev, size_t len)
{
	char cmd[PATH_MAX + 32];
	FILE *losetup;

	snprintf(cmd, sizeof(cmd), "losetup%s -f --show '%s'", read_only ? " -r" : "", image);
	losetup = popen(cmd, "re");
	if (!losetup)
		return -errno;
	if (!fgets(dev, len, losetup))
		dev[0] = '\0';
	dev[strcspn(dev, "\n")] = '\0';
	if (pclose(losetup) || !dev[0]) {
		dev[0] = '\0';
		errno = ENXIO;
		return -ENXIO;
	}
	return 0;
}

int loop_fs_mount(struct loop_fs *fs, const char *base, const char *fstype, unsigned int mib)
{
	char cmd[2 * PATH_MAX], opts[64];
	int fd;

	memset(fs, 0, sizeof(*fs));
	snprintf(fs->base, sizeof(fs->base), "%s", base);
	snprintf(fs->mnt, sizeof(fs->mnt), "%s/mnt", base);
	snprintf(fs->image, sizeof(fs->image), "%s/fs.img", base);
	/* Only what mkfs and the test write takes memory: the image is sparse. */
	snprintf(opts, sizeof(opts), "size=%uM", mib + 64);
	if (mount("tmpfs", base, "tmpfs", 0, opts))
		return -errno;
	fd = open(fs->image, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)mib << 20) || close(fd))
		goto fail;
	snprintf(cmd, sizeof(cmd), "mkfs.%s -q '%s' >/dev/null 2>&1", fstype, fs->image);
	if (system(cmd)) {
		errno = ENOEXEC;
		goto fail;
	}
	if (loop_attach(fs->image, false, fs->loop_dev, sizeof(fs->loop_dev)))
		goto fail;
	if (mkdir(fs->mnt, 0700) || mount(fs->loop_dev, fs->mnt, fstype, 0, NULL)) {
		fs->mnt[0] = '\0';
		goto fail;
	}
	return 0;
fail:
	fd = -errno;
	loop_fs_umount(fs);
	return fd;
}

int loop_fs_umount(struct loop_fs *fs)
{
	char cmd[128];
	int err = 0;

	if (fs->mnt[0] && umount(fs->mnt) && !err)
		err = -errno;
	if (fs->loop_dev[0]) {
		snprintf(cmd, sizeof(cmd), "losetup -d '%s'", fs->loop_dev);
		if (system(cmd) && !err)
			err = -EBUSY;
	}
	if (fs->base[0] && umount(fs->base) && !err)
		err = -errno;
	memset(fs, 0, sizeof(*fs));
	return err;
}

long file_pages_cached(int fd, uint64_t size)
{
	long page = sysconf(_SC_PAGESIZE), pages = (size + page - 1) / page, i, cached = 0;
	unsigned char *vec;
	void *map;

	if (!size)
		return 0;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	vec = calloc(pages, 1);
	if (!vec || mincore(map, size, vec)) {
		cached = vec ? -errno : -ENOMEM;
		pages = 0;
	}
	for (i = 0; i < pages; i++)
		cached += vec[i] & 1;
	free(vec);
	munmap(map, size);
	return cached;
}

#define PAGEMAP_PRESENT		(1ULL << 63)
#define PAGEMAP_PFN		((1ULL << 55) - 1)
#define KPF_COMPOUND_HEAD	15
#define KPF_COMPOUND_TAIL	16

unsigned int file_folio_orders(int fd, uint64_t size)
{
	long page = sysconf(_SC_PAGESIZE), pages = (size + page - 1) / page, i;
	int pagemap = -1, kpageflags = -1;
	unsigned int orders = 0, run = 0;
	unsigned char *map;

	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return 0;
	/* Faults every page in, so that pagemap has its frame. */
	if (madvise(map, size, MADV_POPULATE_READ)) {
		munmap(map, size);
		return 0;
	}
	pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	kpageflags = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	/* Going one past the last page ends the last folio's run. */
	for (i = 0; pagemap >= 0 && kpageflags >= 0 && i <= pages; i++) {
		uint64_t entry = 0, flags = 0;

		if (i < pages) {
			if (pread(pagemap, &entry, sizeof(entry),
				  ((uintptr_t)map / page + i) * sizeof(entry)) != sizeof(entry) ||
			    !(entry & PAGEMAP_PRESENT) ||
			    pread(kpageflags, &flags, sizeof(flags),
				  (entry & PAGEMAP_PFN) * sizeof(flags)) != sizeof(flags))
				flags = 0;
		}
		if (run && (flags & (1ULL << KPF_COMPOUND_TAIL))) {
			run++;
			continue;
		}
		/* A folio ended at the page before: a lone page is order 0. */
		if (run)
			orders |= 1u << (31 - __builtin_clz(run));
		/* A tail here belongs to a folio that starts before the file. */
		run = (entry & PAGEMAP_PRESENT) && !(flags & (1ULL << KPF_COMPOUND_TAIL));
	}
	if (pagemap >= 0)
		close(pagemap);
	if (kpageflags >= 0)
		close(kpageflags);
	munmap(map, size);
	return orders;
}

const unsigned char spin_code[7] = {
	0x48, 0x83, 0xef, 0x01,	/* loop: sub $1,%rdi */
	0x75, 0xfa,		/* jne loop */
	0xc3,			/* ret */
};

bool file_contains(const char *path, const char *text)
{
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return strstr(buf, text);
}

void fork_exits_then_exit(unsigned int n, const char *child_comm, int pid_fd)
{
	unsigned int i, outstanding = 0;

	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (!pid) {
			if (child_comm)
				prctl(PR_SET_NAME, child_comm);
			_exit(0);
		}
		if (pid < 0 || (pid_fd >= 0 && write(pid_fd, &pid, sizeof(pid)) != sizeof(pid)))
			_exit(1);
		if (++outstanding == 32) {
			wait(NULL);
			outstanding--;
		}
	}
	while (wait(NULL) > 0)
		;
	_exit(0);
}

int busy_anon_once(void)
{
	const size_t len = 16 * 4096;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	memset(p, 1, len);
	return munmap(p, len) ? -errno : 0;
}

int perf_cpu_clock_open(void)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1000000,
		.disabled = 1, .exclude_kernel = 1,
	};
	int fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int write_string(const char *path, const char *value)
{
	size_t len = strlen(value);
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, value, len) != (ssize_t)len)
		err = -errno;
	close(fd);
	return err;
}

int fault_injection_arm(const char *name, bool on)
{
	static const char * const armed[][2] = {
		{ "interval", "1\n" }, { "times", "-1\n" }, { "verbose", "0\n" },
		{ "space", "0\n" }, { "probability", "100\n" },
	};
	char path[128];
	unsigned int i;
	int fd, err;

	snprintf(path, sizeof(path), "%s/probability", name);
	fd = open_debugfs(path, O_WRONLY);
	if (fd < 0)
		return fd;
	close(fd);
	for (i = 0; i < ARRAY_SIZE(armed); i++) {
		/* Disarming only needs the probability back at 0. */
		if (!on && strcmp(armed[i][0], "probability"))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/debug/%s/%s", name, armed[i][0]);
		err = write_string(path, on ? armed[i][1] : "0\n");
		if (err)
			return err;
	}
	return 0;
}

int open_buildid_dev(void)
{
	int fd = open("/dev/buildid", O_RDONLY | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT && !system("modprobe rust_buildid"))
		fd = open("/dev/buildid", O_RDONLY | O_CLOEXEC);
	return fd;
}

long buildid_cache_stat(const char *name)
{
	char buf[1024], *p;
	size_t len = strlen(name);
	ssize_t n;
	int fd = open_cache_debugfs("stats", O_RDONLY);

	if (fd < 0)
		return fd;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n ? -errno : -EIO;
	buf[n] = '\0';
	for (p = buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ' ')
			return strtol(p + len + 1, NULL, 10);
	return -ENOENT;
}

/*
 * The file stays open: an open for write is a write-access grant, which
 * the cache counts in one of a few shared counters, and a fill in flight
 * of an inode that shares the drain file's counter would not be cached.
 */
int buildid_cache_drain(void)
{
	static int fd = -1;

	if (fd < 0)
		fd = open_cache_debugfs("drain", O_WRONLY);
	if (fd < 0)
		return fd;
	return write(fd, "1", 1) == 1 ? 0 : -EIO;
}

int buildid_cache_ask(const void *addr)
{
	unsigned char id[BUILD_ID_MAX];
	struct procmap_query q;
	int fd, ret;

	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = procmap_query(fd, (uintptr_t)addr, &q, id, sizeof(id));
	close(fd);
	if (!ret && !q.build_id_size)
		ret = -ENODATA;
	return ret;
}

/* PERF_RECORD_MMAP2 as the kernel writes it with attr.build_id set. */
struct mmap2_record {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint8_t build_id_size, reserved1;
	uint16_t reserved2;
	uint8_t build_id[BUILD_ID_MAX];
	uint32_t prot, flags;
	char filename[];
};

int perf_exec_mappings(char *const argv[], exec_mapping_fn fn, void *arg)
{
	enum { DATA_PAGES = 256 };
	struct perf_event_attr attr = {
		.size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY, .disabled = 1, .enable_on_exec = 1,
		.mmap = 1, .mmap2 = 1, .build_id = 1,
	};
	long page = sysconf(_SC_PAGESIZE);
	size_t ring_len = (DATA_PAGES + 1) * page;
	struct perf_event_mmap_page *meta;
	int go[2], fd, status, err = 0;
	uint64_t head, off;
	unsigned char *data;
	void *ring;
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	if (!pid) {
		char c;

		/* Exec only once the event is there, so that it sees every mapping. */
		close(go[1]);
		if (read(go[0], &c, 1) == 1)
			execvp(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	fd = syscall(__NR_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	ring = MAP_FAILED;
	if (fd >= 0)
		ring = mmap(NULL, ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		err = -errno;
		close(go[1]);
		waitpid(pid, &status, 0);
		if (fd >= 0)
			close(fd);
		return err;
	}
	if (write(go[1], "x", 1) != 1)
		err = -errno;
	close(go[1]);
	if (waitpid(pid, &status, 0) != pid)
		err = -errno;
	else if (!err && (!WIFEXITED(status) || WEXITSTATUS(status)))
		err = -ECHILD;

	meta = ring;
	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	data = (unsigned char *)ring + meta->data_offset;
	/* The ring never wrapped: every record is whole and in order. */
	if (!err && head > meta->data_size)
		err = -ENOSPC;
	for (off = 0; !err && off + sizeof(struct perf_event_header) <= head;) {
		const struct perf_event_header *h = (const void *)(data + off);
		const struct mmap2_record *r = (const void *)h;

		if (h->size < sizeof(*h) || off + h->size > head) {
			err = -EBADMSG;
			break;
		}
		if (h->type == PERF_RECORD_LOST) {
			err = -ENOSPC;
		} else if (h->type == PERF_RECORD_MMAP2 && h->size > sizeof(*r) &&
			 (r->prot & PROT_EXEC) && r->filename[0] == '/' &&
			 memchr(r->filename, '\0', h->size - sizeof(*r))) {
			bool has_id = h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID;
			unsigned int size = has_id ? r->build_id_size : 0;

			if (size > BUILD_ID_MAX) {
				err = -EBADMSG;
				break;
			}
			fn(arg, r->filename, r->addr, r->build_id, size);
		}
		off += h->size;
	}
	munmap(ring, ring_len);
	close(fd);
	return err;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Both sides of a pair run back to back, so what slows a whole round down
 * (another guest's load on the host, the host's frequency) cancels out of
 * its ratio, where it does not between the minima of different rounds.
 */
double paired_ratio(const uint64_t *num, const uint64_t *den, unsigned int n)
{
	double *ratio = calloc(n, sizeof(*ratio)), median;
	unsigned int r;

	if (!ratio || !n) {
		fprintf(stderr, "%s: %u rounds\n", __func__, n);
		exit(1);
	}
	for (r = 0; r < n; r++)
		ratio[r] = (double)num[r] / den[r];
	qsort(ratio, n, sizeof(ratio[0]), cmp_double);
	median = n % 2 ? ratio[n / 2] : (ratio[n / 2 - 1] + ratio[n / 2]) / 2;
	free(ratio);
	return median;
}

/* Sorts @runs; the minimum and the median, each divided by @per (operations per run). */
struct spread spread_of(uint64_t *runs, unsigned int n, double per)
{
	double median;

	qsort(runs, n, sizeof(runs[0]), cmp_u64);
	median = n % 2 ? runs[n / 2] : (runs[n / 2 - 1] + (double)runs[n / 2]) / 2;
	return (struct spread){ runs[0] / per, median / per };
}
