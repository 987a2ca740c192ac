// Package percept is the Go binding of percept, a perception
// (area-of-interest) library for game servers: who perceives whom, by which
// sense, and every change to that relation delivered as an event.
//
// A World holds entities; each call that changes it keeps that call's
// events, which Events appends to a slice the caller reuses, so that a
// server loop allocates nothing per tick:
//
//	w, err := percept.Open(percept.Options{Config: "[percept]\nbackend = grid\n"})
//	if err != nil {
//		return err
//	}
//	defer w.Close()
//	w.Add(1, percept.Entity{X: 100, Y: 100, Facing: [3]float64{1, 0, 0},
//		Senses: map[string]percept.Sense{"sight": {Range: 40, Fov: 120}}})
//	w.Add(2, percept.Entity{X: 60, Y: 100})
//	var events []percept.Event
//	for {
//		changes := ... // this tick's moves, turns and updates
//		if err := w.Tick(changes); err != nil {
//			return err
//		}
//		events = w.Events(events[:0])
//		for _, e := range events {
//			... // e.Kind, e.Observer, e.Target, w.SenseName(e.Sense)
//		}
//	}
//
// Every failed call returns an *Error carrying the library's status and
// message; errors.Is(err, percept.ErrNotFound) and the other sentinels test
// the status. A World is not safe for concurrent use: use it from one
// goroutine at a time. Distinct worlds share nothing.
//
// The package is built with cgo against the installed C library, found by
// pkg-config (percept.pc).
package percept
