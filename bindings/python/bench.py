"""bench.py - what the Python package costs over C, on a uniform walk.

N entities (sight 50, hearing 30, smell 15, MOVE events on, backend grid)
in a square of side sqrt(N * pi * 50**2 / 20): each sees about 20 others.
Every tick every entity moves 5 (a tenth of its sight) on a slowly
turning heading, reflecting at the walls. Two identical worlds take the
same ticks, interleaved: one through World.move_many() from NumPy arrays,
the other through percept_tick() called directly with ctypes on a
percept_change array built before the clock starts (a ctypes call costs
about a microsecond, nothing against a tick). Prints the medians of the
ticks' times, their ratio, and what World.events() costs per event drained.
The two worlds' events are compared byte for byte.

    python3 bench.py [--entities N] [--ticks T] [--columns 2|3]
"""
import argparse
import ctypes
import math
import os
import statistics
import sys
import time

import numpy

# The package installed (or staged on PYTHONPATH), not its sources beside
# this script, which lack the built extension.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
import percept  # noqa: E402

SENSES = (("sight", 50.0), ("hearing", 30.0), ("smell", 15.0))


class SenseParams(ctypes.Structure):
    _fields_ = [("range", ctypes.c_double), ("margin", ctypes.c_double),
                ("fov", ctypes.c_double), ("ignore", ctypes.c_uint32)]


class EntityDesc(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("x", ctypes.c_double), ("y", ctypes.c_double),
                ("z", ctypes.c_double), ("facing", ctypes.c_double * 3),
                ("tags", ctypes.c_uint32), ("hidden", ctypes.c_uint),
                ("sense", SenseParams * percept.MAX_SENSES)]


class Change(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint32), ("kind", ctypes.c_int), ("x", ctypes.c_double),
                ("y", ctypes.c_double), ("z", ctypes.c_double), ("desc", ctypes.c_void_p)]


def library():
    """libpercept as ctypes sees it: the copy the extension has loaded."""
    lib = ctypes.CDLL("libpercept.so.3")
    lib.percept_world_open_string.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p,
                                              ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.percept_set_event_buffer.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.percept_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(EntityDesc)]
    lib.percept_tick.argtypes = [ctypes.c_void_p, ctypes.POINTER(Change), ctypes.c_size_t]
    lib.percept_events.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
    lib.percept_events.restype = ctypes.c_void_p
    lib.percept_world_close.argtypes = [ctypes.c_void_p]
    return lib


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=10000)
    parser.add_argument("--ticks", type=int, default=20)
    parser.add_argument("--columns", type=int, choices=(2, 3), default=2,
                        help="2: positions (n, 2), each height kept; 3: (n, 3)")
    args = parser.parse_args()
    n = args.entities
    side = math.sqrt(n * math.pi * 50.0**2 / 20)
    config = (f"[percept]\nbackend = grid\nmove_events = on\n"
              f"[world]\nmin_x = 0\nmin_y = 0\nmax_x = {side}\nmax_y = {side}\n")
    rng = numpy.random.default_rng(2024)
    ids = numpy.arange(1, n + 1, dtype=numpy.uint32)
    xy = rng.uniform(0, side, (n, 2))
    heading = rng.uniform(0, 2 * math.pi, n)

    lib = library()
    c_world = ctypes.c_void_p()
    status = lib.percept_world_open_string(ctypes.byref(c_world), config.encode(), None, None,
                                           None)
    assert status == 0, status
    lib.percept_set_event_buffer(c_world, 1)
    world = percept.World(config)
    desc = EntityDesc(size=ctypes.sizeof(EntityDesc))
    for s, (name, reach) in enumerate(SENSES):
        desc.sense[s].range = reach
    senses = {name: reach for name, reach in SENSES}
    for i, (x, y) in zip(ids, xy):
        world.add(i, x, y, **senses)
        desc.x, desc.y = x, y
        assert lib.percept_add(c_world, int(i), ctypes.byref(desc)) == 0

    changes = (Change * n)()
    columns = numpy.frombuffer(changes, dtype=numpy.dtype({
        "names": ["id", "kind", "x", "y"],
        "formats": ["u4", "i4", "f8", "f8"],
        "offsets": [Change.id.offset, Change.kind.offset, Change.x.offset, Change.y.offset],
        "itemsize": ctypes.sizeof(Change)}))
    columns["id"] = ids
    columns["kind"] = 0  # PERCEPT_CHANGE_MOVE, every z 0
    count = ctypes.c_size_t()
    python_ns, c_ns, drain_ns, drained = [], [], 0, 0
    warmup = 3
    for tick in range(warmup + args.ticks):
        heading += rng.uniform(-0.1, 0.1, n)
        xy += 5.0 * numpy.column_stack([numpy.cos(heading), numpy.sin(heading)])
        for axis in (0, 1):  # reflect at the walls
            low, high = xy[:, axis] < 0, xy[:, axis] > side
            xy[low, axis] = -xy[low, axis]
            xy[high, axis] = 2 * side - xy[high, axis]
            flip = low | high
            heading[flip] = (math.pi if axis == 0 else 0.0) - heading[flip]
        columns["x"], columns["y"] = xy[:, 0], xy[:, 1]
        positions = xy if args.columns == 2 else numpy.column_stack([xy, numpy.zeros(n)])

        def python_tick():
            start = time.perf_counter_ns()
            world.move_many(ids, positions)
            return time.perf_counter_ns() - start

        def c_tick():
            start = time.perf_counter_ns()
            status = lib.percept_tick(c_world, changes, n)
            elapsed = time.perf_counter_ns() - start
            assert status == 0, status
            return elapsed

        # Each world goes first every other tick, lest the order favour one.
        if tick % 2:
            p, c = python_tick(), c_tick()
        else:
            c, p = c_tick(), python_tick()
        start = time.perf_counter_ns()
        events = world.events()
        elapsed = time.perf_counter_ns() - start
        pointer = lib.percept_events(c_world, ctypes.byref(count))
        same = count.value == len(events) and \
            ctypes.string_at(pointer, events.nbytes) == events.tobytes()
        assert same, f"tick {tick}: the two worlds' events differ"
        if tick >= warmup:
            python_ns.append(p)
            c_ns.append(c)
            drain_ns += elapsed
            drained += len(events)

    world.close()
    lib.percept_world_close(c_world)
    p, c = statistics.median(python_ns), statistics.median(c_ns)
    print(f"{n} entities, side {side:.0f}, {args.ticks} ticks, positions (n, {args.columns})")
    print(f"tick from NumPy (move_many): {p / 1e6:.2f} ms median")
    print(f"tick from C (percept_tick):  {c / 1e6:.2f} ms median")
    print(f"ratio: {p / c:.3f}")
    print(f"events drained: {drained} ({drained // args.ticks} a tick), "
          f"{drain_ns / drained:.1f} ns per event with World.events()")


if __name__ == "__main__":
    main()
