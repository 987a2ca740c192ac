// npc_guard is a guard NPC's AI in Go: it watches with a cone of sight and
// a margin, turns to what it hears (footsteps, a stone thrown), and reacts
// to what enters and leaves its senses, reading each tick's events into
// one slice it reuses.
//
//	go run .
package main

import (
	"fmt"
	"log"

	"percept"
)

const guard, thief = 1, 2

func main() {
	w, err := percept.Open(percept.Options{Config: "[percept]\nbackend = grid\nmove_events = off\n"})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	must(w.Add(guard, percept.Entity{X: 100, Y: 100, Facing: [3]float64{1, 0, 0},
		Senses: map[string]percept.Sense{
			"sight":   {Range: 40, Margin: 10, Fov: 120},
			"hearing": {Range: 15},
		}}))
	must(w.Add(thief, percept.Entity{X: 60, Y: 100,
		Senses: map[string]percept.Sense{"sight": {Range: 30}, "hearing": {Range: 30}}}))

	// The thief's path; at tick 3 it throws a stone to draw the guard.
	path := []struct {
		x, y  float64
		stone bool
	}{{90, 100, false}, {95, 130, false}, {100, 135, true}, {100, 170, false}}
	var events []percept.Event
	for i, p := range path {
		tick := i + 1
		must(w.Tick([]percept.Change{{ID: thief, Kind: percept.ChangeMove, X: p.x, Y: p.y}}))
		events = w.Events(events[:0])
		turn := react(w, tick, events)
		if p.stone {
			must(w.Emit(percept.Stimulus{Sense: "hearing", X: 100, Y: 110, HasSource: true, Source: thief}))
			events = w.Events(events[:0])
			if t := react(w, tick, events); t != nil {
				turn = t
			}
		}
		// The world may change right after reading: nothing is delivering.
		if turn != nil {
			must(w.Tick([]percept.Change{*turn}))
			events = w.Events(events[:0])
			react(w, tick, events)
		}
	}
}

// react prints the guard's reactions to a call's events, and gives its
// turn towards what it heard, if anything.
func react(w *percept.World, tick int, events []percept.Event) *percept.Change {
	var turn *percept.Change
	for _, e := range events {
		if e.Observer != guard {
			continue
		}
		sense := w.SenseName(e.Sense)
		switch {
		case e.Kind == percept.EventEnter && sense == "sight":
			fmt.Printf("tick %d: the guard sees %d: \"Halt!\"\n", tick, e.Target)
		case e.Kind == percept.EventLeave && sense == "sight":
			fmt.Printf("tick %d: the guard lost sight of %d\n", tick, e.Target)
		case e.Kind == percept.EventEnter && sense == "hearing":
			fmt.Printf("tick %d: the guard hears %d and turns to it\n", tick, e.Target)
			turn = face(e)
		case e.Kind == percept.EventStimulus && sense == "hearing":
			fmt.Printf("tick %d: the guard hears a noise at (%g, %g) and turns to it\n", tick, e.X, e.Y)
			turn = face(e)
		}
	}
	return turn
}

// face turns the guard towards where an event happened.
func face(e percept.Event) *percept.Change {
	const x, y = 100, 100 // the guard stands still
	return &percept.Change{ID: guard, Kind: percept.ChangeTurn, X: e.X - x, Y: e.Y - y}
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
