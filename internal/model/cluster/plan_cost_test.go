package cluster

import (
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

func TestBudgetEnforcement(t *testing.T) {
	cases := map[string]struct {
		reason string
		xr     string
		env    any
		want   string
		errs   []string
	}{
		"BuiltIn":        {reason: "Without a word from the XR or the environment, a budget only monitors.", want: "monitor-only"},
		"Environment":    {reason: "The environment's budget.enforcement applies to budgets that name none.", env: "enabled", want: "enabled"},
		"XRWins":         {reason: "The XR's enforcement wins over the environment's.", xr: "monitor-only", env: "enabled", want: "monitor-only"},
		"BadEnvironment": {reason: "An unknown enforcement in the environment is named with the allowed values.", env: "strict", errs: []string{`environment.budget.enforcement: Unsupported value: "strict": supported values: "enabled", "monitor-only"`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := map[string]any{"sizes": gcpSizes}
			if tc.env != nil {
				env["budget"] = map[string]any{"enforcement": tc.env}
			}
			p, errs := Build(composite(xr.Parameters{Location: "x", Budget: &xr.Budget{LimitUSD: 100, Enforcement: tc.xr}}), envcfg.New(env), Traits{})
			if diff := cmp.Diff(tc.errs, errStrings(errs), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("%s\nBuild(...) errors: -want, +got:\n%s", tc.reason, diff)
			}
			if len(tc.errs) == 0 && p.BudgetEnforcement != tc.want {
				t.Errorf("%s\nenforcement = %q, want %q", tc.reason, p.BudgetEnforcement, tc.want)
			}
		})
	}
}

func TestEstimatePools(t *testing.T) {
	prices := map[string]any{"hoursPerMonth": 100.0, "controlPlanePerHour": 1.0,
		"machineTypes": map[string]any{"std": 1.0, "big": 2.0}, "spotMachineTypes": map[string]any{"big": 0.5}}
	perZone := func(location string) int64 {
		if location == "region" {
			return 3
		}
		return 1
	}
	fixed := func(*envcfg.Env) []NodePool {
		return []NodePool{{Name: "system", Fixed: true, MachineType: "std", MinNodes: 1, MaxNodes: 2}}
	}
	pools := []xr.Pool{
		{Key: "a", Name: "a", MachineType: "std", MinNodes: ptr(int64(1)), MaxNodes: ptr(int64(2))},
		{Key: "b", Name: "b", MachineType: "big", Spot: true, MinNodes: ptr(int64(0)), MaxNodes: ptr(int64(4))},
	}
	cases := map[string]struct {
		reason   string
		location string
		traits   Traits
		noSpot   bool
		want     Estimate
		missing  []string
	}{
		"Total": {
			reason:   "Bounds that count all nodes: control plane 100, pool a 100..200, spot pool b at its spot price 0..200.",
			location: "region",
			want:     Estimate{Min: 200, Max: 500},
		},
		"PerZone": {
			reason:   "A regional cluster whose pool bounds count nodes per zone: three zones triple every pool.",
			location: "region", traits: Traits{PoolZones: perZone},
			want: Estimate{Min: 400, Max: 1300},
		},
		"Zonal": {
			reason:   "A zonal cluster's pools span one zone.",
			location: "zone", traits: Traits{PoolZones: perZone},
			want: Estimate{Min: 200, Max: 500},
		},
		"FixedPool": {
			reason:   "Nodes the cloud composes with the cluster (AKS's system pool) are counted once.",
			location: "region", traits: Traits{PoolZones: perZone, FixedPools: fixed},
			want: Estimate{Min: 500, Max: 1500},
		},
		"NoSpotPrice": {
			reason:   "A spot pool without a spot price is priced on demand, and the missing key is named.",
			location: "zone", noSpot: true,
			want:    Estimate{Min: 200, Max: 1100},
			missing: []string{"prices.spotMachineTypes.big"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pr := maps.Clone(prices)
			if tc.noSpot {
				delete(pr, "spotMachineTypes")
			}
			env := envcfg.New(map[string]any{"prices": pr})
			p, errs := Build(composite(xr.Parameters{Location: tc.location, Pools: pools}), env, tc.traits)
			if len(errs) > 0 {
				t.Fatalf("%s\nBuild(...): %v", tc.reason, errs)
			}
			got, errs := p.Estimate(env)
			if len(errs) > 0 {
				t.Fatalf("%s\nEstimate(...): %v", tc.reason, errs)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nEstimate(...): -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.missing, env.Missing(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nmissing keys: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
