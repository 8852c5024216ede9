package kdtree

import (
	"context"
	"fmt"
)

// IntersectBatch traces rays[i] into hits[i] (closest hit, as Intersect;
// a miss is Hit{T: +Inf, Prim: NoHit}) on the tree's device copy (Upload).
// The lengths must match; ctx is checked between chunks of rays.
func (t *Tree) IntersectBatch(ctx context.Context, rays []Ray, hits []Hit) error {
	if ok, err := t.intersectOnDevice(ctx, rays, hits); ok {
		return err
	}
	return fmt.Errorf("kdtree: IntersectBatch on the host is not on this branch; Upload the tree first")
}

// OccludedBatch answers Occluded(rays[i]) into occluded[i] on the tree's
// device copy (Upload). The lengths must match; ctx is checked between
// chunks of rays.
func (t *Tree) OccludedBatch(ctx context.Context, rays []Ray, occluded []bool) error {
	if ok, err := t.occludedOnDevice(ctx, rays, occluded); ok {
		return err
	}
	return fmt.Errorf("kdtree: OccludedBatch on the host is not on this branch; Upload the tree first")
}
