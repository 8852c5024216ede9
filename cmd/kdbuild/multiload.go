package main

import (
	"strings"
	"time"

	"github.com/kdbuild/kdbuild/scenes"
)

// loadOptions maps --attributes and --weld to scenes.LoadOptions.
func (f *sceneFlags) loadOptions(o scenes.LoadOptions) scenes.LoadOptions {
	if f.attributes {
		a := scenes.AllAttributes()
		o.Normals, o.UVs, o.Colors, o.Names = a.Normals, a.UVs, a.Colors, a.Names
	}
	o.Weld = f.weld
	return o
}

// loadScenes loads every argument (files or proc:<spec>; none means the
// default scene) and, when there are several, merges them into one scene
// whose meshes are the files' meshes in order (scenes.Merge), so that one
// tree is built over all of them. Load time and bytes are the sums.
func loadScenes(e *env, args []string, opt scenes.LoadOptions, quiet bool) (*loaded, error) {
	if len(args) <= 1 {
		arg := ""
		if len(args) == 1 {
			arg = args[0]
		}
		return loadScene(e, arg, quiet, opt)
	}
	t0 := time.Now()
	parts := make([]*scenes.Scene, 0, len(args))
	var bytes int64
	for _, a := range args {
		l, err := loadScene(e, a, quiet, opt)
		if err != nil {
			return nil, err
		}
		parts = append(parts, l.scene)
		bytes += l.bytes
	}
	s, err := scenes.Merge(parts...)
	if err != nil {
		return nil, err
	}
	return &loaded{scene: s, file: strings.Join(args, " "), ms: msSince(t0), bytes: bytes}, nil
}
