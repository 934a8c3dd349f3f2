/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host stand-in for <linux/elf.h>: the ELF types and constants lib/buildid.c
 * uses, spelled with the kernel's base types (include/uapi/linux/elf.h), with
 * the layout pinned down by static assertions.
 */
#ifndef SHIM_LINUX_ELF_H
#define SHIM_LINUX_ELF_H

#include <stddef.h>
#include <linux/types.h>

typedef __u32	Elf32_Addr;
typedef __u16	Elf32_Half;
typedef __u32	Elf32_Off;
typedef __s32	Elf32_Sword;
typedef __u32	Elf32_Word;

typedef __u64	Elf64_Addr;
typedef __u16	Elf64_Half;
typedef __s16	Elf64_SHalf;
typedef __u64	Elf64_Off;
typedef __s32	Elf64_Sword;
typedef __u32	Elf64_Word;
typedef __u64	Elf64_Xword;
typedef __s64	Elf64_Sxword;

#define EI_NIDENT	16
#define EI_CLASS	4
#define ELFCLASS32	1
#define ELFCLASS64	2
#define ELFMAG		"\177ELF"
#define SELFMAG		4

#define ET_NONE		0
#define ET_REL		1
#define ET_EXEC		2
#define ET_DYN		3
#define ET_CORE		4

#define PT_NOTE		4

typedef struct elf32_hdr {
	unsigned char	e_ident[EI_NIDENT];
	Elf32_Half	e_type;
	Elf32_Half	e_machine;
	Elf32_Word	e_version;
	Elf32_Addr	e_entry;
	Elf32_Off	e_phoff;
	Elf32_Off	e_shoff;
	Elf32_Word	e_flags;
	Elf32_Half	e_ehsize;
	Elf32_Half	e_phentsize;
	Elf32_Half	e_phnum;
	Elf32_Half	e_shentsize;
	Elf32_Half	e_shnum;
	Elf32_Half	e_shstrndx;
} Elf32_Ehdr;

typedef struct elf64_hdr {
	unsigned char	e_ident[EI_NIDENT];
	Elf64_Half	e_type;
	Elf64_Half	e_machine;
	Elf64_Word	e_version;
	Elf64_Addr	e_entry;
	Elf64_Off	e_phoff;
	Elf64_Off	e_shoff;
	Elf64_Word	e_flags;
	Elf64_Half	e_ehsize;
	Elf64_Half	e_phentsize;
	Elf64_Half	e_phnum;
	Elf64_Half	e_shentsize;
	Elf64_Half	e_shnum;
	Elf64_Half	e_shstrndx;
} Elf64_Ehdr;

typedef struct elf32_phdr {
	Elf32_Word	p_type;
	Elf32_Off	p_offset;
	Elf32_Addr	p_vaddr;
	Elf32_Addr	p_paddr;
	Elf32_Word	p_filesz;
	Elf32_Word	p_memsz;
	Elf32_Word	p_flags;
	Elf32_Word	p_align;
} Elf32_Phdr;

typedef struct elf64_phdr {
	Elf64_Word	p_type;
	Elf64_Word	p_flags;
	Elf64_Off	p_offset;
	Elf64_Addr	p_vaddr;
	Elf64_Addr	p_paddr;
	Elf64_Xword	p_filesz;
	Elf64_Xword	p_memsz;
	Elf64_Xword	p_align;
} Elf64_Phdr;

typedef struct elf32_note {
	Elf32_Word	n_namesz;
	Elf32_Word	n_descsz;
	Elf32_Word	n_type;
} Elf32_Nhdr;

/* The offsets the Rust parser (lib/buildid/elf.rs) hard-codes. */
_Static_assert(sizeof(Elf32_Ehdr) == 52, "Elf32_Ehdr");
_Static_assert(offsetof(Elf32_Ehdr, e_type) == 16, "e_type");
_Static_assert(offsetof(Elf32_Ehdr, e_phoff) == 28, "Elf32 e_phoff");
_Static_assert(offsetof(Elf32_Ehdr, e_phnum) == 44, "Elf32 e_phnum");
_Static_assert(sizeof(Elf64_Ehdr) == 64, "Elf64_Ehdr");
_Static_assert(offsetof(Elf64_Ehdr, e_phoff) == 32, "Elf64 e_phoff");
_Static_assert(offsetof(Elf64_Ehdr, e_phnum) == 56, "Elf64 e_phnum");
_Static_assert(sizeof(Elf32_Phdr) == 32, "Elf32_Phdr");
_Static_assert(offsetof(Elf32_Phdr, p_offset) == 4, "Elf32 p_offset");
_Static_assert(offsetof(Elf32_Phdr, p_filesz) == 16, "Elf32 p_filesz");
_Static_assert(sizeof(Elf64_Phdr) == 56, "Elf64_Phdr");
_Static_assert(offsetof(Elf64_Phdr, p_offset) == 8, "Elf64 p_offset");
_Static_assert(offsetof(Elf64_Phdr, p_filesz) == 32, "Elf64 p_filesz");
_Static_assert(sizeof(Elf32_Nhdr) == 12, "Elf32_Nhdr");

#endif /* SHIM_LINUX_ELF_H */
