//go:build !amd64 || purego

package kdtree

// packetAVX2 is false where there is no assembly form.
var packetAVX2 = false

// packetStep is packetStepGo where there is no assembly form.
func packetStep(split float32, o, inv, w, tmin, tmax, fmax, smin, stmax *[packetSize]float32) (first, second uint32) {
	return packetStepGo(split, o, inv, w, tmin, tmax, fmax, smin, stmax)
}

// clipPacket is packetClipGo where there is no assembly form.
func clipPacket(rays *[packetSize]Ray, d *traceData, c *packetClip) {
	packetClipGo(rays, d, c)
}

// packetTri is packetTriGo where there is no assembly form.
func packetTri(v *triVerts, k *[4]uint32, pre *packetPre, lanes uint32) (hit, slow uint32) {
	return packetTriGo(v, k, pre, lanes)
}

// lanesRun is lanesRunGo where there is no assembly form.
func lanesRun(ls *lanes, nodes []Node, start int) int {
	return lanesRunGo(ls, nodes, start)
}

// popPacket is popPacketGo where there is no assembly form.
func (p *packet) popPacket(sp *int, node *uint32, tmin, tmax *[packetSize]float32, finished uint32) uint32 {
	return p.popPacketGo(sp, node, tmin, tmax, finished)
}
