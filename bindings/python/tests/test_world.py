"""The World's single calls, readings, errors and closing."""
import gc
import os
import threading

import numpy
import pytest

import percept
from conftest import CONFIG, lines


def test_defaults():
    # An empty config names no backend: the option gives it.
    with pytest.raises(percept.Error) as info:
        percept.World()
    assert info.value.status == percept.ECONFIG and info.value.key == "backend"
    with percept.World(backend="grid") as w:
        assert w.senses == ("sight", "hearing", "smell")
        assert len(w) == 0
        assert not w.closed


def test_the_guard_and_the_thief(guard_and_thief):
    w = guard_and_thief
    assert lines(w) == []
    w.turn(1, 1, 0.1)
    assert lines(w) == []
    w.move(2, 90, 100)
    assert lines(w) == [("enter", 1, 2, "hearing"), ("enter", 2, 1, "sight"),
                        ("enter", 2, 1, "hearing")]
    w.move(2, 130, 110)
    assert lines(w) == [("enter", 1, 2, "sight"), ("leave", 1, 2, "hearing"),
                        ("leave", 2, 1, "sight"), ("leave", 2, 1, "hearing")]
    # The margin keeps it at 46; a move to where it is changes nothing.
    w.move(2, 145, 110, 0)
    assert lines(w) == []
    assert w.perceives(1, 2, "sight") and not w.perceives(2, 1, "hearing")
    assert list(w.perceived(1, "sight")) == [2]
    assert list(w.perceived_by(2, "sight")) == [1]
    w.update(2, hearing=60)
    assert lines(w) == [("enter", 2, 1, "hearing")]
    w.emit("hearing", 140, 110, strength=1)
    assert lines(w) == [("stimulus", 2, None, "hearing")]
    w.emit("hearing", 100, 100, source=1)
    assert lines(w) == [("stimulus", 2, 1, "hearing")]
    w.set_hidden(2, "sight", True)
    assert lines(w) == [("leave", 1, 2, "sight")]
    w.set_hidden(2, "sight", False)  # 46 away: the margin no longer holds it
    assert lines(w) == []
    w.move(2, 130, 110)
    assert lines(w) == [("enter", 1, 2, "sight")]
    w.set_range(1, "sight", 0)
    assert lines(w) == [("leave", 1, 2, "sight")]
    w.remove(2)
    assert lines(w) == [("leave", 2, 1, "hearing")]
    assert len(w) == 1 and 1 in w and 2 not in w


def test_senses_by_index_and_name(guard_and_thief):
    w = guard_and_thief
    w.move(2, 130, 110)
    sight = w.senses.index("sight")
    assert w.perceives(1, 2, sight) and w.perceives(1, 2, "sight")
    e = w.events()[0]
    assert w.perceives(e["observer"], e["target"], e["sense"])


def test_a_world_of_its_own_senses():
    config = CONFIG + "[world]\nsenses = vision sonar\n"
    with percept.World(config) as w:
        assert w.senses == ("vision", "sonar")
        w.add(1, 0, 0, sonar={"range": 10, "fov": 90}, facing=(0, 1))
        w.add(2, 0, 5, vision=3)
        assert lines(w) == [("enter", 1, 2, "sonar")]
        with pytest.raises(TypeError):
            w.add(3, sight=10)


def test_update_changes_only_the_fields_given(world):
    world.add(1, 0, 0, sight={"range": 10, "margin": 5})
    world.add(2, 9, 0)
    world.update(1, sight={"range": 8})  # the margin stays: 9 <= 8 + 5
    assert lines(world) == []
    world.update(1, sight={"margin": 0})
    assert lines(world) == [("leave", 1, 2, "sight")]
    world.update(2, x=1, tags=4)
    assert lines(world) == [("enter", 1, 2, "sight")]
    world.update(1, sight={"ignore": 4})
    assert lines(world) == [("leave", 1, 2, "sight")]
    world.update(1, sight={"ignore": 0}, hidden=["sight"])
    assert lines(world) == [("enter", 1, 2, "sight")]
    world.update(2, hidden=("sight",))
    assert lines(world) == [("leave", 1, 2, "sight")]


def test_positional_fields_and_hidden(world):
    world.add(1, 0, 0, 5, None, 0, (), sight=10)
    world.add(2, 0, 0, 10, hidden=["sight"], hearing=20)
    assert lines(world) == [("enter", 2, 1, "hearing")]
    with pytest.raises(TypeError):
        world.add(3, 0, x=1)
    with pytest.raises(TypeError):
        world.add(3, hidden="sight")


def test_move_without_z_keeps_the_height(world):
    world.add(1, 0, 0, 0, sight=60)
    world.add(2, 0, 0, 50)
    world.move(2, 30, 0)  # 30*30 + 50*50 <= 60*60
    assert world.perceives(1, 2, "sight")
    world.move(2, 40, 0)  # 40*40 + 50*50 > 60*60
    assert not world.perceives(1, 2, "sight")
    world.move(2, 40, 0, 0)
    assert world.perceives(1, 2, "sight")


def test_library_errors(guard_and_thief):
    w = guard_and_thief
    with pytest.raises(percept.Error) as info:
        w.move(99, 0, 0)
    e = info.value
    assert e.status == percept.ENOENT and e.status_name == "PERCEPT_ENOENT"
    assert e.message and str(e) == e.message
    assert e.line is None and e.index is None
    with pytest.raises(percept.Error) as info:
        w.add(1)
    assert info.value.status == percept.EEXIST
    with pytest.raises(percept.Error) as info:
        w.add(4, sight=-1)
    assert info.value.status == percept.EINVAL
    with pytest.raises(percept.Error) as info:
        w.update(99, x=1)
    assert info.value.status == percept.ENOENT
    with pytest.raises(percept.Error) as info:
        w.emit("taste", 0, 0)
    assert info.value.status == percept.ENOENT
    with pytest.raises(percept.Error) as info:
        w.perceives(1, 2, 3)
    assert info.value.status == percept.EINVAL
    with pytest.raises(percept.Error) as info:
        w.perceived(99, "sight")
    assert info.value.status == percept.ENOENT
    with pytest.raises(percept.Error) as info:
        w.turn(1, 0, 0)  # a cone needs a facing
    assert info.value.status == percept.EINVAL
    assert len(w) == 2 and lines(w) == []


def test_argument_errors(guard_and_thief):
    w = guard_and_thief
    with pytest.raises(TypeError):
        w.move("1", 0, 0)
    with pytest.raises(TypeError):
        w.move(1, 0)
    with pytest.raises(TypeError):
        w.move(1, 0, 0, w=0)
    with pytest.raises(TypeError):
        w.add(5, x="far")
    with pytest.raises(TypeError):
        w.add(5, taste=3)
    with pytest.raises(TypeError):
        w.add(5, sight=[1])
    with pytest.raises(TypeError):
        w.add(5, sight={"reach": 1})
    with pytest.raises(ValueError):
        w.add(5, facing=(1,))
    with pytest.raises(OverflowError):
        w.remove(-1)
    with pytest.raises(OverflowError):
        w.add(2**32)
    with pytest.raises(OverflowError):
        w.add(5, tags=2**32)
    with pytest.raises(TypeError):
        w.perceives(1, 2, 1.5)
    assert len(w) == 2
    # NumPy's integers are IDs; an integer that is none is in no world.
    w.add(numpy.uint32(7), numpy.float64(1), 2)
    assert numpy.int64(7) in w and 2**40 not in w and -1 not in w


def test_open_errors(tmp_path):
    with pytest.raises(percept.Error) as info:
        percept.World("[percept]\nbackend = grid\n[world]\nthreads = 0\n")
    e = info.value
    assert e.status == percept.ECONFIG
    assert (e.line, e.section, e.key) == (4, "world", "threads")
    assert str(e) == e.message and e.index is None
    with pytest.raises(percept.Error) as info:
        percept.World(file=tmp_path / "missing.ini")
    assert info.value.status == percept.EIO
    with pytest.raises(percept.Error) as info:
        percept.World(backend="no_such_backend")
    assert info.value.status == percept.EPLUGIN
    assert info.value.line == 0 and info.value.key == ""
    with pytest.raises(TypeError):
        percept.World("", file="x.ini")
    with pytest.raises(ValueError):
        percept.World(threads=-1)


def test_open_a_file_with_options(tmp_path):
    ini = tmp_path / "world.ini"
    ini.write_text("[percept]\nbackend = bruteforce\n[world]\nsenses = smell\n")
    with percept.World(file=ini, backend="grid", threads=2) as w:
        assert w.senses == ("smell",)
        w.add(1, smell=5)
        w.add(2, 3, 4)
        assert lines(w) == [("enter", 1, 2, "smell")]


def test_closing():
    w = percept.World(CONFIG)
    with w as same:
        assert same is w
        w.add(1)
    assert w.closed
    w.close()
    for call in (lambda: len(w), lambda: 1 in w, lambda: w.add(2), w.events,
                 lambda: w.tick(moves=([1], [[0, 0]]))):
        with pytest.raises(ValueError):
            call()
    assert w.senses == ("sight", "hearing", "smell")


def test_a_world_collected_is_closed():
    """Closing a world unloads its backend's plugin: a world let go of,
    without close(), must be closed too."""
    def loaded():
        with open("/proc/self/maps") as maps:
            return "/hexgrid.so" in maps.read()
    if not os.path.exists("/proc/self/maps"):
        pytest.skip("no /proc/self/maps to see the plugins loaded")
    assert not loaded()
    w = percept.World(CONFIG, backend="hexgrid")
    w.add(1)
    assert loaded()
    del w
    gc.collect()
    assert not loaded()


def test_worlds_in_threads():
    """Distinct worlds in parallel threads (a tick releases the GIL)."""
    def run(results, index):
        with percept.World(CONFIG, threads=2) as w:
            rng = numpy.random.default_rng(7)
            ids = numpy.arange(1, 301, dtype=numpy.uint32)
            for i in ids:
                w.add(i, *rng.uniform(0, 200, 2), sight=15)
            total = 0
            for _ in range(10):
                w.move_many(ids, rng.uniform(0, 200, (300, 2)))
                total += len(w.events())
            results[index] = total
    results = [0] * 3
    threads = [threading.Thread(target=run, args=(results, i)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[0] > 100 and results == [results[0]] * 3
