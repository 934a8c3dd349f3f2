// SPDX-License-Identifier: GPL-2.0
/*
 * Host harness for the C reference implementation of lib/buildid.c.
 *
 * build.rs copies the kernel tree's lib/buildid.c (unmodified) to
 * $OUT_DIR/buildid_ref.c; it is #included here so that its static functions
 * (__build_id_parse(), parse_build_id(), the freader) can be called directly,
 * and it is compiled against the fake kernel headers in shim/include, which
 * model a file, its page cache and __kernel_read() (see shim_model.h).
 */

#include <stdlib.h>
#include <string.h>

#include <shim_model.h>

/* Keep the reference implementation's exported symbols in their own namespace. */
#define build_id_parse		cref_build_id_parse
#define build_id_parse_file	cref_build_id_parse_file
#define build_id_parse_nofault	cref_build_id_parse_nofault
#define build_id_parse_buf	cref_build_id_parse_buf

#include "buildid_ref.c"

/*
 * lib/buildid.c bounds the note headers one parse reads (MAX_NOTE_CNT) since
 * "lib/buildid: bound the note walk"; the C before it takes no budget.
 */
#ifdef MAX_NOTE_CNT
#define SHIM_PARSE_NOTES(r, id, size, off, sz, budget) \
	parse_build_id(r, id, size, off, sz, &(budget))
#else
#define MAX_NOTE_CNT 0
#define SHIM_PARSE_NOTES(r, id, size, off, sz, budget) \
	((void)(budget), parse_build_id(r, id, size, off, sz))
#endif

#include <linux/pagemap.h>
#include <linux/secretmem.h>

_Thread_local unsigned long shim_warn_count;

/* The model the current call works on (kunmap_local() only gets an address). */
static _Thread_local struct shim_model *shim_current;

struct folio {
	struct shim_model *model;
	unsigned long long index;	/* in units of the folio size */
	bool uptodate;
};

static unsigned long long shim_nr_folios(const struct shim_model *m)
{
	return m->size / m->folio_size + (m->size % m->folio_size != 0);
}

struct folio *filemap_get_folio(struct address_space *mapping, pgoff_t index)
{
	struct shim_model *m = mapping->model;
	unsigned long long k = index / (m->folio_size >> PAGE_SHIFT);
	unsigned long long n = m->lookups++;
	struct folio *folio;

	if (n < 64 && (m->evict_mask >> n & 1))
		return ERR_PTR(-ENOENT);
	/* Folios past the end of the file never exist. */
	if (k >= shim_nr_folios(m) || k >= m->cache_len || !m->cache[k])
		return ERR_PTR(-ENOENT);
	folio = malloc(sizeof(*folio));
	if (!folio)
		abort();
	folio->model = m;
	folio->index = k;
	folio->uptodate = m->cache[k] == 1;
	m->folio_gets++;
	return folio;
}

bool folio_test_uptodate(const struct folio *folio)
{
	return folio->uptodate;
}

loff_t folio_pos(const struct folio *folio)
{
	return (loff_t)(folio->index * folio->model->folio_size);
}

size_t folio_size(const struct folio *folio)
{
	return folio->model->folio_size;
}

void folio_put(struct folio *folio)
{
	folio->model->folio_puts++;
	free(folio);
}

void *kmap_local_folio(struct folio *folio, size_t offset)
{
	struct shim_model *m = folio->model;

	m->kmaps++;
	return m->image + folio->index * m->folio_size + offset;
}

void kunmap_local(const void *addr)
{
	(void)addr;
	shim_current->kunmaps++;
}

bool secretmem_mapping(struct address_space *mapping)
{
	return mapping->model->secretmem;
}

ssize_t __kernel_read(struct file *file, void *buf, size_t count, loff_t *pos)
{
	struct shim_model *m = file->f_mapping->model;
	loff_t p = *pos;
	size_t n;

	if (m->trace_len < m->trace_cap) {
		m->trace[m->trace_len].pos = p;
		m->trace[m->trace_len].count = count;
	}
	m->trace_len++;

	/*
	 * __kernel_read() has no rw_verify_area() check: at a negative offset, or
	 * one near LLONG_MAX, tmpfs reads nothing (KUnit's
	 * buildid_tmpfs_negative_offsets), which the unsigned comparison gives.
	 */
	if ((unsigned long long)p >= m->size)
		return 0;
	n = m->size - p < count ? m->size - p : count;
	memcpy(buf, m->data + p, n);
	*pos = p + n;
	return n;
}

static int shim_begin(struct shim_model *m)
{
	unsigned long long nr;

	/* The Rust side validates this; a bad model is a harness bug. */
	if (m->folio_size < PAGE_SIZE || (m->folio_size & (m->folio_size - 1)))
		abort();
	nr = shim_nr_folios(m);
	shim_current = m;
	shim_warn_count = 0;
	m->trace_len = 0;
	m->folio_gets = m->folio_puts = m->kmaps = m->kunmaps = 0;
	m->warns = 0;
	m->lookups = 0;
	m->image = NULL;
	if (nr) {
		m->image = calloc(nr, m->folio_size);
		if (!m->image)
			return -ENOMEM;
		memcpy(m->image, m->data, m->size);
	}
	return 0;
}

static void shim_end(struct shim_model *m)
{
	free(m->image);
	m->image = NULL;
	m->warns = shim_warn_count;
	shim_current = NULL;
}

/* __build_id_parse() on the model, in either mode. */
int shim_build_id_parse(struct shim_model *m, int may_fault,
			unsigned char *build_id, __u32 *size)
{
	struct address_space mapping = { .model = m };
	struct inode inode = { .i_mode = S_IFREG };
	struct file file = { .f_mapping = &mapping, .f_inode = &inode };
	int ret = shim_begin(m);

	if (!ret)
		ret = __build_id_parse(&file, build_id, size, may_fault);
	shim_end(m);
	return ret;
}

/* The exported entry points: 0 build_id_parse(), 1 build_id_parse_nofault(),
 * 2 build_id_parse_file(). */
int shim_build_id_parse_entry(struct shim_model *m, int entry,
			      unsigned char *build_id, __u32 *size)
{
	struct address_space mapping = { .model = m };
	struct inode inode = { .i_mode = S_IFREG };
	struct file file = { .f_mapping = &mapping, .f_inode = &inode };
	struct vm_area_struct vma = { .vm_file = &file };
	int ret = shim_begin(m);

	if (!ret) {
		if (entry == 0)
			ret = build_id_parse(&vma, build_id, size);
		else if (entry == 1)
			ret = build_id_parse_nofault(&vma, build_id, size);
		else
			ret = build_id_parse_file(&file, build_id, size);
	}
	shim_end(m);
	return ret;
}

/* build_id_parse{,_nofault}() on a VMA without a file. */
int shim_build_id_parse_anon_vma(int nofault)
{
	struct vm_area_struct vma = { .vm_file = NULL };
	unsigned char build_id[BUILD_ID_SIZE_MAX];
	__u32 size;

	return nofault ? build_id_parse_nofault(&vma, build_id, &size)
		       : build_id_parse(&vma, build_id, &size);
}

/* parse_build_id() with a file-backed freader, in either mode. */
int shim_parse_notes_file(struct shim_model *m, int may_fault, loff_t note_off,
			  __u32 note_size, unsigned char *build_id, __u32 *size)
{
	struct address_space mapping = { .model = m };
	struct inode inode = { .i_mode = S_IFREG };
	struct file file = { .f_mapping = &mapping, .f_inode = &inode };
	char buf[MAX_FREADER_BUF_SZ];
	u32 notes_left = MAX_NOTE_CNT;
	struct freader r;
	int ret = shim_begin(m);

	if (!ret) {
		freader_init_from_file(&r, buf, sizeof(buf), &file, may_fault);
		ret = SHIM_PARSE_NOTES(&r, build_id, size, note_off, note_size, notes_left);
		freader_cleanup(&r);
	}
	shim_end(m);
	return ret;
}

/* parse_build_id() with a memory freader of data_sz bytes. */
int shim_parse_notes_mem(const char *data, __u64 data_sz, loff_t note_off,
			 __u32 note_size, unsigned char *build_id, __u32 *size,
			 unsigned long *warns)
{
	u32 notes_left = MAX_NOTE_CNT;
	struct freader r;
	int ret;

	shim_warn_count = 0;
	freader_init_from_mem(&r, data, data_sz);
	ret = SHIM_PARSE_NOTES(&r, build_id, size, note_off, note_size, notes_left);
	freader_cleanup(&r);
	*warns = shim_warn_count;
	return ret;
}

/* build_id_parse_buf() itself. */
int shim_build_id_parse_buf(const void *buf, unsigned char *build_id,
			    __u32 buf_size, unsigned long *warns)
{
	int ret;

	shim_warn_count = 0;
	ret = build_id_parse_buf(buf, build_id, buf_size);
	*warns = shim_warn_count;
	return ret;
}

/* BUILD_ID_SIZE_MAX as defined by the kernel tree's <linux/buildid.h>. */
unsigned int shim_build_id_size_max(void)
{
	return BUILD_ID_SIZE_MAX;
}
