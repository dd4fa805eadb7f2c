package appenvironment_test

import (
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/appenvironment"
)

// clusterLocated delivers x's example Cluster with spec.parameters.location
// spec and status.location status, each left out when empty: a Cluster
// located by its spec, by its environment (which the cluster module
// reports in its status), or not yet by either.
func clusterLocated(x fntest.Object, spec, status string) map[string][]fntest.Object {
	return fntest.Located(required(x), clusterref.ForAppEnvironment.Requirement, spec, status)
}

// inRegion checks the region of the environment's bucket and identity,
// where each cloud names it.
func inRegion(cloud, region string) fntest.Check {
	switch cloud {
	case "gcp":
		return fntest.Field("bucket", "spec.forProvider.location", strings.ToUpper(region))
	case "aws":
		return fntest.All(fntest.Field("bucket", "spec.forProvider.region", region), fntest.Field("identity-association", "spec.forProvider.region", region))
	default:
		return fntest.All(fntest.Field("bucket", "spec.forProvider.location", region), fntest.Field("identity", "spec.forProvider.location", region))
	}
}

// firstInRegion checks the region of what the first render composes
// (dependents wait for what they need): the bucket on GCP and AWS, the
// resource group on Azure.
func firstInRegion(cloud, region string) fntest.Check {
	switch cloud {
	case "gcp":
		return fntest.Field("bucket", "spec.forProvider.location", strings.ToUpper(region))
	case "aws":
		return fntest.Field("bucket", "spec.forProvider.region", region)
	default:
		return fntest.Field("resource-group", "spec.forProvider.location", region)
	}
}

// unreportedLocation is the wait of an AppEnvironment whose Cluster's
// location is not known yet: not ready, the converging TTL (the Cluster is
// another XR, whose changes do not re-run this one), every condition
// naming the Cluster's fields, nothing in an empty region.
var unreportedLocation = fntest.All(
	fntest.Condition(appenvironment.ConditionNamespaceReady, "FALSE", "Waiting"),
	fntest.Condition(appenvironment.ConditionBucketReady, "FALSE", "Waiting"),
	fntest.Condition(appenvironment.ConditionIdentityReady, "FALSE", "Waiting"),
	fntest.ConditionMentions(appenvironment.ConditionBucketReady, `Cluster "prod-cluster" names no location in spec.parameters.location`),
	fntest.ConditionMentions(appenvironment.ConditionIdentityReady, "status.location"),
	fntest.Status("ready", false),
	fntest.IsReady(false), fntest.TTL(ttlConverging), fntest.NoEmptyRegion,
)

func TestClusterLocationScenarios(t *testing.T) {
	scenarios := map[string]fntest.Scenario{}
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		x := appXR(cloud)
		other := fntest.ClusterLocations[cloud]
		scenarios[cloud+"/ClusterLocatedBySpec"] = fntest.Scenario{
			Reason: "On a Cluster that names its location, the bucket and the identity are in that region, as before the Cluster reported one in its status.",
			XR:     x,
			Extra:  clusterLocated(x, fntest.ClusterLocations[cloud].Spec, ""),
			Steps:  []fntest.Step{converged, {Name: "steady", Check: fntest.All(inRegion(cloud, fntest.ClusterLocations[cloud].Spec), fntest.NoEmptyRegion)}},
		}
		scenarios[cloud+"/ClusterLocatedByEnvironment"] = fntest.Scenario{
			Reason: "On a Cluster that names no location, the bucket and the identity are in the one the Cluster's environment gave it, which the Cluster reports in status.location, from the first render on.",
			XR:     x,
			Extra:  clusterLocated(x, "", other.Other),
			Steps: []fntest.Step{
				{Name: "first", Hold: true, Check: fntest.All(firstInRegion(cloud, other.OtherRegion), fntest.NoEmptyRegion)},
				converged,
				{Name: "steady", Check: fntest.All(inRegion(cloud, other.OtherRegion), fntest.NoEmptyRegion)},
			},
		}
		scenarios[cloud+"/WaitsForClusterLocation"] = fntest.Scenario{
			Reason: "On a Cluster that names no location and has not reported its environment's yet, the AppEnvironment waits, composing nothing and saying why, rather than render a bucket or an identity in an empty region; once the Cluster reports it, it converges there.",
			XR:     x,
			Extra:  clusterLocated(x, "", ""),
			Steps: []fntest.Step{
				{Name: "not reported", Hold: true, Check: fntest.All(unreportedLocation, func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
					t.Helper()
					if n := len(rsp.GetDesired().GetResources()); n != 0 {
						t.Errorf("%d resources desired while the Cluster's location is unknown, want none", n)
					}
				})},
				{Name: "reported", World: func(w *fntest.World) { w.Extra = clusterLocated(w.XR, "", other.Other) }, Converge: true, Check: fntest.IsReady(true)},
				{Name: "steady", Check: fntest.All(inRegion(cloud, other.OtherRegion), fntest.NoEmptyRegion)},
			},
		}
	}
	x := appXR("aws")
	scenarios["aws/ClusterLocationMovesToEnvironment"] = fntest.Scenario{
		Reason: "A Cluster whose owner removes spec.parameters.location keeps reporting where it runs: its AppEnvironments stay there, with no Fatal about a region becoming empty. Should it report nothing (a Cluster not rendered since an older function), they wait, keeping everything, and never render an empty region.",
		XR:     x,
		Extra:  clusterLocated(x, "eu-west-1", "eu-west-1"),
		Steps: []fntest.Step{
			converged,
			{Name: "spec location removed", World: func(w *fntest.World) { w.Extra = clusterLocated(w.XR, "", "eu-west-1") }, Check: fntest.All(
				fntest.IsReady(true), inRegion("aws", "eu-west-1"), fntest.NoEmptyRegion)},
			{Name: "status location gone too", World: func(w *fntest.World) { w.Extra = clusterLocated(w.XR, "", "") }, Check: fntest.All(
				unreportedLocation, fntest.Desires("bucket", "identity", "identity-association", "deployment", "database"), inRegion("aws", "eu-west-1"))},
			{Name: "reported again", World: func(w *fntest.World) { w.Extra = clusterLocated(w.XR, "", "eu-west-1") }, Converge: true, Check: fntest.All(
				fntest.IsReady(true), inRegion("aws", "eu-west-1"))},
		},
	}
	fntest.RunAll(t, "Cluster location scenarios", run, envs, scenarios)
}
