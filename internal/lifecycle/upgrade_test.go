package lifecycle

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func v(s string) Minor { return MustParseMinor(s) }

var window = Window{Min: v("1.31"), Max: v("1.35")}

func TestParseMinor(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   Minor
		ok     bool
	}{
		"Minor":      {reason: "A minor alias.", in: "1.33", want: v("1.33"), ok: true},
		"Patch":      {reason: "A patch version.", in: "1.33.5", want: v("1.33"), ok: true},
		"GKE":        {reason: "GKE's build.", in: "1.34.1-gke.1829001", want: v("1.34"), ok: true},
		"EKS":        {reason: "A v-prefixed EKS platform version.", in: "v1.35.0-eks-3025e55", want: v("1.35"), ok: true},
		"Empty":      {reason: "Nothing is no version.", in: "", ok: false},
		"NoMinor":    {reason: "A major alone is no minor.", in: "1", ok: false},
		"Garbage":    {reason: "Words are no version.", in: "latest", ok: false},
		"Negative":   {reason: "A negative minor is no version.", in: "1.-2", ok: false},
		"OtherMajor": {reason: "Kubernetes is 1.x: a plan of minor steps cannot reach 2.0.", in: "2.0", ok: false},
		"ZeroMajor":  {reason: "Kubernetes is 1.x: 0.33 is no version of it.", in: "0.33", ok: false},
		"HugeMinor":  {reason: "A minor of more than three digits is no Kubernetes version (a walk to it would never end).", in: "1.2000000000", ok: false},
		"MaxMinor":   {reason: "Three digits are the most the XR allows.", in: "1.999", want: Minor{Major: 1, Minor: 999}, ok: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := ParseMinor(tc.in)
			if ok != tc.ok || got != tc.want {
				t.Errorf("%s\nParseMinor(%q) = %v, %t; want %v, %t", tc.reason, tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestNext(t *testing.T) {
	path := field.NewPath("spec", "parameters", "version")
	type args struct {
		target Minor
		obs    Observed
		pol    Policy
	}
	type want struct {
		cp      Minor
		pools   map[string]Minor
		newPool Minor
		phase   Phase
		steps   []string
		ahead   bool
		err     string
	}
	pinned := Policy{Window: window, Parallel: 1}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"NewCluster": {
			reason: "Before the control plane exists everything is created at the target.",
			args:   args{target: v("1.34"), pol: pinned},
			want:   want{cp: v("1.34"), pools: map[string]Minor{}, newPool: v("1.34"), phase: PhaseUpToDate},
		},
		"UpToDate": {
			reason: "Control plane and pools at the target: nothing moves.",
			args: args{target: v("1.33"), pol: pinned, obs: Observed{ControlPlane: v("1.33"), Asked: v("1.33"),
				Pools: []Pool{{Name: "a", Running: v("1.33"), Asked: v("1.33")}}}},
			want: want{cp: v("1.33"), pools: map[string]Minor{"a": v("1.33")}, newPool: v("1.33"), phase: PhaseUpToDate},
		},
		"ControlPlaneFirst": {
			reason: "One minor ahead: the control plane moves, the pools stay.",
			args: args{target: v("1.34"), pol: pinned, obs: Observed{ControlPlane: v("1.33"), Asked: v("1.33"),
				Pools: []Pool{{Name: "a", Running: v("1.33")}, {Name: "b", Running: v("1.33")}}}},
			want: want{cp: v("1.34"), pools: map[string]Minor{"a": v("1.33"), "b": v("1.33")}, newPool: v("1.33"), phase: PhaseControlPlane,
				steps: []string{"control plane to 1.34", "node pools a, b to 1.34"}},
		},
		"SkipWalked": {
			reason: "Two minors ahead: one minor at a time, the whole walk listed.",
			args: args{target: v("1.35"), pol: pinned, obs: Observed{ControlPlane: v("1.33"), Asked: v("1.33"),
				Pools: []Pool{{Name: "a", Running: v("1.33")}}}},
			want: want{cp: v("1.34"), pools: map[string]Minor{"a": v("1.33")}, newPool: v("1.33"), phase: PhaseControlPlane,
				steps: []string{"control plane to 1.34", "node pools a to 1.34", "control plane to 1.35", "node pools a to 1.35"}},
		},
		"WaitForReport": {
			reason: "Asked for 1.34, still reporting 1.33: the pools do not move.",
			args: args{target: v("1.34"), pol: pinned, obs: Observed{ControlPlane: v("1.33"), Asked: v("1.34"),
				Pools: []Pool{{Name: "a", Running: v("1.33"), Asked: v("1.33")}}}},
			want: want{cp: v("1.34"), pools: map[string]Minor{"a": v("1.33")}, newPool: v("1.33"), phase: PhaseControlPlane,
				steps: []string{"control plane to 1.34", "node pools a to 1.34"}},
		},
		"PoolsOneAtATime": {
			reason: "The control plane reports 1.34: the pools follow, one at a time, by name.",
			args: args{target: v("1.34"), pol: pinned, obs: Observed{ControlPlane: v("1.34"), Asked: v("1.34"),
				Pools: []Pool{{Name: "b", Running: v("1.33")}, {Name: "a", Running: v("1.33")}}}},
			want: want{cp: v("1.34"), pools: map[string]Minor{"a": v("1.34"), "b": v("1.33")}, newPool: v("1.34"), phase: PhaseNodePools,
				steps: []string{"node pools a, b to 1.34"}},
		},
		"PoolInFlightFirst": {
			reason: "A pool already asked for the control plane's minor keeps its turn.",
			args: args{target: v("1.34"), pol: pinned, obs: Observed{ControlPlane: v("1.34"), Asked: v("1.34"),
				Pools: []Pool{{Name: "a", Running: v("1.33")}, {Name: "b", Running: v("1.33"), Asked: v("1.34")}}}},
			want: want{cp: v("1.34"), pools: map[string]Minor{"a": v("1.33"), "b": v("1.34")}, newPool: v("1.34"), phase: PhaseNodePools,
				steps: []string{"node pools a, b to 1.34"}},
		},
		"TwoAtATime": {
			reason: "parallelPools 2 moves two pools at once.",
			args: args{target: v("1.34"), pol: Policy{Window: window, Parallel: 2}, obs: Observed{ControlPlane: v("1.34"), Asked: v("1.34"),
				Pools: []Pool{{Name: "a", Running: v("1.33")}, {Name: "b", Running: v("1.33")}, {Name: "c", Running: v("1.33")}}}},
			want: want{cp: v("1.34"), pools: map[string]Minor{"a": v("1.34"), "b": v("1.34"), "c": v("1.33")}, newPool: v("1.34"), phase: PhaseNodePools,
				steps: []string{"node pools a, b, c to 1.34"}},
		},
		"LaggingPoolsHoldControlPlane": {
			reason: "Pools behind the control plane catch up before it moves on.",
			args: args{target: v("1.35"), pol: pinned, obs: Observed{ControlPlane: v("1.34"), Asked: v("1.34"),
				Pools: []Pool{{Name: "a", Running: v("1.33")}}}},
			want: want{cp: v("1.34"), pools: map[string]Minor{"a": v("1.34")}, newPool: v("1.34"), phase: PhaseNodePools,
				steps: []string{"node pools a to 1.34", "control plane to 1.35", "node pools a to 1.35"}},
		},
		"BusyPoolHoldsControlPlane": {
			reason: "A pool being changed may not run what it reports: the control plane waits.",
			args: args{target: v("1.35"), pol: pinned, obs: Observed{ControlPlane: v("1.34"), Asked: v("1.34"),
				Pools: []Pool{{Name: "a", Running: v("1.34"), Busy: true}}}},
			want: want{cp: v("1.34"), pools: map[string]Minor{"a": v("1.34")}, newPool: v("1.34"), phase: PhaseControlPlane,
				steps: []string{"control plane to 1.35", "node pools a to 1.35"}},
		},
		"ControlPlaneReportsNothing": {
			reason: "A control plane that exists but reports no version (lost status, an import not observed yet) is not a new one: nothing moves.",
			args: args{target: v("1.35"), pol: pinned, obs: Observed{Exists: true, Asked: v("1.33"),
				Pools: []Pool{{Name: "a", Running: v("1.33"), Asked: v("1.33")}}}},
			want: want{cp: v("1.33"), pools: map[string]Minor{"a": v("1.33")}, newPool: v("1.33"), phase: PhaseControlPlane,
				steps: []string{"control plane to 1.35"}},
		},
		"InFlightNeverTakenBack": {
			reason: "A step under way is not undone when the target is lowered back: the control plane is never asked for less than it moves to.",
			args: args{target: v("1.33"), pol: pinned, obs: Observed{ControlPlane: v("1.33"), Asked: v("1.34"),
				Pools: []Pool{{Name: "a", Running: v("1.33"), Asked: v("1.33")}}}},
			want: want{cp: v("1.34"), pools: map[string]Minor{"a": v("1.33")}, newPool: v("1.33"), phase: PhaseUpToDate},
		},
		"InFlightWhilePoolsLag": {
			reason: "A pool found lagging while the control plane moves does not take the step back.",
			args: args{target: v("1.34"), pol: pinned, obs: Observed{ControlPlane: v("1.33"), Asked: v("1.34"),
				Pools: []Pool{{Name: "a", Running: v("1.32"), Asked: v("1.32")}}}},
			want: want{cp: v("1.34"), pools: map[string]Minor{"a": v("1.33")}, newPool: v("1.33"), phase: PhaseNodePools,
				steps: []string{"node pools a to 1.33", "control plane to 1.34", "node pools a to 1.34"}},
		},
		"Downgrade": {
			reason: "A target below the running control plane is refused, naming the allowed targets.",
			args:   args{target: v("1.31"), pol: pinned, obs: Observed{ControlPlane: v("1.33"), Asked: v("1.33")}},
			want:   want{err: `spec.parameters.version: Invalid value: "1.31": the control plane runs 1.33 and is never downgraded; allowed targets: 1.33, 1.34, 1.35`},
		},
		"AboveWindow": {
			reason: "A target outside the environment's window is refused.",
			args:   args{target: v("1.36"), pol: pinned, obs: Observed{ControlPlane: v("1.33"), Asked: v("1.33")}},
			want:   want{err: `spec.parameters.version: Invalid value: "1.36": the environment supports 1.31 to 1.35 (environment key lifecycle.versions); the control plane runs 1.33; allowed targets: 1.33, 1.34, 1.35`},
		},
		"RunningBelowWindow": {
			reason: "A cluster left below the window must be asked for a supported version.",
			args:   args{target: v("1.30"), pol: pinned, obs: Observed{ControlPlane: v("1.30"), Asked: v("1.30")}},
			want:   want{err: `spec.parameters.version: Invalid value: "1.30": the environment supports 1.31 to 1.35 (environment key lifecycle.versions); the control plane runs 1.30; allowed targets: 1.31, 1.32, 1.33, 1.34, 1.35`},
		},
		"NewClusterOutsideWindow": {
			reason: "A new cluster is created only at a supported version.",
			args:   args{target: v("1.29"), pol: pinned},
			want:   want{err: `spec.parameters.version: Unsupported value: "1.29": supported values: "1.31", "1.32", "1.33", "1.34", "1.35"`},
		},
		"AheadOnReleaseChannel": {
			reason: "GKE's channel took the master past the target: the minimum asked stays, no error.",
			args: args{target: v("1.33"), pol: Policy{Window: window, AutoUpgrade: true}, obs: Observed{ControlPlane: v("1.34"), Asked: v("1.33"),
				Pools: []Pool{{Name: "a", Running: v("1.34")}}}},
			want: want{cp: v("1.33"), pools: map[string]Minor{"a": {}}, phase: PhaseUpToDate, ahead: true},
		},
		"AheadAfterEndOfSupport": {
			reason: "EKS upgraded the control plane itself: it is asked for what it runs, the pools stay at the target.",
			args: args{target: v("1.33"), pol: pinned, obs: Observed{ControlPlane: v("1.34"), Asked: v("1.33"),
				Pools: []Pool{{Name: "a", Running: v("1.33"), Asked: v("1.33")}}}},
			want: want{cp: v("1.34"), pools: map[string]Minor{"a": v("1.33")}, newPool: v("1.33"), phase: PhaseUpToDate, ahead: true},
		},
		"LoweredWhileAhead": {
			reason: "The owner lowering the target below what was asked is a downgrade.",
			args:   args{target: v("1.33"), pol: Policy{Window: window, AutoUpgrade: true}, obs: Observed{ControlPlane: v("1.35"), Asked: v("1.34")}},
			want:   want{err: `spec.parameters.version: Invalid value: "1.33": the control plane runs 1.35 and is never downgraded; allowed targets: 1.35`},
		},
		"OtherMajor": {
			reason: "A target of another major is refused at once: a walk of minor steps never reaches it.",
			args:   args{target: Minor{Major: 2, Minor: 0}, pol: Policy{Parallel: 1}, obs: Observed{ControlPlane: v("1.33"), Asked: v("1.33")}},
			want:   want{err: `spec.parameters.version: Invalid value: "2.0": the control plane runs 1.33; a version is reached one minor at a time within Kubernetes 1.x`},
		},
		"BeyondKubernetesMinors": {
			reason: "A minor beyond what ParseMinor accepts is refused, not walked to.",
			args:   args{target: Minor{Major: 1, Minor: 2000000000}, pol: Policy{Parallel: 1}, obs: Observed{ControlPlane: v("1.33"), Asked: v("1.33")}},
			want:   want{err: `spec.parameters.version: Invalid value: "1.2000000000": the control plane runs 1.33; a version is reached one minor at a time within Kubernetes 1.x`},
		},
		"AutoUpgradePools": {
			reason: "On a release channel pools carry no version; the next minor waits for the cloud to move them.",
			args: args{target: v("1.35"), pol: Policy{Window: window, AutoUpgrade: true}, obs: Observed{ControlPlane: v("1.34"), Asked: v("1.34"),
				Pools: []Pool{{Name: "a", Running: v("1.33")}}}},
			want: want{cp: v("1.34"), pools: map[string]Minor{"a": {}}, phase: PhaseNodePools,
				steps: []string{"node pools a to 1.34 (the cloud's auto-upgrade)", "control plane to 1.35", "node pools a to 1.35 (the cloud's auto-upgrade)"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := Next(tc.args.target, tc.args.obs, tc.args.pol, path)
			if tc.want.err != "" || err != nil {
				got := ""
				if err != nil {
					got = err.Error()
				}
				if got != tc.want.err {
					t.Errorf("%s\nNext(...) error: -want, +got:\n%s", tc.reason, cmp.Diff(tc.want.err, got))
				}
				return
			}
			var steps []string
			for _, s := range p.Steps {
				steps = append(steps, s.String())
			}
			got := want{cp: p.ControlPlane, pools: p.Pools, newPool: p.NewPools, phase: p.Phase(), steps: steps, ahead: p.Ahead}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nNext(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestWindowTargets(t *testing.T) {
	type args struct {
		w    Window
		from Minor
	}
	cases := map[string]struct {
		reason string
		args   args
		want   []string
	}{
		"FromRunning":  {reason: "From what runs to the window's maximum.", args: args{w: Window{Min: v("1.31"), Max: v("1.35")}, from: v("1.33")}, want: []string{"1.33", "1.34", "1.35"}},
		"FromMinimum":  {reason: "A new cluster may be asked for the whole window.", args: args{w: Window{Min: v("1.34"), Max: v("1.35")}}, want: []string{"1.34", "1.35"}},
		"OpenAbove":    {reason: "Any newer minor is allowed: nothing to list.", args: args{w: Window{Min: v("1.31")}, from: v("1.33")}},
		"OpenBelow":    {reason: "No minimum and nothing running: no first minor to list from.", args: args{w: Window{Max: v("1.35")}}},
		"OtherMajor":   {reason: "A maximum of another major is no walk of minors: nothing is listed, and the listing ends.", args: args{w: Window{Max: Minor{Major: 2}}, from: v("1.33")}},
		"HugeMaximum":  {reason: "A maximum beyond Kubernetes's minors is not walked to.", args: args{w: Window{Max: Minor{Major: 1, Minor: 2000000000}}, from: v("1.33")}},
		"AboveMaximum": {reason: "Running above the maximum: nothing to list.", args: args{w: Window{Max: v("1.32")}, from: v("1.33")}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.args.w.Targets(tc.args.from)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nTargets(%s): -want, +got:\n%s", tc.reason, tc.args.from, diff)
			}
		})
	}
}
