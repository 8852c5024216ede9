//go:build amd64 && !purego

package kdtree

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/scenes"
)

// TestLanesRunAsm: lanesRunAsm returns the lane lanesRunGo returns and
// leaves every lane in the same state (node, words, interval, stack, best
// hit), call after call, through whole walks of random rays, closest and
// any hit (leaves left to the caller tested and lanes refilled between
// calls as traceLanes does), and stops at a node index past the end, or
// at a leaf whose references lie past the end, without reading them.
func TestLanesRunAsm(t *testing.T) {
	cases := []struct {
		name  string
		scene *scenes.Scene
	}{
		{"soup-1000", scenes.Soup(1000, 6)},
		{"icosphere-2", scenes.Icosphere(2)},
		{"huge-among-tiny-200", scenes.HugeAmongTiny(200, 7)},
	}
	for _, c := range cases {
		for _, p := range []struct{ leaf, depth int }{{1, 20}, {4, 3}, {1, MaxTreeDepth}} {
			tree := refBuild(c.scene, p.leaf, p.depth)
			what := fmt.Sprintf("%s leaf %d depth %d", c.name, p.leaf, p.depth)
			for _, anyHit := range []bool{false, true} {
				lanesRunPair(t, tree, laneRays(c.scene, 400, 17), anyHit, what)
			}
			// Rays from the vertices: edge functions of exactly 0, whose
			// leaves the runs leave to testLeaf.
			for _, anyHit := range []bool{false, true} {
				if left := lanesRunPair(t, tree, vertexRays(c.scene, 200, 5), anyHit, what+" from vertices"); left == 0 {
					t.Errorf("%s any hit %v: no leaf left to testLeaf by rays from the vertices", what, anyHit)
				}
			}
		}
	}
	tree := refBuild(scenes.Soup(200, 3), 1, 20)
	var ls lanes
	rays := laneRays(tree.Scene, 50, 5)
	for i := range ls {
		ls[i].park()
	}
	i := 0
	for i < len(rays) && !startLane(tree, &ls[2], rays, i) {
		i++
	}
	if i == len(rays) {
		t.Fatal("no ray starts a walk")
	}
	// An interior node at the last place, so that both its children are
	// past the end, then a leaf whose references are.
	nn := len(tree.Nodes)
	ld := laneData{refs: tree.Refs, tris: tree.traceData().tris}
	ld.nodes = append(append([]Node(nil), tree.Nodes...), Node{W1: uint32(nn+5) << 2})
	ls[2].node = uint32(nn)
	if k := lanesRunAsm(&ls, &ld, 0); k != 2 || (ls[2].node != uint32(nn+1) && ls[2].node != uint32(nn+5)) {
		t.Fatalf("a node past the end: lane %d, node %d, want lane 2, node %d or %d", k, ls[2].node, nn+1, nn+5)
	}
	ld.nodes[nn] = LeafNode(uint32(len(tree.Refs)-1), 2)
	ls[2].node = uint32(nn)
	if k := lanesRunAsm(&ls, &ld, 0); k != 2 || ls[2].node != uint32(nn) {
		t.Fatalf("references past the end: lane %d, node %d, want lane 2 at its leaf %d", k, ls[2].node, nn)
	}
	var idle lanes
	for i := range idle {
		idle[i].park()
	}
	if k := lanesRunAsm(&idle, &ld, 1); k != -1 {
		t.Fatalf("idle lanes: lane %d, want -1", k)
	}
}

// startLane starts l on rays[i] as traceLanes' fill does, false when the
// lanes do not take the ray.
func startLane(tree *Tree, l *lane, rays []Ray, i int) bool {
	r := &rays[i]
	if unusable(r) {
		return false
	}
	tmin, tmax, ok := l.ax.start(tree.traceData(), r)
	if !ok || !(tmax > 0) || !l.ax.finite() {
		return false
	}
	l.ray, l.node, l.tmin, l.tmax, l.sp = i, 0, tmin, tmax, 0
	l.best, l.pre = missHit(), prepare(r)
	return true
}

// vertexRays returns n rays whose origins are vertices of s, in random
// directions.
func vertexRays(s *scenes.Scene, n int, seed uint64) []Ray {
	rng := rand.New(rand.NewPCG(seed, 9))
	rays := make([]Ray, n)
	for i := range rays {
		d := mgl32.Vec3{float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())}
		rays[i] = Ray{Org: s.Verts[rng.IntN(len(s.Verts))], Dir: d, TMax: float32(math.Inf(1))}
	}
	return rays
}

// lanesRunPair walks rays through lanesRunAsm and lanesRunGo side by side,
// fails at the first difference, and returns how many leaves with
// triangles the runs left to leafThenPop.
func lanesRunPair(t *testing.T, tree *Tree, rays []Ray, anyHit bool, what string) (left int) {
	t.Helper()
	if len(tree.Nodes) == 0 {
		return 0
	}
	d := tree.traceData()
	ld := laneData{nodes: tree.Nodes, refs: tree.Refs, tris: d.tris, anyHit: anyHit}
	var a, g lanes
	next, active := 0, 0
	fill := func(k int) bool {
		for ; next < len(rays); next++ {
			if startLane(tree, &a[k], rays, next) {
				g[k] = a[k]
				next++
				return true
			}
		}
		a[k].park()
		g[k].park()
		return false
	}
	for k := range a {
		if fill(k) {
			active++
		}
	}
	for k, calls := 0, 0; active > 0; k, calls = (k+1)%laneCount, calls+1 {
		ka := lanesRunAsm(&a, &ld, k)
		kg := lanesRunGo(&g, &ld, k)
		if ka != kg {
			t.Fatalf("%s call %d: asm lane %d, Go lane %d", what, calls, ka, kg)
		}
		for j := range a {
			if msg := laneDiff(&a[j], &g[j]); msg != "" {
				t.Fatalf("%s call %d lane %d: %s", what, calls, j, msg)
			}
		}
		k = ka
		if a[k].node != laneOver {
			left++
			doneA := a[k].leafThenPop(&ld, tree.Nodes[a[k].node])
			doneG := g[k].leafThenPop(&ld, tree.Nodes[g[k].node])
			if doneA != doneG || a[k].best != g[k].best {
				t.Fatalf("%s call %d lane %d: leaf and pop differ", what, calls, k)
			}
			if !doneA {
				continue
			}
		}
		if !fill(k) {
			active--
		}
	}
	return left
}

// laneDiff describes how two lanes' walk states differ, "" when they do not.
func laneDiff(a, g *lane) string {
	if a.ray != g.ray {
		return fmt.Sprintf("ray %d against %d", a.ray, g.ray)
	}
	if a.ray < 0 {
		return ""
	}
	if a.best != g.best {
		return fmt.Sprintf("best %+v against %+v", a.best, g.best)
	}
	if a.node != g.node || a.sp != g.sp {
		return fmt.Sprintf("node %#x sp %d against %#x sp %d", a.node, a.sp, g.node, g.sp)
	}
	if math.Float32bits(a.tmin) != math.Float32bits(g.tmin) || math.Float32bits(a.tmax) != math.Float32bits(g.tmax) {
		return fmt.Sprintf("interval [%v, %v] against [%v, %v]", a.tmin, a.tmax, g.tmin, g.tmax)
	}
	for i := 0; i < a.sp; i++ {
		ea, eg := a.stack[i], g.stack[i]
		if ea.node != eg.node || math.Float32bits(ea.tmin) != math.Float32bits(eg.tmin) || math.Float32bits(ea.tmax) != math.Float32bits(eg.tmax) {
			return fmt.Sprintf("stack[%d] %+v against %+v", i, ea, eg)
		}
	}
	return ""
}

// TestPacketWalkPop: packetWalkAVX2 with pop pops what popPacketGo pops
// (on a tree of leaves, so that the descent after it stays there), on random
// stacks whose tmin values are below, equal to and above the rays' best T,
// infinite or NaN, with random live, direct and finished masks.
func TestPacketWalkPop(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	pick := func(best float32) float32 {
		switch rng.IntN(6) {
		case 0:
			return best
		case 1:
			return inf
		case 2:
			return nan
		case 3:
			return -best
		}
		return best * float32(0.5+rng.Float64())
	}
	leaves := make([]Node, 8)
	for i := range leaves {
		leaves[i] = LeafNode(uint32(i), 1)
	}
	for trial := 0; trial < 3000; trial++ {
		var a, g packet
		depth := rng.IntN(6)
		for k := range packetSize {
			best := float32(rng.Float64() * 10)
			if rng.IntN(5) == 0 {
				best = inf
			}
			g.best[k].T, a.spre.bestT[k] = best, best
		}
		for i := 0; i < depth; i++ {
			e := &g.stack[i]
			e.node, e.live, e.direct = uint32(rng.IntN(len(leaves))), rng.Uint32()&0xffff, rng.Uint32()&0xffff
			if rng.IntN(3) == 0 {
				e.live = 0
			}
			for k := range packetSize {
				e.tmin[k], e.tmax[k] = pick(g.best[k].T), float32(rng.Float64()*20)
			}
		}
		a.stack = g.stack
		finished := rng.Uint32() & 0xffff
		spA, spG := depth, depth
		var nodeG uint32
		var tminA, tmaxA, tminG, tmaxG [packetSize]float32
		nodeA, la := packetWalkAVX2(&leaves[0], &a, 7, &spA, &tminA, &tmaxA, 0, finished, true)
		lg := g.popPacketGo(&spG, &nodeG, &tminG, &tmaxG, finished)
		if la != lg || spA != spG {
			t.Fatalf("trial %d: AVX2 live %#x sp %d, Go live %#x sp %d", trial, la, spA, lg, spG)
		}
		if lg == 0 {
			continue
		}
		if nodeA != nodeG {
			t.Fatalf("trial %d: node %d against %d", trial, nodeA, nodeG)
		}
		for k := range packetSize {
			if math.Float32bits(tminA[k]) != math.Float32bits(tminG[k]) || math.Float32bits(tmaxA[k]) != math.Float32bits(tmaxG[k]) {
				t.Fatalf("trial %d lane %d: [%v, %v] against [%v, %v]", trial, k, tminA[k], tmaxA[k], tminG[k], tmaxG[k])
			}
		}
	}
}
