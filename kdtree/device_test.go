package kdtree

import (
	"context"
	"errors"
	"testing"

	"github.com/kdbuild/kdbuild/kdtree/internal/gputrace"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// Without a device: Upload refuses the Go executor, Close does nothing, and
// the Device forms say that there is no device copy.
func TestUploadWithoutDevice(t *testing.T) {
	tree := NewTree(&scenes.Scene{}, nil, nil, scenes.Bounds{}, Stats{})
	if err := tree.Upload(exec.Go(1)); !errors.Is(err, gputrace.ErrNoDevice) {
		t.Fatalf("Upload on the Go executor: %v", err)
	}
	if tree.OnDevice() {
		t.Fatal("OnDevice after a failed Upload")
	}
	if err := tree.Close(); err != nil {
		t.Fatal(err)
	}
	rays := exec.Wrap(make([]float32, DeviceRayWords))
	if err := tree.IntersectDevice(context.Background(), rays, exec.Wrap(make([]float32, DeviceHitWords))); err == nil {
		t.Fatal("IntersectDevice without a device copy: no error")
	}
}
