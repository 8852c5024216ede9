package kdtree

import (
	"fmt"
	"hash/crc32"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// Checking a loaded tree file's sections: every checksum and the ranges
// that traversal relies on, cut into pieces of about checkPiece bytes that
// run on all cores (a 5.4 MB bunny tree gives about 40 pieces).
const checkPiece = 256 << 10

// checkTask is one piece of the section checks: a checksum of part of a
// section, a run of nodes, or the largest index of part of an index array.
type checkTask struct {
	section int    // the section it belongs to
	lo, hi  uint64 // bytes for a checksum, elements otherwise
	kind    int    // taskCRC, taskNodes, taskIndices
}

const (
	taskCRC = iota
	taskNodes
	taskIndices
)

// checkSections checks every section's checksum, puts the words in host
// order (big-endian hosts; the body is then a private buffer) and checks
// that traversal stays in range: the nodes form a depth-first tree with
// leaf reference ranges inside the references (checkNodeRun and
// joinNodeRuns), references name triangles, triangle corners name
// vertices. The pieces run concurrently; the first error in section order
// is returned, a section's checksum error before its range errors.
func (h *treeHeader) checkSections(sec [numSections][]byte, nodes []Node, refs []uint32, tris [][3]uint32) error {
	tasks := checkTasks(sec)
	crcs := make([]uint32, len(tasks))
	runs := make([]nodeRun, len(tasks))
	worst := make([]uint64, len(tasks)) // largest index seen, plus one
	run := func(from, to int) {
		exec.ParallelFor(to-from, to-from, 1, func(lo, hi int) {
			for k := from + lo; k < from+hi; k++ {
				t := tasks[k]
				switch t.kind {
				case taskCRC:
					crcs[k] = crc32.Checksum(sec[t.section][t.lo:t.hi], castagnoli)
				case taskNodes:
					runs[k] = checkNodeRun(nodes, t.lo, t.hi, uint64(len(refs)))
				case taskIndices:
					worst[k] = maxIndex(viewAs[uint32](sec[t.section])[t.lo:t.hi])
				}
			}
		})
	}
	if littleEndian {
		run(0, len(tasks))
	} else {
		// The checksums read the file's bytes, the range checks host words.
		ncrc := 0
		for ncrc < len(tasks) && tasks[ncrc].kind == taskCRC {
			ncrc++
		}
		run(0, ncrc)
		for i := range sec {
			if elemSize[i]%4 == 0 {
				copy(sec[i], swapWords(sec[i]))
			}
		}
		run(ncrc, len(tasks))
	}
	var got [numSections]uint32
	var started [numSections]bool
	for k, t := range tasks {
		if t.kind == taskCRC {
			if started[t.section] {
				got[t.section] = crc32Combine(got[t.section], crcs[k], t.hi-t.lo)
			} else {
				got[t.section], started[t.section] = crcs[k], true
			}
		}
	}
	for i := range sec {
		if got[i] != h.crcs[i] {
			return fmt.Errorf("kdtree: tree file corrupt: %s section checksum %08x, stored %08x", sectionNames[i], got[i], h.crcs[i])
		}
		if err := h.checkRanges(i, tasks, runs, worst, sec, nodes, refs, tris); err != nil {
			return err
		}
	}
	return nil
}

// checkTasks cuts the sections into pieces: a checksum per checkPiece
// bytes of every section (an empty section still gets one), then node
// runs and index pieces of about the same size.
func checkTasks(sec [numSections][]byte) []checkTask {
	var tasks []checkTask
	for i, b := range sec {
		n := uint64(len(b))
		for lo := uint64(0); lo == 0 || lo < n; lo += checkPiece {
			tasks = append(tasks, checkTask{section: i, lo: lo, hi: min(lo+checkPiece, n), kind: taskCRC})
		}
	}
	for _, s := range [...]struct{ section, kind, words int }{{0, taskNodes, 2}, {1, taskIndices, 1}, {3, taskIndices, 1}} {
		n := uint64(len(sec[s.section]) / (4 * s.words))
		per := uint64(checkPiece / (4 * s.words))
		for lo := uint64(0); lo < n; lo += per {
			tasks = append(tasks, checkTask{section: s.section, lo: lo, hi: min(lo+per, n), kind: s.kind})
		}
	}
	return tasks
}

// checkRanges reports the range errors of section i found by its tasks.
func (h *treeHeader) checkRanges(i int, tasks []checkTask, runs []nodeRun, worst []uint64, sec [numSections][]byte,
	nodes []Node, refs []uint32, tris [][3]uint32) error {
	switch i {
	case 0:
		var mine []nodeRun
		for k, t := range tasks {
			if t.kind == taskNodes {
				mine = append(mine, runs[k])
			}
		}
		return joinNodeRuns(nodes, mine, len(refs))
	case 1, 3:
		limit, what := uint64(len(tris)), "reference"
		if i == 3 {
			limit, what = h.counts[2], "triangle vertex index"
		}
		for k, t := range tasks {
			if t.kind == taskIndices && t.section == i && worst[k] > limit {
				return describeBadIndex(viewAs[uint32](sec[i]), limit, what)
			}
		}
	}
	return nil
}

// maxIndex is one more than the largest value of idx (0 when empty), with
// four running maxima so that the loop is not one long dependency chain.
func maxIndex(idx []uint32) uint64 {
	if len(idx) == 0 {
		return 0
	}
	var m [4]uint32
	i := 0
	for ; i+4 <= len(idx); i += 4 {
		v := idx[i : i+4 : i+4]
		m[0], m[1], m[2], m[3] = max(m[0], v[0]), max(m[1], v[1]), max(m[2], v[2]), max(m[3], v[3])
	}
	for ; i < len(idx); i++ {
		m[0] = max(m[0], idx[i])
	}
	return uint64(max(m[0], m[1], m[2], m[3])) + 1
}

// describeBadIndex names the first value of idx not below n.
func describeBadIndex(idx []uint32, n uint64, what string) error {
	for k, v := range idx {
		if uint64(v) >= n {
			return fmt.Errorf("kdtree: tree file %s %d is %d, not below %d", what, k, v, n)
		}
	}
	return nil
}
