// Package scan owns the prefix-sum family: exclusive and inclusive scans in
// every variant of the seed write-ups plus a production one, segmented scans,
// stream compaction and radix sort, each on the Go and the CUDA executor.
package scan
