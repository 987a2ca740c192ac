package percept

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
	"time"
)

// The benchmarks' workload, a uniform walk: benchEntities entities in a
// square holding about 20 of them within sight of each, sight 50, hearing
// 30, smell 15; every tick each walks a tenth of its sight on a slowly
// turning heading, reflecting at the walls, with MOVE events on.
// Run with a fixed count: each tick costs milliseconds outside the timer.
//
//	go test -run - -bench . -benchtime 20x
const (
	benchEntities = 10000
	benchSight    = 50.0
)

type walk struct {
	side          float64
	x, y, heading []float64
	rng           *rand.Rand
	changes       []Change
}

func newWalk(n int) *walk {
	wk := &walk{
		side:    math.Sqrt(float64(n) * math.Pi * benchSight * benchSight / 20),
		x:       make([]float64, n),
		y:       make([]float64, n),
		heading: make([]float64, n),
		rng:     rand.New(rand.NewSource(1)),
		changes: make([]Change, n),
	}
	for i := range wk.x {
		wk.x[i] = wk.rng.Float64() * wk.side
		wk.y[i] = wk.rng.Float64() * wk.side
		wk.heading[i] = wk.rng.Float64() * 2 * math.Pi
	}
	return wk
}

// reflect puts v back into [0, side], and says whether it bounced.
func (wk *walk) reflect(v *float64) bool {
	switch {
	case *v < 0:
		*v = math.Min(-*v, wk.side)
	case *v > wk.side:
		*v = math.Max(2*wk.side-*v, 0)
	default:
		return false
	}
	return true
}

// step moves every entity and gives the tick's changes.
func (wk *walk) step() []Change {
	for i := range wk.x {
		wk.heading[i] += (wk.rng.Float64()*2 - 1) * 0.3
		x := wk.x[i] + benchSight/10*math.Cos(wk.heading[i])
		y := wk.y[i] + benchSight/10*math.Sin(wk.heading[i])
		if wk.reflect(&x) {
			wk.heading[i] = math.Pi - wk.heading[i]
		}
		if wk.reflect(&y) {
			wk.heading[i] = -wk.heading[i]
		}
		wk.x[i], wk.y[i] = x, y
		wk.changes[i] = Change{ID: uint32(i + 1), X: x, Y: y}
	}
	return wk.changes
}

func openWalk(b *testing.B) (*World, *walk) {
	wk := newWalk(benchEntities)
	config := fmt.Sprintf("[percept]\nbackend = grid\nmove_events = on\n"+
		"[world]\nmin_x = 0\nmin_y = 0\nmax_x = %g\nmax_y = %g\nreserve = %d\n",
		wk.side, wk.side, benchEntities)
	w, err := Open(Options{Config: config})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	senses := map[string]Sense{"sight": {Range: benchSight}, "hearing": {Range: 30}, "smell": {Range: 15}}
	for i := range wk.x {
		if err := w.Add(uint32(i+1), Entity{X: wk.x[i], Y: wk.y[i], Senses: senses}); err != nil {
			b.Fatal(err)
		}
	}
	return w, wk
}

// BenchmarkEvents times Events alone, draining each tick's events into a
// reused slice, and reports the time per event.
func BenchmarkEvents(b *testing.B) {
	w, wk := openWalk(b)
	if err := w.Tick(wk.step()); err != nil {
		b.Fatal(err)
	}
	// Room for any tick's events: growing the slice is not draining.
	events := w.Events(nil)
	events = make([]Event, 0, 2*len(events))
	var drained time.Duration
	total := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := w.Tick(wk.step()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		events = w.Events(events[:0])
		drained += time.Since(start)
		total += len(events)
	}
	b.ReportMetric(float64(drained.Nanoseconds())/float64(total), "ns/event")
	b.ReportMetric(float64(total)/float64(b.N), "events/tick")
}

// BenchmarkTick times a tick of every entity's move through Tick.
func BenchmarkTick(b *testing.B) {
	w, wk := openWalk(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		changes := wk.step()
		b.StartTimer()
		if err := w.Tick(changes); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTickFromC times the same ticks as BenchmarkTick with the C
// array written beforehand: percept_tick alone, as a C program calls it.
func BenchmarkTickFromC(b *testing.B) {
	w, wk := openWalk(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		changes := wk.step()
		if err := w.fill(changes); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := w.tickFilled(len(changes)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTickCopy times what Tick adds to percept_tick: copying the
// changes into the C array.
func BenchmarkTickCopy(b *testing.B) {
	w, wk := openWalk(b)
	changes := wk.step()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := w.fill(changes); err != nil {
			b.Fatal(err)
		}
	}
}
