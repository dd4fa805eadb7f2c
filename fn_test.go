package main

import (
	"context"
	"fmt"
	"maps"
	"math"
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

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
)

const (
	ttlConverging = 15 * time.Second
	ttlReady      = 5 * time.Minute
)

func newFunction() *Function {
	return NewFunction(logging.NewNopLogger(), response.Options{TTLConverging: ttlConverging, TTLReady: ttlReady})
}

func run(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	rsp, err := newFunction().RunFunction(context.Background(), req)
	if err != nil {
		panic(err) // RunFunction never returns an error
	}
	return rsp
}

var envs = fntest.MustLoad("examples/envconfigs")

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
			args:   args{req: fntest.Request{XR: fntest.GCPXR(fntest.Set("metadata.labels.cloud", "oracle")), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: metadata.labels[cloud]: Unsupported value: "oracle": supported values: "aws", "azure", "gcp"`)},
		},
		"MissingCloud": {
			reason: "A missing cloud label is bad input.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(fntest.Set("metadata.labels.cloud", nil)), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: metadata.labels[cloud]: Required value: the cloud label selects the cloud layer; supported values: "aws", "azure", "gcp"`)},
		},
		"MissingLocation": {
			reason: "The location is required.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(fntest.Set("spec.parameters.location", nil)), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.location: Required value: the region (or, on GCP, zone) of the cluster; or environment key location`)},
		},
		"MinAboveMax": {
			reason: "A pool whose minimum exceeds its maximum is bad input.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(fntest.Set("spec.parameters.pools.general.minNodes", 5.0)), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.pools[general].minNodes: Invalid value: 5: must not exceed maxNodes (4)`)},
		},
		"UnknownSize": {
			reason: "A size class the environment does not map is bad input, naming the classes it does map.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(fntest.Set("spec.parameters.pools.general.size", "huge")), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.pools[general].size: Unsupported value: "huge": supported values: "large", "medium", "small", "xlarge"`)},
		},
		"OverlappingCIDRs": {
			reason: "Pod and node ranges must not overlap.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(fntest.Set("spec.parameters.network", map[string]any{"cidr": "10.0.0.0/8"})), EnvironmentConfigs: envs}},
			want: want{rsp: fatal(`invalid Cluster team-edge/edge: environment.network.podsCidr: Invalid value: "10.100.0.0/14": overlaps spec.parameters.network.cidr (10.0.0.0/8); address ranges must be disjoint; ` +
				`environment.network.servicesCidr: Invalid value: "10.104.0.0/20": overlaps spec.parameters.network.cidr (10.0.0.0/8); address ranges must be disjoint`)},
		},
		"MalformedCIDR": {
			reason: "A CIDR that is not a network address is bad input, with a hint.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(fntest.Set("spec.parameters.network", map[string]any{"cidr": "10.0.0.1/16"})), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.network.cidr: Invalid value: "10.0.0.1/16": must be a network address; did you mean 10.0.0.0/16?`)},
		},
		"InvalidDomain": {
			reason: "A domain must be a DNS name.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(fntest.Set("spec.parameters.domain", "Edge_Example")), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.domain: Invalid value: "Edge_Example": must be a lower-case DNS name such as prod.example.com: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)},
		},
		"NameTooLongForGKE": {
			reason: "GKE cluster names are at most 40 characters.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(fntest.Set("metadata.labels.clusterName", "a-very-long-cluster-name-that-gke-will-refuse")), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: metadata.labels[clusterName]: Forbidden: cluster name "a-very-long-cluster-name-that-gke-will-refuse" is not assigned to namespace "team-edge": hosts and chosen cloud names are global, so the platform team assigns them to namespaces (environment key tenancy.namespaces.team-edge.names); metadata.labels[clusterName]: Invalid value: "a-very-long-cluster-name-that-gke-will-refuse": GKE cluster names start with a lower-case letter, contain only lower-case letters, digits and '-', do not end with '-', do not start with 'xn--' (a look-alike host's punycode), and have at most 40 characters; set the clusterName label to choose one`)},
		},
		"InvalidProject": {
			reason: "planeId must be a GCP project ID on GCP.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(fntest.Set("metadata.labels.planeId", "My_Project")), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: metadata.labels[planeId]: Invalid value: "My_Project": must be a GCP project ID: 6 to 30 lower-case letters, digits or '-', starting with a letter`)},
		},
		"AWSAccountAndRegion": {
			reason: "On AWS, planeId is a 12-digit account and location a region.",
			args:   args{req: fntest.Request{XR: fntest.AWSXR(fntest.Set("metadata.labels.planeId", "my-project-123"), fntest.Set("spec.parameters.location", "us-central1")), EnvironmentConfigs: envs}},
			want: want{rsp: fatal(`invalid Cluster team-edge/edge: metadata.labels[planeId]: Invalid value: "my-project-123": must be a 12-digit AWS account ID; ` +
				`spec.parameters.location: Invalid value: "us-central1": must be an AWS region such as eu-west-1`)},
		},
		"AWSVPCTooSmall": {
			reason: "An AWS VPC must split into eight subnets.",
			args:   args{req: fntest.Request{XR: fntest.AWSXR(fntest.Set("spec.parameters.network", map[string]any{"cidr": "10.0.0.0/26"})), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.network.cidr: Invalid value: "10.0.0.0/26": an AWS VPC here must be a /16 to /24, split into eight subnets`)},
		},
		"AzureSubscriptionAndPool": {
			reason: "On Azure, planeId is a subscription GUID and AKS pool names are at most 12 letters and digits.",
			args: args{req: fntest.Request{XR: fntest.AzureXR(
				fntest.Set("metadata.labels.planeId", "prod-subscription"),
				fntest.Set("spec.parameters.pools.general", nil),
				fntest.Set("spec.parameters.pools.general-purpose-pool", map[string]any{"size": "small"}),
			), EnvironmentConfigs: envs}},
			want: want{rsp: fatal(`invalid Cluster team-edge/edge: metadata.labels[planeId]: Invalid value: "prod-subscription": must be an Azure subscription ID (a GUID); ` +
				`spec.parameters.pools[general-purpose-pool]: Invalid value: "general-purpose-pool": an AKS node pool name is at most 12 lower-case letters and digits, starting with a letter ('-' is dropped), and not "system"`)},
		},
		"AzureTooManyThresholds": {
			reason: "An Azure consumption budget takes at most five notifications.",
			args: args{req: fntest.Request{XR: fntest.AzureXR(fntest.Set("spec.parameters.budget", map[string]any{
				"limitUsd": 100.0, "thresholds": []any{10.0, 20.0, 30.0, 40.0, 50.0, 60.0},
			})), EnvironmentConfigs: envs}},
			want: want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.budget.thresholds: Too many: 6: must have at most 5 items`)},
		},
		"UnknownImportMode": {
			reason: "Import modes are observe and manage.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(fntest.Set("spec.parameters.import", map[string]any{"enabled": true, "mode": "adopt", "resources": map[string]any{"cluster": "edge"}})), EnvironmentConfigs: envs}},
			want: want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.import.mode: Unsupported value: "adopt": supported values: "observe", "manage"; ` +
				`spec.parameters.import.resources[cluster]: Forbidden: existing resource "edge" is not assigned to namespace "team-edge": hosts and chosen cloud names are global, so the platform team assigns them to namespaces (environment key tenancy.namespaces.team-edge.names)`)},
		},
		"UnknownParameter": {
			reason: "A misspelt parameter is reported, not silently ignored.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(fntest.Set("spec.parameters.pools.general.minNode", 1.0)), EnvironmentConfigs: envs}},
			want:   want{rsp: fatal(`invalid Cluster team-edge/edge: spec.parameters.pools[general].minNode: Forbidden: unknown field; known fields are: size, machineType, minNodes, maxNodes, spot, diskSizeGb, labels, taints`)},
		},
		"CloudLabelFlipped": {
			reason: "Changing the cloud of an XR with composed resources would delete them all: Fatal.",
			args: args{req: fntest.Request{
				XR:                 fntest.GCPXR(fntest.Set("metadata.labels.cloud", "aws"), fntest.Set("metadata.labels.planeId", "123456789012")),
				EnvironmentConfigs: envs,
				Observed: map[string]fntest.Object{"network": {
					"apiVersion": "compute.gcp.m.upbound.io/v1beta1", "kind": "Network",
					"metadata": map[string]any{"name": "edge-abcde", "labels": map[string]any{"platform.example.org/cloud": "gcp"}},
				}},
			}},
			want: want{rsp: fatal(`cloud is immutable: edge's composed resources (such as "network") were composed for cloud "gcp", but metadata.labels.cloud is now "aws"; restore the label, or create a new XR for "aws"`)},
		},
		"EnvironmentMissingAfterFetch": {
			reason: "When the fetched EnvironmentConfigs hold none for this XR, the desired state cannot be computed; the Fatal says that configs written as v1alpha1 are not found, and how to fix them.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(), EnvironmentConfigs: []fntest.Object{}, Fetched: true}},
			want: want{rsp: fatal(`no EnvironmentConfig found: expected configs labelled platform.example.org/environment=cluster-platform with baseline=default, cloud=gcp or planeType=production (or, as the original platform's, with those labels alone), or an environment in the pipeline context key "apiextensions.crossplane.io/environment". ` +
				"Crossplane v2 serves EnvironmentConfigs only as apiextensions.crossplane.io/v1beta1, so configs written as apiextensions.crossplane.io/v1alpha1 are not found (crossplane render --required-resources and --extra-resources skip them too): set their apiVersion to apiextensions.crossplane.io/v1beta1, data and labels unchanged")},
		},
		"UnsupportedModule": {
			reason: "An input module the function does not know is a Fatal.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(), EnvironmentConfigs: envs, Input: fntest.Object{"apiVersion": "platform.fn.example.org/v1beta1", "kind": "Input", "module": "queue"}}},
			want:   want{rsp: fatal(`input module "queue" is not supported; supported modules: budget, cluster, database, environment`)},
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
	exampleXR := fntest.MustLoad("examples/gcp/cluster.yaml")[0]
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"GCPNamespacedFirstRender": {
			reason: "A new namespaced XR composes, in the .m. groups, only what has no prerequisites; the rest waits for them, whose changes re-run the XR: the TTL is the ready one.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(), EnvironmentConfigs: envs}},
			want: want{summary: summary{
				Desired: []string{
					"dns-identity ServiceAccount cloudplatform.gcp.m.upbound.io/v1beta1",
					"network Network compute.gcp.m.upbound.io/v1beta1",
					"node-service-account ServiceAccount cloudplatform.gcp.m.upbound.io/v1beta1",
					"public-dns-zone ManagedZone dns.gcp.m.upbound.io/v1beta1",
				},
				NotReady: []string{"dns-identity", "network", "node-service-account", "public-dns-zone"},
				Conditions: map[string]string{
					"NetworkReady": "FALSE/Waiting", "ClusterReady": "FALSE/Waiting", "NodePoolsReady": "FALSE/Waiting",
					"AddonsReady": "FALSE/Waiting", "DnsReady": "FALSE/Waiting", "RemovalsSettled": "TRUE/NothingHeld", "Upgrading": "FALSE/UpToDate",
				},
				Status: map[string]any{"nodePools": []any{
					map[string]any{"name": "general", "machineType": "e2-standard-2", "minNodes": 2.0, "maxNodes": 4.0, "spot": false, "ready": false, "resource": "nodepool-general"},
					map[string]any{"name": "gpu", "machineType": "g2-standard-8", "minNodes": 0.0, "maxNodes": 2.0, "spot": true, "ready": false, "resource": "nodepool-gpu"},
				}},
				TTL: ttlReady,
			}},
		},
		"GCPLegacyFirstRender": {
			reason: "A cluster-scoped XR composes the legacy groups at the versions provider-upjet-gcp v3 serves.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(fntest.Legacy), EnvironmentConfigs: envs}},
			want: want{summary: summary{
				Desired: []string{
					"dns-identity ServiceAccount cloudplatform.gcp.upbound.io/v1beta1",
					"network Network compute.gcp.upbound.io/v1beta1",
					"node-service-account ServiceAccount cloudplatform.gcp.upbound.io/v1beta1",
					"public-dns-zone ManagedZone dns.gcp.upbound.io/v1beta2",
				},
				NotReady: []string{"dns-identity", "network", "node-service-account", "public-dns-zone"},
				Conditions: map[string]string{
					"NetworkReady": "FALSE/Waiting", "ClusterReady": "FALSE/Waiting", "NodePoolsReady": "FALSE/Waiting",
					"AddonsReady": "FALSE/Waiting", "DnsReady": "FALSE/Waiting", "RemovalsSettled": "TRUE/NothingHeld", "Upgrading": "FALSE/UpToDate",
				},
				TTL: ttlReady,
			}},
		},
		"EnvironmentRequested": {
			reason: "Without EnvironmentConfigs in the context or the step's requirement, the function asks for them and keeps what exists.",
			args: args{req: fntest.Request{XR: fntest.GCPXR(), Observed: map[string]fntest.Object{"network": {
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
			args: args{req: fntest.Request{XR: fntest.GCPXR(), Context: fntest.Object{envcfg.ContextKey: fntest.Object{
				"apiVersion": "internal.crossplane.io/v1alpha1", "kind": "Environment",
				"sizes":   map[string]any{"small": "e2-standard-2"},
				"tenancy": map[string]any{"namespaces": map[string]any{"team-edge": map[string]any{"hosts": []any{"edge.example.net"}}}},
			}}}},
			want: want{summary: summary{
				Desired: []string{
					"dns-identity ServiceAccount cloudplatform.gcp.m.upbound.io/v1beta1",
					"network Network compute.gcp.m.upbound.io/v1beta1",
					"node-service-account ServiceAccount cloudplatform.gcp.m.upbound.io/v1beta1",
					"public-dns-zone ManagedZone dns.gcp.m.upbound.io/v1beta1",
				},
				NotReady: []string{"dns-identity", "network", "node-service-account", "public-dns-zone"},
				Conditions: map[string]string{
					"NetworkReady": "FALSE/Waiting", "ClusterReady": "FALSE/Waiting", "NodePoolsReady": "FALSE/Waiting",
					"AddonsReady": "FALSE/Waiting", "DnsReady": "FALSE/Waiting", "RemovalsSettled": "TRUE/NothingHeld", "Upgrading": "FALSE/UpToDate",
				},
				Warnings: []string{"the environment lacks keys the platform needs: lifecycle.versions, prices.controlPlanePerHour, prices.machineTypes.e2-standard-2, prices.machineTypes.g2-standard-8, prices.spotMachineTypes.g2-standard-8"},
				TTL:      ttlReady,
			}},
		},
		"Converged": {
			reason: "With the whole stack observed ready, every resource is desired and ready, the conditions are True and the status is filled.",
			args:   args{req: fntest.Request{XR: exampleXR, EnvironmentConfigs: envs, Observed: fntest.ObservedFile("examples/gcp/observed/cluster.yaml")}},
			want: want{summary: summary{
				Desired: slices.Sorted(maps.Keys(func() map[string]bool {
					m := map[string]bool{}
					for name, o := range fntest.ObservedFile("examples/gcp/observed/cluster.yaml") {
						m[name+" "+o["kind"].(string)+" "+o["apiVersion"].(string)] = true
					}
					return m
				}())),
				Conditions: map[string]string{
					"NetworkReady": "TRUE/Available", "ClusterReady": "TRUE/Available", "NodePoolsReady": "TRUE/Available",
					"AddonsReady": "TRUE/Available", "DnsReady": "TRUE/Available", "RemovalsSettled": "TRUE/NothingHeld", "Upgrading": "FALSE/UpToDate",
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

// entry is one composed resource of an inventory: its name, kind and
// apiVersions for namespaced and cluster-scoped XRs.
type entry struct{ name, kind, namespaced, cluster string }

func (e entry) line(namespaced bool) string {
	if namespaced {
		return e.name + " " + e.kind + " " + e.namespaced
	}
	return e.name + " " + e.kind + " " + e.cluster
}

// upjet is an entry of a provider-upjet kind: group "compute.gcp" becomes
// compute.gcp.m.upbound.io/v1beta1 and compute.gcp.upbound.io/<legacy>.
func upjet(name, kind, group, legacy string) entry {
	return entry{name, kind, group + ".m.upbound.io/v1beta1", group + ".upbound.io/" + legacy}
}

// addons is what every cloud composes inside the cluster.
var addons = []entry{
	{"helm-provider-config", "ProviderConfig", "helm.m.crossplane.io/v1beta1", "helm.crossplane.io/v1beta1"},
	{"kubernetes-provider-config", "ProviderConfig", "kubernetes.m.crossplane.io/v1alpha1", "kubernetes.crossplane.io/v1alpha1"},
	{"release-cert-manager", "Release", "helm.m.crossplane.io/v1beta1", "helm.crossplane.io/v1beta1"},
	{"release-ingress-nginx", "Release", "helm.m.crossplane.io/v1beta1", "helm.crossplane.io/v1beta1"},
	{"release-kube-prometheus-stack", "Release", "helm.m.crossplane.io/v1beta1", "helm.crossplane.io/v1beta1"},
	{"release-external-dns", "Release", "helm.m.crossplane.io/v1beta1", "helm.crossplane.io/v1beta1"},
	{"cluster-issuer", "Object", "kubernetes.m.crossplane.io/v1alpha1", "kubernetes.crossplane.io/v1alpha2"},
	{"domain-certificate", "Object", "kubernetes.m.crossplane.io/v1alpha1", "kubernetes.crossplane.io/v1alpha2"},
}

var gcpInventory = append([]entry{
	upjet("network", "Network", "compute.gcp", "v1beta1"),
	upjet("subnet", "Subnetwork", "compute.gcp", "v1beta2"),
	upjet("router", "Router", "compute.gcp", "v1beta2"),
	upjet("nat", "RouterNAT", "compute.gcp", "v1beta2"),
	upjet("node-service-account", "ServiceAccount", "cloudplatform.gcp", "v1beta1"),
	upjet("node-iam-container-defaultnodeserviceaccount", "ProjectIAMMember", "cloudplatform.gcp", "v1beta2"),
	upjet("node-iam-artifactregistry-reader", "ProjectIAMMember", "cloudplatform.gcp", "v1beta2"),
	upjet("cluster", "Cluster", "container.gcp", "v1beta2"),
	upjet("nodepool-general", "NodePool", "container.gcp", "v1beta2"),
	upjet("nodepool-gpu", "NodePool", "container.gcp", "v1beta2"),
	upjet("public-dns-zone", "ManagedZone", "dns.gcp", "v1beta2"),
	upjet("private-dns-zone", "ManagedZone", "dns.gcp", "v1beta2"),
	upjet("dns-identity", "ServiceAccount", "cloudplatform.gcp", "v1beta1"),
	upjet("dns-zone-admin", "ManagedZoneIAMMember", "dns.gcp", "v1beta2"),
	upjet("dns-zone-reader", "ProjectIAMMember", "cloudplatform.gcp", "v1beta2"),
	upjet("dns-workload-user-cert-manager", "ServiceAccountIAMMember", "cloudplatform.gcp", "v1beta2"),
	upjet("dns-workload-user-external-dns", "ServiceAccountIAMMember", "cloudplatform.gcp", "v1beta2"),
}, addons...)

var awsInventory = func() []entry {
	out := []entry{
		upjet("network", "VPC", "ec2.aws", "v1beta1"),
		upjet("internet-gateway", "InternetGateway", "ec2.aws", "v1beta1"),
		upjet("public-route-table", "RouteTable", "ec2.aws", "v1beta1"),
		upjet("public-route", "Route", "ec2.aws", "v1beta2"),
		upjet("private-route-table", "RouteTable", "ec2.aws", "v1beta1"),
		upjet("private-route", "Route", "ec2.aws", "v1beta2"),
		upjet("nat-eip", "EIP", "ec2.aws", "v1beta1"),
		upjet("nat", "NATGateway", "ec2.aws", "v1beta1"),
		upjet("cluster-role", "Role", "iam.aws", "v1beta1"),
		upjet("cluster-role-eks-cluster", "RolePolicyAttachment", "iam.aws", "v1beta1"),
		upjet("node-role", "Role", "iam.aws", "v1beta1"),
		upjet("node-role-eks-worker-node", "RolePolicyAttachment", "iam.aws", "v1beta1"),
		upjet("node-role-eks-cni", "RolePolicyAttachment", "iam.aws", "v1beta1"),
		upjet("node-role-ecr-read-only", "RolePolicyAttachment", "iam.aws", "v1beta1"),
		upjet("ebs-csi-role", "Role", "iam.aws", "v1beta1"),
		upjet("ebs-csi-role-ebs-csi-driver", "RolePolicyAttachment", "iam.aws", "v1beta1"),
		upjet("ebs-csi-pod-identity", "PodIdentityAssociation", "eks.aws", "v1beta1"),
		upjet("cluster", "Cluster", "eks.aws", "v1beta2"),
		upjet("cluster-auth", "ClusterAuth", "eks.aws", "v1beta1"),
		upjet("addon-vpc-cni", "Addon", "eks.aws", "v1beta1"),
		upjet("addon-kube-proxy", "Addon", "eks.aws", "v1beta1"),
		upjet("addon-coredns", "Addon", "eks.aws", "v1beta1"),
		upjet("addon-eks-pod-identity-agent", "Addon", "eks.aws", "v1beta1"),
		upjet("addon-aws-ebs-csi-driver", "Addon", "eks.aws", "v1beta1"),
		upjet("access-entry-platform-admins", "AccessEntry", "eks.aws", "v1beta1"),
		{"cluster-admin-binding", "Object", "kubernetes.m.crossplane.io/v1alpha1", "kubernetes.crossplane.io/v1alpha2"},
		upjet("nodepool-general", "NodeGroup", "eks.aws", "v1beta2"),
		upjet("nodepool-gpu", "NodeGroup", "eks.aws", "v1beta2"),
		upjet("public-dns-zone", "Zone", "route53.aws", "v1beta1"),
		upjet("private-dns-zone", "Zone", "route53.aws", "v1beta1"),
		upjet("dns-identity", "Role", "iam.aws", "v1beta1"),
		upjet("dns-zone-access", "RolePolicy", "iam.aws", "v1beta1"),
		upjet("dns-pod-identity-cert-manager", "PodIdentityAssociation", "eks.aws", "v1beta1"),
		upjet("dns-pod-identity-external-dns", "PodIdentityAssociation", "eks.aws", "v1beta1"),
	}
	for _, z := range []string{"a", "b", "c"} {
		for _, tier := range []string{"public", "private"} {
			out = append(out,
				upjet("subnet-"+tier+"-"+z, "Subnet", "ec2.aws", "v1beta1"),
				upjet("subnet-"+tier+"-"+z+"-route-table", "RouteTableAssociation", "ec2.aws", "v1beta1"))
		}
	}
	return append(out, addons...)
}()

var azureInventory = append([]entry{
	upjet("resource-group", "ResourceGroup", "azure", "v1beta1"),
	upjet("network", "VirtualNetwork", "network.azure", "v1beta2"),
	upjet("subnet", "Subnet", "network.azure", "v1beta2"),
	upjet("nat-public-ip", "PublicIP", "network.azure", "v1beta1"),
	upjet("nat", "NATGateway", "network.azure", "v1beta1"),
	upjet("nat-subnet-association", "SubnetNATGatewayAssociation", "network.azure", "v1beta1"),
	upjet("control-plane-identity", "UserAssignedIdentity", "managedidentity.azure", "v1beta1"),
	upjet("network-role-assignment", "RoleAssignment", "authorization.azure", "v1beta1"),
	upjet("cluster", "KubernetesCluster", "containerservice.azure", "v1beta2"),
	upjet("nodepool-general", "KubernetesClusterNodePool", "containerservice.azure", "v1beta2"),
	upjet("nodepool-gpu", "KubernetesClusterNodePool", "containerservice.azure", "v1beta2"),
	upjet("public-dns-zone", "DNSZone", "network.azure", "v1beta2"),
	upjet("private-dns-zone", "PrivateDNSZone", "network.azure", "v1beta2"),
	upjet("private-dns-zone-link", "PrivateDNSZoneVirtualNetworkLink", "network.azure", "v1beta1"),
	upjet("dns-identity", "UserAssignedIdentity", "managedidentity.azure", "v1beta1"),
	upjet("dns-federation-cert-manager", "FederatedIdentityCredential", "managedidentity.azure", "v1beta1"),
	upjet("dns-federation-external-dns", "FederatedIdentityCredential", "managedidentity.azure", "v1beta1"),
	upjet("dns-zone-contributor", "RoleAssignment", "authorization.azure", "v1beta1"),
	{"external-dns-azure-config", "Object", "kubernetes.m.crossplane.io/v1alpha1", "kubernetes.crossplane.io/v1alpha2"},
}, addons...)

// TestConverge drives XRs that are not in examples/ through repeated
// reconciles, feeding each round's desired resources back as observed and
// ready, and checks that each converges to its cloud's whole inventory, with
// a Usage of the scope's kind for every dependency edge.
func TestConverge(t *testing.T) {
	type want struct {
		inventory []entry
		usages    []string
	}
	// The edges whose deletion order matters (registry.UsageRules): the
	// ProviderConfigs hold the cluster (and on EKS its token, which holds
	// the cluster), and the cluster and pools hold the identity they run
	// with. Nothing else gets a Usage.
	gcpUsages := []string{"cluster-uses-node-service-account", "helm-provider-config-uses-cluster", "kubernetes-provider-config-uses-cluster", "nodepool-general-uses-node-service-account", "nodepool-gpu-uses-node-service-account"}
	awsUsages := []string{"cluster-auth-uses-cluster", "cluster-uses-cluster-role-eks-cluster", "helm-provider-config-uses-cluster-auth", "kubernetes-provider-config-uses-cluster-auth",
		"nodepool-general-uses-node-role-ecr-read-only", "nodepool-general-uses-node-role-eks-cni", "nodepool-general-uses-node-role-eks-worker-node",
		"nodepool-gpu-uses-node-role-ecr-read-only", "nodepool-gpu-uses-node-role-eks-cni", "nodepool-gpu-uses-node-role-eks-worker-node"}
	azureUsages := []string{"cluster-uses-control-plane-identity", "cluster-uses-network-role-assignment", "helm-provider-config-uses-cluster", "kubernetes-provider-config-uses-cluster"}
	cases := map[string]struct {
		reason string
		xr     fntest.Object
		want   want
	}{
		"GCPNamespaced":      {reason: "A namespaced GKE XR converges to the whole inventory in the .m. groups.", xr: fntest.GCPXR(), want: want{inventory: gcpInventory, usages: gcpUsages}},
		"GCPClusterScoped":   {reason: "A cluster-scoped GKE XR converges in the legacy groups.", xr: fntest.GCPXR(fntest.Legacy), want: want{inventory: gcpInventory, usages: gcpUsages}},
		"AWSNamespaced":      {reason: "A namespaced EKS XR converges to the whole inventory in the .m. groups.", xr: fntest.AWSXR(), want: want{inventory: awsInventory, usages: awsUsages}},
		"AWSClusterScoped":   {reason: "A cluster-scoped EKS XR converges in the legacy groups.", xr: fntest.AWSXR(fntest.Legacy), want: want{inventory: awsInventory, usages: awsUsages}},
		"AzureNamespaced":    {reason: "A namespaced AKS XR converges to the whole inventory in the .m. groups.", xr: fntest.AzureXR(), want: want{inventory: azureInventory, usages: azureUsages}},
		"AzureClusterScoped": {reason: "A cluster-scoped AKS XR converges in the legacy groups.", xr: fntest.AzureXR(fntest.Legacy), want: want{inventory: azureInventory, usages: azureUsages}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, _, rounds, err := fntest.Converge(run, fntest.Request{XR: tc.xr, EnvironmentConfigs: envs}, 30)
			if err != nil {
				t.Fatalf("%s\nConverge: %v", tc.reason, err)
			}
			namespaced := tc.xr["metadata"].(map[string]any)["namespace"] != nil
			var got, usages []string
			var usageNames []string
			for _, line := range fntest.Kinds(fntest.Desired(rsp)) {
				if strings.Contains(strings.Fields(line)[0], "-uses-") {
					usages = append(usages, line)
					usageNames = append(usageNames, strings.Fields(line)[0])
					continue
				}
				got = append(got, line)
			}
			var want []string
			for _, e := range tc.want.inventory {
				want = append(want, e.line(namespaced))
			}
			slices.Sort(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nconverged inventory after %d rounds: -want, +got:\n%s", tc.reason, rounds, diff)
			}
			usage := "Usage protection.crossplane.io/v1beta1"
			if !namespaced {
				usage = "ClusterUsage protection.crossplane.io/v1beta1"
			}
			for _, u := range usages {
				if !strings.HasSuffix(u, usage) {
					t.Errorf("%s\n%s: want a %s", tc.reason, u, usage)
				}
			}
			if diff := cmp.Diff(tc.want.usages, usageNames); diff != "" {
				t.Errorf("%s\nUsages: -want, +got:\n%s", tc.reason, diff)
			}
			if 4*len(usages) > len(usages)+len(got) {
				t.Errorf("%s\n%d Usages of %d composed resources: more than a quarter", tc.reason, len(usages), len(usages)+len(got))
			}
			st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
			for _, k := range []string{"clusterEndpoint", "clusterCA", "oidcIssuer", "dnsNameServers"} {
				if st[k] == nil {
					t.Errorf("%s\nconverged status lacks %s: %v", tc.reason, k, st)
				}
			}
			for _, c := range rsp.GetConditions() {
				if c.GetType() == "Upgrading" {
					// Nothing to upgrade is its False.
					if c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetReason() != "UpToDate" {
						t.Errorf("%s\nconverged condition Upgrading is %s/%s: %s", tc.reason, c.GetStatus(), c.GetReason(), c.GetMessage())
					}
					continue
				}
				if c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE {
					t.Errorf("%s\nconverged condition %s is %s: %s", tc.reason, c.GetType(), c.GetStatus(), c.GetMessage())
				}
			}
		})
	}
}

// TestSeedClaim renders the seed article's claim (one pool of 3..10
// e2-standard-4 on GKE) and the same claim on AWS and Azure, where the
// account, region and machine type are the cloud's own.
func TestSeedClaim(t *testing.T) {
	seed := func(cloud, planeID, location, machineType string) fntest.Object {
		return fntest.Object{
			"apiVersion": "legacy.platform.example.org/v1alpha1",
			"kind":       "XCluster",
			"metadata": map[string]any{
				"name":   "prod-cluster-7d9sk",
				"labels": map[string]any{"cloud": cloud, "planeId": planeID, "planeType": "production", "crossplane.io/claim-name": "prod-cluster"},
			},
			"spec": map[string]any{"parameters": map[string]any{
				"location": location,
				"domain":   "prod.example.com",
				"pools":    map[string]any{"default": map[string]any{"machineType": machineType, "minNodes": 3.0, "maxNodes": 10.0}},
			}},
		}
	}
	cases := map[string]struct {
		reason string
		xr     fntest.Object
	}{
		"GKE": {reason: "The seed claim renders on GCP.", xr: seed("gcp", "my-project-123", "us-central1", "e2-standard-4")},
		"EKS": {reason: "The same claim renders on AWS.", xr: seed("aws", "123456789012", "us-east-1", "m6i.xlarge")},
		"AKS": {reason: "The same claim renders on Azure.", xr: seed("azure", "00000000-0000-0000-0000-000000000000", "eastus2", "Standard_D4s_v5")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, _, _, err := fntest.Converge(run, fntest.Request{XR: tc.xr, EnvironmentConfigs: envs}, 30)
			if err != nil {
				t.Fatalf("%s\nConverge: %v", tc.reason, err)
			}
			pool := fntest.Desired(rsp)["nodepool-default"]
			if pool == nil {
				t.Fatalf("%s\nno nodepool-default in %v", tc.reason, fntest.Kinds(fntest.Desired(rsp)))
			}
		})
	}
}

// TestPassThrough checks that the desired state of earlier pipeline steps
// survives untouched.
// TestInputModuleChanged: the step's Input is a fleet-wide input. Switching
// the module of a Composition whose XRs already compose resources must not
// render another module's (empty or different) desired state, which would
// withdraw everything: each module refuses an XR that is not its kind.
func TestInputModuleChanged(t *testing.T) {
	input := func(m string) fntest.Object {
		return fntest.Object{"apiVersion": "platform.fn.example.org/v1beta1", "kind": "Input", "module": m}
	}
	cases := map[string]struct {
		reason string
		req    fntest.Request
		want   string
	}{
		"ClusterToBudget": {
			reason: "A converged Cluster rendered by the budget module is a Fatal.",
			req: fntest.Request{
				XR: fntest.MustLoad("examples/gcp/cluster.yaml")[0], EnvironmentConfigs: envs,
				Observed: fntest.ObservedFile("examples/gcp/observed/cluster.yaml"), Input: input("budget"),
			},
			want: "invalid WorkloadBudget platform/prod-cluster",
		},
		"ClusterToDatabase": {
			reason: "A converged Cluster rendered by the database module is a Fatal naming the Cluster's parameters it does not know.",
			req: fntest.Request{
				XR: fntest.MustLoad("examples/gcp/cluster.yaml")[0], EnvironmentConfigs: envs,
				Observed: fntest.ObservedFile("examples/gcp/observed/cluster.yaml"), Input: input("database"),
			},
			want: "spec.parameters.pools: Forbidden: unknown field",
		},
		"DatabaseToCluster": {
			reason: "A converged Database rendered by the cluster module is a Fatal.",
			req: fntest.Request{
				XR: fntest.MustLoad("examples/gcp/database-legacy.yaml")[0], EnvironmentConfigs: envs,
				Observed: fntest.ObservedFile("examples/gcp/observed/database-legacy.yaml"), Input: input("cluster"),
			},
			want: "spec.parameters.engine: Forbidden: unknown field",
		},
		"BudgetToCluster": {
			reason: "A converged WorkloadBudget rendered by the cluster module is a Fatal.",
			req: fntest.Request{
				XR: fntest.MustLoad("examples/budget/workloads.yaml")[0], EnvironmentConfigs: envs,
				Observed: fntest.ObservedFile("examples/budget/observed/workloads.yaml"), Input: input("cluster"),
			},
			want: "metadata.labels[cloud]: Required value",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req, err := tc.req.Proto()
			if err != nil {
				t.Fatal(err)
			}
			rsp := run(req)
			if msg := fntest.Fatal(rsp); !strings.Contains(msg, tc.want) {
				t.Errorf("%s\nRunFunction(...): want a Fatal containing %q, got %q", tc.reason, tc.want, msg)
			}
		})
	}
}

func TestPassThrough(t *testing.T) {
	earlier := fntest.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "from-an-earlier-step"}, "data": map[string]any{"k": "v"}}
	req, err := fntest.Request{XR: fntest.GCPXR(), EnvironmentConfigs: envs, Desired: map[string]fntest.Object{"earlier": overlay.DeepCopy(earlier)}}.Proto()
	if err != nil {
		t.Fatal(err)
	}
	got := fntest.Desired(run(req))["earlier"]
	if diff := cmp.Diff(earlier, got); diff != "" {
		t.Errorf("an earlier step's desired resource: -want, +got:\n%s", diff)
	}
}

// TestPanicRecovered checks that a panic inside a module becomes a Fatal
// result: Crossplane then changes nothing, and the function keeps serving.
func TestPanicRecovered(t *testing.T) {
	f := NewFunction(logging.NewNopLogger(), response.Options{TTLConverging: ttlConverging, TTLReady: ttlReady})
	f.modules = map[string]response.Func{"cluster": func(*fnv1.RunFunctionRequest, *fnv1.RunFunctionResponse, response.Options) error {
		panic("simulated bug")
	}}
	req, err := fntest.Request{XR: fntest.GCPXR(), EnvironmentConfigs: envs}.Proto()
	if err != nil {
		t.Fatal(err)
	}
	rsp, err := f.RunFunction(context.Background(), req)
	if err != nil {
		t.Fatalf("RunFunction returned an error: %v", err)
	}
	want := fatal("internal error: simulated bug")
	want.Desired = req.GetDesired()
	if diff := cmp.Diff(want, rsp, protocmp.Transform()); diff != "" {
		t.Errorf("RunFunction after a panic: -want, +got:\n%s", diff)
	}
}

// TestInputTTL checks that the step's Input overrides the TTLs of the flags:
// the converging one while the XR waits for another XR, which Crossplane
// does not re-run it for, the ready one otherwise.
func TestInputTTL(t *testing.T) {
	cases := map[string]struct {
		reason   string
		xr       fntest.Object
		module   string
		observed map[string]fntest.Object
		want     time.Duration
	}{
		"WaitsForItsCluster": {
			reason: "A Database whose Cluster is not there yet waits for another XR: the Input's converging TTL applies.",
			xr:     fntest.MustLoad("examples/gcp/database.yaml")[0], module: "database",
			want: 5 * time.Second,
		},
		"ConvergingOnItsOwn": {
			reason: "A new Cluster waits only for its own composed resources, whose changes re-run it: the Input's ready TTL applies.",
			xr:     fntest.MustLoad("examples/gcp/cluster.yaml")[0], module: "cluster",
			want: 30 * time.Minute,
		},
		"Ready": {
			reason: "Once everything is ready, the Input's ready TTL applies.",
			xr:     fntest.MustLoad("examples/gcp/cluster.yaml")[0], module: "cluster",
			observed: fntest.ObservedFile("examples/gcp/observed/cluster.yaml"), want: 30 * time.Minute,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req, err := fntest.Request{
				XR:                 tc.xr,
				EnvironmentConfigs: envs,
				Observed:           tc.observed,
				Input: fntest.Object{
					"apiVersion": "platform.fn.example.org/v1beta1", "kind": "Input", "module": tc.module,
					"ttl": map[string]any{"converging": "5s", "ready": "30m"},
				},
			}.Proto()
			if err != nil {
				t.Fatal(err)
			}
			if got := run(req).GetMeta().GetTtl().AsDuration(); got != tc.want {
				t.Errorf("%s\nTTL = %s, want %s", tc.reason, got, tc.want)
			}
		})
	}
}

// TestRunFunctionParallel calls the function from many goroutines at once
// (run it under -race, as make test does) and checks that every response
// equals the one a lone call gives.
func TestRunFunctionParallel(t *testing.T) {
	var reqs []fntest.Request
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		reqs = append(reqs,
			fntest.Request{XR: fntest.MustLoad("examples/" + cloud + "/cluster.yaml")[0], EnvironmentConfigs: envs},
			fntest.Request{XR: fntest.MustLoad("examples/" + cloud + "/cluster.yaml")[0], EnvironmentConfigs: envs, Observed: fntest.ObservedFile("examples/" + cloud + "/observed/cluster.yaml")},
			fntest.Request{XR: fntest.MustLoad("examples/" + cloud + "/legacy.yaml")[0], EnvironmentConfigs: envs, Observed: fntest.ObservedFile("examples/" + cloud + "/observed/legacy.yaml")},
		)
	}
	want := make([]*fnv1.RunFunctionResponse, len(reqs))
	for i, r := range reqs {
		pr, err := r.Proto()
		if err != nil {
			t.Fatal(err)
		}
		want[i] = run(pr)
	}
	f := newFunction()
	const callsPerRequest = 8
	for i := range reqs {
		for c := range callsPerRequest {
			t.Run(fmt.Sprintf("request-%d-call-%d", i, c), func(t *testing.T) {
				t.Parallel()
				pr, err := reqs[i].Proto()
				if err != nil {
					t.Fatal(err)
				}
				got, err := f.RunFunction(context.Background(), pr)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want[i], got, protocmp.Transform()); diff != "" {
					t.Errorf("a parallel call differs from a lone one: -want, +got:\n%s", diff)
				}
			})
		}
	}
}

// TestClusterBudget covers the budget states of a Cluster: within budget,
// threshold crossed, exhausted with enforcement enabled and monitor-only,
// spend unknown, and an XR being deleted.
func TestClusterBudget(t *testing.T) {
	spendCM := func(v string) fntest.Object { return fntest.SpendConfigMap("team-edge", "spend", v) }
	withBudget := func(enforcement string) func(fntest.Object) {
		return fntest.Set("spec.parameters.budget", map[string]any{
			"limitUsd": 1000.0, "thresholds": []any{50.0, 90.0}, "contacts": []any{"ops@example.com"}, "enforcement": enforcement,
			"spendRef": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "spend", "fieldPath": "data.spentUsd"},
		})
	}
	type want struct {
		budget    map[string]any
		condition string
		// pool is the general pool's node group scaling (min, max).
		pool [2]float64
	}
	cases := map[string]struct {
		reason string
		xr     fntest.Object
		spend  []fntest.Object
		want   want
	}{
		"WithinBudget": {
			reason: "Spend below every threshold: running, pools untouched.",
			xr:     fntest.AWSXR(withBudget("enabled")),
			spend:  []fntest.Object{spendCM("120")},
			want:   want{budget: map[string]any{"limitUsd": 1000.0, "spentUsd": 120.0, "ratio": 12.0, "paused": false, "cause": "running"}, condition: "TRUE/WithinBudget", pool: [2]float64{2, 4}},
		},
		"ThresholdCrossed": {
			reason: "Spend past a threshold but below the limit: running, reported.",
			xr:     fntest.AWSXR(withBudget("enabled")),
			spend:  []fntest.Object{spendCM("910.5")},
			want:   want{budget: map[string]any{"limitUsd": 1000.0, "spentUsd": 910.5, "ratio": 91.05, "paused": false, "cause": "running"}, condition: "TRUE/ThresholdCrossed", pool: [2]float64{2, 4}},
		},
		"ExhaustedEnforced": {
			reason: "Spend at or over the limit with enforcement enabled: paused, pools held at their floor.",
			xr:     fntest.AWSXR(withBudget("enabled")),
			spend:  []fntest.Object{spendCM("1000")},
			want:   want{budget: map[string]any{"limitUsd": 1000.0, "spentUsd": 1000.0, "ratio": 100.0, "paused": true, "cause": "budget-exhausted"}, condition: "FALSE/BudgetExhausted", pool: [2]float64{2, 2}},
		},
		"ExhaustedMonitorOnly": {
			reason: "Spend over the limit with monitor-only: reported, nothing scaled.",
			xr:     fntest.AWSXR(withBudget("monitor-only")),
			spend:  []fntest.Object{spendCM("1500")},
			want:   want{budget: map[string]any{"limitUsd": 1000.0, "spentUsd": 1500.0, "ratio": 150.0, "paused": false, "cause": "running"}, condition: "FALSE/BudgetExhausted", pool: [2]float64{2, 4}},
		},
		"SpendUnknown": {
			reason: "The spend object is missing: the agent that writes it is unreachable; fail open, nothing scaled.",
			xr:     fntest.AWSXR(withBudget("enabled")),
			want:   want{budget: map[string]any{"limitUsd": 1000.0, "paused": false, "cause": "agent-unreachable"}, condition: "UNKNOWN/AgentUnreachable", pool: [2]float64{2, 4}},
		},
		"SpendUnreadable": {
			reason: "A spend that is not a number: fail open.",
			xr:     fntest.AWSXR(withBudget("enabled")),
			spend:  []fntest.Object{spendCM("lots")},
			want:   want{budget: map[string]any{"limitUsd": 1000.0, "paused": false, "cause": "unknown"}, condition: "UNKNOWN/SpendUnknown", pool: [2]float64{2, 4}},
		},
		"Deleting": {
			reason: "An XR being deleted is never paused.",
			xr:     fntest.AWSXR(withBudget("enabled"), fntest.Set("metadata.deletionTimestamp", "2026-11-21T10:00:00Z")),
			spend:  []fntest.Object{spendCM("5000")},
			want:   want{budget: map[string]any{"limitUsd": 1000.0, "spentUsd": 5000.0, "ratio": 500.0, "paused": false, "cause": "running"}, condition: "FALSE/BudgetExhausted", pool: [2]float64{2, 4}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// Converge first without the deletion, so the pools exist.
			xr := overlay.DeepCopy(tc.xr)
			meta := xr["metadata"].(map[string]any)
			deleting := meta["deletionTimestamp"]
			delete(meta, "deletionTimestamp")
			_, observed, _, err := fntest.Converge(run, fntest.Request{XR: xr, EnvironmentConfigs: envs, Spend: tc.spend}, 30)
			if err != nil {
				t.Fatalf("Converge: %v", err)
			}
			if deleting != nil {
				meta["deletionTimestamp"] = deleting
			}
			req, err := fntest.Request{XR: xr, EnvironmentConfigs: envs, Spend: tc.spend, Observed: observed}.Proto()
			if err != nil {
				t.Fatal(err)
			}
			rsp := run(req)
			st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
			if diff := cmp.Diff(tc.want.budget, st["budget"]); diff != "" {
				t.Errorf("%s\nstatus.budget: -want, +got:\n%s", tc.reason, diff)
			}
			got := summarise(rsp).Conditions["BudgetOK"]
			if got != tc.want.condition {
				t.Errorf("%s\nBudgetOK = %s, want %s", tc.reason, got, tc.want.condition)
			}
			sc := fntest.Desired(rsp)["nodepool-general"]["spec"].(map[string]any)["forProvider"].(map[string]any)["scalingConfig"].(map[string]any)
			if gotPool := [2]float64{sc["minSize"].(float64), sc["maxSize"].(float64)}; gotPool != tc.want.pool {
				t.Errorf("%s\nnodepool-general scaling (min, max) = %v, want %v", tc.reason, gotPool, tc.want.pool)
			}
		})
	}
}

// TestEstimate checks status.estimatedMonthlyUsd against a hand computation
// from the example price table: (control plane + Σ price × nodes) × 730.
func TestEstimate(t *testing.T) {
	req, err := fntest.Request{XR: fntest.AWSXR(), EnvironmentConfigs: envs}.Proto()
	if err != nil {
		t.Fatal(err)
	}
	// general: 2..4 × m6i.large (0.096); gpu: 0..2 spot g5.xlarge, at its
	// spot price (0.400).
	want := map[string]any{
		"min": math.Round((0.10+2*0.096)*730*100) / 100,
		"max": math.Round((0.10+4*0.096+2*0.400)*730*100) / 100,
	}
	got := run(req).GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)["estimatedMonthlyUsd"]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("estimatedMonthlyUsd: -want, +got:\n%s", diff)
	}
}

// TestSpendRequested checks that a spend object the step did not deliver
// is asked for by name, and read once Crossplane delivers it.
func TestSpendRequested(t *testing.T) {
	xr := fntest.AWSXR(fntest.Set("spec.parameters.budget", map[string]any{
		"limitUsd": 100.0, "enforcement": "enabled",
		"spendRef": map[string]any{"apiVersion": "finops.example.org/v1", "kind": "Spend", "name": "edge", "namespace": "finops", "fieldPath": "status.monthToDateUsd"},
	}))
	first, err := fntest.Request{XR: xr, EnvironmentConfigs: envs}.Proto()
	if err != nil {
		t.Fatal(err)
	}
	ns := "finops"
	want := &fnv1.ResourceSelector{ApiVersion: "finops.example.org/v1", Kind: "Spend", Match: &fnv1.ResourceSelector_MatchName{MatchName: "edge"}, Namespace: &ns}
	rsp := run(first)
	if diff := cmp.Diff(want, rsp.GetRequirements().GetResources()["budget-spend"], protocmp.Transform()); diff != "" {
		t.Fatalf("requirement for the spend object: -want, +got:\n%s", diff)
	}
	second, err := fntest.Request{XR: xr, EnvironmentConfigs: envs, Extra: map[string][]fntest.Object{"budget-spend": {{
		"apiVersion": "finops.example.org/v1", "kind": "Spend",
		"metadata": map[string]any{"name": "edge", "namespace": "finops"},
		"status":   map[string]any{"monthToDateUsd": 250.0},
	}}}}.Proto()
	if err != nil {
		t.Fatal(err)
	}
	rsp = run(second)
	if diff := cmp.Diff(want, rsp.GetRequirements().GetResources()["budget-spend"], protocmp.Transform()); diff != "" {
		t.Errorf("the requirement must stay stable once answered: -want, +got:\n%s", diff)
	}
	st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)["budget"]
	if diff := cmp.Diff(map[string]any{"limitUsd": 100.0, "spentUsd": 250.0, "ratio": 250.0, "paused": true, "cause": "budget-exhausted"}, st); diff != "" {
		t.Errorf("status.budget once the spend object is delivered: -want, +got:\n%s", diff)
	}
}

// TestWorkloadBudget covers the budget module: within budget, threshold
// crossed, exhausted with enforcement enabled and monitor-only, spend
// unknown, and an XR being deleted.
func TestWorkloadBudget(t *testing.T) {
	input := fntest.Object{"apiVersion": "platform.fn.example.org/v1beta1", "kind": "Input", "module": "budget"}
	wb := func(enforcement string, mutate ...func(fntest.Object)) fntest.Object {
		o := fntest.Object{
			"apiVersion": "platform.example.org/v1alpha1", "kind": "WorkloadBudget",
			"metadata": map[string]any{"name": "wb", "namespace": "team-x"},
			"spec": map[string]any{
				"limitUsd": 200.0, "enforcement": enforcement, "thresholds": []any{75.0},
				"spendRef": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "spend", "fieldPath": "data.spentUsd"},
				"targets":  []any{map[string]any{"name": "api", "replicas": 3.0}, map[string]any{"name": "worker", "replicas": 2.0}},
			},
		}
		for _, m := range mutate {
			m(o)
		}
		return o
	}
	spend := func(v string) []fntest.Object { return []fntest.Object{fntest.SpendConfigMap("team-x", "spend", v)} }
	type want struct {
		status    map[string]any
		condition string
		replicas  [2]float64
	}
	cases := map[string]struct {
		reason string
		xr     fntest.Object
		spend  []fntest.Object
		want   want
	}{
		"WithinBudget": {
			reason: "Below every threshold the targets run at their stated replicas.",
			xr:     wb("enabled"), spend: spend("40"),
			want: want{status: map[string]any{"spentUsd": 40.0, "ratio": 20.0, "paused": false, "cause": "running"}, condition: "TRUE/WithinBudget", replicas: [2]float64{3, 2}},
		},
		"ThresholdCrossed": {
			reason: "Past a threshold, still running, reported.",
			xr:     wb("enabled"), spend: spend("160"),
			want: want{status: map[string]any{"spentUsd": 160.0, "ratio": 80.0, "paused": false, "cause": "running"}, condition: "TRUE/ThresholdCrossed", replicas: [2]float64{3, 2}},
		},
		"ExhaustedEnforced": {
			reason: "Exhausted with enforcement: every target at zero.",
			xr:     wb("enabled"), spend: spend("250"),
			want: want{status: map[string]any{"spentUsd": 250.0, "ratio": 125.0, "paused": true, "cause": "budget-exhausted"}, condition: "FALSE/BudgetExhausted", replicas: [2]float64{0, 0}},
		},
		"ExhaustedMonitorOnly": {
			reason: "Exhausted, monitor-only: reported, nothing scaled.",
			xr:     wb("monitor-only"), spend: spend("250"),
			want: want{status: map[string]any{"spentUsd": 250.0, "ratio": 125.0, "paused": false, "cause": "running"}, condition: "FALSE/BudgetExhausted", replicas: [2]float64{3, 2}},
		},
		"SpendUnknown": {
			reason: "No spend object: fail open.",
			xr:     wb("enabled"),
			want:   want{status: map[string]any{"paused": false, "cause": "agent-unreachable", "warnings": []any{"budget: spend object ConfigMap team-x/spend not found (yet): the spend is unknown; nothing is paused"}}, condition: "UNKNOWN/AgentUnreachable", replicas: [2]float64{3, 2}},
		},
		"Deleting": {
			reason: "An XR being deleted never pauses.",
			xr:     wb("enabled", fntest.Set("metadata.deletionTimestamp", "2026-11-21T10:00:00Z")), spend: spend("900"),
			want: want{status: map[string]any{"spentUsd": 900.0, "ratio": 450.0, "paused": false, "cause": "running"}, condition: "FALSE/BudgetExhausted", replicas: [2]float64{3, 2}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req, err := fntest.Request{XR: tc.xr, Spend: tc.spend, Input: input}.Proto()
			if err != nil {
				t.Fatal(err)
			}
			rsp := run(req)
			if msg := fntest.Fatal(rsp); msg != "" {
				t.Fatalf("%s\nunexpected Fatal: %s", tc.reason, msg)
			}
			st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"]
			if diff := cmp.Diff(tc.want.status, st); diff != "" {
				t.Errorf("%s\nstatus: -want, +got:\n%s", tc.reason, diff)
			}
			if got := summarise(rsp).Conditions["BudgetOK"]; got != tc.want.condition {
				t.Errorf("%s\nBudgetOK = %s, want %s", tc.reason, got, tc.want.condition)
			}
			d := fntest.Desired(rsp)
			var got [2]float64
			for i, target := range []string{"deployment-api", "deployment-worker"} {
				o := d[target]
				if pol := o["spec"].(map[string]any)["managementPolicies"]; !cmp.Equal(pol, []any{"Observe", "Update"}) {
					t.Errorf("%s\n%s managementPolicies = %v, want [Observe Update]", tc.reason, target, pol)
				}
				m := o["spec"].(map[string]any)["forProvider"].(map[string]any)["manifest"].(map[string]any)
				if keys := slices.Sorted(maps.Keys(m["spec"].(map[string]any))); !cmp.Equal(keys, []string{"replicas"}) {
					t.Errorf("%s\n%s manifest owns %v, want only spec.replicas", tc.reason, target, keys)
				}
				got[i] = m["spec"].(map[string]any)["replicas"].(float64)
			}
			if got != tc.want.replicas {
				t.Errorf("%s\nreplicas = %v, want %v", tc.reason, got, tc.want.replicas)
			}
		})
	}
}
