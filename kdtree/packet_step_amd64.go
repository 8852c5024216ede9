//go:build amd64 && !purego

package kdtree

import "golang.org/x/sys/cpu"

// packetWalkAVX2 is, with pop, popPacketGo (the rays' best T read from
// p.spre.bestT, which shareAxes, testLeafPacket and testOne keep) and then
// descendGo from the node popped; without, descendGo from node
// (packet_walk_amd64.s). The rays' intervals stay in registers from the
// pop to the leaf; nodes is the tree's first node. leafLive is 0 when the
// stack runs out.
//
//go:noescape
func packetWalkAVX2(nodes *Node, p *packet, node uint32, sp *int, tmin, tmax *[packetSize]float32, live, finished uint32, pop bool) (leaf, leafLive uint32)

// packetAVX2 says whether the walks run the assembly forms (the CPU has
// AVX2) or the Go ones; the two give the same bits (the same IEEE
// operations, and the same operand returned by min and max on equal
// zeros). Tests turn it off to check one against the other. The hot call
// sites (walkPacket's walk, traceLanes' run of steps) test it
// themselves: a wrapper holding two calls is too costly for the compiler
// to inline, and its extra call per step cost 2-3%.
var packetAVX2 = cpu.X86.HasAVX2

// packetClipAVX2 is packetClipGo in AVX2 (packet_clip_amd64.s); box is
// traceData.lo, with hi and mag after it.
//
//go:noescape
func packetClipAVX2(rays *[packetSize]Ray, box *[4]float32, c *packetClip)

// clipPacket is packetClipGo's contract, with AVX2 where packetAVX2 says.
func clipPacket(rays *[packetSize]Ray, d *traceData, c *packetClip) {
	if packetAVX2 {
		packetClipAVX2(rays, &d.lo, c)
		return
	}
	packetClipGo(rays, d, c)
}

// packetTriAVX2 is packetTriGo in AVX2 (packet_tri_amd64.s).
//
//go:noescape
func packetTriAVX2(v *triVerts, k *[4]uint32, pre *packetPre, lanes uint32, gam *[4]float32) (hit, slow uint32)

// packetTri is packetTriGo's contract, with AVX2 where packetAVX2 says.
func packetTri(v *triVerts, k *[4]uint32, pre *packetPre, lanes uint32) (hit, slow uint32) {
	if packetAVX2 {
		return packetTriAVX2(v, k, pre, lanes, &triGammas)
	}
	return packetTriGo(v, k, pre, lanes)
}

// lanesRunAsm is lanesRunGo in amd64 assembly (lanes_run_amd64.s);
// ld.nodes holds at least one node. (It needs AVX, and runs where
// packetAVX2 says, so that the tests turn it off with the others.)
//
//go:noescape
func lanesRunAsm(ls *lanes, ld *laneData, start int) int
