// SPDX-License-Identifier: GPL-2.0

#include <linux/highmem.h>
#include <linux/pagemap.h>

struct folio *rust_helper_filemap_get_folio(struct address_space *mapping,
					    pgoff_t index)
{
	return filemap_get_folio(mapping, index);
}

void rust_helper_folio_get(struct folio *folio)
{
	folio_get(folio);
}

void rust_helper_folio_put(struct folio *folio)
{
	folio_put(folio);
}

size_t rust_helper_folio_size(struct folio *folio)
{
	return folio_size(folio);
}

loff_t rust_helper_folio_pos(struct folio *folio)
{
	return folio_pos(folio);
}

bool rust_helper_folio_test_uptodate(struct folio *folio)
{
	return folio_test_uptodate(folio);
}

void rust_helper_memcpy_from_folio(char *to, struct folio *folio, size_t offset,
				   size_t len)
{
	memcpy_from_folio(to, folio, offset, len);
}
