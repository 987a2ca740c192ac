"""replay.py - a trace (docs/trace-format.md) run through the Python
package, printing what percept-replay prints, so that python.test can
compare it with the reference's output. MOVE events are not part of the
format. A tick block becomes one World.tick() of NumPy arrays.

    python3 replay.py TRACE BACKEND
"""
import sys

import numpy

import percept

KIND_NAMES = {percept.ENTER: "enter", percept.LEAVE: "leave",
              percept.STIMULUS: "stimulus"}


def mask(text):
    """A 32-bit mask: decimal, or 0x and hexadecimal digits."""
    return int(text, 16) if text[:2] in ("0x", "0X") else int(text)


def fields(words):
    """FIELD=VALUE words into add()'s or update()'s keywords."""
    kw = {}
    for word in words:
        key, _, value = word.partition("=")
        sense, _, part = key.partition(".")
        if key == "tags":
            kw["tags"] = mask(value)
        elif key == "facing":
            kw["facing"] = [float(v) for v in value.split(",")]
        elif key == "hide":
            kw["hidden"] = value.split(",")
        elif part == "ignore":
            kw.setdefault(sense, {})["ignore"] = mask(value)
        elif part:
            kw.setdefault(sense, {})[part] = float(value)
        else:
            kw.setdefault(key, {})["range"] = float(value)
    return kw


def numbers(words, n):
    """The first n words as numbers, missing ones 0."""
    return [float(w) for w in words[:n]] + [0.0] * (n - len(words[:n]))


class Replay:
    def __init__(self, backend):
        self.backend = backend
        self.senses = ["sight", "hearing", "smell"]
        self.bounds = None
        self.world = None
        self.block = None  # the tick block being read: moves, turns, updates
        self.out = []

    def open(self):
        ini = (f"[percept]\nbackend = {self.backend}\nmove_events = off\n"
               f"[world]\nsenses = {' '.join(self.senses)}\n")
        if self.bounds:
            ini += "min_x = {}\nmin_y = {}\nmax_x = {}\nmax_y = {}\n".format(*self.bounds)
        self.world = percept.World(ini)

    def flush(self, line):
        names = self.world.senses
        for e in self.world.events():
            kind = int(e["kind"])
            if kind == percept.MOVE:
                continue
            target = str(e["target"]) if e["has_source"] else "-"
            self.out.append(f"{line} {e['observer']} {target} "
                            f"{names[e['sense']]} {KIND_NAMES[kind]}")

    def tick(self):
        moves, turns, updates = self.block
        self.block = None

        def columns(rows):
            ids = numpy.array([r[0] for r in rows], dtype=numpy.uint32)
            values = numpy.array([r[1:] for r in rows], dtype=numpy.float64)
            return ids, values.reshape(len(rows), 3)

        self.world.tick(moves=columns(moves), turns=columns(turns), updates=updates)

    def command(self, line, words):
        cmd, args = words[0], words[1:]
        if cmd == "senses":
            self.senses = args
            return
        if cmd == "world":
            self.bounds = args
            return
        if self.world is None:
            self.open()
        w = self.world
        if self.block is not None and cmd != "end":
            ident = int(args[0])
            if cmd == "move":
                self.block[0].append([ident] + numbers(args[1:], 3))
            elif cmd == "face":
                self.block[1].append([ident] + numbers(args[1:], 3))
            else:  # set
                self.block[2][ident] = fields(args[1:])
            return
        if cmd == "tick":
            self.block = ([], [], {})
            return
        if cmd == "end":
            self.tick()
        elif cmd == "add":
            position = [a for a in args[1:] if "=" not in a]
            w.add(int(args[0]), *numbers(position, 3), **fields(args[1 + len(position):]))
        elif cmd == "move":
            w.move(int(args[0]), *numbers(args[1:], 3))
        elif cmd == "face":
            w.turn(int(args[0]), *numbers(args[1:], 3))
        elif cmd == "set":
            w.update(int(args[0]), **fields(args[1:]))
        elif cmd == "remove":
            w.remove(int(args[0]))
        elif cmd == "range":
            w.set_range(int(args[0]), args[1], float(args[2]))
        elif cmd in ("hide", "show"):
            w.set_hidden(int(args[0]), args[1], cmd == "hide")
        elif cmd == "emit":
            kw = {}
            point = []
            for a in args[1:]:
                key, eq, value = a.partition("=")
                if not eq:
                    point.append(float(a))
                elif key == "strength":
                    kw["strength"] = float(value)
                else:
                    kw[key] = mask(value)
            w.emit(args[0], *point, **kw)
        else:
            raise ValueError(f"line {line}: unknown command {cmd}")
        self.flush(line)


def main():
    path = sys.argv[1]
    replay = Replay(sys.argv[2] if len(sys.argv) > 2 else "bruteforce")
    with open(path) as trace:
        for line, text in enumerate(trace, 1):
            words = text.split()
            if words and not words[0].startswith("#"):
                replay.command(line, words)
    if replay.world is not None:
        replay.world.close()
    sys.stdout.write("".join(line + "\n" for line in replay.out))


if __name__ == "__main__":
    main()
