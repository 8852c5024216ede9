package exec

import "github.com/kdbuild/kdbuild/kernels/cuda"

func cudaElapsed(start, end *cuda.Event) (float64, error) {
	ms, err := cuda.Elapsed(start, end)
	return float64(ms), err
}
