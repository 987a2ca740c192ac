"""npc_guard.py - examples/npc_guard.c's town gate in Python: two guards
watch a cone ahead of them, raise the alarm when an enemy comes into view,
and turn towards what they hear. Each tick the others walk in one
World.tick() of NumPy arrays, and the guards step in another; after each
call the guards read its events as one array, keep the rows that concern
them, and decide. Their own townsfolk they ignore, by tags.

    python3 npc_guard.py [CONFIG]

CONFIG defaults to the installed percept.ini (pkg-config knows where);
the story on standard output is npc_guard.c's, whatever the backends.
"""
import subprocess
import sys

import numpy

import percept

GUARD, THIEF, WOLF, VILLAGER = range(4)
PATROL, INVESTIGATE, ALERT = range(3)
MOOD_NAMES = ("patrolling", "investigating", "ALERT")
# Tags: what an entity is, for the guards' ignore masks.
TOWNSFOLK, OUTLAW, BEAST = 1, 2, 4


class Npc:
    def __init__(self, ident, name, role, x, y, vx, vy, tags, stride):
        self.id, self.name, self.role = ident, name, role
        self.x, self.y = x, y
        self.vx, self.vy = vx, vy  # the others' walk per tick; a guard's beat: vx, +1 or -1
        self.tags = tags
        self.stride = stride  # the loudness of its footsteps: 0 for none
        self.gone = False
        # A guard's mind: what it is doing, what it follows, where it goes.
        self.mood, self.focus = PATROL, 0
        self.goal_x = self.goal_y = 0.0
        self.post_x = x  # a guard walks its beat 30 either side of where it starts


CAST = [
    Npc(1, "Aldric", GUARD, 100, 100, 1, 0, TOWNSFOLK, 1),
    Npc(2, "Brenna", GUARD, 220, 100, -1, 0, TOWNSFOLK, 1),
    Npc(10, "the thief", THIEF, 270, 110, -2.5, 0, OUTLAW, 0.5),
    Npc(11, "the wolf", WOLF, -30, 200, 3, -2, BEAST, 0),
    Npc(12, "a villager", VILLAGER, 160, 30, 0, 2, TOWNSFOLK, 1),
]
BY_ID = {npc.id: npc for npc in CAST}
GUARDS = [npc for npc in CAST if npc.role == GUARD]
GUARD_IDS = numpy.array([g.id for g in GUARDS], dtype=numpy.uint32)
SIGHT = 0  # the default senses: sight, hearing, smell


def set_mood(guard, mood, focus, x, y):
    if guard.mood != mood:
        print(f"  {guard.name} is now {MOOD_NAMES[mood]}")
    guard.mood, guard.focus = mood, focus
    guard.goal_x, guard.goal_y = x, y


def react(world, tick):
    """The guards' reactions to the events of the world's last call. The
    world may change right after: no callback is running."""
    events = world.events()
    for e in events[numpy.isin(events["observer"], GUARD_IDS)]:
        g = BY_ID[int(e["observer"])]
        t = BY_ID.get(int(e["target"])) if e["has_source"] else None
        kind, x, y = int(e["kind"]), float(e["x"]), float(e["y"])
        if kind == percept.STIMULUS and g.mood != ALERT:
            if g.mood == PATROL or t is None:
                what = "footsteps" if t else "a gunshot"
                print(f"tick {tick:2}: {g.name} hears {what} at ({x:.0f}, {y:.0f}) "
                      "and turns to look")
            set_mood(g, INVESTIGATE, 0, x, y)
        elif kind == percept.ENTER and e["sense"] == SIGHT:
            # Townsfolk never get here: the guards' sight ignores their tag.
            print(f"tick {tick:2}: {g.name} sees {t.name} at ({x:.0f}, {y:.0f}): "
                  "raises the alarm!")
            set_mood(g, ALERT, t.id, x, y)
        elif kind == percept.MOVE and e["target"] == g.focus:
            g.goal_x, g.goal_y = x, y  # keeps after what it sees
        elif kind == percept.LEAVE and e["sense"] == SIGHT and e["target"] == g.focus:
            print(f"tick {tick:2}: {g.name} loses sight of {t.name} at ({x:.0f}, {y:.0f})")
            set_mood(g, INVESTIGATE, 0, x, y)


def step_towards(start, goal, speed):
    d = goal - start
    return start + speed if d > speed else start - speed if d < -speed else goal


def guard_step(guard, tick):
    """Where a guard goes and what it faces next, as update() fields, or
    None when it stays. Both in one change, since a turn and a move apart
    would be two, between which a target on the edge of the cone could
    leave and come back. An alerted guard keeps its distance."""
    speed = 4 if guard.mood == ALERT else 2
    if guard.mood == PATROL:
        if (guard.x, guard.y) == (guard.goal_x, guard.goal_y):
            guard.vx = -guard.vx  # the end of its beat
        guard.goal_x, guard.goal_y = guard.post_x + 30 * guard.vx, 100
    elif guard.mood == INVESTIGATE and (guard.x, guard.y) == (guard.goal_x, guard.goal_y):
        print(f"tick {tick:2}: {guard.name} finds nothing at ({guard.x:.0f}, {guard.y:.0f})")
        set_mood(guard, PATROL, 0, guard.x, guard.y)
    dx, dy = guard.goal_x - guard.x, guard.goal_y - guard.y
    if dx == 0 and dy == 0:
        return None  # nowhere to go
    if not (guard.mood == ALERT and dx * dx + dy * dy < 15 * 15):
        guard.x = step_towards(guard.x, guard.goal_x, speed)
        guard.y = step_towards(guard.y, guard.goal_y, speed)
    fx, fy = guard.goal_x - guard.x, guard.goal_y - guard.y  # faces what it is after
    facing = (fx, fy) if fx != 0 or fy != 0 else (dx, dy)
    return {"x": guard.x, "y": guard.y, "facing": facing}


def default_config():
    try:
        etc = subprocess.run(["pkg-config", "--variable=sysconfdir", "percept"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        etc = "/usr/local/etc"
    return f"{etc}/percept/percept.ini"


def main():
    config = sys.argv[1] if len(sys.argv) > 1 else default_config()
    with percept.World(file=config) as w:
        for n in CAST:
            if n.role == GUARD:
                # A 120 degree cone out to 60, kept out to 75 once seen; ears for 30.
                w.add(n.id, n.x, n.y, facing=(n.vx, 0), tags=n.tags,
                      sight={"range": 60, "margin": 15, "fov": 120, "ignore": TOWNSFOLK},
                      hearing={"range": 30, "ignore": TOWNSFOLK})
            else:
                # The thief keeps to the shadows: unseen, but not unheard.
                w.add(n.id, n.x, n.y, tags=n.tags, sight=40,
                      hidden=["sight"] if n.role == THIEF else [])
        for tick in range(1, 61):
            # The others walk their script, all in one tick; then their footsteps.
            walkers = [n for n in CAST if n.role != GUARD and not n.gone]
            for n in walkers:
                n.x += n.vx
                n.y += n.vy
            w.move_many([n.id for n in walkers], [(n.x, n.y) for n in walkers])
            react(w, tick)
            for n in walkers:
                if n.stride > 0:
                    w.emit("hearing", n.x, n.y, strength=n.stride, source=n.id, tags=n.tags)
                    react(w, tick)
            thief, wolf = BY_ID[10], BY_ID[11]
            if tick == 26:
                print(f"tick {tick:2}: the thief steps into the torchlight")
                w.set_hidden(thief.id, "sight", False)
                react(w, tick)
            if tick == 28:
                print(f"tick {tick:2}: the thief bolts")
                thief.vx, thief.vy, thief.stride = -5, 6, 2
            if tick == 44:
                print(f"tick {tick:2}: the wolf slinks back into the forest")
                wolf.gone = True
                w.remove(wolf.id)
                react(w, tick)
            if tick == 52:  # a hunter in the woods, whom no one sees
                print(f"tick {tick:2}: a shot rings out in the woods")
                w.emit("hearing", 150, 180, strength=6)
                react(w, tick)
            # The guards act on what they decided, together.
            steps = {g.id: step for g in GUARDS if (step := guard_step(g, tick))}
            if steps:
                w.tick(updates=steps)
                react(w, tick)
        for g in GUARDS:
            print(f"{g.name} ends {MOOD_NAMES[g.mood]} at ({g.x:.0f}, {g.y:.0f})")


if __name__ == "__main__":
    main()
