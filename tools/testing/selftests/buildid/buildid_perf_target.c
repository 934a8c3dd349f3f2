// SPDX-License-Identifier: GPL-2.0
/*
 * Maps libraries after it has started, so that their MMAP2 records are
 * generated while perf is recording, then calls into each of them.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int i, n;

	usleep(50000);
	for (i = 1; i < argc; i++) {
		void *handle = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
		int (*value)(int x);

		if (!handle) {
			fprintf(stderr, "dlopen %s: %s\n", argv[i], dlerror());
			return 1;
		}
		value = (int (*)(int))dlsym(handle, "buildid_lib_value");
		if (!value) {
			fprintf(stderr, "%s: no buildid_lib_value\n", argv[i]);
			return 1;
		}
		/* Calls through a pointer from dlsym(): not optimized away. */
		for (n = 0; n < 1000000; n++)
			value(n);
	}
	return 0;
}
