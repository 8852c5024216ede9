package cuda

// Large device-to-host copies go through two pinned staging buffers
// (staging.go): the driver copies from the device into one at the full DMA
// rate while goroutines move the chunk before it into the destination,
// instead of the driver staging a pageable destination itself (about 5.7
// GB/s for the 630 MB of an 8.9M-triangle tree on an H200 machine). Large
// host-to-device copies go through them the other way: goroutines fill one
// while the driver copies the other to the device (a pageable upload ran
// at about 3.8-7.5 GB/s there: the driver stages it with one thread).
const (
	stageMin   = 2 << 20  // bytes from which a copy stages
	stageChunk = 32 << 20 // bytes per staging buffer (two are allocated)
	copyGrain  = 1 << 20  // bytes per goroutine of a host copy, at least
)
