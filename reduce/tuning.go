package reduce

import "fmt"

// tuning lists the tuning variants: designs r0, r4 and r5 at other block
// sizes than their defaults (reduce.cu instantiates the same list,
// KD_REDUCE_TUNINGS). They exist so that one benchmark run compares every
// design at several block sizes; none is used by default, and the thesis
// table and Variants leave them out.
var tuning = []Variant{
	tuned("r0", 128, "r0 at 128 threads (128 inputs per block)"),
	tuned("r0", 512, "r0 at 512 threads (512 inputs per block)"),
	tuned("r4", 64, "r4 at 64 threads (128 inputs per block; final level: r4's 1024 threads)"),
	tuned("r4", 128, "r4 at 128 threads (256 inputs per block; final level: r4's 1024 threads)"),
	tuned("r4", 512, "r4 at 512 threads (1024 inputs per block; final level: r4's 1024 threads)"),
	tuned("r5", 128, "r5 at 128 threads (256 inputs per block; final level: r5's 1024 threads)"),
}

// tuned is design base (a multi-pass design of variants) at threads per
// block: the base's inputs per thread and, where the base has its own
// final-level kernel, that kernel.
func tuned(base string, threads int, idea string) Variant {
	for _, v := range variants {
		if v.Name != base {
			continue
		}
		t := Variant{Name: fmt.Sprintf("%s-t%d", base, threads), Thesis: v.Thesis, Idea: idea,
			Threads: threads, PerBlock: v.PerBlock / v.Threads * threads, FinalThreads: threads}
		if v.FinalThreads != v.Threads {
			t.FinalThreads = v.FinalThreads
		}
		return t
	}
	panic("reduce: no design " + base)
}

// TuningVariants returns the tuning variants (see tuning): the designs r0,
// r4 and r5 at other block sizes, named <design>-t<threads>. They are
// measured against the defaults by Bench (kdbuild bench reduce) and
// selectable by name like any design (MinVariant and the others).
//
//	Name     Design  Threads  Inputs per block  Final level
//	r0-t128  r0      128      128               one block of 128 threads
//	r0-t512  r0      512      512               one block of 512 threads
//	r4-t64   r4      64       128               reduce_<op>_r4final_f32 (1024 threads)
//	r4-t128  r4      128      256               reduce_<op>_r4final_f32
//	r4-t512  r4      512      1024              reduce_<op>_r4final_f32
//	r5-t128  r5      128      256               reduce_<op>_r5final_f32
//
// Launches at 2^24 inputs: 3 for all but r4-t512 (16,384 partials, then
// the final block: 2); r4-t64 and r4-t128 leave more partials (131,072,
// 65,536) than one final block takes (32·1024), so they pay a third launch.
func TuningVariants() []Variant { return append([]Variant(nil), tuning...) }
