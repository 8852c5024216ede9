//go:build !amd64 || purego

package kdtree

// packetAVX2 is false where there is no assembly form.
var packetAVX2 = false

// clipPacket is packetClipGo where there is no assembly form.
func clipPacket(rays *[packetSize]Ray, d *traceData, c *packetClip) {
	packetClipGo(rays, d, c)
}

// packetTri is packetTriGo where there is no assembly form.
func packetTri(v *triVerts, k *[4]uint32, pre *packetPre, lanes uint32) (hit, slow uint32) {
	return packetTriGo(v, k, pre, lanes)
}

// The walks call these two where packetAVX2 is true, which it never is
// here: their call sites choose between them and the Go forms themselves,
// so that the choice costs no extra call per step.

func packetWalkAVX2(nodes *Node, p *packet, node uint32, sp *int, tmin, tmax *[packetSize]float32, live, finished uint32, pop bool) (leaf, leafLive uint32) {
	panic(noAssembly)
}

func lanesRunAsm(ls *lanes, ld *laneData, start int) int { panic(noAssembly) }

const noAssembly = "kdtree: no assembly form on this platform"
