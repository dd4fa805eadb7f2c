package database_test

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/database"
)

// clusterLocated delivers the example Cluster of cloud to x with
// spec.parameters.location spec and status.location status, each left out
// when empty: a Cluster located by its spec, by its environment (which the
// cluster module reports in its status), or not yet by either.
func clusterLocated(cloud string, x fntest.Object, spec, status string) map[string][]fntest.Object {
	return fntest.Located(required(cloud, x), clusterReq, spec, status)
}

// instanceRegion checks the region the database server is rendered in:
// GCP and AWS name it region, Azure location.
func instanceRegion(cloud, region string) fntest.Check {
	if cloud == "azure" {
		return fntest.Field("instance", "spec.forProvider.location", region)
	}
	return fntest.Field("instance", "spec.forProvider.region", region)
}

// unreportedLocation is the wait of a Database whose Cluster's location is
// not known yet: nothing new composed, not ready, the converging TTL (the
// Cluster is another XR, whose changes do not re-run this one), the
// conditions naming the Cluster's fields.
var unreportedLocation = fntest.All(
	fntest.Condition(database.ConditionNetworkReady, "FALSE", "Waiting"),
	fntest.Condition(database.ConditionDatabaseReady, "FALSE", "Waiting"),
	fntest.ConditionMentions(database.ConditionNetworkReady, `Cluster "prod-cluster" names no location in spec.parameters.location`),
	fntest.ConditionMentions(database.ConditionDatabaseReady, "status.location"),
	fntest.IsReady(false), fntest.TTL(ttlConverging), fntest.NoEmptyRegion,
)

func TestClusterLocationScenarios(t *testing.T) {
	scenarios := map[string]fntest.Scenario{}
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		x := dbXR(cloud, onCluster)
		other := fntest.ClusterLocations[cloud]
		scenarios[cloud+"/ClusterLocatedBySpec"] = fntest.Scenario{
			Reason: "On a Cluster that names its location, the database is in that region, as before the Cluster reported one in its status.",
			XR:     x,
			Extra:  clusterLocated(cloud, x, fntest.ClusterLocations[cloud].Spec, ""),
			Steps:  []fntest.Step{convergedOnCluster(cloud), {Name: "steady", Check: fntest.All(instanceRegion(cloud, fntest.ClusterLocations[cloud].Spec), fntest.NoEmptyRegion)}},
		}
		scenarios[cloud+"/ClusterLocatedByEnvironment"] = fntest.Scenario{
			Reason: "On a Cluster that names no location, the database is in the one the Cluster's environment gave it, which the Cluster reports in status.location; no Fatal asks the Database for a location.",
			XR:     x,
			Extra:  clusterLocated(cloud, x, "", other.Other),
			Steps:  []fntest.Step{convergedOnCluster(cloud), {Name: "steady", Check: fntest.All(instanceRegion(cloud, other.OtherRegion), fntest.NoEmptyRegion)}},
		}
		scenarios[cloud+"/WaitsForClusterLocation"] = fntest.Scenario{
			Reason: "On a Cluster that names no location and has not reported its environment's yet, the Database waits, composing nothing and saying why; once the Cluster reports it, the Database converges there.",
			XR:     x,
			Extra:  clusterLocated(cloud, x, "", ""),
			Steps: []fntest.Step{
				{Name: "not reported", Hold: true, Check: fntest.All(unreportedLocation, func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
					t.Helper()
					if n := len(rsp.GetDesired().GetResources()); n != 0 {
						t.Errorf("%d resources desired while the Cluster's location is unknown, want none", n)
					}
				})},
				{Name: "reported", World: func(w *fntest.World) { w.Extra = clusterLocated(cloud, w.XR, "", other.Other) }, Converge: true, Check: fntest.IsReady(true)},
				{Name: "steady", Check: fntest.All(instanceRegion(cloud, other.OtherRegion), fntest.NoEmptyRegion)},
			},
		}
	}
	x := dbXR("aws", onCluster)
	scenarios["aws/ClusterLocationMovesToEnvironment"] = fntest.Scenario{
		Reason: "A Cluster whose owner removes spec.parameters.location keeps reporting where it runs: its Databases stay there. Should it report nothing (a Cluster not rendered since an older function), they wait, keeping everything, and never render an empty region.",
		XR:     x,
		Extra:  clusterLocated("aws", x, "eu-west-1", "eu-west-1"),
		Steps: []fntest.Step{
			convergedOnCluster("aws"),
			{Name: "spec location removed", World: func(w *fntest.World) { w.Extra = clusterLocated("aws", w.XR, "", "eu-west-1") }, Check: fntest.All(
				fntest.IsReady(true), instanceRegion("aws", "eu-west-1"), fntest.NoEmptyRegion)},
			{Name: "status location gone too", World: func(w *fntest.World) { w.Extra = clusterLocated("aws", w.XR, "", "") }, Check: fntest.All(
				unreportedLocation, fntest.Desires("instance", "subnet-group", "security-group"), instanceRegion("aws", "eu-west-1"))},
			{Name: "reported again", World: func(w *fntest.World) { w.Extra = clusterLocated("aws", w.XR, "", "eu-west-1") }, Converge: true, Check: fntest.All(
				fntest.IsReady(true), instanceRegion("aws", "eu-west-1"))},
		},
	}
	scenarios["gcp/LocationMismatchWithReported"] = fntest.Scenario{
		Reason: "A Database's own location is checked against the region its Cluster reports, as against the one its Cluster names.",
		XR:     dbXR("gcp", onCluster, fntest.Set("spec.parameters.location", "us-central1")),
		Extra:  clusterLocated("gcp", dbXR("gcp", onCluster), "", "europe-west1-b"),
		Steps:  []fntest.Step{{Name: "first", Fatal: `spec.parameters.location: Invalid value: "us-central1": a database joins Cluster "prod-cluster"'s network privately in its region, europe-west1`}},
	}
	scenarios["gcp/OwnLocationWaitsForCluster"] = fntest.Scenario{
		Reason: "A Database with a location of its own still waits for its Cluster's: it joins the Cluster's network in the Cluster's region, which must be known to be checked.",
		XR:     dbXR("gcp", onCluster, fntest.Set("spec.parameters.location", "us-central1")),
		Extra:  clusterLocated("gcp", dbXR("gcp", onCluster), "", ""),
		Steps: []fntest.Step{
			{Name: "not reported", Hold: true, Check: unreportedLocation},
			{Name: "reported", World: func(w *fntest.World) { w.Extra = clusterLocated("gcp", w.XR, "", "us-central1") }, Converge: true, Check: fntest.All(fntest.IsReady(true), instanceRegion("gcp", "us-central1"))},
		},
	}
	fntest.RunAll(t, "Cluster location scenarios", run, envs, scenarios)
}
