package exec

import "github.com/kdbuild/kdbuild/kernels/cuda"

// GPUOn opens the CUDA executor on device ordinal, its own context beside
// those of other devices (several at once build on several GPUs). The
// error wraps cuda.ErrNoDriver, cuda.ErrNoDevice or cuda.ErrNoKernelImage
// with the reason.
func GPUOn(ordinal int) (Executor, error) {
	ctx, err := cuda.Open(ordinal)
	if err != nil {
		return nil, err
	}
	return &cudaExec{ctx: ctx}, nil
}
