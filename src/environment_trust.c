/*
 * environment_trust.c - environment_trusted(): see environment_trust.h.
 */
#include "environment_trust.h"

#include <unistd.h>
#ifdef __linux__
#include <sys/auxv.h>
#endif

int environment_trusted(void)
{
#if defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__) || defined(__APPLE__)
    /* Also true of a set-ID program that has lowered its effective IDs. */
    if (issetugid())
        return 0;
#endif
#ifdef AT_SECURE
    if (getauxval(AT_SECURE))
        return 0;
#endif
    return getuid() == geteuid() && getgid() == getegid();
}
