/*
 * status.c - names and descriptions of status codes and senses.
 */
#include "percept.h"

const char *percept_strerror(int status)
{
    switch (status) {
    case PERCEPT_OK:
        return "success";
    case PERCEPT_EINVAL:
        return "invalid argument";
    case PERCEPT_ENOMEM:
        return "out of memory";
    case PERCEPT_EEXIST:
        return "entity ID already in the world";
    case PERCEPT_ENOENT:
        return "unknown entity ID";
    case PERCEPT_EBUSY:
        return "world changed from inside its event callback";
    case PERCEPT_ECONFIG:
        return "invalid configuration";
    case PERCEPT_EPLUGIN:
        return "backend plugin could not be found, loaded or used";
    case PERCEPT_EIO:
        return "file could not be read";
    default:
        return "unknown status code";
    }
}

const char *percept_status_name(int status)
{
    switch (status) {
    case PERCEPT_OK:
        return "PERCEPT_OK";
    case PERCEPT_EINVAL:
        return "PERCEPT_EINVAL";
    case PERCEPT_ENOMEM:
        return "PERCEPT_ENOMEM";
    case PERCEPT_EEXIST:
        return "PERCEPT_EEXIST";
    case PERCEPT_ENOENT:
        return "PERCEPT_ENOENT";
    case PERCEPT_EBUSY:
        return "PERCEPT_EBUSY";
    case PERCEPT_ECONFIG:
        return "PERCEPT_ECONFIG";
    case PERCEPT_EPLUGIN:
        return "PERCEPT_EPLUGIN";
    case PERCEPT_EIO:
        return "PERCEPT_EIO";
    default:
        return "PERCEPT_UNKNOWN";
    }
}

const char *percept_sense_name(percept_sense sense)
{
    switch (sense) {
    case PERCEPT_SIGHT:
        return "sight";
    case PERCEPT_HEARING:
        return "hearing";
    case PERCEPT_SMELL:
        return "smell";
    default:
        return NULL;
    }
}
