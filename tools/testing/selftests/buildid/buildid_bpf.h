/* SPDX-License-Identifier: GPL-2.0 */
/* For the selftests that load BPF objects (they link libbpf; the others do not). */
#ifndef BUILDID_SELFTEST_BPF_H
#define BUILDID_SELFTEST_BPF_H

#include <string.h>
#include <bpf/libbpf.h>

/* The map of @obj's .bss: its globals, which the tests read and set; or NULL. */
static inline struct bpf_map *bss_map_of(struct bpf_object *obj)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj) {
		const char *name = bpf_map__name(map);
		size_t len = strlen(name);

		if (len >= 4 && !strcmp(name + len - 4, ".bss"))
			return map;
	}
	return NULL;
}

#endif
