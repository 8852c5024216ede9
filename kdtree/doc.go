// Package kdtree builds SAH kd-trees over triangle scenes, breadth first and
// data parallel, on either executor, and traverses them for ray tracers.
package kdtree
