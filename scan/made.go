package scan

// MadeTile is the tile of kernels/scan.cuh's TilingMade: the items one
// block takes in a single-pass scan over items made as they are loaded
// (IoMade: split_bases_u32, kdtree_addresses_u32). Such a kernel
// runs MadeStateWords(n)-1 blocks of 256 threads.
const MadeTile = 1024

// MadeStateWords is the look-back state of a TilingMade scan over n items,
// in 8-byte words (one per tile and one), which must be zero when the
// kernel starts.
func MadeStateWords(n int) int { return (n+MadeTile-1)/MadeTile + 1 }
