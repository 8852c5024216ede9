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

// KeepOnDevice is ignored by the Go executor: the tree is built as without
// it, with no device copy, and Close does nothing.
func TestKeepOnDeviceWithoutDevice(t *testing.T) {
	s := loadShared(t, "spot.obj")
	plain, err := Build(context.Background(), s, Options{Executor: exec.Go(2)})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := Build(context.Background(), s, Options{Executor: exec.Go(2), KeepOnDevice: true})
	if err != nil {
		t.Fatal(err)
	}
	if kept.OnDevice() || len(kept.Nodes) != len(plain.Nodes) || len(kept.Refs) != len(plain.Refs) {
		t.Fatalf("KeepOnDevice on the Go executor: on device %v, %d nodes and %d refs, want %d and %d",
			kept.OnDevice(), len(kept.Nodes), len(kept.Refs), len(plain.Nodes), len(plain.Refs))
	}
	if err := kept.Close(); err != nil {
		t.Fatal(err)
	}
}
