/*
 * elf_machine.h - the processor an ELF file is built for, by its header's
 * e_machine, in words an operator knows: a plugin built for another machine
 * has the right ELF class and byte order, and glibc's dlopen() then reports
 * "cannot open shared object file: No such file or directory" for a file
 * that is there, so the host says what the file is itself.
 */
#ifndef PERCEPT_ELF_MACHINE_H
#define PERCEPT_ELF_MACHINE_H

#include <elf.h>

/* The e_machine of the code this is compiled into; EM_NONE where this file
 * does not know the processor (the check is then left to dlopen()). */
#if defined(__x86_64__)
#define ELF_MACHINE_OURS EM_X86_64
#elif defined(__i386__)
#define ELF_MACHINE_OURS EM_386
#elif defined(__aarch64__)
#define ELF_MACHINE_OURS EM_AARCH64
#elif defined(__arm__)
#define ELF_MACHINE_OURS EM_ARM
#elif defined(__s390__)
#define ELF_MACHINE_OURS EM_S390 /* s390 and s390x alike; the ELF class tells them apart */
#elif defined(__powerpc64__)
#define ELF_MACHINE_OURS EM_PPC64
#elif defined(__powerpc__)
#define ELF_MACHINE_OURS EM_PPC
#elif defined(__riscv)
#define ELF_MACHINE_OURS EM_RISCV
#elif defined(__loongarch__) && defined(EM_LOONGARCH)
#define ELF_MACHINE_OURS EM_LOONGARCH
#elif defined(__mips__)
#define ELF_MACHINE_OURS EM_MIPS
#else
#define ELF_MACHINE_OURS EM_NONE
#endif

/* The processor's name ("AArch64 (arm64)"), or NULL for a number this file
 * does not name. */
const char *elf_machine_name(unsigned machine);

#endif
