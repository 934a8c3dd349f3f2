// SPDX-License-Identifier: GPL-2.0
/*
 * Builds lib/buildid.c a second time with its functions renamed to
 * build_id_ref_*(), so that the KUnit suite and the benchmarks of the Rust
 * sample module can run the C reference and the Rust implementation side by
 * side on the same inputs, and exports both implementations' parses of a
 * file (build_id_rust_parse_file() is in lib/buildid/buildid_rust.rs).  No
 * other code calls these functions: they are exported in the namespace
 * BUILDID_C_REFERENCE, which only those two modules import.
 */

#include <kunit/visibility.h>
#include <linux/buildid_ref.h>
#include <linux/export.h>
#include <linux/mm.h>

#define build_id_parse		build_id_ref_parse
#define build_id_parse_nofault	build_id_ref_parse_nofault
#define build_id_parse_file	build_id_ref_parse_file
#define build_id_parse_buf	build_id_ref_parse_buf

#include "buildid.c"

int build_id_ref_parse_file_nofault(struct file *file, unsigned char *build_id, __u32 *size)
{
	return __build_id_parse(file, build_id, size, false);
}

EXPORT_SYMBOL_NS_GPL(build_id_ref_parse, BUILDID_C_REFERENCE);
EXPORT_SYMBOL_NS_GPL(build_id_ref_parse_nofault, BUILDID_C_REFERENCE);
EXPORT_SYMBOL_NS_GPL(build_id_ref_parse_file, BUILDID_C_REFERENCE);
EXPORT_SYMBOL_NS_GPL(build_id_ref_parse_file_nofault, BUILDID_C_REFERENCE);
EXPORT_SYMBOL_NS_GPL(build_id_ref_parse_buf, BUILDID_C_REFERENCE);
EXPORT_SYMBOL_NS_GPL(build_id_rust_parse_file, BUILDID_C_REFERENCE);

#undef build_id_parse
#undef build_id_parse_nofault
#undef build_id_parse_file
#undef build_id_parse_buf

/*
 * The <linux/buildid.h> API itself is not exported (its callers are built
 * in); export it for the test module only, and build_id_parse_buf(), which
 * has no other name, for the benchmarks too, in the same namespace as the
 * reference.
 */
EXPORT_SYMBOL_IF_KUNIT(build_id_parse);
EXPORT_SYMBOL_IF_KUNIT(build_id_parse_nofault);
EXPORT_SYMBOL_IF_KUNIT(build_id_parse_file);
EXPORT_SYMBOL_NS_GPL(build_id_parse_buf, BUILDID_C_REFERENCE);
