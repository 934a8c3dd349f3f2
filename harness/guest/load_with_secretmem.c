// SPDX-License-Identifier: GPL-2.0
/*
 * Loads a kernel module (finit_module) while holding a memfd_secret() file
 * that contains a valid ELF image with a build ID, and passes its fd as the
 * module parameter secret_fd=N.  The KUnit suite's suite_init runs in this
 * task, so it can take a reference to that file and check that no parser
 * reads secret memory.
 *
 * usage: load_with_secretmem MODULE.ko [PARAM=VALUE...]
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_memfd_secret
#define SYS_memfd_secret 447
#endif

int main(int argc, char **argv)
{
	char params[4096];
	size_t len = 0;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	Elf64_Nhdr *nh;
	unsigned char *p;
	int fd, mfd, i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s MODULE.ko [PARAM=VALUE...]\n", argv[0]);
		return 2;
	}
	fd = syscall(SYS_memfd_secret, 0);
	if (fd < 0 || ftruncate(fd, 4096) < 0) {
		perror("memfd_secret");
		return 1;
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	eh = (Elf64_Ehdr *)p;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_DYN;
	eh->e_phoff = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	ph = (Elf64_Phdr *)(p + eh->e_phoff);
	ph->p_type = PT_NOTE;
	ph->p_offset = 256;
	ph->p_filesz = sizeof(*nh) + 4 + 20;
	nh = (Elf64_Nhdr *)(p + 256);
	nh->n_namesz = 4;
	nh->n_descsz = 20;
	nh->n_type = NT_GNU_BUILD_ID;
	memcpy(nh + 1, "GNU", 4);
	memset((char *)(nh + 1) + 4, 0xab, 20);

	for (i = 2; i < argc; i++)
		len += snprintf(params + len, sizeof(params) - len, "%s ", argv[i]);
	snprintf(params + len, sizeof(params) - len, "secret_fd=%d", fd);

	mfd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (mfd < 0 || syscall(SYS_finit_module, mfd, params, 0) < 0) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
