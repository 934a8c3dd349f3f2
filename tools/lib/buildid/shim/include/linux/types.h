/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host stand-in for <linux/types.h>: the kernel's own spellings of the fixed
 * width types (u64 is `unsigned long long`, not glibc's `unsigned long`), so
 * that lib/buildid.c's arithmetic is compiled with the same C types as in the
 * kernel.
 */
#ifndef SHIM_LINUX_TYPES_H
#define SHIM_LINUX_TYPES_H

#include <stdbool.h>
#include <stddef.h>
/*
 * ssize_t (long on x86_64, as in the kernel). build.rs compiles with
 * _POSIX_C_SOURCE so that glibc does not also define its own loff_t (long).
 */
#include <sys/types.h>

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed short s16;
typedef signed int s32;
typedef signed long long s64;

typedef u8 __u8;
typedef u16 __u16;
typedef u32 __u32;
typedef u64 __u64;
typedef s16 __s16;
typedef s32 __s32;
typedef s64 __s64;

typedef long long loff_t;	/* __kernel_loff_t */
typedef unsigned long pgoff_t;

_Static_assert(sizeof(long) == 8, "the shim models a 64-bit kernel (x86_64)");

#endif /* SHIM_LINUX_TYPES_H */
