package gpubuild

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/cuda"
)

// Config is the CUDA builder's choice of paths and its size thresholds,
// one value per build, passed down from Build (Options.gpu, or the
// environment read once by EnvConfig). Every path it can turn off is a
// fast path with a fallback the builder also takes on its own when the fast
// path does not fit (a size regime or an overflow); all of them make the
// same tree. Tests pass their own value, so they may run in parallel.
type Config struct {
	Off Paths // fast paths forced off (KDBUILD_GPU_OFF)

	// pipeMaxTris: scenes of at least this many triangles build level by
	// level (largeCUDA) rather than pipelined (largeCUDAPipe): their levels
	// keep the device busier than the host.
	pipeMaxTris int
	// PipeExactRefs: a pipelined level of at least this many references
	// runs the next level on its own sizes rather than on a bound.
	PipeExactRefs int
	// fusedChooseMaxRefs: the largest level kdtree_choose_f32 decides.
	fusedChooseMaxRefs int

	// The rest are for tests, which shrink rooms to force fallbacks.

	// PipeRefCap, when positive, caps the references of a pipelined level
	// (forcing the overflow and the fallback to largeCUDA).
	PipeRefCap int
	// ParkReserve: the parked references reserve makes room for, per kept
	// triangle (1 makes the pipelined phase grow the buffers).
	ParkReserve int
	// SmallPackRoots: the most small roots whose words runSmallCUDA makes
	// in one array and sends in one copy.
	SmallPackRoots int
	// SmallPlaceLimit: kdtree_small_w_f32's placeLimit (see smallDev).
	SmallPlaceLimit uint32
	// SmallCaps: the output room of the device small phase's attempts, in
	// records and leaf references per reference of the small roots.
	SmallCaps [][2]int
	// CheckEarlyRoots makes runSmallCUDA compare every entry of the
	// device's list of small roots with the booker's.
	CheckEarlyRoots bool
	// Counts, when set, counts the fallbacks the builds took.
	Counts *Counts
}

// Counts counts what the CUDA builds that share it did (tests), by
// Count.
type Counts [numCounts]atomic.Int64

// Count is what a Counts entry counts.
type gpuCount int

const (
	CountPipeFallback gpuCount = iota // pipelined large phases that overflowed
	CountTopFallback                  // device lists that outgrew their room
	CountEarlyRun                     // small phases started from the device's list
	numCounts
)

// add counts one k, when c is set.
func (c *Counts) add(k gpuCount) {
	if c != nil {
		c[k].Add(1)
	}
}

// Paths is a set of the CUDA builder's fast paths.
type Paths uint32

// The fast paths KDBUILD_GPU_OFF may turn off, each with what takes its
// place.
const (
	// PathPipeline: the large phase without a wait per level
	// (largeCUDAPipe); off, largeCUDA waits for every level.
	PathPipeline Paths = 1 << iota
	// PathQueuedPrepare: the first level runs on the scene's triangle
	// count as a bound; off, the count of kept triangles is read back.
	PathQueuedPrepare
	// PathEarlySmall: the small phase started from the roots the levels
	// listed on the device; off, from the host's list.
	PathEarlySmall
	// PathDeviceTop: the large-phase nodes laid out on the device; off,
	// on the host from the booker's records.
	PathDeviceTop
	// PathDeviceSmall: the small phase and the layout on the device; off,
	// the Go small phase and layout on the parked references.
	PathDeviceSmall
	// PathMappedLog: a level's log written into mapped pinned memory;
	// off, copied there.
	PathMappedLog
	// pathFusedChoose: small levels decided by one kernel
	// (kdtree_choose_f32); off, by three.
	pathFusedChoose
	NumPaths = iota
)

// gpuPathNames are the paths' names in KDBUILD_GPU_OFF, in bit order.
var gpuPathNames = [NumPaths]string{"pipeline", "queued-prepare", "early-small", "device-top", "device-small",
	"mapped-log", "fused-choose"}

// GPUOffEnv is the environment variable that forces fast paths of the CUDA
// builder off, a comma-separated list of names (pipeline, queued-prepare,
// early-small, device-top, device-small, mapped-log, fused-choose) or
// "all": to compare them with their fallbacks on a device. Every
// combination builds the same tree.
const GPUOffEnv = cuda.GPUOffEnv

// on reports whether path p is on.
func (c *Config) on(p Paths) bool { return c.Off&p == 0 }

// earlySmall is whether a pipelined build starts its small phase from the
// device's list of small roots (which needs the device small phase).
func (c *Config) earlySmall() bool { return c.on(PathEarlySmall) && c.on(PathDeviceSmall) }

// deviceTop is whether a pipelined build lays its tree out on the device
// (which needs the early small phase).
func (c *Config) deviceTop() bool { return c.on(PathDeviceTop) && c.earlySmall() }

// DefaultConfig is the configuration with every path on.
func DefaultConfig() Config {
	return Config{
		pipeMaxTris:        1 << 20,
		PipeExactRefs:      1 << 20,
		fusedChooseMaxRefs: 1 << 19,
		ParkReserve:        3,
		SmallPackRoots:     1 << 15,
		SmallPlaceLimit:    0xFFFF,
		SmallCaps:          [][2]int{{6, 4}, {16, 8}, {64, 32}},
	}
}

// parseGPUOff parses a KDBUILD_GPU_OFF value.
func parseGPUOff(v string) (Paths, error) {
	var off Paths
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if f == "all" {
			off |= 1<<NumPaths - 1
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

// EnvConfig is the configuration of builds that do not pass one: the
// defaults with the paths of KDBUILD_GPU_OFF off, read once.
var EnvConfig = sync.OnceValues(func() (Config, error) {
	c := DefaultConfig()
	var err error
	c.Off, err = parseGPUOff(cuda.ReadEnv().GPUOff)
	return c, err
})

// gpuBuild is one build on the CUDA executor: the state it shares with the
// Go reference (builder: the scene, options, phases, records hooks), its
// configuration and its own host state. Its device buffers are devLevel's.
type gpuBuild struct {
	*refbuild.Builder
	cfg *Config // the paths and thresholds

	// noDeviceTop: the build keeps the host's records and lays the top of
	// the tree out on the host (a build again after the device layout's
	// small phase overflowed: top_cuda.go).
	noDeviceTop bool

	// room, when set, delivers the large phase's host memory
	// (startHostRoom).
	room      <-chan *hostRoom
	roomReady *hostRoom // room's delivery, once roomMade has received it

	// keep: hand the laid-out tree's device buffers to kept (BuildKept).
	keep bool
	kept *Kept
}
