package main

import (
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

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
