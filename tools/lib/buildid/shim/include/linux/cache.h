/* SPDX-License-Identifier: GPL-2.0 */
/* Host stand-in for <linux/cache.h>. */
#ifndef SHIM_LINUX_CACHE_H
#define SHIM_LINUX_CACHE_H

#define __ro_after_init
#define __init

#endif /* SHIM_LINUX_CACHE_H */
