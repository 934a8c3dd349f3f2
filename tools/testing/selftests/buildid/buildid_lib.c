// SPDX-License-Identifier: GPL-2.0
/*
 * The shared object that the build ID selftests dlopen(), map and probe.
 * It is linked several times: with SHA-1, MD5 and lld "fast" build IDs,
 * without one, and with its note moved beyond the first page.
 */
#include "buildid_probe.h"

DEFINE_PROBE_FUNC(buildid_lib_probe);
DEFINE_CALLER(buildid_lib_call);

int buildid_lib_value(int x)
{
	return 3 * x + 1;
}
