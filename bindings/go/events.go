package percept

// #include "world.h"
import "C"

import "unsafe"

// EventKind is what an Event reports.
type EventKind int

const (
	EventEnter    EventKind = C.PERCEPT_ENTER    // the observer now perceives the target
	EventLeave    EventKind = C.PERCEPT_LEAVE    // it no longer perceives the target
	EventMove     EventKind = C.PERCEPT_MOVE     // the target moved and is still perceived (config: move_events)
	EventStimulus EventKind = C.PERCEPT_STIMULUS // the observer perceived a stimulus (Emit)
)

var eventKindNames = [...]string{"enter", "leave", "move", "stimulus"}

// String gives the kind's name: "enter", "leave", "move" or "stimulus".
func (k EventKind) String() string {
	if k >= 0 && int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "unknown"
}

// Event is one change of the relation, or one stimulus perceived. Sense
// is an index into the world's Senses (SenseName names it). X, Y, Z are
// the target's position after the call (its last one when it left the
// world), or a stimulus' point. A stimulus without a source has
// HasSource false and Target 0; every other event has a source.
type Event struct {
	Kind             EventKind
	Sense            int
	Observer, Target uint32
	X, Y, Z          float64
	HasSource        bool
}

// Events appends the events of the world's last call that changed it or
// emitted a stimulus to dst, and returns the extended slice: pass
// events[:0] of the last tick's slice to allocate nothing once it has
// grown. Within a call, events come sorted by observer, target, then sense.
// A call that failed leaves the events of the one before it.
func (w *World) Events(dst []Event) []Event {
	if w.closed() {
		return dst
	}
	span := C.w_events(w.c)
	n := int(span.count)
	if n == 0 {
		return dst
	}
	start := len(dst)
	if cap(dst)-start < n {
		bigger := make([]Event, start, grow(cap(dst), start+n))
		copy(bigger, dst)
		dst = bigger
	}
	dst = dst[:start+n]
	out := dst[start:]
	src := unsafe.Slice(span.events, n)
	// Field by field through pointers: ranging over src by value copies
	// each C event first, which made the drain three times slower.
	for i := range out {
		e := &src[i]
		o := &out[i]
		o.Kind = EventKind(e.kind)
		o.Sense = int(e.sense)
		o.Observer = uint32(e.observer)
		o.Target = uint32(e.target)
		o.X = float64(e.x)
		o.Y = float64(e.y)
		o.Z = float64(e.z)
		o.HasSource = e.has_source != 0
	}
	return dst
}
