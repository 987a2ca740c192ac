package percept

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const gridConfig = "[percept]\nbackend = grid\nmove_events = off\n"

func open(t *testing.T, opts Options) *World {
	t.Helper()
	w, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// eventLines is the last call's events as "kind observer target sense"
// joined by ", " (target "-" for a stimulus without a source).
func eventLines(w *World) string {
	var lines []string
	for _, e := range w.Events(nil) {
		target := "-"
		if e.HasSource {
			target = fmt.Sprint(e.Target)
		}
		lines = append(lines, fmt.Sprintf("%s %d %s %s", e.Kind, e.Observer, target, w.SenseName(e.Sense)))
	}
	return strings.Join(lines, ", ")
}

func expectEvents(t *testing.T, w *World, what, want string) {
	t.Helper()
	if got := eventLines(w); got != want {
		t.Errorf("%s: events %q, want %q", what, got, want)
	}
}

// A guard with a cone and a margin, and a thief creeping up on it: each
// call's events worked out by hand from the relation's rules.
func TestGuardAndThief(t *testing.T) {
	w := open(t, Options{Config: gridConfig})
	must(t, w.Add(1, Entity{X: 100, Y: 100, Facing: [3]float64{1, 0, 0}, Senses: map[string]Sense{
		"sight": {Range: 40, Margin: 10, Fov: 120}, "hearing": {Range: 15}}}))
	must(t, w.Add(2, Entity{X: 60, Y: 100, Senses: map[string]Sense{
		"sight": {Range: 30}, "hearing": {Range: 30}}}))
	// 40 apart: in the guard's sight range but behind its cone.
	expectEvents(t, w, "add, 40 apart", "")

	// The guard turns as the thief creeps up behind: heard, not seen.
	must(t, w.Tick([]Change{{ID: 1, Kind: ChangeTurn, X: 1, Y: 0.1}, {ID: 2, X: 90, Y: 100}}))
	expectEvents(t, w, "tick behind", "enter 1 2 hearing, enter 2 1 sight, enter 2 1 hearing")

	// In front, 31.6 away: seen, out of hearing; the thief loses the guard.
	must(t, w.Tick([]Change{{ID: 2, Kind: ChangeMove, X: 130, Y: 110}}))
	events := w.Events(nil)
	want := []Event{
		{Kind: EventEnter, Sense: 0, Observer: 1, Target: 2, X: 130, Y: 110, HasSource: true},
		{Kind: EventLeave, Sense: 1, Observer: 1, Target: 2, X: 130, Y: 110, HasSource: true},
		{Kind: EventLeave, Sense: 0, Observer: 2, Target: 1, X: 100, Y: 100, HasSource: true},
		{Kind: EventLeave, Sense: 1, Observer: 2, Target: 1, X: 100, Y: 100, HasSource: true},
	}
	if !reflect.DeepEqual(events, want) {
		t.Errorf("tick in front: %+v, want %+v", events, want)
	}

	// The margin keeps it at 46; a move to where it is changes nothing,
	// and leaves no event behind.
	must(t, w.Move3(2, 145, 110, 0))
	expectEvents(t, w, "within the margin", "")
	must(t, w.Move(2, 145, 110))
	if n := len(w.Events(nil)); n != 0 {
		t.Errorf("a move to the same place: %d events", n)
	}
	if ok, err := w.Perceives(1, 2, "sight"); !ok || err != nil {
		t.Errorf("Perceives(1, 2, sight) = %v, %v", ok, err)
	}
	if ok, err := w.Perceives(2, 1, "hearing"); ok || err != nil {
		t.Errorf("Perceives(2, 1, hearing) = %v, %v", ok, err)
	}
	if seen, err := w.Perceived(1, "sight", nil); err != nil || !reflect.DeepEqual(seen, []uint32{2}) {
		t.Errorf("Perceived(1, sight) = %v, %v", seen, err)
	}

	// An update: the thief's hearing grows to 60.
	e, err := w.Entity(2)
	must(t, err)
	e.Senses["hearing"] = Sense{Range: 60}
	must(t, w.Update(2, e))
	expectEvents(t, w, "update", "enter 2 1 hearing")

	// Stimuli: without a source, and from the guard (who does not hear it).
	must(t, w.Emit(Stimulus{Sense: "hearing", X: 140, Y: 110, Strength: 1}))
	events = w.Events(events[:0])
	want = []Event{{Kind: EventStimulus, Sense: 1, Observer: 2, X: 140, Y: 110}}
	if !reflect.DeepEqual(events, want) {
		t.Errorf("emit: %+v, want %+v", events, want)
	}
	must(t, w.Emit(Stimulus{Sense: "hearing", X: 100, Y: 100, HasSource: true, Source: 1}))
	expectEvents(t, w, "emit with a source", "stimulus 2 1 hearing")

	must(t, w.SetHidden(2, "sight", true))
	expectEvents(t, w, "hidden", "leave 1 2 sight")
	// Shown again, the target is new to the guard: no margin at 46.
	must(t, w.SetHidden(2, "sight", false))
	expectEvents(t, w, "shown", "")
	must(t, w.Move(2, 130, 110))
	expectEvents(t, w, "back in range", "enter 1 2 sight")
	must(t, w.SetRange(1, "sight", 0))
	expectEvents(t, w, "range 0", "leave 1 2 sight")
	must(t, w.Remove(2))
	expectEvents(t, w, "remove", "leave 2 1 hearing")
	if w.Len() != 1 || w.Contains(2) || !w.Contains(1) {
		t.Errorf("after remove: Len %d, Contains(2) %v, Contains(1) %v", w.Len(), w.Contains(2), w.Contains(1))
	}
}

// MOVE events (config move_events) carry the target's new position; an
// observer's own move gives none.
func TestMoveEvents(t *testing.T) {
	w := open(t, Options{Config: "[percept]\nbackend = grid\nmove_events = on\n"})
	must(t, w.Add(1, Entity{Senses: map[string]Sense{"sight": {Range: 10}, "smell": {Range: 10}}}))
	must(t, w.Add(2, Entity{X: 5}))
	must(t, w.Move3(2, 6, 1, 2))
	want := []Event{
		{Kind: EventMove, Sense: 0, Observer: 1, Target: 2, X: 6, Y: 1, Z: 2, HasSource: true},
		{Kind: EventMove, Sense: 2, Observer: 1, Target: 2, X: 6, Y: 1, Z: 2, HasSource: true},
	}
	if got := w.Events(nil); !reflect.DeepEqual(got, want) {
		t.Errorf("move: %+v, want %+v", got, want)
	}
	must(t, w.Tick([]Change{{ID: 1, X: 1}}))
	expectEvents(t, w, "the observer moves", "")
}

// Events appends to what dst holds, and a reused slice costs no allocation,
// nor does a tick once the World's arrays have grown.
func TestEventsAppendWithoutAllocating(t *testing.T) {
	w := open(t, Options{Config: gridConfig})
	for id := uint32(1); id <= 20; id++ {
		must(t, w.Add(id, Entity{X: float64(id), Senses: map[string]Sense{"sight": {Range: 5}}}))
	}
	kept := []Event{{Kind: EventLeave, Observer: 99}}
	must(t, w.Move(20, 100, 0))
	got := w.Events(kept)
	// Five observers lose 20, and 20 loses the five.
	if len(got) != 1+10 || got[0] != kept[0] || got[1].Kind != EventLeave ||
		got[1].Observer != 15 || got[1].Target != 20 || got[10].Observer != 20 || got[10].Target != 19 {
		t.Fatalf("appended: %+v", got)
	}
	changes := make([]Change, 20)
	buf := make([]Event, 0, 1000)
	x := 0.0
	allocs := testing.AllocsPerRun(20, func() {
		x = 100 - x
		for i := range changes {
			changes[i] = Change{ID: uint32(i + 1), X: float64(i + 1)}
			if i%2 == 0 {
				changes[i].X += x
			}
		}
		if err := w.Tick(changes); err != nil {
			t.Fatal(err)
		}
		buf = w.Events(buf[:0])
	})
	if allocs != 0 || len(buf) == 0 {
		t.Errorf("a tick and its events: %v allocations, %d events", allocs, len(buf))
	}
}

// An entity reads back as it was described, a fov of 0 as 360 and every
// sense of the world present.
func TestEntityRoundTrip(t *testing.T) {
	w := open(t, Options{Config: "[percept]\nbackend = grid\n[world]\nsenses = sight echo\n"})
	if got := w.Senses(); !reflect.DeepEqual(got, []string{"sight", "echo"}) {
		t.Fatalf("Senses() = %v", got)
	}
	if w.SenseName(1) != "echo" || w.SenseName(2) != "" || w.SenseName(-1) != "" {
		t.Errorf("SenseName: %q %q", w.SenseName(1), w.SenseName(2))
	}
	e := Entity{X: 1, Y: -2, Z: 3, Facing: [3]float64{0, 1, 0}, Tags: 0x80000001,
		Hidden: []string{"echo"}, Senses: map[string]Sense{
			"sight": {Range: 40, Margin: 5, Fov: 90, Ignore: 6},
			"echo":  {Range: 7}}}
	must(t, w.Add(7, e))
	got, err := w.Entity(7)
	must(t, err)
	e.Senses["echo"] = Sense{Range: 7, Fov: 360}
	if !reflect.DeepEqual(got, e) {
		t.Errorf("Entity(7) = %+v, want %+v", got, e)
	}
	// Update replaces every field: senses left out are lacking.
	must(t, w.Update(7, Entity{X: 5}))
	got, err = w.Entity(7)
	must(t, err)
	want := Entity{X: 5, Senses: map[string]Sense{"sight": {Fov: 360}, "echo": {Fov: 360}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after Update: %+v, want %+v", got, want)
	}
}

// Perceived appends to dst, through its spare room or a larger array.
func TestPerceived(t *testing.T) {
	w := open(t, Options{Config: gridConfig})
	must(t, w.Add(1, Entity{Senses: map[string]Sense{"hearing": {Range: 50}}}))
	for id := uint32(10); id > 1; id-- {
		must(t, w.Add(id, Entity{X: float64(id)}))
	}
	want := []uint32{7, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, room := range []int{1, 3, 20} {
		dst := append(make([]uint32, 0, room), 7)
		got, err := w.Perceived(1, "hearing", dst)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("room %d: %v, %v", room, got, err)
		}
	}
	if got, err := w.Perceived(1, "sight", nil); err != nil || len(got) != 0 {
		t.Errorf("sight: %v, %v", got, err)
	}
}

// expectStatus checks err is an *Error of the status, found by errors.Is
// through its sentinel and through a wrapper.
func expectStatus(t *testing.T, what string, err error, sentinel *Error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Status != sentinel.Status || !errors.Is(err, sentinel) ||
		!errors.Is(fmt.Errorf("wrapped: %w", err), sentinel) || e.Message == "" {
		t.Errorf("%s: %#v, want status %v", what, err, sentinel.Status)
		return &Error{}
	}
	for _, other := range []*Error{ErrInvalid, ErrNotFound, ErrExists} {
		if other != sentinel && errors.Is(err, other) {
			t.Errorf("%s: %v is %v too", what, err, other.Status)
		}
	}
	return e
}

func TestErrors(t *testing.T) {
	w := open(t, Options{Config: gridConfig})
	must(t, w.Add(3, Entity{Senses: map[string]Sense{"sight": {Range: 5}}}))
	must(t, w.Add(4, Entity{X: 1}))

	e := expectStatus(t, "unknown entity", w.Move(99, 0, 0), ErrNotFound)
	if !strings.Contains(e.Message, "99") || e.Index != -1 {
		t.Errorf("unknown entity: message %q, index %d", e.Message, e.Index)
	}
	expectStatus(t, "added twice", w.Add(3, Entity{}), ErrExists)
	expectStatus(t, "negative range", w.Add(5, Entity{Senses: map[string]Sense{"sight": {Range: -1}}}), ErrInvalid)
	expectStatus(t, "unknown sense", w.Add(5, Entity{Senses: map[string]Sense{"taste": {Range: 3}}}), ErrInvalid)
	expectStatus(t, "hidden from an unknown sense", w.Add(5, Entity{Hidden: []string{"taste"}}), ErrInvalid)
	expectStatus(t, "emit an unknown sense", w.Emit(Stimulus{Sense: "taste"}), ErrInvalid)
	expectStatus(t, "emit from an unknown source", w.Emit(Stimulus{Sense: "sight", HasSource: true, Source: 77}), ErrNotFound)
	cone := map[string]Sense{"sight": {Range: 5, Fov: 90}}
	expectStatus(t, "a cone without a facing", w.Update(3, Entity{Senses: cone}), ErrInvalid)
	must(t, w.Add(6, Entity{Y: 50, Facing: [3]float64{1, 0, 0}, Senses: cone}))
	expectStatus(t, "a cone turned to no facing", w.Turn(6, 0, 0, 0), ErrInvalid)
	must(t, w.Move(4, 10, 0))
	before := w.Events(nil)
	if len(before) != 1 {
		t.Fatalf("moved away: %+v", before)
	}
	expectStatus(t, "SetRange of an unknown entity", w.SetRange(42, "sight", 1), ErrNotFound)
	expectStatus(t, "SetHidden of an unknown sense", w.SetHidden(3, "taste", true), ErrInvalid)
	expectStatus(t, "Remove of an unknown entity", w.Remove(42), ErrNotFound)
	_, err := w.Entity(42)
	expectStatus(t, "Entity of an unknown entity", err, ErrNotFound)
	_, err = w.Perceives(3, 42, "sight")
	expectStatus(t, "Perceives of an unknown entity", err, ErrNotFound)
	_, err = w.Perceived(42, "sight", nil)
	expectStatus(t, "Perceived of an unknown entity", err, ErrNotFound)

	// A bad tick entry changes nothing, and Index names it.
	e = expectStatus(t, "entity twice", w.Tick([]Change{{ID: 3, X: 1}, {ID: 4, X: 2}, {ID: 3, X: 2}}), ErrInvalid)
	if e.Index != 2 || !strings.Contains(e.Error(), "tick entry 2") {
		t.Errorf("entity twice: index %d, %q", e.Index, e.Error())
	}
	e = expectStatus(t, "unknown entity in a tick", w.Tick([]Change{{ID: 4, X: 9}, {ID: 8, X: 9}}), ErrNotFound)
	if e.Index != 1 {
		t.Errorf("unknown entity in a tick: index %d", e.Index)
	}
	e = expectStatus(t, "update without an entity", w.Tick([]Change{{ID: 3, Kind: ChangeUpdate}}), ErrInvalid)
	if e.Index != 0 {
		t.Errorf("update without an entity: index %d", e.Index)
	}
	bad := Entity{Senses: map[string]Sense{"taste": {Range: 1}}}
	e = expectStatus(t, "update with an unknown sense", w.Tick([]Change{{ID: 4, X: 3}, {ID: 3, Kind: ChangeUpdate, Entity: &bad}}), ErrInvalid)
	if e.Index != 1 {
		t.Errorf("update with an unknown sense: index %d", e.Index)
	}
	e = expectStatus(t, "unknown kind", w.Tick([]Change{{ID: 3, Kind: 7}}), ErrInvalid)
	if e.Index != 0 {
		t.Errorf("unknown kind: index %d", e.Index)
	}
	if got, _ := w.Entity(4); got.X != 10 {
		t.Errorf("a refused tick moved entity 4 to %v", got.X)
	}
	// Failed calls leave the last successful call's events.
	if got := w.Events(nil); !reflect.DeepEqual(got, before) {
		t.Errorf("events after failed calls: %+v, want %+v", got, before)
	}
}

func TestOpenErrors(t *testing.T) {
	_, err := Open(Options{Config: "[percept]\nbackend = grid\n[world]\nthreads = 0\n"})
	e := expectStatus(t, "bad config", err, ErrConfig)
	if e.Line != 4 || e.Section != "world" || e.Key != "threads" || e.Index != -1 {
		t.Errorf("bad config: line %d, section %q, key %q, index %d", e.Line, e.Section, e.Key, e.Index)
	}
	_, err = Open(Options{Backend: "nosuchbackend"})
	expectStatus(t, "unknown backend", err, ErrPlugin)
	_, err = Open(Options{File: filepath.Join(t.TempDir(), "none.ini")})
	expectStatus(t, "missing file", err, ErrIO)
	_, err = Open(Options{Config: "[percept]\n", File: "percept.ini"})
	expectStatus(t, "both Config and File", err, ErrInvalid)
	_, err = Open(Options{Threads: -1})
	expectStatus(t, "negative threads", err, ErrInvalid)
	_, err = Open(Options{Backend: "grid\x00"})
	expectStatus(t, "a NUL byte", err, ErrInvalid)

	// A file, and a world with the defaults.
	path := filepath.Join(t.TempDir(), "world.ini")
	must(t, os.WriteFile(path, []byte("[world]\nsenses = touch\n"), 0o644))
	w := open(t, Options{File: path, Backend: "grid"})
	if got := w.Senses(); !reflect.DeepEqual(got, []string{"touch"}) {
		t.Errorf("from a file: senses %v", got)
	}
	w = open(t, Options{Backend: "grid"})
	if got := w.Senses(); !reflect.DeepEqual(got, []string{"sight", "hearing", "smell"}) {
		t.Errorf("defaults: senses %v", got)
	}
}

// After Close, every call fails with ErrClosed or gives a zero value, and
// Close again does nothing; a nil World behaves as a closed one.
func TestClosed(t *testing.T) {
	w, err := Open(Options{Config: gridConfig})
	must(t, err)
	must(t, w.Add(1, Entity{Senses: map[string]Sense{"sight": {Range: 5}}}))
	must(t, w.Add(2, Entity{}))
	must(t, w.Tick([]Change{{ID: 2, X: 1}}))
	for _, world := range []*World{w, nil} {
		must(t, world.Close())
		must(t, world.Close())
		_, entityErr := world.Entity(1)
		_, perceivesErr := world.Perceives(1, 2, "sight")
		_, perceivedErr := world.Perceived(1, "sight", nil)
		for i, err := range []error{
			world.Add(3, Entity{}), world.Update(1, Entity{}), entityErr,
			world.Move(1, 0, 0), world.Move3(1, 0, 0, 0), world.Turn(1, 1, 0, 0),
			world.Remove(1), world.SetRange(1, "sight", 1), world.SetHidden(1, "sight", true),
			world.Emit(Stimulus{Sense: "sight"}), world.Tick(nil), perceivesErr, perceivedErr,
		} {
			if !errors.Is(err, ErrClosed) {
				t.Errorf("call %d after Close: %v", i, err)
			}
		}
		kept := []Event{{Observer: 5}}
		if world.Len() != 0 || world.Contains(1) || world.Senses() != nil ||
			world.SenseName(0) != "" || len(world.Events(kept)) != 1 {
			t.Errorf("reading after Close")
		}
	}
}

// A world on two threads gives the one-thread world's events, tick by tick.
func TestThreads(t *testing.T) {
	a := open(t, Options{Config: gridConfig})
	b := open(t, Options{Config: gridConfig, Threads: 2})
	seed := uint32(1)
	rand := func(n uint32) float64 {
		seed = seed*1103515245 + 12345
		return float64((seed >> 8) % n)
	}
	for id := uint32(1); id <= 300; id++ {
		e := Entity{X: rand(200), Y: rand(200), Senses: map[string]Sense{
			"sight": {Range: 10 + rand(10)}, "hearing": {Range: rand(15)}}}
		must(t, a.Add(id, e))
		must(t, b.Add(id, e))
	}
	var ea, eb []Event
	total := 0
	changes := make([]Change, 300)
	for tick := 0; tick < 10; tick++ {
		for i := range changes {
			changes[i] = Change{ID: uint32(i + 1), X: rand(200), Y: rand(200)}
		}
		must(t, a.Tick(changes))
		must(t, b.Tick(changes))
		ea, eb = a.Events(ea[:0]), b.Events(eb[:0])
		if !reflect.DeepEqual(ea, eb) {
			t.Fatalf("tick %d: two threads differ from one", tick)
		}
		total += len(ea)
	}
	if total < 100 {
		t.Errorf("only %d events in 10 ticks", total)
	}
}

func TestStrings(t *testing.T) {
	for k, want := range map[EventKind]string{EventEnter: "enter", EventLeave: "leave",
		EventMove: "move", EventStimulus: "stimulus", 9: "unknown"} {
		if k.String() != want {
			t.Errorf("EventKind(%d).String() = %q", int(k), k.String())
		}
	}
	if StatusNotFound.String() == StatusInvalid.String() || StatusNotFound.String() == "" {
		t.Errorf("Status strings: %q, %q", StatusNotFound, StatusInvalid)
	}
	if ErrNotFound.Error() == "" || ErrClosed.Error() == "" {
		t.Errorf("sentinel messages are empty")
	}
}
