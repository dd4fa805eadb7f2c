package rollout

import (
	"cmp"
	"maps"
	"slices"
	"time"
)

// GateOf is what wave i of waves waits for before its Clusters adopt
// target, given the fleet (every Cluster, in any order): Decide's answer
// for a Cluster of the wave that is Ready, asks for from (what the
// environment asked before; empty when unknown) and runs nothing of the
// target yet, and comes first in the wave's order, so that a full wave
// shows as full.
// It lives in the first of the wave's namespaces, so that the wave admits
// it. Without waves, every Cluster adopts the target at once, whatever i.
// visible is Request.Visible, now Request.Now.
//
// It is the gate the portal's fleet view and preview --fleet show for a
// wave, one answer for both.
func GateOf(waves []Wave, i int, from, target Target, fleet []Member, visible func(ns string) bool, now time.Time) Decision {
	self := Member{Ready: true, Asks: from}
	if i >= 0 && i < len(waves) {
		self.Wave = waves[i].Name
		if len(waves[i].Namespaces) > 0 {
			self.Namespace = waves[i].Namespaces[0]
		}
	}
	return Decide(Request{Waves: waves, Self: self, Target: target, Fleet: fleet, Visible: visible, Now: now})
}

// AsksOf is what wave i's Clusters ask for, as one target to gate the wave
// with (GateOf's from) when what the environment asked before is unknown,
// as in the portal, which sees only the environment as it is now. For the
// Kubernetes minor and for each chart of target, it is the first Cluster's
// (in namespace/name order) that asks for something else than target,
// else target's own; so Wave.Unapproved(target, AsksOf(...)) names each
// change that one of the wave's Clusters has still to make, and not one
// it has made. A Cluster that pins its version follows its owner and is
// left out; a minor or chart a Cluster does not report is not asked for
// (a control plane or release that does not exist yet is created at the
// target), so it is no change. When no Cluster of the wave has a change
// left (an empty wave, or one that adopted the target), it is what the
// whole fleet asks for, read the same way: the gate a Cluster that joins
// the wave as the fleet stands would meet. When nothing of the fleet has
// a change left, it is target, and GateOf keeps it (Keep).
func AsksOf(waves []Wave, i int, target Target, fleet []Member) Target {
	sorted := slices.SortedFunc(slices.Values(fleet), func(a, b Member) int { return cmp.Compare(a.Key(), b.Key()) })
	var wave []Member
	for _, m := range sorted {
		if len(waves) == 0 || WaveOf(waves, m) == i {
			wave = append(wave, m)
		}
	}
	if from := asksOf(target, wave); !from.Equal(target) {
		return from
	}
	return asksOf(target, sorted)
}

// asksOf is AsksOf over members alone.
func asksOf(target Target, members []Member) Target {
	from := Target{Kubernetes: target.Kubernetes}
	if target.Charts != nil {
		from.Charts = maps.Clone(target.Charts)
	}
	kube := false
	moved := map[string]bool{}
	for _, m := range members {
		if m.Pinned {
			continue
		}
		if k := m.Asks.Kubernetes; !kube && k != "" && k != target.Kubernetes {
			from.Kubernetes, kube = k, true
		}
		for name, v := range target.Charts {
			if a, ok := m.Asks.Charts[name]; ok && !moved[name] && a != v {
				from.Charts[name], moved[name] = a, true
			}
		}
	}
	return from
}
