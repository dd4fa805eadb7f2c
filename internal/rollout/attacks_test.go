package rollout

import "testing"

// TestRolloutOwnChartsUnknown is an attack of a review of the gate, kept as
// a test: a Cluster whose own releases report no chart versions does not
// hold the target's charts, so it decides (and holds while canary runs the
// old chart) instead of keeping what it never ran.
func TestRolloutOwnChartsUnknown(t *testing.T) {
	ws := []Wave{{Name: "canary"}, {Name: "production"}}
	tgt := Target{Kubernetes: "1.31", Charts: map[string]string{"cert-manager": "v1.19.2"}}
	self := member("team-pay", "payments", "aws", "production", Target{Kubernetes: "1.31", Charts: map[string]string{}})
	self.Asks = Target{Kubernetes: "1.31", Charts: map[string]string{"cert-manager": "v1.19.1"}}
	canary := member("platform", "c", "gcp", "canary", Target{Kubernetes: "1.31", Charts: map[string]string{"cert-manager": "v1.19.1"}})
	d := Decide(Request{Waves: ws, Self: self, Target: tgt, Fleet: []Member{canary}})
	if d.Verdict == Keep || d.Verdict == Adopt {
		t.Errorf("production moves cert-manager while canary runs v1.19.1: %s %q", d.Verdict, d.Message)
	}
}
