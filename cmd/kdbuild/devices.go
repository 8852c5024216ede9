package main

import (
	"errors"
	"flag"
	"fmt"
	"runtime"

	"github.com/kdbuild/kdbuild/kernels/cuda"
)

// devicesJSON is the --json output of kdbuild devices.
type devicesJSON struct {
	Driver        string       `json:"driver_version"` // "12.4", "" without a driver
	DriverCode    int          `json:"driver_version_code"`
	Devices       []deviceJSON `json:"devices"` // never null
	GPUUsable     bool         `json:"gpu_usable"`
	Reason        string       `json:"reason,omitempty"` // why no GPU can be used
	GoWorkers     int          `json:"go_workers"`
	AutoSelection string       `json:"auto"` // what --device auto picks: "gpu" or "cpu"
}

type deviceJSON struct {
	Ordinal           int    `json:"ordinal"`
	Name              string `json:"name"`
	SMs               int    `json:"sms"`
	MemoryBytes       uint64 `json:"memory_bytes"`
	ComputeCapability string `json:"compute_capability"`
	L2Bytes           int    `json:"l2_bytes"`
	Usable            bool   `json:"usable"`
	Problem           string `json:"problem,omitempty"`
}

// runDevices is kdbuild devices: the driver, every GPU and why one cannot
// be used. Having no driver or no GPU is not an error (exit 0).
func runDevices(e *env, args []string) int {
	fs := flag.NewFlagSet("kdbuild devices", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(e.stdout, "Usage: kdbuild devices [--json]\n%s", flagDefaults(fs))
		return exitOK
	}
	if err == nil && len(pos) > 0 {
		err = usagef("devices takes no arguments, got %q", pos)
	}
	if err != nil {
		return fail(e, *asJSON || jsonRequested(args), "", err)
	}

	out := devicesJSON{Devices: []deviceJSON{}, GoWorkers: runtime.GOMAXPROCS(0), AutoSelection: "cpu"}
	v, err := cuda.DriverVersion()
	if err != nil {
		out.Reason = err.Error()
	} else {
		out.DriverCode = v
		out.Driver = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
		infos, err := cuda.Devices()
		switch {
		case err != nil:
			out.Reason = err.Error()
		case len(infos) == 0:
			out.Reason = "the driver reports no CUDA device"
		}
		for _, d := range infos {
			dj := deviceJSON{
				Ordinal: d.Ordinal, Name: d.Name, SMs: d.SMs, MemoryBytes: d.TotalMem,
				ComputeCapability: fmt.Sprintf("%d.%d", d.Major, d.Minor),
				L2Bytes:           d.L2Bytes, Usable: d.Usable,
			}
			if d.Problem != nil {
				dj.Problem = d.Problem.Error()
			}
			out.Devices = append(out.Devices, dj)
		}
		if len(infos) > 0 {
			// --device auto opens device 0.
			out.GPUUsable = infos[0].Usable
			if !infos[0].Usable && out.Reason == "" {
				out.Reason = fmt.Sprintf("GPU 0 (%s) is not usable: %v", infos[0].Name, infos[0].Problem)
			}
		}
	}
	if out.GPUUsable {
		out.AutoSelection = "gpu"
	}
	if *asJSON {
		if err := writeJSON(e.stdout, out); err != nil {
			return fail(e, false, "", err)
		}
		return exitOK
	}
	w := e.stdout
	if out.Driver != "" {
		fmt.Fprintf(w, "CUDA driver %s\n", out.Driver)
	} else {
		fmt.Fprintf(w, "CUDA driver: none\n")
	}
	for _, d := range out.Devices {
		fmt.Fprintf(w, "GPU %d  %s: %d SMs, %s memory, compute capability %s, L2 %s\n",
			d.Ordinal, d.Name, d.SMs, bytesText(d.MemoryBytes), d.ComputeCapability, bytesText(uint64(d.L2Bytes)))
		if !d.Usable {
			fmt.Fprintf(w, "       not usable: %s\n", d.Problem)
		}
	}
	if out.GPUUsable {
		fmt.Fprintf(w, "--device auto uses GPU 0 (%s)\n", out.Devices[0].Name)
	} else {
		fmt.Fprintf(w, "no usable GPU: %s\n", out.Reason)
		fmt.Fprintf(w, "--device auto uses the Go executor (%d workers)\n", out.GoWorkers)
	}
	return exitOK
}
