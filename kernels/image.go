package kernels

import _ "embed" // for the image

// Image is the compiled kernel image (a fatbin holding SASS for sm_70 to
// sm_90 and compute_70 PTX), built from kernels/*.cu by `make kernels`
// (kernels/gen). image_gen.go records how and from which sources.
//
//go:embed kdbuild.fatbin
var Image []byte
