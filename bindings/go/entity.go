package percept

// #include "world.h"
import "C"

// Sense is what an entity has of one of the world's senses. The zero
// Sense lacks it.
type Sense struct {
	Range  float64 // above 0: the entity has the sense, out to this distance
	Margin float64 // a target perceived is kept out to Range + Margin
	Fov    float64 // the cone's full angle in degrees, in (0, 360]; 0 means 360: no cone
	Ignore uint32  // targets whose Tags share a bit with it are not perceived
}

// Entity describes an entity, as Add and Update take it and World.Entity
// gives it back. Senses are named as the world names them ("sight",
// "hearing", "smell" by default): a map keeps a description readable
// whatever senses a world has, and a sense absent from it is lacking.
type Entity struct {
	X, Y, Z float64
	Facing  [3]float64 // any length; not zero while a sense has a cone
	Tags    uint32     // what the entity is, for the others' Ignore masks
	Hidden  []string   // the senses it is hidden from
	Senses  map[string]Sense
}

// describe writes e into *d, as the C library reads an entity.
func (w *World) describe(e *Entity, d *C.percept_entity_desc) error {
	*d = C.percept_entity_desc{size: C.sizeof_percept_entity_desc}
	d.x, d.y, d.z = C.double(e.X), C.double(e.Y), C.double(e.Z)
	for k, f := range e.Facing {
		d.facing[k] = C.double(f)
	}
	d.tags = C.uint32_t(e.Tags)
	for _, name := range e.Hidden {
		s, err := w.sense(name)
		if err != nil {
			return err
		}
		d.hidden |= 1 << uint(s)
	}
	for name, p := range e.Senses {
		s, err := w.sense(name)
		if err != nil {
			return err
		}
		d.sense[s] = C.percept_sense_params{
			_range: C.double(p.Range),
			margin: C.double(p.Margin),
			fov:    C.double(p.Fov),
			ignore: C.uint32_t(p.Ignore),
		}
	}
	return nil
}

// entity reads *d back: every sense of the world is in Senses, a lacking
// one with a zero Range.
func (w *World) entity(d *C.percept_entity_desc) Entity {
	e := Entity{
		X: float64(d.x), Y: float64(d.y), Z: float64(d.z),
		Facing: [3]float64{float64(d.facing[0]), float64(d.facing[1]), float64(d.facing[2])},
		Tags:   uint32(d.tags),
		Senses: make(map[string]Sense, len(w.senses)),
	}
	for i, name := range w.senses {
		if d.hidden&(1<<uint(i)) != 0 {
			e.Hidden = append(e.Hidden, name)
		}
		p := &d.sense[i]
		e.Senses[name] = Sense{
			Range:  float64(p._range),
			Margin: float64(p.margin),
			Fov:    float64(p.fov),
			Ignore: uint32(p.ignore),
		}
	}
	return e
}

// Add puts entity id into the world. Its events report both directions:
// who now perceives it, and what it perceives.
func (w *World) Add(id uint32, e Entity) error {
	if w.closed() {
		return ErrClosed
	}
	if err := w.describe(&e, w.scratch); err != nil {
		return err
	}
	if rc := C.w_add(w.c, C.percept_id(id), w.scratch); rc < 0 {
		return w.failed(rc)
	}
	return nil
}

// Update changes every field of entity id to e's at once, as one change:
// read it with Entity, change some fields, Update.
func (w *World) Update(id uint32, e Entity) error {
	if w.closed() {
		return ErrClosed
	}
	if err := w.describe(&e, w.scratch); err != nil {
		return err
	}
	if rc := C.w_update(w.c, C.percept_id(id), w.scratch); rc < 0 {
		return w.failed(rc)
	}
	return nil
}

// Entity gives entity id's description (a Fov of 0 reads back as 360).
func (w *World) Entity(id uint32) (Entity, error) {
	if w.closed() {
		return Entity{}, ErrClosed
	}
	*w.scratch = C.percept_entity_desc{size: C.sizeof_percept_entity_desc}
	if rc := C.w_get_entity(w.c, C.percept_id(id), w.scratch); rc < 0 {
		return Entity{}, readFailed("percept_get_entity", rc)
	}
	return w.entity(w.scratch), nil
}

// Move moves entity id to (x, y), its height unchanged. A move to where
// it is changes nothing.
func (w *World) Move(id uint32, x, y float64) error {
	if w.closed() {
		return ErrClosed
	}
	if rc := C.w_move(w.c, C.percept_id(id), C.double(x), C.double(y)); rc < 0 {
		return w.failed(rc)
	}
	return nil
}

// Move3 moves entity id to (x, y, z).
func (w *World) Move3(id uint32, x, y, z float64) error {
	if w.closed() {
		return ErrClosed
	}
	rc := C.w_move3(w.c, C.percept_id(id), C.double(x), C.double(y), C.double(z))
	if rc < 0 {
		return w.failed(rc)
	}
	return nil
}

// Turn makes entity id face (fx, fy, fz): any length, not zero while a
// sense of it has a cone.
func (w *World) Turn(id uint32, fx, fy, fz float64) error {
	if w.closed() {
		return ErrClosed
	}
	rc := C.w_turn(w.c, C.percept_id(id), C.double(fx), C.double(fy), C.double(fz))
	if rc < 0 {
		return w.failed(rc)
	}
	return nil
}

// Remove takes entity id out of the world; every pair it was part of
// leaves, both ways.
func (w *World) Remove(id uint32) error {
	if w.closed() {
		return ErrClosed
	}
	if rc := C.w_remove(w.c, C.percept_id(id)); rc < 0 {
		return w.failed(rc)
	}
	return nil
}

// SetRange sets entity id's range for a sense (0 switches it off).
func (w *World) SetRange(id uint32, sense string, r float64) error {
	if w.closed() {
		return ErrClosed
	}
	s, err := w.sense(sense)
	if err != nil {
		return err
	}
	if rc := C.w_set_range(w.c, C.percept_id(id), s, C.double(r)); rc < 0 {
		return w.failed(rc)
	}
	return nil
}

// SetHidden makes entity id imperceptible (hidden) or perceptible to a sense.
func (w *World) SetHidden(id uint32, sense string, hidden bool) error {
	if w.closed() {
		return ErrClosed
	}
	s, err := w.sense(sense)
	if err != nil {
		return err
	}
	h := C.int(0)
	if hidden {
		h = 1
	}
	if rc := C.w_set_hidden(w.c, C.percept_id(id), s, h); rc < 0 {
		return w.failed(rc)
	}
	return nil
}
