"""Shared pieces of the Python package's suite: worlds on the grid backend,
and events as comparable tuples."""
import pytest

import percept

CONFIG = "[percept]\nbackend = grid\nmove_events = off\n"
KINDS = {percept.ENTER: "enter", percept.LEAVE: "leave", percept.MOVE: "move",
         percept.STIMULUS: "stimulus"}


def lines(world):
    """The last call's events as (kind, observer, target, sense name)."""
    return [(KINDS[int(e["kind"])], int(e["observer"]),
             int(e["target"]) if e["has_source"] else None, world.senses[e["sense"]])
            for e in world.events()]


@pytest.fixture
def world():
    with percept.World(CONFIG) as w:
        yield w


@pytest.fixture
def guard_and_thief(world):
    """The README's guard (1) with a cone, and a thief (2) 40 behind it."""
    world.add(1, 100, 100, facing=(1, 0),
              sight={"range": 40, "margin": 10, "fov": 120}, hearing=15)
    world.add(2, 60, 100, sight=30, hearing=30)
    return world
