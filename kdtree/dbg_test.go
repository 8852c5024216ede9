package kdtree

import (
	"context"
	"testing"
	"time"
)

func TestDbgValidate(t *testing.T) {
	s := loadShared(t, "conference.obj.gz")
	t0 := time.Now()
	tree, err := Build(context.Background(), s, Options{})
	t.Log("build", time.Since(t0), err)
	t.Logf("%+v", tree.Stats())
	t0 = time.Now()
	t.Log(tree.Validate(), time.Since(t0))
}
