package kdtree

import "context"

// intersectOnDevice and occludedOnDevice run a batch on the tree's device
// copy (contract D, Tree.Upload) and report whether they did. This branch
// has no device copies, so they never do; the device-resident tree replaces
// this file with the real ones of the same signatures.
func (t *Tree) intersectOnDevice(ctx context.Context, rays []Ray, hits []Hit) (handled bool, err error) {
	return false, nil
}

func (t *Tree) occludedOnDevice(ctx context.Context, rays []Ray, occluded []bool) (handled bool, err error) {
	return false, nil
}
