package percept

// #include "world.h"
import "C"

import (
	"errors"
	"fmt"
)

// Status is the library's status code of a failed call (percept_status).
type Status int

// The library's status codes; every error is negative.
const (
	StatusOK       Status = C.PERCEPT_OK
	StatusInvalid  Status = C.PERCEPT_EINVAL  // an argument is invalid (NaN, negative range, ...)
	StatusNoMemory Status = C.PERCEPT_ENOMEM  // out of memory, or the world's entity limit
	StatusExists   Status = C.PERCEPT_EEXIST  // an entity with that ID is already in the world
	StatusNotFound Status = C.PERCEPT_ENOENT  // no entity with that ID is in the world
	StatusBusy     Status = C.PERCEPT_EBUSY   // a change was requested from inside the event callback
	StatusConfig   Status = C.PERCEPT_ECONFIG // the configuration is invalid
	StatusPlugin   Status = C.PERCEPT_EPLUGIN // a backend plugin could not be found, loaded or used
	StatusIO       Status = C.PERCEPT_EIO     // a file could not be read
)

// String gives the library's short description of the status.
func (s Status) String() string {
	return C.GoString(C.percept_strerror(C.int(s)))
}

// Error is a failed call: the library's status and message, and what the
// message names, for programs. Index is the tick entry (an index into
// Tick's changes) the call was refused for, or -1; Line, Section and Key
// name the config line, section and key at fault when opening a world
// (0 and "" otherwise).
type Error struct {
	Status  Status
	Message string
	Index   int
	Line    int
	Section string
	Key     string
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "percept: " + e.Status.String()
	}
	if e.Index >= 0 {
		msg = fmt.Sprintf("%s (tick entry %d)", msg, e.Index)
	}
	return msg
}

// Is reports whether target is an *Error of the same status, so that
// errors.Is(err, ErrNotFound) tests the status whatever the message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Status == e.Status
}

// Sentinels for errors.Is, one per status.
var (
	ErrInvalid  = &Error{Status: StatusInvalid, Index: -1}
	ErrNoMemory = &Error{Status: StatusNoMemory, Index: -1}
	ErrExists   = &Error{Status: StatusExists, Index: -1}
	ErrNotFound = &Error{Status: StatusNotFound, Index: -1}
	ErrBusy     = &Error{Status: StatusBusy, Index: -1}
	ErrConfig   = &Error{Status: StatusConfig, Index: -1}
	ErrPlugin   = &Error{Status: StatusPlugin, Index: -1}
	ErrIO       = &Error{Status: StatusIO, Index: -1}
)

// ErrClosed is returned by every call on a World after Close (or on a nil
// World): the C world is gone, so there is no status of the library's.
var ErrClosed = errors.New("percept: the world is closed")

// invalid is an argument the binding refuses before the library sees it.
func invalid(format string, args ...any) error {
	return &Error{Status: StatusInvalid, Message: fmt.Sprintf(format, args...), Index: -1}
}

// failed is the error of a changing call that returned rc: the world's
// message says what went wrong.
func (w *World) failed(rc C.int) *Error {
	return &Error{Status: Status(rc), Message: C.GoString(C.w_errmsg(w.c)), Index: -1}
}

// readFailed is the error of a reading call, which leaves the world's
// message alone: the call's name and the status describe it.
func readFailed(call string, rc C.int) error {
	return &Error{Status: Status(rc), Message: call + ": " + Status(rc).String(), Index: -1}
}
