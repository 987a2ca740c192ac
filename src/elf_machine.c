/*
 * elf_machine.c - processor names for ELF machine numbers (see
 * elf_machine.h): those Debian builds for, and their close relatives.
 */
#include "elf_machine.h"

#include <stddef.h>

const char *elf_machine_name(unsigned machine)
{
    static const struct {
        unsigned machine;
        const char *name;
    } names[] = {
        {EM_X86_64, "x86-64 (amd64)"},
        {EM_386, "32-bit x86 (i386)"},
        {EM_AARCH64, "AArch64 (arm64)"},
        {EM_ARM, "32-bit ARM"},
        {EM_S390, "IBM Z (s390 or s390x)"},
        {EM_PPC64, "64-bit POWER (ppc64)"},
        {EM_PPC, "32-bit PowerPC"},
        {EM_RISCV, "RISC-V"},
#ifdef EM_LOONGARCH
        {EM_LOONGARCH, "LoongArch"},
#endif
        {EM_MIPS, "MIPS"},
        {EM_SPARCV9, "SPARC V9"},
        {EM_IA_64, "Itanium (ia64)"},
        {EM_ALPHA, "Alpha"},
        {EM_68K, "Motorola 68000"},
        {EM_PARISC, "PA-RISC (hppa)"},
        {EM_SH, "SuperH"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].machine == machine)
            return names[i].name;
    return NULL;
}
