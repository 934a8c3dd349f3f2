/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A function with a known frame layout for uprobes to hit.  The probe goes
 * on the nop, after the frame pointer is pushed, so that a frame-pointer
 * walk of the user stack sees the caller's return address as frame 1.  (At
 * the first instruction, x86 perf callchains in 6.12 skip the caller.)
 */
#ifndef BUILDID_SELFTEST_PROBE_H
#define BUILDID_SELFTEST_PROBE_H

#ifndef __x86_64__
#error "x86-64 machine code; the Makefile builds this directory only there"
#endif

#define PROBE_BODY_OFFSET 4	/* push %rbp (1 byte) + mov %rsp,%rbp (3 bytes) */

#define DEFINE_PROBE_FUNC(name)						\
	asm(".pushsection .text\n"					\
	    ".globl " #name "\n"					\
	    ".type " #name ", @function\n"				\
	    #name ":\n"							\
	    "	push %rbp\n"						\
	    "	mov %rsp, %rbp\n"					\
	    "	nop\n"							\
	    "	pop %rbp\n"						\
	    "	ret\n"							\
	    ".size " #name ", . - " #name "\n"				\
	    ".popsection\n")

/*
 * call_probe(fn) calls fn from a frame of its own, so that frame 1 of a
 * stack taken in fn is call_probe()'s, at CALL_PROBE_RETURN bytes in.
 * buildid_lib_call() in the library is the same function.
 */
#define CALL_PROBE_RETURN 6	/* push, mov, call *%rdi (2 bytes) */

#define DEFINE_CALLER(name)						\
	asm(".pushsection .text\n"					\
	    ".globl " #name "\n"					\
	    ".type " #name ", @function\n"				\
	    #name ":\n"							\
	    "	push %rbp\n"						\
	    "	mov %rsp, %rbp\n"					\
	    "	call *%rdi\n"						\
	    "	pop %rbp\n"						\
	    "	ret\n"							\
	    ".size " #name ", . - " #name "\n"				\
	    ".popsection\n")

#define DEFINE_CALL_PROBE DEFINE_CALLER(call_probe)

/* In bpf_stack_buildid and in libbuildid_*.so respectively. */
void buildid_probe(void);
void buildid_lib_probe(void);
void call_probe(void (*probe)(void));
void buildid_lib_call(void (*probe)(void));

#endif
