// SPDX-License-Identifier: GPL-2.0

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/pagemap.h>

void rust_helper_folio_get(struct folio *folio)
{
	folio_get(folio);
}

void rust_helper_folio_put(struct folio *folio)
{
	folio_put(folio);
}

void rust_helper_memcpy_from_folio(char *to, struct folio *folio, size_t offset,
				   size_t len)
{
	memcpy_from_folio(to, folio, offset, len);
}

/*
 * filemap_get_folio() for a reader of the folio's bytes: the referenced
 * folio that caches @index if it is uptodate, else NULL; its file position,
 * size and linear-map address in @pos, @size and @addr (NULL with
 * CONFIG_HIGHMEM, where page_address() may take a lock that a lookup in NMI
 * must not: readers map highmem folios with kmap_local_folio()).
 *
 * Page cache readers make one call into C per folio instead of five: with
 * a helper for each step, a nofault build ID parse took 2 to 7% longer on
 * the benchmark kernel.
 */
struct folio *rust_helper_filemap_get_uptodate_folio(struct address_space *mapping,
						     pgoff_t index, loff_t *pos,
						     size_t *size, void **addr)
{
	struct folio *folio = filemap_get_folio(mapping, index);

	if (IS_ERR(folio))
		return NULL;
	if (!folio_test_uptodate(folio)) {
		folio_put(folio);
		return NULL;
	}
	*pos = folio_pos(folio);
	*size = folio_size(folio);
#ifdef CONFIG_HIGHMEM
	*addr = NULL;
#else
	*addr = folio_address(folio);
#endif
	return folio;
}
