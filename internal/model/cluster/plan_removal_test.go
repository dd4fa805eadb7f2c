package cluster

import (
	"testing"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

func TestRemoval(t *testing.T) {
	off, on := ptr(false), ptr(true)
	type args struct {
		params xr.Parameters
		env    map[string]any
		id     string
	}
	type want struct {
		bySpec bool
		// confirm says whether a spec statement other than
		// confirmRemovals is offered.
		confirm bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"PoolInSpec": {
			reason: "A pool still in the spec is not removed.",
			args:   args{params: xr.Parameters{Pools: []xr.Pool{{Key: "a", Name: "a"}}}, id: "pool/a"},
		},
		"PoolRemovedFromSpec": {
			reason: "A pool left out of the pools the spec names is removed by the spec.",
			args:   args{params: xr.Parameters{Pools: []xr.Pool{{Key: "a", Name: "a"}}}, id: "pool/b"},
			want:   want{bySpec: true},
		},
		"PoolRemovedFromEnvironment": {
			reason: "A pool the environment's default pools no longer list is held: the spec names no pools.",
			args:   args{env: map[string]any{"pools": map[string]any{"a": map[string]any{"machineType": "m"}}}, id: "pool/b"},
			want:   want{confirm: true},
		},
		"DomainRemoved": {
			reason: "Removing the domain keeps the zones until createDnsZones is false.",
			args:   args{id: "dns/public"},
			want:   want{confirm: true},
		},
		"ZonesOff": {
			reason: "createDnsZones: false removes the zones.",
			args:   args{params: xr.Parameters{CreateDNSZones: off}, id: "dns/public"},
			want:   want{bySpec: true},
		},
		"PrivateZoneWhenPublicBySpec": {
			reason: "A cluster the spec makes public keeps its private zone, which holds records, until its owner removes the zones or names it.",
			args:   args{params: xr.Parameters{CreateDNSZones: on, Domain: "a.example.com", PrivateCluster: off}, id: "dns/private"},
			want:   want{confirm: true},
		},
		"PrivateZoneWhenPublicByEnvironment": {
			reason: "A cluster the environment makes public keeps its private zone.",
			args:   args{params: xr.Parameters{Domain: "a.example.com"}, env: map[string]any{"privateCluster": false}, id: "dns/private"},
			want:   want{confirm: true},
		},
		"EgressWhenPublicBySpec": {
			reason: "A cluster the spec makes public loses its NAT.",
			args:   args{params: xr.Parameters{PrivateCluster: off}, id: "egress"},
			want:   want{bySpec: true},
		},
		"EgressWhenPublicByEnvironment": {
			reason: "A cluster the environment makes public keeps its NAT until the owner says so.",
			args:   args{env: map[string]any{"privateCluster": false}, id: "egress"},
			want:   want{confirm: true},
		},
		"EgressWhenPrivate": {
			reason: "A private cluster keeps its NAT.",
			args:   args{params: xr.Parameters{PrivateCluster: on}, id: "egress"},
		},
		"ChartDisabledBySpec": {
			reason: "A chart the XR disables loses its release.",
			args:   args{params: xr.Parameters{Charts: map[string]xr.Chart{"ingress-nginx": {Disabled: true}}}, id: "release/ingress-nginx"},
			want:   want{bySpec: true},
		},
		"ChartDisabledByEnvironment": {
			reason: "A chart the environment disables keeps its release until the XR disables it too.",
			args:   args{env: map[string]any{"charts": map[string]any{"ingress-nginx": map[string]any{"disabled": true}}}, id: "release/ingress-nginx"},
			want:   want{confirm: true},
		},
		"MonitoringOffByEnvironment": {
			reason: "monitoring.enabled: false in the environment holds the monitoring release.",
			args:   args{env: map[string]any{"monitoring": map[string]any{"enabled": false}}, id: "release/kube-prometheus-stack"},
			want:   want{confirm: true},
		},
		"ChartGoneFromCatalog": {
			reason: "A chart the catalog no longer has is held; only confirmRemovals removes it.",
			args:   args{id: "release/team-chart"},
		},
		"BudgetRemoved": {
			reason: "Removing the budget removes it.",
			args:   args{id: "budget"},
			want:   want{bySpec: true},
		},
		"Cluster": {
			reason: "The cluster is never removed by the plan.",
			args:   args{id: "cluster"},
		},
		"PrivateServicesOff": {
			reason: "Only the spec asks for private services access: without it, its resources are removed by the spec.",
			args:   args{id: PrivateServicesID},
			want:   want{bySpec: true},
		},
		"PrivateServicesOn": {
			reason: "Private services access the spec asks for is kept.",
			args:   args{params: xr.Parameters{Network: xr.Network{PrivateServices: true}}, id: PrivateServicesID},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.args.params.Location = "x"
			for i := range tc.args.params.Pools {
				tc.args.params.Pools[i].MachineType = "m"
			}
			env := map[string]any{"sizes": gcpSizes}
			for k, v := range tc.args.env {
				env[k] = v
			}
			p, errs := Build(composite(tc.args.params), envcfg.New(env), Traits{PodRange: true, PrivateServices: true})
			if len(errs) > 0 {
				t.Fatalf("Build: %v", errs)
			}
			r := p.Removal(tc.args.id)
			if r.BySpec != tc.want.bySpec || (r.Confirm != "") != tc.want.confirm || r.Why == "" {
				t.Errorf("%s\nRemoval(%q) = %+v, want bySpec %t, a spec statement to confirm %t, and a reason", tc.reason, tc.args.id, r, tc.want.bySpec, tc.want.confirm)
			}
		})
	}
}
