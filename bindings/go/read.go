package percept

// #include "world.h"
import "C"

// Perceives reports whether observer perceives target by sense.
func (w *World) Perceives(observer, target uint32, sense string) (bool, error) {
	if w.closed() {
		return false, ErrClosed
	}
	s, err := w.sense(sense)
	if err != nil {
		return false, err
	}
	rc := C.w_perceives(w.c, C.percept_id(observer), C.percept_id(target), s)
	if rc < 0 {
		return false, readFailed("percept_perceives", rc)
	}
	return rc == 1, nil
}

// Perceived appends the targets observer perceives by sense to dst, in
// ascending order, and returns the extended slice.
func (w *World) Perceived(observer uint32, sense string, dst []uint32) ([]uint32, error) {
	if w.closed() {
		return dst, ErrClosed
	}
	s, err := w.sense(sense)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	for {
		// The IDs are written straight into dst's spare room; when it is
		// too small, the call only counts them, and is made again.
		room := dst[start:cap(dst)]
		var ids *C.percept_id
		if len(room) > 0 {
			ids = (*C.percept_id)(&room[0])
		}
		r := C.w_perceived(w.c, C.percept_id(observer), s, ids, C.size_t(len(room)))
		if r.rc < 0 {
			return dst, readFailed("percept_perceived", r.rc)
		}
		n := int(r.count)
		if n <= len(room) {
			return dst[:start+n], nil
		}
		bigger := make([]uint32, start, grow(cap(dst), start+n))
		copy(bigger, dst)
		dst = bigger
	}
}
