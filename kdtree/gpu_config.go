package kdtree

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/cuda"
)

// gpuConfig is the CUDA builder's choice of paths and its size thresholds,
// one value per build, passed down from Build (Options.gpu, or the
// environment read once by envGPUConfig). Every path it can turn off is a
// fast path with a fallback the builder also takes on its own when the fast
// path does not fit (a size regime or an overflow); all of them make the
// same tree. Tests pass their own value, so they may run in parallel.
type gpuConfig struct {
	off gpuPaths // fast paths forced off (KDBUILD_GPU_OFF)

	// pipeMaxTris: scenes of at least this many triangles build level by
	// level (largeCUDA) rather than pipelined (largeCUDAPipe): their levels
	// keep the device busier than the host.
	pipeMaxTris int
	// pipeExactRefs: a pipelined level of at least this many references
	// runs the next level on its own sizes rather than on a bound.
	pipeExactRefs int
	// fusedChooseMaxRefs: the largest level kdtree_choose_f32 decides.
	fusedChooseMaxRefs int

	// The rest are for tests, which shrink rooms to force fallbacks.

	// pipeRefCap, when positive, caps the references of a pipelined level
	// (forcing the overflow and the fallback to largeCUDA).
	pipeRefCap int
	// parkReserve: the parked references reserve makes room for, per kept
	// triangle (1 makes the pipelined phase grow the buffers).
	parkReserve int
	// smallPackRoots: the most small roots whose words runSmallCUDA makes
	// in one array and sends in one copy.
	smallPackRoots int
	// smallPlaceLimit: kdtree_small_w_f32's placeLimit (see smallDev).
	smallPlaceLimit uint32
	// smallCaps: the output room of the device small phase's attempts, in
	// records and leaf references per reference of the small roots.
	smallCaps [][2]int
	// checkEarlyRoots makes runSmallCUDA compare every entry of the
	// device's list of small roots with the booker's.
	checkEarlyRoots bool
	// counts, when set, counts the fallbacks the builds took.
	counts *gpuCounts
}

// gpuCounts counts what the CUDA builds that share it did (tests), by
// gpuCount.
type gpuCounts [numCounts]atomic.Int64

// gpuCount is what a gpuCounts entry counts.
type gpuCount int

const (
	countPipeFallback gpuCount = iota // pipelined large phases that overflowed
	countTopFallback                  // device lists that outgrew their room
	countEarlyRun                     // small phases started from the device's list
	numCounts
)

// add counts one k, when c is set.
func (c *gpuCounts) add(k gpuCount) {
	if c != nil {
		c[k].Add(1)
	}
}

// gpuPaths is a set of the CUDA builder's fast paths.
type gpuPaths uint32

// The fast paths KDBUILD_GPU_OFF may turn off, each with what takes its
// place.
const (
	// pathPipeline: the large phase without a wait per level
	// (largeCUDAPipe); off, largeCUDA waits for every level.
	pathPipeline gpuPaths = 1 << iota
	// pathQueuedPrepare: the first level runs on the scene's triangle
	// count as a bound; off, the count of kept triangles is read back.
	pathQueuedPrepare
	// pathEarlySmall: the small phase started from the roots the levels
	// listed on the device; off, from the host's list.
	pathEarlySmall
	// pathDeviceTop: the large-phase nodes laid out on the device; off,
	// on the host from the booker's records.
	pathDeviceTop
	// pathDeviceSmall: the small phase and the layout on the device; off,
	// the Go small phase and layout on the parked references.
	pathDeviceSmall
	// pathMappedLog: a level's log written into mapped pinned memory;
	// off, copied there.
	pathMappedLog
	// pathFusedChoose: small levels decided by one kernel
	// (kdtree_choose_f32); off, by three.
	pathFusedChoose
	numPaths = iota
)

// gpuPathNames are the paths' names in KDBUILD_GPU_OFF, in bit order.
var gpuPathNames = [numPaths]string{"pipeline", "queued-prepare", "early-small", "device-top", "device-small",
	"mapped-log", "fused-choose"}

// GPUOffEnv is the environment variable that forces fast paths of the CUDA
// builder off, a comma-separated list of names (pipeline, queued-prepare,
// early-small, device-top, device-small, mapped-log, fused-choose) or
// "all": to compare them with their fallbacks on a device. Every
// combination builds the same tree.
const GPUOffEnv = cuda.GPUOffEnv

// on reports whether path p is on.
func (c *gpuConfig) on(p gpuPaths) bool { return c.off&p == 0 }

// earlySmall is whether a pipelined build starts its small phase from the
// device's list of small roots (which needs the device small phase).
func (c *gpuConfig) earlySmall() bool { return c.on(pathEarlySmall) && c.on(pathDeviceSmall) }

// deviceTop is whether a pipelined build lays its tree out on the device
// (which needs the early small phase).
func (c *gpuConfig) deviceTop() bool { return c.on(pathDeviceTop) && c.earlySmall() }

// defaultGPUConfig is the configuration with every path on.
func defaultGPUConfig() gpuConfig {
	return gpuConfig{
		pipeMaxTris:        1 << 20,
		pipeExactRefs:      1 << 20,
		fusedChooseMaxRefs: 1 << 19,
		parkReserve:        3,
		smallPackRoots:     1 << 15,
		smallPlaceLimit:    0xFFFF,
		smallCaps:          [][2]int{{6, 4}, {16, 8}, {64, 32}},
	}
}

// parseGPUOff parses a KDBUILD_GPU_OFF value.
func parseGPUOff(v string) (gpuPaths, error) {
	var off gpuPaths
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if f == "all" {
			off |= 1<<numPaths - 1
			continue
		}
		i := slices.Index(gpuPathNames[:], f)
		if i < 0 {
			return 0, fmt.Errorf("kdtree: %s: unknown path %q (known: %s, all)", GPUOffEnv, f,
				strings.Join(gpuPathNames[:], ", "))
		}
		off |= 1 << i
	}
	return off, nil
}

// envGPUConfig is the configuration of builds that do not pass one: the
// defaults with the paths of KDBUILD_GPU_OFF off, read once.
var envGPUConfig = sync.OnceValues(func() (gpuConfig, error) {
	c := defaultGPUConfig()
	var err error
	c.off, err = parseGPUOff(cuda.ReadEnv().GPUOff)
	return c, err
})

// gpuBuild is one build on the CUDA executor: the state it shares with the
// Go reference (builder: the scene, options, phases, records hooks), its
// configuration and its own host state. Its device buffers are devLevel's.
type gpuBuild struct {
	*refbuild.Builder
	cfg *gpuConfig // the paths and thresholds

	// noDeviceTop: the build keeps the host's records and lays the top of
	// the tree out on the host (a build again after the device layout's
	// small phase overflowed: top_cuda.go).
	noDeviceTop bool

	// room, when set, delivers the large phase's host memory
	// (startHostRoom).
	room      <-chan *hostRoom
	roomReady *hostRoom // room's delivery, once roomMade has received it
}
