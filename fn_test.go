package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"

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

// TestPassThrough checks that the desired state of earlier pipeline steps
// survives untouched.
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

// TestInputRelease: a step whose Input names its platform release says so
// in the XR's status.platformRelease and its PlatformRelease condition, for
// every module; a step that names none, or whose render is refused, says
// nothing of a release.
func TestInputRelease(t *testing.T) {
	type want struct {
		release   string
		condition string
	}
	cases := map[string]struct {
		reason  string
		xr      fntest.Object
		module  string
		release string
		want    want
	}{
		"Cluster": {
			reason: "A Cluster rendered by release r2 says so.",
			xr:     fntest.MustLoad("examples/gcp/cluster.yaml")[0], module: "cluster", release: "r2",
			want: want{release: "r2", condition: "True Rendered rendered by platform release r2"},
		},
		"Database": {
			reason: "A Database waiting for its Cluster is rendered by the release too.",
			xr:     fntest.MustLoad("examples/gcp/database.yaml")[0], module: "database", release: "2026-12-a",
			want: want{release: "2026-12-a", condition: "True Rendered rendered by platform release 2026-12-a"},
		},
		"Budget": {
			reason: "A WorkloadBudget too.",
			xr:     fntest.MustLoad("examples/budget/workloads.yaml")[0], module: "budget", release: "r2",
			want: want{release: "r2", condition: "True Rendered rendered by platform release r2"},
		},
		"NoRelease": {
			reason: "A Composition that names no release: nothing is said of one.",
			xr:     fntest.MustLoad("examples/gcp/cluster.yaml")[0], module: "cluster",
		},
		"Refused": {
			reason: "A render refused with a Fatal is no release's render.",
			xr:     fntest.GCPXR(fntest.Set("spec.parameters.location", "nowhere")), module: "cluster", release: "r2",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := fntest.Object{"apiVersion": "platform.fn.example.org/v1beta1", "kind": "Input", "module": tc.module}
			if tc.release != "" {
				in["release"] = tc.release
			}
			req, err := fntest.Request{XR: tc.xr, EnvironmentConfigs: envs, Input: in}.Proto()
			if err != nil {
				t.Fatal(err)
			}
			rsp := run(req)
			var got want
			status, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
			got.release, _ = status["platformRelease"].(string)
			for _, c := range rsp.GetConditions() {
				if c.GetType() == response.ConditionPlatformRelease {
					got.condition = strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_")
					got.condition = map[string]string{"TRUE": "True"}[got.condition] + " " + c.GetReason() + " " + c.GetMessage()
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nRunFunction: -want, +got:\n%s", tc.reason, diff)
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
