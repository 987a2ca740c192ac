"""Events as a NumPy structured array laid out like percept_event."""
import numpy

import percept
from conftest import CONFIG


def test_the_dtype_is_the_structs():
    itemsize, fields = percept._percept.EVENT_LAYOUT
    dtype = percept.EVENT_DTYPE
    assert dtype.names == ("kind", "sense", "observer", "target", "x", "y", "z",
                           "has_source")
    assert dtype.itemsize == itemsize
    for name, offset, size, kind in fields:
        assert dtype.fields[name][1] == offset
        assert dtype.fields[name][0].itemsize == size
        assert dtype.fields[name][0].kind == kind
    assert len({percept.ENTER, percept.LEAVE, percept.MOVE, percept.STIMULUS}) == 4


def test_every_field_reads_back():
    with percept.World(CONFIG) as w:
        w.add(7, 1, 1, hearing=20)
        w.add(4000000000, 1.5, -2.25, 3)
        (e,) = w.events()
        assert e["kind"] == percept.ENTER
        assert w.senses[e["sense"]] == "hearing"
        assert (e["observer"], e["target"]) == (7, 4000000000)
        assert (e["x"], e["y"], e["z"]) == (1.5, -2.25, 3.0)
        assert e["has_source"] == 1
        w.emit("hearing", -4.5, 8.25, 0.5, source=4000000000)
        (e,) = w.events()
        assert e["kind"] == percept.STIMULUS
        assert (e["observer"], e["target"], e["has_source"]) == (7, 4000000000, 1)
        assert (e["x"], e["y"], e["z"]) == (-4.5, 8.25, 0.5)
        w.emit("hearing", 0, 0)
        (e,) = w.events()
        assert (e["target"], e["has_source"]) == (0, 0)


def test_an_array_of_the_callers_own():
    with percept.World(CONFIG) as w:
        w.add(1, sight=10, hearing=10)
        w.add(2, 5, 0, sight=10)
        first = w.events()
        assert first.dtype == percept.EVENT_DTYPE
        assert len(first) == 3 and list(first["observer"]) == [1, 1, 2]
        first["observer"] = 0  # writable, and the world's buffer is not touched
        w.perceived(1, "sight")  # reading calls leave the events
        assert list(w.events()["observer"]) == [1, 1, 2]
        w.remove(2)
        assert len(w.events()) == 3 and not first["observer"].any()
        w.move(1, 1, 1)
        empty = w.events()
        assert empty.shape == (0,) and empty.dtype == percept.EVENT_DTYPE


def test_filtering_without_a_loop():
    with percept.World(CONFIG) as w:
        ids = numpy.arange(1, 101, dtype=numpy.uint32)
        for i in ids:
            w.add(i, float(i), 0, sight=10)
        w.move_many(ids[:50], numpy.column_stack([ids[:50] * 2.0, numpy.zeros(50)]))
        ev = w.events()
        entered = ev[ev["kind"] == percept.ENTER]
        left = ev[ev["kind"] == percept.LEAVE]
        assert len(entered) + len(left) == len(ev) > 0
        for e in ev[:20]:
            pair = (int(e["observer"]), int(e["target"]))
            assert w.perceives(*pair, "sight") == (e["kind"] == percept.ENTER)
        seen = w.perceived(50, "sight")
        assert seen.dtype == numpy.uint32 and list(seen) == sorted(seen)


def test_arrays_held_are_never_filled_again():
    """events() fills again an array of its own only once the caller has
    let go of it: every array held keeps its events."""
    with percept.World(CONFIG) as w:
        w.add(1, sight=100)
        held = []
        for i in range(2, 8):
            w.add(i, i, 0)
            held.append(w.events())
            assert list(held[-1]["target"]) == [i]
        assert [int(a["target"][0]) for a in held] == list(range(2, 8))
        for a, b in zip(held, held[1:]):
            assert not numpy.shares_memory(a, b)
        # Let go of them, one at a time and all at once: the next ones are right.
        for i in range(8, 40):
            if i % 3:
                held.pop(0)
            else:
                held = []
            w.add(i, i, 0)
            ev = w.events()
            assert list(ev["target"]) == [i]
            assert all(not numpy.shares_memory(ev, a) for a in held)
            assert all(int(a["target"][0]) < i for a in held)
            held.append(ev)
        # A bigger call after small ones.
        w.move_many(numpy.arange(2, 40), numpy.full((38, 2), 500.0))
        assert len(w.events()) == 38
