/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ELF images with a build ID note, and tmpfs files holding them, for the
 * build ID KUnit suites (lib/buildid_kunit.c, lib/buildid_cache_kunit.c).
 */
#ifndef _LIB_BUILDID_KUNIT_IMAGE_H
#define _LIB_BUILDID_KUNIT_IMAGE_H

#include <kunit/test.h>
#include <linux/buildid.h>
#include <linux/elf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/shmem_fs.h>

#define NT_GNU_BUILD_ID 3

/* Where a test image puts its program headers and its build ID note. */
struct image_layout {
	bool elf32;
	u64 phoff;
	u64 note_off;
	u32 id_len;
	u64 size;
};

/* Writes "GNU" note @id of @len bytes, header included, at @note. */
static inline void buildid_kunit_note(u8 *note, const u8 *id, u32 len)
{
	Elf32_Nhdr *nhdr = (Elf32_Nhdr *)note;

	nhdr->n_namesz = 4;
	nhdr->n_descsz = len;
	nhdr->n_type = NT_GNU_BUILD_ID;
	memcpy(nhdr + 1, "GNU", 4);
	memcpy((u8 *)(nhdr + 1) + 4, id, len);
}

/* Fills the ELF header and a PT_LOAD and a PT_NOTE program header. */
#define BUILDID_KUNIT_HEADERS(img, l, ehdr_t, phdr_t, class, type, note_sz)	\
do {										\
	ehdr_t *eh = (ehdr_t *)(img);						\
	phdr_t *ph = (phdr_t *)((img) + (l)->phoff);				\
										\
	memcpy(eh->e_ident, ELFMAG, SELFMAG);					\
	eh->e_ident[EI_CLASS] = (class);					\
	eh->e_ident[EI_DATA] = ELFDATA2LSB;					\
	eh->e_type = (type);							\
	eh->e_phoff = (l)->phoff;						\
	eh->e_phentsize = sizeof(*ph);						\
	eh->e_phnum = 2;							\
	ph[0].p_type = PT_LOAD;							\
	ph[1].p_type = PT_NOTE;							\
	ph[1].p_offset = (l)->note_off;						\
	ph[1].p_filesz = (note_sz);						\
	ph[1].p_align = 4;							\
} while (0)

/*
 * Returns a kunit_kzalloc'ed ELF image laid out as @l describes: a PT_LOAD
 * and a PT_NOTE header at l->phoff, and at l->note_off a "GNU" note with the
 * l->id_len bytes of @id.
 */
static inline u8 *buildid_kunit_image(struct kunit *test, const struct image_layout *l,
				      const u8 *id)
{
	u32 note_sz = sizeof(Elf32_Nhdr) + 4 + ALIGN(l->id_len, 4);
	u8 *img = kunit_kzalloc(test, l->size, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, img);
	if (l->elf32)
		BUILDID_KUNIT_HEADERS(img, l, Elf32_Ehdr, Elf32_Phdr, ELFCLASS32, ET_DYN,
				      note_sz);
	else
		BUILDID_KUNIT_HEADERS(img, l, Elf64_Ehdr, Elf64_Phdr, ELFCLASS64, ET_EXEC,
				      note_sz);
	buildid_kunit_note(img + l->note_off, id, l->id_len);
	return img;
}

static inline void buildid_kunit_fput(void *file)
{
	fput(file);
}

/*
 * A tmpfs file of @len bytes, holding @img unless it is NULL, released at the
 * end of the test.
 */
static inline struct file *buildid_kunit_tmpfs_file(struct kunit *test, const u8 *img, u64 len)
{
	struct file *file = shmem_file_setup("buildid-kunit", len, 0);
	loff_t pos = 0;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, file);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, buildid_kunit_fput, file), 0);
	if (img)
		KUNIT_ASSERT_EQ(test, kernel_write(file, img, len, &pos), (ssize_t)len);
	return file;
}

#endif /* _LIB_BUILDID_KUNIT_IMAGE_H */
