package scenes

import (
	"github.com/go-gl/mathgl/mgl32"
)

// floatWorker parses the `vn` and `vt` statements of an attribute load on
// a second goroutine, so that on a machine with a spare core keeping
// normals and texture coordinates costs little more wall time than reading
// positions only. The parser hands it the statements' text in batches, in
// file order, and counts them itself (faces need only the counts to resolve
// their indices); the worker keeps the first error, which is the one with
// the smallest line among its statements.
type floatWorker struct {
	name    string
	cur     *floatBatch
	work    chan *floatBatch
	free    chan *floatBatch
	done    chan struct{}
	normals chunks[mgl32.Vec3]
	uvs     chunks[mgl32.Vec2]
	err     error
}

// floatBatch is a run of vn/vt statements: the text after each keyword,
// concatenated, with the end, line and kind ('n' or 't') of each.
type floatBatch struct {
	text  []byte
	ends  []int
	lines []int
	kinds []byte
}

// floatBatchBytes is the text size at which a batch is handed over.
const floatBatchBytes = 1 << 16

func newFloatWorker(name string) *floatWorker {
	w := &floatWorker{name: name, work: make(chan *floatBatch, 4), free: make(chan *floatBatch, 6), done: make(chan struct{})}
	w.cur = &floatBatch{}
	go w.run()
	return w
}

// add queues one statement's text (copied).
func (w *floatWorker) add(kind byte, rest []byte, lineNo int) {
	b := w.cur
	b.text = append(b.text, rest...)
	b.ends = append(b.ends, len(b.text))
	b.lines = append(b.lines, lineNo)
	b.kinds = append(b.kinds, kind)
	if len(b.text) >= floatBatchBytes {
		w.flush()
	}
}

// flush hands the current batch over and takes an empty one.
func (w *floatWorker) flush() {
	if len(w.cur.ends) == 0 {
		return
	}
	w.work <- w.cur
	select {
	case b := <-w.free:
		w.cur = b
	default:
		w.cur = &floatBatch{}
	}
}

// finish waits for every queued statement and returns the worker's first
// error, if any.
func (w *floatWorker) finish() error {
	w.flush()
	close(w.work)
	<-w.done
	return w.err
}

func (w *floatWorker) run() {
	defer close(w.done)
	for b := range w.work {
		if w.err == nil {
			w.parse(b)
		}
		b.text, b.ends, b.lines, b.kinds = b.text[:0], b.ends[:0], b.lines[:0], b.kinds[:0]
		select {
		case w.free <- b:
		default:
		}
	}
}

// parse reads one batch: vn takes 3 numbers, vt 1 to 3 (u and v kept).
func (w *floatWorker) parse(b *floatBatch) {
	start := 0
	for i, end := range b.ends {
		rest := b.text[start:end]
		start = end
		var xs [3]float32
		if b.kinds[i] == 'n' {
			if err := parseNumbers(w.name, rest, xs[:], 3, "vn", b.lines[i]); err != nil {
				w.err = err
				return
			}
			w.normals.add(mgl32.Vec3(xs))
			continue
		}
		if err := parseNumbers(w.name, rest, xs[:], 1, "vt", b.lines[i]); err != nil {
			w.err = err
			return
		}
		w.uvs.add(mgl32.Vec2{xs[0], xs[1]})
	}
}

// parseNumbers parses at least least and at most len(xs) finite numbers of
// statement kw at lineNo of file name.
func parseNumbers(name string, rest []byte, xs []float32, least int, kw string, lineNo int) error {
	if n, ok := numbersFast(rest, xs); ok && n >= least {
		return nil
	}
	n := 0
	for {
		var tok []byte
		tok, rest = nextToken(rest)
		if len(tok) == 0 {
			break
		}
		if n == len(xs) {
			return parseErr(name, lineNo, "%s: more than %d numbers", kw, len(xs))
		}
		f, ok := parseFloat32(tok)
		if !ok {
			return parseErr(name, lineNo, "%s: malformed number %q", kw, clip(tok))
		}
		if f-f != 0 {
			return parseErr(name, lineNo, "%s: non-finite number %q", kw, clip(tok))
		}
		xs[n] = f
		n++
	}
	if n < least {
		return parseErr(name, lineNo, "%s: %d numbers (want %d to %d)", kw, n, least, len(xs))
	}
	return nil
}
