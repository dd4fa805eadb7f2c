package main

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/compose"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

const (
	ttlConverging = 15 * time.Second
	ttlReady      = 5 * time.Minute
)

func newFunction() *Function {
	return &Function{log: logging.NewNopLogger(), opts: compose.Options{TTLConverging: ttlConverging, TTLReady: ttlReady}}
}

func run(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	rsp, err := newFunction().RunFunction(context.Background(), req)
	if err != nil {
		panic(err) // RunFunction never returns an error
	}
	return rsp
}

var envs = fntest.MustLoad("examples/envconfigs")

// gcpXR is a namespaced GCP Cluster that is not one of the examples.
func gcpXR(mutate ...func(o fntest.Object)) fntest.Object {
	o := fntest.Object{
		"apiVersion": "platform.example.org/v1alpha1",
		"kind":       "Cluster",
		"metadata": map[string]any{
			"name":      "edge",
			"namespace": "team-edge",
			"labels":    map[string]any{"cloud": "gcp", "planeId": "edge-project-42", "planeType": "production"},
		},
		"spec": map[string]any{"parameters": map[string]any{
			"location": "europe-west4",
			"domain":   "edge.example.net",
			"pools": map[string]any{
				"general": map[string]any{"size": "small", "minNodes": 2.0, "maxNodes": 4.0},
				"gpu":     map[string]any{"machineType": "g2-standard-8", "minNodes": 0.0, "maxNodes": 2.0, "spot": true},
			},
		}},
	}
	for _, m := range mutate {
		m(o)
	}
	return o
}

// legacy turns an XR into a cluster-scoped XR of the legacy API.
func legacy(o fntest.Object) {
	o["apiVersion"] = "legacy.platform.example.org/v1alpha1"
	o["kind"] = "XCluster"
	delete(o["metadata"].(map[string]any), "namespace")
}

// set sets a dotted path of an object.
func set(path string, v any) func(o fntest.Object) {
	return func(o fntest.Object) {
		parts := strings.Split(path, ".")
		m := o
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		if v == nil {
			delete(m, parts[len(parts)-1])
			return
		}
		m[parts[len(parts)-1]] = v
	}
}

func fatal(msg string) *fnv1.RunFunctionResponse {
	return &fnv1.RunFunctionResponse{
		Meta:    &fnv1.ResponseMeta{Tag: "test", Ttl: durationpb.New(ttlConverging)},
		Desired: &fnv1.State{},
		Results: []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_FATAL, Message: msg, Target: fnv1.Target_TARGET_COMPOSITE.Enum()}},
	}
}

func TestRunFunctionFatal(t *testing.T) {
	type args struct {
		req fntest.Request
	}
	type want struct {
		rsp *fnv1.RunFunctionResponse
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"UnknownCloud": {
			reason: "An unknown cloud label is bad input: Fatal, naming the field and the allowed values.",
			args:   args{req: fntest.Request{XR: gcpXR(set("metadata.labels.cloud", "oracle")), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: metadata.labels[cloud]: Unsupported value: "oracle": supported values: "gcp"`)},
		},
		"MissingCloud": {
			reason: "A missing cloud label is bad input.",
			args:   args{req: fntest.Request{XR: gcpXR(set("metadata.labels.cloud", nil)), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: metadata.labels[cloud]: Required value: the cloud label selects the cloud layer; supported values: "gcp"`)},
		},
		"MissingLocation": {
			reason: "The location is required.",
			args:   args{req: fntest.Request{XR: gcpXR(set("spec.parameters.location", nil)), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.location: Required value: the region (or, on GCP, zone) of the cluster`)},
		},
		"MinAboveMax": {
			reason: "A pool whose minimum exceeds its maximum is bad input.",
			args:   args{req: fntest.Request{XR: gcpXR(set("spec.parameters.pools.general.minNodes", 5.0)), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.pools[general].minNodes: Invalid value: 5: must not exceed maxNodes (4)`)},
		},
		"UnknownSize": {
			reason: "A size class the environment does not map is bad input, naming the classes it does map.",
			args:   args{req: fntest.Request{XR: gcpXR(set("spec.parameters.pools.general.size", "huge")), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.pools[general].size: Unsupported value: "huge": supported values: "large", "medium", "small", "xlarge"`)},
		},
		"OverlappingCIDRs": {
			reason: "Pod and node ranges must not overlap.",
			args:   args{req: fntest.Request{XR: gcpXR(set("spec.parameters.network", map[string]any{"cidr": "10.0.0.0/8"})), EnvironmentConfigs: envs}},
			want: want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.network.cidr: Invalid value: "10.0.0.0/8": overlaps spec.parameters.network.podsCidr (10.100.0.0/14); address ranges must be disjoint; ` +
				`spec.parameters.network.cidr: Invalid value: "10.0.0.0/8": overlaps spec.parameters.network.servicesCidr (10.104.0.0/20); address ranges must be disjoint`)},
		},
		"MalformedCIDR": {
			reason: "A CIDR that is not a network address is bad input, with a hint.",
			args:   args{req: fntest.Request{XR: gcpXR(set("spec.parameters.network", map[string]any{"cidr": "10.0.0.1/16"})), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.network.cidr: Invalid value: "10.0.0.1/16": must be a network address; did you mean 10.0.0.0/16?`)},
		},
		"InvalidDomain": {
			reason: "A domain must be a DNS name.",
			args:   args{req: fntest.Request{XR: gcpXR(set("spec.parameters.domain", "Edge_Example")), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.domain: Invalid value: "Edge_Example": must be a lower-case DNS name such as prod.example.com: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)},
		},
		"NameTooLongForGKE": {
			reason: "GKE cluster names are at most 40 characters.",
			args:   args{req: fntest.Request{XR: gcpXR(set("metadata.labels.clusterName", "a-very-long-cluster-name-that-gke-will-refuse")), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: metadata.labels[clusterName]: Invalid value: "a-very-long-cluster-name-that-gke-will-refuse": a GKE cluster name must start with a lower-case letter, contain only lower-case letters, digits and '-', not end with '-', and be at most 40 characters; set the clusterName label to choose one`)},
		},
		"InvalidProject": {
			reason: "planeId must be a GCP project ID on GCP.",
			args:   args{req: fntest.Request{XR: gcpXR(set("metadata.labels.planeId", "My_Project")), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: metadata.labels[planeId]: Invalid value: "My_Project": must be a GCP project ID: 6 to 30 lower-case letters, digits or '-', starting with a letter`)},
		},
		"UnknownImportMode": {
			reason: "Import modes are observe and manage.",
			args:   args{req: fntest.Request{XR: gcpXR(set("spec.parameters.import", map[string]any{"enabled": true, "mode": "adopt", "resources": map[string]any{"cluster": "edge"}})), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.import.mode: Unsupported value: "adopt": supported values: "observe", "manage"`)},
		},
		"UnknownParameter": {
			reason: "A misspelt parameter is reported, not silently ignored.",
			args:   args{req: fntest.Request{XR: gcpXR(set("spec.parameters.pools.general.minNode", 1.0)), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.pools[general].minNode: Forbidden: unknown field; known fields are: size, machineType, minNodes, maxNodes, spot, diskSizeGb, labels, taints`)},
		},
		"CloudLabelFlipped": {
			reason: "Changing the cloud of an XR with composed resources would delete them all: Fatal.",
			args: args{req: fntest.Request{
				XR:                 gcpXR(set("metadata.labels.cloud", "aws"), set("metadata.labels.planeId", "123456789012")),
				EnvironmentConfigs: envs,
				Observed: map[string]fntest.Object{"network": {
					"apiVersion": "compute.gcp.m.upbound.io/v1beta1", "kind": "Network",
					"metadata": map[string]any{"name": "edge-abcde", "labels": map[string]any{"platform.example.org/cloud": "gcp"}},
				}},
			}},
			want: want{rsp: fatal(`cloud is immutable: edge's composed resources (such as "network") were composed for cloud "gcp", but metadata.labels.cloud is now "aws"; restore the label, or create a new XR for "aws"`)},
		},
		"EnvironmentMissingAfterFetch": {
			reason: "When the fetched EnvironmentConfigs hold none for this XR, the desired state cannot be computed.",
			args:   args{req: fntest.Request{XR: gcpXR(), EnvironmentConfigs: []fntest.Object{}, Fetched: true}},
			want:   want{rsp: fatal(`no EnvironmentConfig found: expected configs labelled platform.example.org/environment=cluster-platform with baseline=default, cloud=gcp or planeType=production, or an environment in the pipeline context key "apiextensions.crossplane.io/environment"`)},
		},
		"UnsupportedModule": {
			reason: "An input module the function does not know is a Fatal.",
			args:   args{req: fntest.Request{XR: gcpXR(), EnvironmentConfigs: envs, Input: fntest.Object{"apiVersion": "platform.fn.example.org/v1beta1", "kind": "Input", "module": "database"}}},
			want:   want{rsp: fatal(`input module "database" is not supported; supported modules: "cluster"`)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req, err := tc.args.req.Proto()
			if err != nil {
				t.Fatal(err)
			}
			got := run(req)
			if diff := cmp.Diff(tc.want.rsp, got, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// summary is the part of a response the behaviour tests assert on.
type summary struct {
	Desired      []string
	NotReady     []string
	Conditions   map[string]string
	Status       map[string]any
	Requirements []string
	Warnings     []string
	TTL          time.Duration
}

func summarise(rsp *fnv1.RunFunctionResponse, statusKeys ...string) summary {
	s := summary{Conditions: map[string]string{}, Status: map[string]any{}, TTL: rsp.GetMeta().GetTtl().AsDuration()}
	for name, r := range rsp.GetDesired().GetResources() {
		o := r.GetResource().AsMap()
		s.Desired = append(s.Desired, name+" "+o["kind"].(string)+" "+o["apiVersion"].(string))
		if r.GetReady() != fnv1.Ready_READY_TRUE {
			s.NotReady = append(s.NotReady, name)
		}
	}
	slices.Sort(s.Desired)
	slices.Sort(s.NotReady)
	for _, c := range rsp.GetConditions() {
		s.Conditions[c.GetType()] = strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_") + "/" + c.GetReason()
	}
	st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"]
	for _, k := range statusKeys {
		if v, ok := st.(map[string]any)[k]; ok {
			s.Status[k] = v
		}
	}
	s.Requirements = slices.Sorted(maps.Keys(rsp.GetRequirements().GetResources()))
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING {
			s.Warnings = append(s.Warnings, r.GetMessage())
		}
	}
	return s
}

func TestRunFunction(t *testing.T) {
	type args struct {
		req fntest.Request
	}
	type want struct {
		summary summary
	}
	observedExample := func(path string) map[string]fntest.Object {
		out := map[string]fntest.Object{}
		for _, o := range fntest.MustLoad(path) {
			out[o["metadata"].(map[string]any)["annotations"].(map[string]any)["crossplane.io/composition-resource-name"].(string)] = o
		}
		return out
	}
	exampleXR := fntest.MustLoad("examples/gcp/cluster.yaml")[0]
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"GCPNamespacedFirstRender": {
			reason: "A new namespaced XR composes, in the .m. groups, only what has no prerequisites; the rest waits.",
			args:   args{req: fntest.Request{XR: gcpXR(), EnvironmentConfigs: envs}},
			want: want{summary: summary{
				Desired: []string{
					"network Network compute.gcp.m.upbound.io/v1beta1",
					"node-service-account ServiceAccount cloudplatform.gcp.m.upbound.io/v1beta1",
					"public-dns-zone ManagedZone dns.gcp.m.upbound.io/v1beta1",
				},
				NotReady: []string{"network", "node-service-account", "public-dns-zone"},
				Conditions: map[string]string{
					"NetworkReady": "FALSE/Waiting", "ClusterReady": "FALSE/Waiting", "NodePoolsReady": "FALSE/Waiting",
					"AddonsReady": "FALSE/Waiting", "DnsReady": "FALSE/Waiting",
				},
				Status: map[string]any{"nodePools": []any{
					map[string]any{"name": "general", "machineType": "e2-standard-2", "minNodes": 2.0, "maxNodes": 4.0, "spot": false, "ready": false},
					map[string]any{"name": "gpu", "machineType": "g2-standard-8", "minNodes": 0.0, "maxNodes": 2.0, "spot": true, "ready": false},
				}},
				TTL: ttlConverging,
			}},
		},
		"GCPLegacyFirstRender": {
			reason: "A cluster-scoped XR composes the legacy groups at the versions provider-upjet-gcp v3 serves.",
			args:   args{req: fntest.Request{XR: gcpXR(legacy), EnvironmentConfigs: envs}},
			want: want{summary: summary{
				Desired: []string{
					"network Network compute.gcp.upbound.io/v1beta1",
					"node-service-account ServiceAccount cloudplatform.gcp.upbound.io/v1beta1",
					"public-dns-zone ManagedZone dns.gcp.upbound.io/v1beta2",
				},
				NotReady: []string{"network", "node-service-account", "public-dns-zone"},
				Conditions: map[string]string{
					"NetworkReady": "FALSE/Waiting", "ClusterReady": "FALSE/Waiting", "NodePoolsReady": "FALSE/Waiting",
					"AddonsReady": "FALSE/Waiting", "DnsReady": "FALSE/Waiting",
				},
				TTL: ttlConverging,
			}},
		},
		"EnvironmentRequested": {
			reason: "Without EnvironmentConfigs in the context or the step's requirement, the function asks for them and keeps what exists.",
			args: args{req: fntest.Request{XR: gcpXR(), Observed: map[string]fntest.Object{"network": {
				"apiVersion": "compute.gcp.m.upbound.io/v1beta1", "kind": "Network",
				"metadata": map[string]any{"name": "edge-abcde", "annotations": map[string]any{"platform.example.org/component": "network"}},
				"spec":     map[string]any{"forProvider": map[string]any{"project": "edge-project-42"}},
			}}}},
			want: want{summary: summary{
				Desired:      []string{"network Network compute.gcp.m.upbound.io/v1beta1"},
				NotReady:     []string{"network"},
				Conditions:   map[string]string{},
				Requirements: []string{envcfg.FallbackRequirementName},
				TTL:          ttlConverging,
			}},
		},
		"EnvironmentFromContext": {
			reason: "An environment in the pipeline context (function-environment-configs) is used as is, without a requirement.",
			args: args{req: fntest.Request{XR: gcpXR(), Context: fntest.Object{envcfg.ContextKey: fntest.Object{
				"apiVersion": "internal.crossplane.io/v1alpha1", "kind": "Environment",
				"sizes": map[string]any{"small": "e2-standard-2"},
			}}}},
			want: want{summary: summary{
				Desired: []string{
					"network Network compute.gcp.m.upbound.io/v1beta1",
					"node-service-account ServiceAccount cloudplatform.gcp.m.upbound.io/v1beta1",
					"public-dns-zone ManagedZone dns.gcp.m.upbound.io/v1beta1",
				},
				NotReady: []string{"network", "node-service-account", "public-dns-zone"},
				Conditions: map[string]string{
					"NetworkReady": "FALSE/Waiting", "ClusterReady": "FALSE/Waiting", "NodePoolsReady": "FALSE/Waiting",
					"AddonsReady": "FALSE/Waiting", "DnsReady": "FALSE/Waiting",
				},
				TTL: ttlConverging,
			}},
		},
		"Converged": {
			reason: "With the whole stack observed ready, every resource is desired and ready, the conditions are True and the status is filled.",
			args:   args{req: fntest.Request{XR: exampleXR, EnvironmentConfigs: envs, Observed: observedExample("examples/gcp/observed/cluster.yaml")}},
			want: want{summary: summary{
				Desired: slices.Sorted(maps.Keys(func() map[string]bool {
					m := map[string]bool{}
					for name, o := range observedExample("examples/gcp/observed/cluster.yaml") {
						m[name+" "+o["kind"].(string)+" "+o["apiVersion"].(string)] = true
					}
					return m
				}())),
				Conditions: map[string]string{
					"NetworkReady": "TRUE/Available", "ClusterReady": "TRUE/Available", "NodePoolsReady": "TRUE/Available",
					"AddonsReady": "TRUE/Available", "DnsReady": "TRUE/Available",
				},
				Status: map[string]any{
					"clusterEndpoint": "https://34.113.152.149",
					"oidcIssuer":      "https://container.googleapis.com/v1/projects/my-project-123/locations/us-central1/clusters/prod-cluster",
					"dnsNameServers":  []any{"ns-cloud-a1.googledomains.com.", "ns-cloud-a2.googledomains.com.", "ns-cloud-a3.googledomains.com.", "ns-cloud-a4.googledomains.com."},
				},
				TTL: ttlReady,
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req, err := tc.args.req.Proto()
			if err != nil {
				t.Fatal(err)
			}
			rsp := run(req)
			if msg := fntest.Fatal(rsp); msg != "" {
				t.Fatalf("%s\nRunFunction(...): unexpected Fatal: %s", tc.reason, msg)
			}
			keys := slices.Collect(maps.Keys(tc.want.summary.Status))
			if diff := cmp.Diff(tc.want.summary, summarise(rsp, keys...), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestConverge drives XRs that are not in examples/ through repeated
// reconciles, feeding each round's desired resources back as observed and
// ready, and checks they converge to the whole GCP inventory.
func TestConverge(t *testing.T) {
	inventory := func(groupSuffix map[string]string) []string {
		kinds := []struct{ name, kind, group string }{
			{"network", "Network", "compute"}, {"subnet", "Subnetwork", "compute"},
			{"router", "Router", "compute"}, {"nat", "RouterNAT", "compute"},
			{"node-service-account", "ServiceAccount", "cloudplatform"},
			{"node-iam-container-defaultnodeserviceaccount", "ProjectIAMMember", "cloudplatform"},
			{"node-iam-artifactregistry-reader", "ProjectIAMMember", "cloudplatform"},
			{"cluster", "Cluster", "container"},
			{"nodepool-general", "NodePool", "container"}, {"nodepool-gpu", "NodePool", "container"},
			{"public-dns-zone", "ManagedZone", "dns"}, {"private-dns-zone", "ManagedZone", "dns"},
		}
		var out []string
		for _, k := range kinds {
			out = append(out, k.name+" "+k.kind+" "+k.group+groupSuffix[k.kind])
		}
		out = append(out,
			"helm-provider-config ProviderConfig "+groupSuffix["helm"],
			"kubernetes-provider-config ProviderConfig "+groupSuffix["kubernetes"],
			"release-cert-manager Release "+groupSuffix["release"],
			"release-ingress-nginx Release "+groupSuffix["release"],
			"release-kube-prometheus-stack Release "+groupSuffix["release"],
		)
		return out
	}
	namespaced := map[string]string{
		"Network": ".gcp.m.upbound.io/v1beta1", "Subnetwork": ".gcp.m.upbound.io/v1beta1", "Router": ".gcp.m.upbound.io/v1beta1",
		"RouterNAT": ".gcp.m.upbound.io/v1beta1", "ServiceAccount": ".gcp.m.upbound.io/v1beta1", "ProjectIAMMember": ".gcp.m.upbound.io/v1beta1",
		"Cluster": ".gcp.m.upbound.io/v1beta1", "NodePool": ".gcp.m.upbound.io/v1beta1", "ManagedZone": ".gcp.m.upbound.io/v1beta1",
		"helm": "helm.m.crossplane.io/v1beta1", "kubernetes": "kubernetes.m.crossplane.io/v1alpha1", "release": "helm.m.crossplane.io/v1beta1",
		"usage": "Usage protection.crossplane.io/v1beta1",
	}
	clusterScoped := map[string]string{
		"Network": ".gcp.upbound.io/v1beta1", "Subnetwork": ".gcp.upbound.io/v1beta2", "Router": ".gcp.upbound.io/v1beta2",
		"RouterNAT": ".gcp.upbound.io/v1beta2", "ServiceAccount": ".gcp.upbound.io/v1beta1", "ProjectIAMMember": ".gcp.upbound.io/v1beta2",
		"Cluster": ".gcp.upbound.io/v1beta2", "NodePool": ".gcp.upbound.io/v1beta2", "ManagedZone": ".gcp.upbound.io/v1beta2",
		"helm": "helm.crossplane.io/v1beta1", "kubernetes": "kubernetes.crossplane.io/v1alpha1", "release": "helm.crossplane.io/v1beta1",
		"usage": "ClusterUsage protection.crossplane.io/v1beta1",
	}
	cases := map[string]struct {
		reason string
		xr     fntest.Object
		kinds  map[string]string
	}{
		"Namespaced":    {reason: "A namespaced XR converges to the whole inventory in the .m. groups.", xr: gcpXR(), kinds: namespaced},
		"ClusterScoped": {reason: "A cluster-scoped XR converges to the whole inventory in the legacy groups.", xr: gcpXR(legacy), kinds: clusterScoped},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, _, rounds, err := fntest.Converge(run, fntest.Request{XR: tc.xr, EnvironmentConfigs: envs}, 20)
			if err != nil {
				t.Fatalf("%s\nConverge: %v", tc.reason, err)
			}
			var got, usages []string
			for _, line := range fntest.Kinds(fntest.Desired(rsp)) {
				if strings.Contains(line, "-uses-") {
					usages = append(usages, line)
					continue
				}
				got = append(got, line)
			}
			want := inventory(tc.kinds)
			slices.Sort(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nconverged inventory after %d rounds: -want, +got:\n%s", tc.reason, rounds, diff)
			}
			for _, u := range usages {
				if !strings.HasSuffix(u, tc.kinds["usage"]) {
					t.Errorf("%s\nusage %q: want kind %s", tc.reason, u, tc.kinds["usage"])
				}
			}
			if len(usages) < len(want) {
				t.Errorf("%s\ngot %d Usages, want one per dependency edge (at least %d)", tc.reason, len(usages), len(want))
			}
		})
	}
}

// TestPassThrough checks that the desired state of earlier pipeline steps
// survives untouched.
func TestPassThrough(t *testing.T) {
	earlier := fntest.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "from-an-earlier-step"}, "data": map[string]any{"k": "v"}}
	req, err := fntest.Request{XR: gcpXR(), EnvironmentConfigs: envs, Desired: map[string]fntest.Object{"earlier": overlay.DeepCopy(earlier)}}.Proto()
	if err != nil {
		t.Fatal(err)
	}
	got := fntest.Desired(run(req))["earlier"]
	if diff := cmp.Diff(earlier, got); diff != "" {
		t.Errorf("an earlier step's desired resource: -want, +got:\n%s", diff)
	}
}
