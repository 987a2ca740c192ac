package percept

// #include "world.h"
import "C"

// Stimulus is a one-shot noise, flash or puff of scent at (X, Y, Z). An
// observer perceives it when it is not the Source, its range for the sense
// times Strength reaches the point (a Strength of 0 means 1), the point is
// in its cone, and its Ignore mask shares no bit with Tags.
type Stimulus struct {
	Sense     string
	X, Y, Z   float64
	Strength  float64
	HasSource bool   // whether Source names the entity it comes from
	Source    uint32 // an entity in the world, which does not perceive it
	Tags      uint32
}

// Emit delivers a stimulus: one EventStimulus per observer that perceives
// it, in observer order. The world does not change.
func (w *World) Emit(s Stimulus) error {
	if w.closed() {
		return ErrClosed
	}
	sense, err := w.sense(s.Sense)
	if err != nil {
		return err
	}
	has := C.int(0)
	if s.HasSource {
		has = 1
	}
	rc := C.w_emit(w.c, sense, C.double(s.X), C.double(s.Y), C.double(s.Z),
		C.double(s.Strength), has, C.percept_id(s.Source), C.uint32_t(s.Tags))
	if rc < 0 {
		return w.failed(rc)
	}
	return nil
}
