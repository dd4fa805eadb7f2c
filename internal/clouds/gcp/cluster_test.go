package gcp

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// observedCluster is an observed GKE cluster whose provider reports the
// supplied private cluster config (none when nil).
func observedCluster(t *testing.T, pcc map[string]any) *structpb.Struct {
	t.Helper()
	at := map[string]any{"endpoint": "34.0.0.1"}
	if pcc != nil {
		at["privateClusterConfig"] = pcc
	}
	s, err := structpb.NewStruct(map[string]any{"status": map[string]any{"atProvider": at}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// clusterContext is a render context of the GKE cluster edge with the
// supplied observed resources.
func clusterContext(observed map[string]*structpb.Struct) *registry.Context {
	x := &xr.Composite{Name: "edge", CloudName: "edge", PlaneID: "acme-prod-123"}
	return registry.NewContext(x, envcfg.New(map[string]any{}), Cloud, observed)
}

// Private cluster configs as the provider reports them: a private cluster
// on the default control plane range, with its endpoint private or not.
var (
	runsPrivate         = map[string]any{"enablePrivateNodes": true, "enablePrivateEndpoint": false, "masterIpv4CidrBlock": "172.16.0.32/28"}
	runsPrivateEndpoint = map[string]any{"enablePrivateNodes": true, "enablePrivateEndpoint": true, "masterIpv4CidrBlock": "172.16.0.32/28"}
)

func TestPrivateClusterConfig(t *testing.T) {
	type args struct {
		cluster cluster.Cluster
		// observed is the provider's report of the cluster; nil before
		// it exists, {} for a public cluster.
		observed map[string]any
		exists   bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   map[string]any
	}{
		"NewPrivate": {
			reason: "A private cluster has private nodes on the environment's control plane range, its endpoint as the environment says.",
			args:   args{cluster: cluster.Cluster{Private: true, PrivateEndpoint: true}},
			want:   map[string]any{"enablePrivateNodes": true, "enablePrivateEndpoint": true, "masterIpv4CidrBlock": defaultControlPlaneCIDR},
		},
		"NewPublic": {
			reason: "A public cluster not created yet has no private cluster config.",
			args:   args{cluster: cluster.Cluster{}},
		},
		"RunningPublic": {
			reason: "A public cluster that runs public nodes has none either.",
			args:   args{cluster: cluster.Cluster{}, exists: true, observed: map[string]any{}},
		},
		"PrivateToPublic": {
			reason: "A cluster made public that runs private nodes keeps them, on the range it runs with; its private endpoint opens in place.",
			args:   args{cluster: cluster.Cluster{}, exists: true, observed: runsPrivateEndpoint},
			want:   map[string]any{"enablePrivateNodes": true, "enablePrivateEndpoint": false, "masterIpv4CidrBlock": "172.16.0.32/28"},
		},
		"PrivateToPublicEndpointOpen": {
			reason: "One whose endpoint was public already changes nothing.",
			args:   args{cluster: cluster.Cluster{}, exists: true, observed: runsPrivate},
			want:   runsPrivate,
		},
		"PrivateToPublicRangeUnreported": {
			reason: "A range the provider does not report is left out: the provider keeps what runs.",
			args:   args{cluster: cluster.Cluster{}, exists: true, observed: map[string]any{"enablePrivateNodes": true}},
			want:   map[string]any{"enablePrivateNodes": true, "enablePrivateEndpoint": false},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			observed := map[string]*structpb.Struct{}
			if tc.args.exists {
				pcc := tc.args.observed
				if len(pcc) == 0 {
					pcc = nil
				}
				observed[rCluster] = observedCluster(t, pcc)
			}
			got := privateClusterConfig(clusterContext(observed), tc.args.cluster)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nprivateClusterConfig(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// refusedTail ends the refusal of a public cluster made private.
const refusedTail = ` now asks for private ones: GKE would change in place only the default of new node pools and the endpoint, the running pools would keep their public nodes, and a private cluster's control plane range, privateClusterConfig.masterIpv4CidrBlock, is set only when GKE creates a cluster (google_container_cluster.private_cluster_config.master_ipv4_cidr_block is ForceNew): restore false, or create a new Cluster`

func TestCheckPrivateNodes(t *testing.T) {
	xrPath := xr.ParametersPath("privateCluster")
	envPath := field.NewPath("environment", "privateCluster")
	type args struct {
		private bool
		path    *field.Path
		// observed is the provider's report of the cluster's private
		// cluster config; nil for a public cluster.
		observed map[string]any
		exists   bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   string
	}{
		"New": {
			reason: "A cluster not created yet is created as asked.",
			args:   args{private: true, path: xrPath},
		},
		"PrivateToPublic": {
			reason: "Made public, a cluster that runs private nodes is walked (privateClusterConfig), not refused.",
			args:   args{private: false, path: xrPath, exists: true, observed: runsPrivateEndpoint},
		},
		"PrivateStaysPrivate": {
			reason: "Nothing changes: nothing is refused.",
			args:   args{private: true, path: xrPath, exists: true, observed: runsPrivate},
		},
		"PublicToPrivate": {
			reason: "Made private, a cluster that runs public nodes is refused, naming the XR's field, what GKE would do in place and what it cannot.",
			args:   args{private: true, path: xrPath, exists: true},
			want:   `spec.parameters.privateCluster: Invalid value: true: GKE cluster "edge" runs public nodes (no private cluster config), and spec.parameters.privateCluster` + refusedTail,
		},
		"PublicToPrivateByEnvironment": {
			reason: "The environment's privateCluster, which the XR does not set, is named instead.",
			args:   args{private: true, path: envPath, exists: true},
			want:   `environment.privateCluster: Invalid value: true: GKE cluster "edge" runs public nodes (no private cluster config), and environment.privateCluster` + refusedTail,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			observed := map[string]*structpb.Struct{}
			if tc.args.exists {
				observed[rCluster] = observedCluster(t, tc.args.observed)
			}
			errs := checkPrivateNodes(clusterContext(observed), cluster.Cluster{Private: tc.args.private, PrivatePath: tc.args.path})
			got := ""
			if len(errs) > 0 {
				got = errs.ToAggregate().Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ncheckPrivateNodes(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestEgressInUse(t *testing.T) {
	nat := &structpb.Struct{}
	cases := map[string]struct {
		reason string
		args   map[string]*structpb.Struct
		want   bool
	}{
		"PrivateNodes": {
			reason: "A cluster that runs private nodes keeps its Cloud NAT.",
			args:   map[string]*structpb.Struct{rNAT: nat, rCluster: observedCluster(t, runsPrivate)},
			want:   true,
		},
		"PublicNodes": {
			reason: "One that runs public nodes uses none.",
			args:   map[string]*structpb.Struct{rNAT: nat, rCluster: observedCluster(t, nil)},
		},
		"NoNAT": {
			reason: "Without a NAT, there is none to keep.",
			args:   map[string]*structpb.Struct{rCluster: observedCluster(t, runsPrivate)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, egressInUse(tc.args) != ""); diff != "" {
				t.Errorf("%s\negressInUse(...) in use: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
