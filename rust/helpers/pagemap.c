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

size_t rust_helper_folio_size(struct folio *folio)
{
	return folio_size(folio);
}

void *rust_helper_folio_address(const struct folio *folio)
{
	return folio_address(folio);
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
