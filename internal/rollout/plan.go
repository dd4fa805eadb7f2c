package rollout

// GateOf is what wave i of waves waits for before its Clusters adopt
// target, given the fleet (every Cluster, in any order): Decide's answer
// for a Cluster of the wave that is Ready, asks for from (what the
// environment asked before; empty when unknown) and runs nothing of the
// target yet, and comes first in the wave's order, so that a full wave
// shows as full.
// It lives in the first of the wave's namespaces, so that the wave admits
// it. Without waves, every Cluster adopts the target at once, whatever i.
// visible is Request.Visible.
//
// It is the gate the portal's fleet view and preview --fleet show for a
// wave, one answer for both.
func GateOf(waves []Wave, i int, from, target Target, fleet []Member, visible func(ns string) bool) Decision {
	self := Member{Ready: true, Asks: from}
	if i >= 0 && i < len(waves) {
		self.Wave = waves[i].Name
		if len(waves[i].Namespaces) > 0 {
			self.Namespace = waves[i].Namespaces[0]
		}
	}
	return Decide(Request{Waves: waves, Self: self, Target: target, Fleet: fleet, Visible: visible})
}
