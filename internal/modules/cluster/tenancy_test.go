package cluster_test

import (
	"path/filepath"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// tenantCluster is the example Cluster of a cloud, moved into the hostile
// tenant's namespace tenant-x, which the example environment assigns only
// the default grant (hosts under tenant-x.apps.example.com).
func tenantCluster(cloud string, mutate ...func(fntest.Object)) fntest.Object {
	o := overlay.DeepCopy(fntest.MustLoad(filepath.Join(examples, cloud, "cluster.yaml"))[0])
	fntest.Set("metadata.namespace", "tenant-x")(o)
	for _, m := range mutate {
		m(o)
	}
	return o
}

// TestTenancyAttacks are a hostile tenant's Clusters that try to take the
// platform namespace's names: its domain, its cluster's name, its cluster
// by import. Each is refused naming the field, without naming the other
// tenant. The same Cluster with a domain of the tenant's own converges,
// every cloud name carrying the namespace's tag.
func TestTenancyAttacks(t *testing.T) {
	scenarios := map[string]fntest.Scenario{}
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		scenarios[cloud+"/TakesDomain"] = fntest.Scenario{
			Reason: "Another namespace's domain: its zone's delegation in the parent zone, and every host under it, would be the tenant's.",
			XR:     tenantCluster(cloud),
			Steps:  []fntest.Step{{Name: "attack", Fatal: `spec.parameters.domain: Forbidden: host "prod.example.com" is not assigned to namespace "tenant-x"`}},
		}
		scenarios[cloud+"/TakesClusterName"] = fntest.Scenario{
			Reason: "The clusterName label choosing another namespace's cluster: the provider would adopt it.",
			XR:     tenantCluster(cloud, fntest.Set("spec.parameters.domain", "tenant-x.apps.example.com"), fntest.Set("metadata.labels.clusterName", "prod-cluster")),
			Steps:  []fntest.Step{{Name: "attack", Fatal: `metadata.labels[clusterName]: Forbidden: cluster name "prod-cluster" is not assigned to namespace "tenant-x"`}},
		}
		scenarios[cloud+"/ImportsCluster"] = fntest.Scenario{
			Reason: "Another namespace's cluster imported by name, to manage it.",
			XR: tenantCluster(cloud, fntest.Set("spec.parameters.domain", "tenant-x.apps.example.com"),
				fntest.Set("spec.parameters.import", map[string]any{"enabled": true, "mode": "manage", "resources": map[string]any{"cluster": "prod-cluster"}})),
			Steps: []fntest.Step{{Name: "attack", Fatal: `spec.parameters.import.resources[cluster]: Forbidden: existing resource "prod-cluster" is not assigned to namespace "tenant-x"`}},
		}
		scenarios[cloud+"/SameNameApart"] = fntest.Scenario{
			Reason: "A Cluster named like the platform's, in the tenant's namespace on its own domain, converges with cloud names of its own: every one derived from prod-cluster-5kbe0, none from prod-cluster alone.",
			XR:     tenantCluster(cloud, fntest.Set("spec.parameters.domain", "tenant-x.apps.example.com")),
			Steps: []fntest.Step{{Name: "converge", Converge: true, Check: fntest.All(fntest.IsReady(true), func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				t.Helper()
				for name, o := range fntest.Desired(rsp) {
					if o["kind"] == "Usage" {
						// Bookkeeping of Crossplane's, named by no cloud.
						continue
					}
					meta := o["metadata"].(map[string]any)
					if l := meta["labels"].(map[string]any)["platform.example.org/cloud-name"]; l != "prod-cluster-5kbe0" {
						t.Errorf("%s carries cloud name %v, want prod-cluster-5kbe0", name, l)
					}
					ext, _ := meta["annotations"].(map[string]any)["crossplane.io/external-name"].(string)
					if flat := strings.ReplaceAll(ext, "-", ""); strings.HasPrefix(flat, "prodcluster") && !strings.HasPrefix(flat, "prodcluster5kbe0") {
						t.Errorf("%s is named %q in the cloud, which the platform's prod-cluster derives too", name, ext)
					}
				}
			})}},
		}
	}
	fntest.RunAll(t, "Cluster tenancy attacks", run, envs, scenarios)
}

// TestTenancyUpgrade renders the example Clusters as they ran before names
// had tenants (the observed resources today's examples converge to, with
// bare names and no cloud-name label), moved into a namespace whose XRs
// now derive tagged names: every resource keeps the name it runs with, and
// nothing is withdrawn. A new derivation never renames, and so never
// re-creates, a cluster, a zone or a bucket.
func TestTenancyUpgrade(t *testing.T) {
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		t.Run(cloud, func(t *testing.T) {
			x := tenantCluster(cloud)
			// Crossplane labels what it composes with the XR's name: the
			// evidence that these are this XR's.
			observed := fntest.ComposedBy(fntest.ObservedFile(filepath.Join(examples, cloud, "observed", "cluster.yaml")), "prod-cluster")
			req, err := fntest.Request{XR: x, EnvironmentConfigs: envs, Observed: observed}.Proto()
			if err != nil {
				t.Fatal(err)
			}
			fntest.KeepsNames(t, observed, run(req))
			if len(observed) < 20 {
				t.Errorf("only %d observed resources: the example's converged stack was not read", len(observed))
			}
		})
	}
}
