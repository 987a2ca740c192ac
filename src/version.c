/*
 * version.c - the version of the library a program is running with, which
 * can differ from the PERCEPT_VERSION of the headers it was compiled with.
 */
#include "percept.h"

const char *percept_version(void)
{
    return PERCEPT_VERSION;
}

int percept_version_number(void)
{
    return PERCEPT_VERSION_NUMBER;
}
