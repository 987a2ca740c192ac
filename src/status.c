/*
 * status.c - names and descriptions of status codes and senses.
 */
#include "percept.h"

/* Indexed by -status: PERCEPT_OK is 0 and the errors count down from -1. */
#define STATUS(code, text) [-(code)] = {#code, text}
static const struct {
    const char *name, *text;
} statuses[] = {
    STATUS(PERCEPT_OK, "success"),
    STATUS(PERCEPT_EINVAL, "invalid argument"),
    STATUS(PERCEPT_ENOMEM, "out of memory"),
    STATUS(PERCEPT_EEXIST, "entity ID already in the world"),
    STATUS(PERCEPT_ENOENT, "unknown entity ID"),
    STATUS(PERCEPT_EBUSY, "world changed from inside its event callback"),
    STATUS(PERCEPT_ECONFIG, "invalid configuration"),
    STATUS(PERCEPT_EPLUGIN, "backend plugin could not be found, loaded or used"),
    STATUS(PERCEPT_EIO, "file could not be read"),
};

static int known(int status)
{
    return status <= 0 && status > -(int)(sizeof statuses / sizeof *statuses);
}

const char *percept_strerror(int status)
{
    return known(status) ? statuses[-status].text : "unknown status code";
}

const char *percept_status_name(int status)
{
    return known(status) ? statuses[-status].name : "PERCEPT_UNKNOWN";
}
