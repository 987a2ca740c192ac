"""Ticks: moves, turns and updates at once, from NumPy arrays or anything
numpy.asarray reads, with the library's refusals."""
import array

import numpy
import pytest

import percept
from conftest import CONFIG, lines


def test_a_move_and_a_turn_at_once(guard_and_thief):
    w = guard_and_thief
    w.tick(moves=([2], [[90, 100]]), turns=([1], [[1, 0.1]]))
    assert lines(w) == [("enter", 1, 2, "hearing"), ("enter", 2, 1, "sight"),
                        ("enter", 2, 1, "hearing")]
    # A pair that would enter and leave within the tick gives nothing.
    w.tick(moves=(numpy.array([2], numpy.uint32), numpy.array([[130.0, 110.0, 0.0]])),
           turns=([1], [[-1, 0, 0]]))
    assert lines(w) == [("leave", 1, 2, "hearing"), ("leave", 2, 1, "sight"),
                        ("leave", 2, 1, "hearing")]


def test_updates_in_a_tick(guard_and_thief):
    w = guard_and_thief
    w.tick(moves=([2], [[90, 100]]), updates={1: {"hearing": 0, "sight": {"fov": 360}}})
    assert lines(w) == [("enter", 1, 2, "sight"), ("enter", 2, 1, "sight"),
                        ("enter", 2, 1, "hearing")]
    w.tick(updates={2: {"x": 0, "hidden": ["hearing"]}})
    assert lines(w) == [("leave", 1, 2, "sight"), ("leave", 2, 1, "sight"),
                        ("leave", 2, 1, "hearing")]
    with pytest.raises(TypeError):
        w.tick(updates={2: {"taste": 1}})
    with pytest.raises(TypeError):
        w.tick(updates={2: [("x", 1)]})


def test_two_columns_keep_the_height(world):
    world.add(1, 0, 0, 0, sight=60)
    world.add(2, 0, 0, 50)
    world.move_many([2], [[30, 0]])  # 30*30 + 50*50 <= 60*60
    assert world.perceives(1, 2, "sight")
    world.move_many([2], [[40, 0]])
    assert lines(world) == [("leave", 1, 2, "sight")]
    world.move_many([2], [[40, 0, 0]])
    assert lines(world) == [("enter", 1, 2, "sight")]


def test_move_events_carry_the_position():
    with percept.World("[percept]\nbackend = grid\n") as w:
        w.add(1, sight=60)
        w.add(2, 0, 0, 50)
        w.move_many([2], [[30, 0]])
        (e,) = w.events()
        assert e["kind"] == percept.MOVE
        assert (e["x"], e["y"], e["z"]) == (30, 0, 50)


def test_refusals_name_the_entry(guard_and_thief):
    w = guard_and_thief
    with pytest.raises(percept.Error) as info:
        w.tick(moves=([1, 99], [[0, 0], [1, 1]]))
    assert info.value.status == percept.ENOENT and info.value.index == 1
    with pytest.raises(percept.Error) as info:
        w.tick(moves=([2, 2], [[1, 1, 0], [2, 2, 0]]))
    assert info.value.status == percept.EINVAL and info.value.index == 1
    # Moves first, then turns, then updates.
    with pytest.raises(percept.Error) as info:
        w.tick(moves=([2], [[1, 1]]), turns=([1], [[0, 1]]), updates={2: {"x": 5}})
    assert info.value.status == percept.EINVAL and info.value.index == 2
    with pytest.raises(percept.Error) as info:
        w.tick(turns=([2, 1], [[0, 1], [0, 0]]))  # a cone needs a facing
    assert info.value.status == percept.EINVAL and info.value.index == 1
    with pytest.raises(percept.Error) as info:
        w.tick(updates={7: {"x": 1}})
    assert info.value.status == percept.ENOENT and info.value.index == 0
    with pytest.raises(percept.Error) as info:
        w.move_many([2], [[numpy.nan, 0]])
    assert info.value.status == percept.EINVAL and info.value.index == 0
    # Nothing changed, and the events are still those of the last success.
    assert lines(w) == []
    assert not w.perceives(1, 2, "hearing")
    w.move_many([2], [[90, 100]])
    assert lines(w) == [("enter", 1, 2, "hearing"), ("enter", 2, 1, "sight"),
                        ("enter", 2, 1, "hearing")]


def test_what_numpy_reads(world):
    world.add(1, sight=10)
    world.add(2, 50, 0)
    world.add(3, 60, 0)
    # Python lists, int64 IDs, float32 and non-contiguous positions.
    world.move_many(numpy.array([2, 3], numpy.int64), [[5, 0], [6, 0]])
    assert lines(world) == [("enter", 1, 2, "sight"), ("enter", 1, 3, "sight")]
    positions = numpy.array([[0, 50, 0, 60], [0, 0, 0, 0]], numpy.float32).T[1::2]
    world.move_many((3, 2), positions)
    assert lines(world) == [("leave", 1, 2, "sight"), ("leave", 1, 3, "sight")]
    world.move_many([], [])
    world.tick()
    assert lines(world) == []
    with pytest.raises(OverflowError):
        world.move_many([-1], [[0, 0]])
    with pytest.raises(OverflowError):
        world.move_many([2**32], [[0, 0]])
    with pytest.raises(TypeError):
        world.move_many([1.5], [[0, 0]])
    with pytest.raises(ValueError):
        world.move_many([2, 3], [[0, 0]])
    with pytest.raises(ValueError):
        world.move_many([2], [[0, 0, 0, 0]])
    with pytest.raises(ValueError):
        world.move_many([2], [0, 0])
    with pytest.raises(ValueError):
        world.tick(moves=[2])


def test_any_buffer_of_the_right_form(world):
    """The C part reads the buffer protocol, NumPy's or not, and only
    uint32 IDs and float64 values, C-contiguous."""
    world.add(1, sight=10)
    world.add(2, 50, 0)
    positions = numpy.array([[5.0, 0.0]])
    world._tick(array.array("I", [2]), positions, None, None, None)
    assert lines(world) == [("enter", 1, 2, "sight")]
    with pytest.raises(TypeError):
        world._tick(numpy.array([2], numpy.int64), positions, None, None, None)
    with pytest.raises(TypeError):
        world._tick(numpy.array([2], numpy.uint32), positions.astype(numpy.float32), None,
                    None, None)
    with pytest.raises((TypeError, ValueError, BufferError)):
        world._tick(numpy.array([2], numpy.uint32), numpy.zeros((2, 2)).T[:1], None, None,
                    None)
    with pytest.raises(TypeError):
        world._tick(numpy.array([2], numpy.uint32), None, None, None, None)
    assert world.perceives(1, 2, "sight")


def test_ticks_large_and_small(world):
    """The entries' room grows and is kept: large ticks after small ones
    give what moves one by one give, at the end of each tick."""
    rng = numpy.random.default_rng(1)
    ids = numpy.arange(1, 2001, dtype=numpy.uint32)
    with percept.World(CONFIG) as single:
        for w in (world, single):
            for i in ids:
                w.add(i, *rng.uniform(0, 500, 2), sight=20)
        for n in (2000, 3, 1000, 2000):
            chosen = rng.choice(ids, n, replace=False)
            positions = rng.uniform(0, 500, (n, 2))
            world.move_many(chosen, positions)
            for i, p in zip(chosen, positions):
                single.move(i, *p)
            seen = {int(i): list(world.perceived(i, "sight")) for i in ids}
            assert seen == {int(i): list(single.perceived(i, "sight")) for i in ids}
            assert len(world.events()) > 0


def test_no_call_from_inside_a_tick(guard_and_thief):
    """Python code run while a tick reads its arguments may not call the
    world: it would change what the tick is made of."""
    w = guard_and_thief

    class Sneaky:
        def __float__(self):
            w.move(2, 0, 0)
            return 95.0

    with pytest.raises(RuntimeError):
        w.tick(updates={2: {"x": Sneaky()}})
    assert lines(w) == []
    w.tick(updates={2: {"x": 95}})
    assert lines(w) == [("enter", 1, 2, "hearing"), ("enter", 2, 1, "sight"),
                        ("enter", 2, 1, "hearing")]
