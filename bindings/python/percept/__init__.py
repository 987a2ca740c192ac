"""percept: who perceives whom, by which sense, for game servers.

A binding of the C library percept (percept.h). A World holds entities;
every call that changes it reports each change of who perceives whom as
an event, read after the call with World.events() as one NumPy array::

    import percept

    with percept.World("[percept]\\nbackend = grid\\n") as w:
        w.add(1, 100, 100, facing=(1, 0),
              sight={"range": 40, "margin": 10, "fov": 120})
        w.add(2, 60, 100, hearing=30)
        w.tick(moves=([2], [[90, 100]]), turns=([1], [[-1, 0]]))
        for e in w.events():
            print(e["kind"], e["observer"], e["target"], w.senses[e["sense"]])

Failed calls raise percept.Error, carrying the library's status and message.
"""

import numpy

from . import _percept
from ._percept import (
    EBUSY,
    ECONFIG,
    EEXIST,
    EINVAL,
    EIO,
    ENOENT,
    ENOMEM,
    ENTER,
    EPLUGIN,
    LEAVE,
    MAX_SENSES,
    MOVE,
    STIMULUS,
    VERSION,
    Error,
)

__all__ = [
    "World", "Error", "EVENT_DTYPE", "ENTER", "LEAVE", "MOVE", "STIMULUS",
    "EINVAL", "ENOMEM", "EEXIST", "ENOENT", "EBUSY", "ECONFIG", "EPLUGIN",
    "EIO", "MAX_SENSES", "VERSION",
]


def _event_dtype():
    """The dtype of percept_event, from the layout the C compiler gave it."""
    itemsize, fields = _percept.EVENT_LAYOUT
    return numpy.dtype({
        "names": [name for name, _, _, _ in fields],
        "formats": [f"{kind}{size}" for _, _, size, kind in fields],
        "offsets": [offset for _, offset, _, _ in fields],
        "itemsize": itemsize,
    })


#: One event: kind (ENTER, LEAVE, MOVE, STIMULUS), sense (an index into
#: World.senses), observer, target (a stimulus' source, or 0 without one),
#: x, y, z (the target's position, or the stimulus' point) and has_source.
EVENT_DTYPE = _event_dtype()
_percept._bind_numpy(numpy.empty, EVENT_DTYPE, numpy.dtype(numpy.uint32))


def _ids(ids, what):
    """IDs as a C-contiguous uint32 array, refusing what does not fit."""
    a = numpy.asarray(ids)
    if a.dtype != numpy.uint32:
        if a.size and a.dtype.kind not in "iu":
            raise TypeError(f"{what}: IDs must be integers, not {a.dtype}")
        if a.size and (a.min() < 0 or a.max() > 0xFFFFFFFF):
            raise OverflowError(f"{what}: an ID must be 0 to 2**32 - 1")
        a = a.astype(numpy.uint32)
    return numpy.ascontiguousarray(a)


def _columns(pair, what):
    """(ids, values) as the buffers World._tick reads: uint32 IDs, and a
    float64 row of 2 or 3 values for each."""
    if pair is None:
        return None, None
    ids, values = pair
    ids = _ids(ids, what)
    values = numpy.ascontiguousarray(values, dtype=numpy.float64)
    if values.size == 0 and values.ndim == 1:
        values = values.reshape(0, 3)
    return ids, values


class World(_percept.World):
    """A percept world.

    World(config=None, file=None, backend=None, plugin_dir=None, threads=0):
    from INI text or an INI file (neither: an empty config, so that
    backend must name one), the options taking precedence over it. Closed by close(), at the end of a
    with block, or when collected; a closed world raises ValueError.
    """

    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def tick(self, moves=None, turns=None, updates=None):
        """Apply every change at once, as one percept_tick().

        moves: (ids, positions), positions of shape (n, 3), or (n, 2) to
        keep each entity's height as move() does; turns: (ids, facings),
        (n, 2) or (n, 3); updates: a mapping of ID to a dict of add()'s
        fields. Each entity at most once. On a refusal, Error.index counts
        the moves, then the turns, then the updates in the mapping's order.
        """
        move_ids, positions = _columns(moves, "moves")
        turn_ids, facings = _columns(turns, "turns")
        self._tick(move_ids, positions, turn_ids, facings, updates)

    def move_many(self, ids, positions):
        """A tick of moves: tick(moves=(ids, positions))."""
        move_ids, positions = _columns((ids, positions), "moves")
        self._tick(move_ids, positions, None, None, None)
