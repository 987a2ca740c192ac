package percept

// #cgo pkg-config: percept
// #include <stdlib.h>
// #include "world.h"
import "C"

import (
	"strings"
	"unsafe"
)

// Options say how to open a world. Config is INI text and File the path
// of an INI file (give one at most; neither: an empty config, in which
// Backend must name the backend); Backend, PluginDir and Threads, when
// set, take precedence over the config's backend, plugin_dir and [world]
// threads.
type Options struct {
	Config    string
	File      string
	Backend   string
	PluginDir string
	Threads   int
}

// World is a percept world. Its events are kept: Events reads those of
// the last call that changed it or emitted a stimulus.
//
// A World is not safe for concurrent use: use it from one goroutine at a
// time (distinct worlds share nothing). It holds memory and backend
// plugins outside Go's heap: Close it when done. It has no finalizer,
// which would have to guard every call against the World becoming
// unreachable while C still uses it.
type World struct {
	c      unsafe.Pointer // the C world (world.h says why not *C.percept_world)
	senses []string       // the world's sense names, by index

	// C memory the calls write their arguments to, so that no argument
	// escapes to Go's heap. scratch is the entity of Add, Update and
	// Entity; Tick's arrays are kept and grown from tick to tick.
	scratch   *C.percept_entity_desc
	changes   *C.percept_change
	changeCap int
	descs     *C.percept_entity_desc
	descCap   int
}

// Open creates a world and switches its event buffer on.
func Open(opts Options) (*World, error) {
	if opts.Config != "" && opts.File != "" {
		return nil, invalid("percept: Options give both Config and File")
	}
	if opts.Threads < 0 {
		return nil, invalid("percept: Options.Threads is negative (%d)", opts.Threads)
	}
	for _, s := range []string{opts.Config, opts.File, opts.Backend, opts.PluginDir} {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, invalid("percept: an option holds a NUL byte")
		}
	}
	var free []unsafe.Pointer
	defer func() {
		for _, p := range free {
			C.free(p)
		}
	}()
	cstring := func(s string) *C.char {
		if s == "" {
			return nil
		}
		p := C.CString(s)
		free = append(free, unsafe.Pointer(p))
		return p
	}
	o := C.percept_options{size: C.sizeof_percept_options}
	o.backend = cstring(opts.Backend)
	o.plugin_dir = cstring(opts.PluginDir)
	o.threads = C.size_t(opts.Threads)
	var c *C.percept_world
	var cerr C.percept_error
	var rc C.int
	if opts.File != "" {
		rc = C.percept_world_open(&c, cstring(opts.File), &o, &cerr)
	} else {
		text := C.CString(opts.Config)
		free = append(free, unsafe.Pointer(text))
		rc = C.percept_world_open_string(&c, text, nil, &o, &cerr)
	}
	if rc != C.PERCEPT_OK {
		return nil, &Error{
			Status:  Status(rc),
			Message: C.GoString(&cerr.text[0]),
			Index:   -1,
			Line:    int(cerr.line),
			Section: C.GoString(&cerr.section[0]),
			Key:     C.GoString(&cerr.key[0]),
		}
	}
	w := &World{c: unsafe.Pointer(c)}
	w.scratch = (*C.percept_entity_desc)(C.calloc(1, C.sizeof_percept_entity_desc))
	if w.scratch == nil {
		C.percept_world_close(c)
		return nil, &Error{Status: StatusNoMemory, Message: "percept: out of memory", Index: -1}
	}
	if rc = C.w_set_event_buffer(w.c, 1); rc != C.PERCEPT_OK {
		err := w.failed(rc)
		w.Close()
		return nil, err
	}
	n := int(C.w_sense_count(w.c))
	w.senses = make([]string, n)
	for i := range w.senses {
		w.senses[i] = C.GoString(C.w_sense_name(w.c, C.percept_sense(i)))
	}
	return w, nil
}

// Close destroys the world and everything in it. Closing again does
// nothing; every other call returns ErrClosed (or a zero value) after it.
func (w *World) Close() error {
	if w == nil || w.c == nil {
		return nil
	}
	C.w_close(w.c)
	w.c = nil
	C.free(unsafe.Pointer(w.scratch))
	w.scratch = nil
	C.free(unsafe.Pointer(w.changes))
	C.free(unsafe.Pointer(w.descs))
	w.changes, w.changeCap = nil, 0
	w.descs, w.descCap = nil, 0
	return nil
}

func (w *World) closed() bool { return w == nil || w.c == nil }

// Len is the number of entities in the world; 0 once closed.
func (w *World) Len() int {
	if w.closed() {
		return 0
	}
	return int(C.w_entity_count(w.c))
}

// Contains reports whether entity id is in the world.
func (w *World) Contains(id uint32) bool {
	if w.closed() {
		return false
	}
	return C.w_contains(w.c, C.percept_id(id)) == 1
}

// Senses gives the world's sense names, in the world's order: an Event's
// Sense is an index into them.
func (w *World) Senses() []string {
	if w.closed() {
		return nil
	}
	return append([]string(nil), w.senses...)
}

// SenseName is the name of sense i (an Event's Sense), or "" for none.
func (w *World) SenseName(i int) string {
	if w.closed() || i < 0 || i >= len(w.senses) {
		return ""
	}
	return w.senses[i]
}

// sense is the index of the sense named name.
func (w *World) sense(name string) (C.percept_sense, error) {
	for i, s := range w.senses {
		if s == name {
			return C.percept_sense(i), nil
		}
	}
	return 0, invalid("percept: the world has no sense '%s'", name)
}
