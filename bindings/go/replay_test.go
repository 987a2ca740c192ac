package percept

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReplay runs traces (docs/trace-format.md) through the binding and
// compares what it prints with the independent reference's output, kept
// beside each trace as NAME.expected: the sample traces of tests/traces,
// and those PERCEPT_GO_TRACES lists (space-separated paths, each of which
// must exist: tests/go.test writes them), on each backend of
// PERCEPT_GO_BACKENDS (default: grid).
func TestReplay(t *testing.T) {
	traces, _ := filepath.Glob(filepath.Join("..", "..", "tests", "traces", "*.trace"))
	given := strings.Fields(os.Getenv("PERCEPT_GO_TRACES"))
	for _, path := range given {
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("PERCEPT_GO_TRACES: %v", err)
		}
	}
	traces = append(traces, given...)
	if len(traces) == 0 {
		t.Skip("no trace: neither tests/traces nor PERCEPT_GO_TRACES")
	}
	backends := strings.Fields(os.Getenv("PERCEPT_GO_BACKENDS"))
	if len(backends) == 0 {
		backends = []string{"grid"}
	}
	for _, path := range traces {
		expected, err := os.ReadFile(strings.TrimSuffix(path, ".trace") + ".expected")
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(path), ".trace")
		for _, backend := range backends {
			path, backend := path, backend
			t.Run(name+"/"+backend, func(t *testing.T) {
				got, err := replay(path, backend)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, expected) {
					t.Fatalf("output differs from the reference's:\n%s", firstDifference(got, expected))
				}
			})
		}
	}
}

// firstDifference shows the first line where got and want part.
func firstDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; ; i++ {
		if i >= len(g) || i >= len(w) || g[i] != w[i] {
			line := func(l []string) string {
				if i < len(l) {
					return strconv.Quote(l[i])
				}
				return "(end)"
			}
			return fmt.Sprintf("line %d: got %s, want %s", i+1, line(g), line(w))
		}
	}
}

// replayer holds a replay's state: the world (opened at the first command
// that needs it, once senses and bounds are known) and the open tick block.
type replayer struct {
	backend string
	senses  []string
	bounds  []string
	w       *World
	ticking []Change // nil outside a tick block
	events  []Event
	out     bytes.Buffer
}

// replay prints what percept-replay prints for the trace at path: each
// command's events, MOVE events left out (they are not part of the format).
func replay(path, backend string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &replayer{backend: backend, senses: []string{"sight", "hearing", "smell"}}
	defer r.w.Close()
	scan := bufio.NewScanner(f)
	for line := 1; scan.Scan(); line++ {
		if err := r.command(line, strings.Fields(scan.Text())); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	return r.out.Bytes(), scan.Err()
}

func (r *replayer) open() error {
	ini := "[percept]\nbackend = " + r.backend + "\nmove_events = off\n[world]\n" +
		"senses = " + strings.Join(r.senses, " ") + "\n"
	if r.bounds != nil {
		ini += fmt.Sprintf("min_x = %s\nmin_y = %s\nmax_x = %s\nmax_y = %s\n",
			r.bounds[0], r.bounds[1], r.bounds[2], r.bounds[3])
	}
	var err error
	r.w, err = Open(Options{Config: ini})
	return err
}

// flush prints the last call's events at the command's line.
func (r *replayer) flush(line int) {
	r.events = r.w.Events(r.events[:0])
	for _, e := range r.events {
		if e.Kind == EventMove {
			continue
		}
		target := "-"
		if e.HasSource {
			target = strconv.FormatUint(uint64(e.Target), 10)
		}
		fmt.Fprintf(&r.out, "%d %d %s %s %s\n", line, e.Observer, target, r.w.SenseName(e.Sense), e.Kind)
	}
}

func (r *replayer) command(line int, words []string) error {
	if len(words) == 0 || strings.HasPrefix(words[0], "#") {
		return nil
	}
	cmd := words[0]
	switch cmd {
	case "senses":
		r.senses = words[1:]
		return nil
	case "world":
		r.bounds = words[1:5]
		return nil
	}
	if r.w == nil {
		if err := r.open(); err != nil {
			return err
		}
	}
	if cmd == "tick" {
		r.ticking = []Change{}
		return nil
	}
	if cmd == "end" {
		err := r.w.Tick(r.ticking)
		r.ticking = nil
		if err == nil {
			r.flush(line)
		}
		return err
	}
	id := uint32(number(words, 1))
	if r.ticking != nil {
		c := Change{ID: id, X: number(words, 2), Y: number(words, 3), Z: number(words, 4)}
		switch cmd {
		case "move":
			c.Kind = ChangeMove
		case "face":
			c.Kind = ChangeTurn
		case "set":
			e, err := r.w.Entity(id)
			if err != nil {
				return err
			}
			if err := fields(&e, words[2:]); err != nil {
				return err
			}
			c = Change{ID: id, Kind: ChangeUpdate, Entity: &e}
		default:
			return fmt.Errorf("%s in a tick block", cmd)
		}
		r.ticking = append(r.ticking, c)
		return nil
	}
	var err error
	switch cmd {
	case "add":
		e := Entity{X: number(words, 2), Y: number(words, 3)}
		if len(words) > 4 && !strings.Contains(words[4], "=") {
			e.Z = number(words, 4)
		}
		if err = fields(&e, words[2:]); err == nil {
			err = r.w.Add(id, e)
		}
	case "move":
		err = r.w.Move3(id, number(words, 2), number(words, 3), number(words, 4))
	case "face":
		err = r.w.Turn(id, number(words, 2), number(words, 3), number(words, 4))
	case "set":
		var e Entity
		if e, err = r.w.Entity(id); err == nil {
			if err = fields(&e, words[2:]); err == nil {
				err = r.w.Update(id, e)
			}
		}
	case "remove":
		err = r.w.Remove(id)
	case "range":
		err = r.w.SetRange(id, words[2], number(words, 3))
	case "hide", "show":
		err = r.w.SetHidden(id, words[2], cmd == "hide")
	case "emit":
		s := Stimulus{Sense: words[1], X: number(words, 2), Y: number(words, 3)}
		for _, word := range words[4:] {
			key, value, ok := strings.Cut(word, "=")
			switch {
			case !ok:
				s.Z, err = strconv.ParseFloat(word, 64)
			case key == "strength":
				s.Strength, err = strconv.ParseFloat(value, 64)
			case key == "source":
				s.HasSource = true
				s.Source, err = mask(value)
			case key == "tags":
				s.Tags, err = mask(value)
			default:
				err = fmt.Errorf("unknown emit field %s", key)
			}
			if err != nil {
				return err
			}
		}
		err = r.w.Emit(s)
	default:
		return fmt.Errorf("unknown command %s", cmd)
	}
	if err == nil {
		r.flush(line)
	}
	return err
}

// number is words[i] as a number; 0 when missing (an omitted Z) or when
// it is a FIELD=VALUE word.
func number(words []string, i int) float64 {
	if i >= len(words) {
		return 0
	}
	v, err := strconv.ParseFloat(words[i], 64)
	if err != nil {
		return 0
	}
	return v
}

// mask reads a 32-bit mask or ID: decimal, or 0x and hexadecimal digits.
func mask(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 0, 32)
	return uint32(v), err
}

// fields applies FIELD=VALUE words to e; words without '=' (the
// position of an add) are skipped.
func fields(e *Entity, words []string) error {
	if e.Senses == nil {
		e.Senses = map[string]Sense{}
	}
	for _, word := range words {
		key, value, ok := strings.Cut(word, "=")
		if !ok {
			continue
		}
		var err error
		switch {
		case key == "tags":
			e.Tags, err = mask(value)
		case key == "facing":
			e.Facing = [3]float64{}
			parts := strings.Split(value, ",")
			if len(parts) > 3 {
				return fmt.Errorf("facing %s: more than 3 components", value)
			}
			for k, v := range parts {
				if e.Facing[k], err = strconv.ParseFloat(v, 64); err != nil {
					break
				}
			}
		case key == "hide":
			e.Hidden = strings.Split(value, ",")
		default:
			sense, part, dotted := strings.Cut(key, ".")
			p := e.Senses[sense]
			switch {
			case !dotted:
				p.Range, err = strconv.ParseFloat(value, 64)
			case part == "margin":
				p.Margin, err = strconv.ParseFloat(value, 64)
			case part == "fov":
				p.Fov, err = strconv.ParseFloat(value, 64)
			case part == "ignore":
				p.Ignore, err = mask(value)
			default:
				err = fmt.Errorf("unknown field %s", key)
			}
			e.Senses[sense] = p
		}
		if err != nil {
			return err
		}
	}
	return nil
}
