package reduce

import "fmt"

// Variant describes one reduction design. Its kernels are named
// reduce_<op>_<Name>_f32 with op one of min, max, minmax (for example
// reduce_min_r4_f32).
//
//	Name  Thesis   Idea                                                         Passes
//	r0    Reduce0  interleaved addressing with the modulo test, in place in a    log_256 n
//	               global work array (each thread first copies its element's
//	               key there)
//	r1    Reduce1  sequential addressing (coalesced), in place in global memory  log_256 n
//	r2    Reduce2  the block's values copied into shared memory first            log_256 n
//	r3    Reduce3  each thread keeps its running value in a register; shared     log_256 n
//	               memory only publishes it
//	r4    Reduce4  unrolled (block size fixed at compile time): the first step   log_512 n
//	               done while loading (2 elements per thread, half the shared
//	               memory), the last warp without block barriers (shuffles),
//	               the last step folded into the output
//	r5    —        warp shuffles for the whole tree (2 block barriers)          log_512 n
//	r6    —        many elements per thread, float4 loads, a grid of            2
//	               SMs × 8 blocks, then one block over the block results
//	r7    —        r6's loop in one pass: the last block to finish (threadfence  1
//	               + atomic counter that resets itself) reduces the block
//	               results and writes the answer
//
// Every design uses 256-thread blocks and works on any n (partial last
// blocks are padded with the identity). Multi-pass designs apply themselves
// recursively to their block results until one value is left.
type Variant struct {
	Name     string // r0 … r7
	Thesis   string // Reduce0 … Reduce4, or "" for the designs beyond the thesis
	Idea     string
	PerBlock int // elements one block reduces per pass; 0 = grid-stride (r6, r7)
}

// Kernel returns the kernel name of the variant for op (min, max, minmax).
func (v Variant) Kernel(op string) string { return fmt.Sprintf("reduce_%s_%s_f32", op, v.Name) }

// Label is the thesis name where there is one, else "Reduce<k>".
func (v Variant) Label() string {
	if v.Thesis != "" {
		return v.Thesis
	}
	return "Reduce" + v.Name[1:]
}

// DefaultVariant is the design Min, Max and MinMax use on a GPU.
const DefaultVariant = "r7"

// blockSize is the thread count of every reduction kernel (reduce.cuh's kBlock).
const blockSize = 256

// blocksPerSM sizes the grids of the grid-stride designs.
const blocksPerSM = 8

var variants = []Variant{
	{"r0", "Reduce0", "interleaved addressing, modulo test, global memory (in place in a work copy)", blockSize},
	{"r1", "Reduce1", "sequential addressing, global memory (in place in a work copy)", blockSize},
	{"r2", "Reduce2", "block values copied to shared memory first", blockSize},
	{"r3", "Reduce3", "running value in a register, shared memory to publish it", blockSize},
	{"r4", "Reduce4", "unrolled; first step during the load; last warp by shuffles; last step folded into the output", 2 * blockSize},
	{"r5", "", "warp shuffles for the whole tree", 2 * blockSize},
	{"r6", "", "many elements per thread, float4 loads, grid = SMs x 8 blocks, second tiny pass", 0},
	{"r7", "", "one pass: float4 grid-stride loop, last block done (threadfence + self-resetting counter)", 0},
}

// Variants returns the reduction designs, Reduce0 first.
func Variants() []Variant { return append([]Variant(nil), variants...) }

// lookup returns the variant called name (r0 … r7, or Reduce0 … Reduce7).
func lookup(name string) (Variant, error) {
	for _, v := range variants {
		if v.Name == name || v.Label() == name {
			return v, nil
		}
	}
	return Variant{}, fmt.Errorf("reduce: unknown variant %q (want r0 … r7)", name)
}
