// Package kdtree builds SAH kd-trees over triangle scenes, breadth first and
// data parallel, on either executor, and traverses them for ray tracers.
// A built tree is saved with Tree.WriteTo and loaded with ReadTree (.kdt
// tree files, the layout in treefile.go); Camera makes primary rays.
package kdtree
