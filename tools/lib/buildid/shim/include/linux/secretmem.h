/* SPDX-License-Identifier: GPL-2.0 */
/* Host stand-in for <linux/secretmem.h>: backed by the shim file model. */
#ifndef SHIM_LINUX_SECRETMEM_H
#define SHIM_LINUX_SECRETMEM_H

#include <linux/fs.h>

bool secretmem_mapping(struct address_space *mapping);

#endif /* SHIM_LINUX_SECRETMEM_H */
