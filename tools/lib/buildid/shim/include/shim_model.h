/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-memory "file" behind the fake struct file of the shim, shared with
 * the Rust side (tools/lib/buildid/src/cref.rs mirrors this layout with
 * #[repr(C)]; keep them in sync).
 */
#ifndef SHIM_MODEL_H
#define SHIM_MODEL_H

/* One recorded __kernel_read() call. */
struct shim_read {
	long long pos;
	unsigned long long count;
};

struct shim_model {
	/* Inputs. */
	const unsigned char *data;	/* file contents */
	unsigned long long size;	/* i_size */
	unsigned long long folio_size;	/* power of two, >= PAGE_SIZE */
	/* Per folio index: 0 absent, 1 uptodate, 2 present but !uptodate. */
	const unsigned char *cache;
	unsigned long long cache_len;
	int secretmem;			/* secretmem_mapping() result */
	int reserved;
	struct shim_read *trace;	/* buffer for __kernel_read() calls */
	unsigned long long trace_cap;
	/*
	 * Eviction schedule: page cache lookup n (counted from 0 in each call)
	 * finds nothing when n < 64 and bit n is set, as if the folio had just
	 * been evicted.
	 */
	unsigned long long evict_mask;

	/* Outputs. */
	unsigned long long trace_len;	/* number of calls (may exceed trace_cap) */
	long long folio_gets;		/* successful filemap_get_folio() */
	long long folio_puts;
	long long kmaps;
	long long kunmaps;
	unsigned long long warns;	/* WARN_ON() hits */
	unsigned long long lookups;	/* filemap_get_folio() calls */

	/* Private: data zero-padded to whole folios, for kmap_local_folio(). */
	unsigned char *image;
};

#endif /* SHIM_MODEL_H */
