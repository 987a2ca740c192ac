package percept

// #include <stdlib.h>
// #include "world.h"
import "C"

import "unsafe"

// ChangeKind is what one entry of a tick changes.
type ChangeKind int

const (
	ChangeMove   ChangeKind = C.PERCEPT_CHANGE_MOVE   // the entity goes to (X, Y, Z)
	ChangeTurn   ChangeKind = C.PERCEPT_CHANGE_TURN   // it faces (X, Y, Z)
	ChangeUpdate ChangeKind = C.PERCEPT_CHANGE_UPDATE // every field becomes *Entity's
)

// Change is one entry of a tick: an entity and its change.
type Change struct {
	ID      uint32
	Kind    ChangeKind
	X, Y, Z float64 // ChangeMove: the new position; ChangeTurn: the new facing
	Entity  *Entity // ChangeUpdate: the new description; else unread
}

// Tick makes every change at once, each entity named at most once: its
// events are the difference between the relation before and after the
// whole tick. A bad entry changes nothing, and the *Error's Index names it.
//
// The entries are copied into C arrays the World keeps, so that a tick
// allocates nothing once the arrays have grown to the largest tick.
func (w *World) Tick(changes []Change) error {
	if w.closed() {
		return ErrClosed
	}
	if err := w.fill(changes); err != nil {
		return err
	}
	return w.tickFilled(len(changes))
}

// fill writes changes into the World's C arrays.
func (w *World) fill(changes []Change) error {
	updates := 0
	for i := range changes {
		if changes[i].Kind == ChangeUpdate && changes[i].Entity != nil {
			updates++
		}
	}
	if err := w.reserve(len(changes), updates); err != nil {
		return err
	}
	out := unsafe.Slice(w.changes, len(changes))
	descs := unsafe.Slice(w.descs, updates)
	for i := range changes {
		c := &changes[i]
		o := &out[i]
		o.id = C.percept_id(c.ID)
		o.kind = C.percept_change_kind(c.Kind)
		o.x, o.y, o.z = C.double(c.X), C.double(c.Y), C.double(c.Z)
		o.desc = nil
		if c.Kind == ChangeUpdate && c.Entity != nil {
			d := &descs[0]
			descs = descs[1:]
			if err := w.describe(c.Entity, d); err != nil {
				if e, ok := err.(*Error); ok {
					e.Index = i
				}
				return err
			}
			o.desc = d
		}
	}
	return nil
}

// tickFilled runs percept_tick on the first n changes fill wrote.
func (w *World) tickFilled(n int) error {
	if rc := C.w_tick(w.c, w.changes, C.size_t(n)); rc < 0 {
		err := w.failed(rc)
		if i := C.w_errindex(w.c); i < C.size_t(n) {
			err.Index = int(i)
		}
		return err
	}
	return nil
}

// reserve grows the C arrays to hold n changes and updates descriptions.
func (w *World) reserve(n, updates int) error {
	if n > w.changeCap {
		size := grow(w.changeCap, n)
		p := C.realloc(unsafe.Pointer(w.changes), C.size_t(size)*C.sizeof_percept_change)
		if p == nil {
			return &Error{Status: StatusNoMemory, Message: "percept: out of memory", Index: -1}
		}
		w.changes, w.changeCap = (*C.percept_change)(p), size
	}
	if updates > w.descCap {
		size := grow(w.descCap, updates)
		p := C.realloc(unsafe.Pointer(w.descs), C.size_t(size)*C.sizeof_percept_entity_desc)
		if p == nil {
			return &Error{Status: StatusNoMemory, Message: "percept: out of memory", Index: -1}
		}
		w.descs, w.descCap = (*C.percept_entity_desc)(p), size
	}
	return nil
}

// grow is a capacity of at least n, doubling from have.
func grow(have, n int) int {
	size := have * 2
	if size < n {
		size = n
	}
	return size
}
