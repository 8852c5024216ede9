package cuda

// Large device-to-host copies go through two pinned staging buffers
// (staging.go): the driver copies from the device into one at the full DMA
// rate while goroutines move the chunk before it into the destination,
// instead of the driver staging a pageable destination itself (about 5.7
// GB/s for the 630 MB of an 8.9M-triangle tree on an H200 machine).
const (
	stageMin   = 8 << 20  // bytes from which a device-to-host copy stages
	stageChunk = 32 << 20 // bytes per staging buffer (two are allocated)
	copyGrain  = 1 << 20  // bytes per goroutine of a host copy, at least
)
