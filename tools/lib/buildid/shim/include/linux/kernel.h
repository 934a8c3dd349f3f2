/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host stand-in for <linux/kernel.h>: only the helpers lib/buildid.c uses,
 * with the kernel's semantics (definitions follow include/linux/compiler.h,
 * include/linux/overflow.h, include/linux/align.h, include/uapi/linux/const.h
 * and include/linux/stddef.h).
 */
#ifndef SHIM_LINUX_KERNEL_H
#define SHIM_LINUX_KERNEL_H

#include <errno.h>		/* host errno values == kernel values on x86_64 */
#include <limits.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>

/* No Kconfig: buildid.c's vmlinux_build_id part, where it still has one, is compiled out. */
#define IS_ENABLED(option) 0

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define READ_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))

/*
 * WARN_ON() evaluates to the condition; the shim counts hits (per thread, as
 * cargo runs tests in parallel) so the tests can assert it never fires.
 */
extern _Thread_local unsigned long shim_warn_count;
#define WARN_ON(condition) ({					\
	int __ret_warn_on = !!(condition);			\
	if (unlikely(__ret_warn_on))				\
		shim_warn_count++;				\
	unlikely(__ret_warn_on);				\
})

/* Fails iff the mathematical a + b does not fit in *d, whatever the types. */
#define check_add_overflow(a, b, d) __builtin_add_overflow(a, b, d)

/* ALIGN() is computed in the type of x, so a u32 wraps around. */
#define __ALIGN_KERNEL(x, a)		__ALIGN_KERNEL_MASK(x, (__typeof__(x))(a) - 1)
#define __ALIGN_KERNEL_MASK(x, mask)	(((x) + (mask)) & ~(mask))
#define ALIGN(x, a)			__ALIGN_KERNEL((x), (a))

#define sizeof_field(TYPE, MEMBER)	sizeof((((TYPE *)0)->MEMBER))
#define offsetofend(TYPE, MEMBER) \
	(offsetof(TYPE, MEMBER) + sizeof_field(TYPE, MEMBER))

#endif /* SHIM_LINUX_KERNEL_H */
