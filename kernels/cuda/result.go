package cuda

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Result is a CUDA driver status (CUresult). It implements error; its names
// come from a table in this package, so they work before (and without) the
// driver library. Statuses that say why a GPU cannot be used match the
// package's sentinel errors with errors.Is: CUDA_ERROR_OUT_OF_MEMORY is
// ErrOutOfMemory, CUDA_ERROR_NO_DEVICE is ErrNoDevice, a missing or invalid
// binary is ErrNoKernelImage.
type Result int

const (
	resultOutOfMemory  Result = 2
	resultNoDevice     Result = 100
	resultInvalidImage Result = 200
)

// Name returns the CUDA_ERROR_* name, or CUDA_ERROR_<code> for a status the
// table does not know (a newer driver).
func (r Result) Name() string {
	if s, ok := resultNames[r]; ok {
		return s
	}
	return fmt.Sprintf("CUDA_ERROR_%d", int(r))
}

func (r Result) Error() string { return fmt.Sprintf("%s (%d)", r.Name(), int(r)) }

// Is reports whether the status means one of the package's sentinel errors.
func (r Result) Is(target error) bool {
	switch target {
	case ErrOutOfMemory:
		return r == resultOutOfMemory
	case ErrNoDevice:
		return r == resultNoDevice || r == 101 /* INVALID_DEVICE */ || r == 46 /* DEVICE_UNAVAILABLE */
	case ErrNoDriver:
		return r == 34 /* STUB_LIBRARY */ || r == 803 /* SYSTEM_DRIVER_MISMATCH */ || r == 804 /* COMPAT_NOT_SUPPORTED_ON_DEVICE */
	case ErrNoKernelImage:
		return r == resultInvalidImage || r == 209 /* NO_BINARY_FOR_GPU */ || r == 218 /* INVALID_PTX */ ||
			r == 221 /* JIT_COMPILER_NOT_FOUND */ || r == 222 /* UNSUPPORTED_PTX_VERSION */ || r == 223 /* JIT_COMPILATION_DISABLED */
	}
	return false
}

// Error is a failed driver call: the operation, the kernel when there is
// one, the status and the driver's description of it. It unwraps to the
// Result, so errors.Is(err, ErrOutOfMemory) and errors.As(err, &Result) work.
type Error struct {
	Op     string // driver call or package operation, e.g. "cuMemAlloc" or "launch"
	Kernel string // kernel name, "" when the call is not about one kernel
	Code   Result
	Detail string // the driver's text for Code, "" when unavailable
}

func (e *Error) Error() string {
	s := "cuda: " + e.Op
	if e.Kernel != "" {
		s += " " + e.Kernel
	}
	s += ": " + e.Code.Name()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *Error) Unwrap() error { return e.Code }

// ErrClosed is returned by calls on a Context after Close.
var ErrClosed = errors.New("cuda: context is closed")

// resultNames maps driver statuses to their names in cuda.h (CUDA 11.8,
// plus the few later additions).
var resultNames = map[Result]string{
	0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
	3: "CUDA_ERROR_NOT_INITIALIZED", 4: "CUDA_ERROR_DEINITIALIZED", 5: "CUDA_ERROR_PROFILER_DISABLED",
	6: "CUDA_ERROR_PROFILER_NOT_INITIALIZED", 7: "CUDA_ERROR_PROFILER_ALREADY_STARTED",
	8: "CUDA_ERROR_PROFILER_ALREADY_STOPPED", 34: "CUDA_ERROR_STUB_LIBRARY",
	46: "CUDA_ERROR_DEVICE_UNAVAILABLE", 100: "CUDA_ERROR_NO_DEVICE", 101: "CUDA_ERROR_INVALID_DEVICE",
	102: "CUDA_ERROR_DEVICE_NOT_LICENSED", 200: "CUDA_ERROR_INVALID_IMAGE", 201: "CUDA_ERROR_INVALID_CONTEXT",
	202: "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", 205: "CUDA_ERROR_MAP_FAILED", 206: "CUDA_ERROR_UNMAP_FAILED",
	207: "CUDA_ERROR_ARRAY_IS_MAPPED", 208: "CUDA_ERROR_ALREADY_MAPPED", 209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
	210: "CUDA_ERROR_ALREADY_ACQUIRED", 211: "CUDA_ERROR_NOT_MAPPED", 212: "CUDA_ERROR_NOT_MAPPED_AS_ARRAY",
	213: "CUDA_ERROR_NOT_MAPPED_AS_POINTER", 214: "CUDA_ERROR_ECC_UNCORRECTABLE", 215: "CUDA_ERROR_UNSUPPORTED_LIMIT",
	216: "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", 217: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", 218: "CUDA_ERROR_INVALID_PTX",
	219: "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", 220: "CUDA_ERROR_NVLINK_UNCORRECTABLE",
	221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", 222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	223: "CUDA_ERROR_JIT_COMPILATION_DISABLED", 224: "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY",
	225: "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", 300: "CUDA_ERROR_INVALID_SOURCE", 301: "CUDA_ERROR_FILE_NOT_FOUND",
	302: "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", 303: "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
	304: "CUDA_ERROR_OPERATING_SYSTEM", 400: "CUDA_ERROR_INVALID_HANDLE", 401: "CUDA_ERROR_ILLEGAL_STATE",
	402: "CUDA_ERROR_LOSSY_QUERY", 500: "CUDA_ERROR_NOT_FOUND", 600: "CUDA_ERROR_NOT_READY",
	700: "CUDA_ERROR_ILLEGAL_ADDRESS", 701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 702: "CUDA_ERROR_LAUNCH_TIMEOUT",
	703: "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", 704: "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
	705: "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", 708: "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE",
	709: "CUDA_ERROR_CONTEXT_IS_DESTROYED", 710: "CUDA_ERROR_ASSERT", 711: "CUDA_ERROR_TOO_MANY_PEERS",
	712: "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", 713: "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
	714: "CUDA_ERROR_HARDWARE_STACK_ERROR", 715: "CUDA_ERROR_ILLEGAL_INSTRUCTION", 716: "CUDA_ERROR_MISALIGNED_ADDRESS",
	717: "CUDA_ERROR_INVALID_ADDRESS_SPACE", 718: "CUDA_ERROR_INVALID_PC", 719: "CUDA_ERROR_LAUNCH_FAILED",
	720: "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", 800: "CUDA_ERROR_NOT_PERMITTED", 801: "CUDA_ERROR_NOT_SUPPORTED",
	802: "CUDA_ERROR_SYSTEM_NOT_READY", 803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", 805: "CUDA_ERROR_MPS_CONNECTION_FAILED",
	806: "CUDA_ERROR_MPS_RPC_FAILURE", 807: "CUDA_ERROR_MPS_SERVER_NOT_READY", 808: "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED",
	809: "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED", 810: "CUDA_ERROR_MPS_CLIENT_TERMINATED",
	900: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", 901: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
	902: "CUDA_ERROR_STREAM_CAPTURE_MERGE", 903: "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
	904: "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", 905: "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
	906: "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", 907: "CUDA_ERROR_CAPTURED_EVENT",
	908: "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", 909: "CUDA_ERROR_TIMEOUT",
	910: "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", 911: "CUDA_ERROR_EXTERNAL_DEVICE",
	912: "CUDA_ERROR_INVALID_CLUSTER_SIZE", 999: "CUDA_ERROR_UNKNOWN",
}

// KernelTime is the time spent in one kernel while debugging is on:
// launches counted and the wall time from each launch to the end of the
// synchronisation that follows it.
type KernelTime struct {
	Kernel   string
	Launches int
	TotalMs  float64
}

// DebugEnv is the environment variable that turns debugging on for every
// context opened afterwards: KDBUILD_CUDA_DEBUG=1.
const DebugEnv = "KDBUILD_CUDA_DEBUG"

// GraphsEnv set to 0 turns launch graphs off for contexts opened afterwards:
// every batch of queued launches then reaches the driver one launch at a
// time (see Context.Launch), to compare the two. Set to a number from 2 to
// 64, it is the shortest batch launched as a graph (default 8).
const GraphsEnv = "KDBUILD_CUDA_GRAPHS"

// PDLEnv set to 0 makes Context.LaunchDependent an ordinary launch for
// contexts opened afterwards (to compare the two).
const PDLEnv = "KDBUILD_CUDA_PDL"

// SchedEnv sets how the host waits for the device in contexts opened
// afterwards (the primary context's scheduling flags): "spin", "yield" or
// "block"; unset or anything else, the driver's default (it spins while
// the process has fewer contexts than the machine has cores). To compare
// them: the build's waits are short, where spinning answers soonest.
const SchedEnv = "KDBUILD_CUDA_SCHED"

// graphMin reads GraphsEnv's value: 0 for no graphs, else the shortest
// batch launched as a graph (0 < n < 2 and anything else: the default,
// which newLaunchBatch takes from 1).
func graphMin(v string) int {
	switch n, err := strconv.Atoi(v); {
	case v == "0":
		return 0
	case err == nil && n >= 2 && n <= 64:
		return n
	}
	return 1
}

// ImageEnv names a kernel image file that Open loads instead of the
// embedded one, when set: for profiling with an image built with -lineinfo
// (for source views in Nsight Compute) or by another nvcc. Every kernel the
// program launches must be in it.
const ImageEnv = "KDBUILD_KERNEL_IMAGE"

// DeviceEnv chooses the executor of exec.FromEnv (exec.EnvVar), GPUOffEnv
// the fast paths the CUDA kd-tree builder turns off (see kdtree's
// GPUOffEnv); they are named here for ReadEnv.
const (
	DeviceEnv = "KDBUILD_DEVICE"
	GPUOffEnv = "KDBUILD_GPU_OFF"
)

// Environment is the library's environment variables, the seven above, as
// ReadEnv found them.
type Environment struct {
	Device, GPUOff, Debug, Graphs, PDL, Sched, Image string
}

// ReadEnv reads the library's environment variables: the one place the
// library reads the environment (each reader reads it when it opens what
// the variable configures).
func ReadEnv() Environment {
	return Environment{Device: os.Getenv(DeviceEnv), GPUOff: os.Getenv(GPUOffEnv), Debug: os.Getenv(DebugEnv),
		Graphs: os.Getenv(GraphsEnv), PDL: os.Getenv(PDLEnv), Sched: os.Getenv(SchedEnv), Image: os.Getenv(ImageEnv)}
}

// reason attaches err as the reason for a sentinel (ErrNoDriver, ...): the
// message reads "<sentinel>: <err without its cuda: prefix>" and errors.Is
// matches both.
func reason(sentinel, err error) error { return &reasonError{sentinel, err} }

type reasonError struct{ sentinel, err error }

func (r *reasonError) Error() string {
	return r.sentinel.Error() + ": " + strings.TrimPrefix(r.err.Error(), "cuda: ")
}
func (r *reasonError) Unwrap() []error { return []error{r.sentinel, r.err} }

// unprefixed shows err without its "cuda: " prefix, for an error that is
// wrapped in a message which already has one.
type unprefixed struct{ err error }

func (u unprefixed) Error() string { return strings.TrimPrefix(u.err.Error(), "cuda: ") }
func (u unprefixed) Unwrap() error { return u.err }
