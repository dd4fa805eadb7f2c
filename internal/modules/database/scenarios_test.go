package database_test

import (
	"maps"
	"path/filepath"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/database"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// dbXR is a namespaced Database that is not one of the examples: size
// small, one database, in the namespace of the example Cluster it may join.
func dbXR(cloud string, mutate ...func(fntest.Object)) fntest.Object {
	o := fntest.Object{
		"apiVersion": "platform.example.org/v1alpha1",
		"kind":       "Database",
		"metadata": map[string]any{
			"name":      "ledger",
			"namespace": "platform",
			"labels":    map[string]any{"cloud": cloud, "planeId": fntest.PlaneIDs[cloud], "planeType": "production"},
		},
		"spec": map[string]any{"parameters": map[string]any{"size": "small", "databases": []any{"ledger"}}},
	}
	for _, m := range mutate {
		m(o)
	}
	return o
}

// onCluster makes a Database join the example Cluster prod-cluster.
var onCluster = fntest.Set("spec.parameters.clusterRef", map[string]any{"name": "prod-cluster"})

var converged = fntest.Step{Name: "converge", Converge: true, Check: fntest.All(
	fntest.IsReady(true), fntest.TTL(ttlReady),
	fntest.Condition(database.ConditionNetworkReady, "TRUE", "Available"),
	fntest.Condition(database.ConditionDatabaseReady, "TRUE", "Available"),
)}

// convergedOnCluster is converged for a Database on the example Cluster:
// on GCP it composes nothing of its own in the Cluster's network, whose
// private services access is the Cluster's.
func convergedOnCluster(cloud string) fntest.Step {
	if cloud != "gcp" {
		return converged
	}
	return fntest.Step{Name: "converge", Converge: true, Check: fntest.All(
		fntest.IsReady(true), fntest.TTL(ttlReady),
		fntest.Condition(database.ConditionNetworkReady, "TRUE", "NotRequested"),
		fntest.ConditionMentions(database.ConditionNetworkReady, `Cluster "prod-cluster"`),
		fntest.Condition(database.ConditionDatabaseReady, "TRUE", "Available"),
	)}
}

// Requirement names of what a GCP Database reads of its Cluster.
var (
	clusterReq    = clusterref.ForDatabase.Requirement
	connectionReq = clusterref.ForDatabase.ResourceRequirement("private-services-connection")
)

// clusterAs returns the example Cluster of GCP as Crossplane delivers it
// to x, changed by edit: the Cluster XR and its private services
// connection (nil edit: as it is).
func clusterAs(x fntest.Object, edit func(cluster fntest.Object, conn map[string][]fntest.Object)) map[string][]fntest.Object {
	out := maps.Clone(required("gcp", x))
	out[clusterReq] = []fntest.Object{overlay.DeepCopy(out[clusterReq][0])}
	if edit != nil {
		edit(out[clusterReq][0], out)
	}
	return out
}

// withoutPrivateServices is the example Cluster as it was before it
// composed private services access: without the field or the connection.
func withoutPrivateServices(c fntest.Object, extra map[string][]fntest.Object) {
	fntest.Set("spec.parameters.network.privateServices", nil)(c)
	delete(extra, connectionReq)
}

// connectionReady sets the Ready condition of the Cluster's delivered
// connection.
func connectionReady(status string) func(fntest.Object, map[string][]fntest.Object) {
	return func(_ fntest.Object, extra map[string][]fntest.Object) {
		conn := overlay.DeepCopy(extra[connectionReq][0])
		fntest.Set("status.conditions", []any{map[string]any{"type": "Ready", "status": status, "reason": "Simulated"}})(conn)
		extra[connectionReq] = []fntest.Object{conn}
	}
}

// fatalPrivateServices is the Fatal of a GCP Database on a Cluster without
// private services access: it names the Cluster's field to set.
const fatalPrivateServices = `spec.parameters.clusterRef.name: Invalid value: "prod-cluster": Cloud SQL joins Cluster "prod-cluster"'s network through private services access, which the Cluster does not compose: set spec.parameters.network.privateServices to true on Cluster "prod-cluster"`

func TestScenarios(t *testing.T) {
	scenarios := map[string]fntest.Scenario{}
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		scenarios[cloud+"/OwnNetwork"] = fntest.Scenario{
			Reason: "A Database without clusterRef converges on a private network of its own, and reports where to connect.",
			XR:     dbXR(cloud),
			Steps:  []fntest.Step{converged, {Name: "steady", Check: fntest.All(fntest.Status("host", nil), fntest.Status("port", 5432.0), fntest.Status("connectionSecret", "ledger-connection"), fntest.Status("engineVersion", nil))}},
		}
		scenarios[cloud+"/OnCluster"] = fntest.Scenario{
			Reason: "A Database with clusterRef converges on the Cluster's network once Crossplane delivers the Cluster.",
			XR:     dbXR(cloud, onCluster),
			Extra:  required(cloud, dbXR(cloud, onCluster)),
			Steps:  []fntest.Step{convergedOnCluster(cloud)},
		}
		scenarios[cloud+"/DatabaseRemoved"] = fntest.Scenario{
			Reason: "Removing a database from spec.parameters.databases removes it, and nothing else.",
			XR:     dbXR(cloud, fntest.Set("spec.parameters.databases", []any{"ledger", "reports", "archive"})),
			Steps: []fntest.Step{
				converged,
				{Name: "archive removed", Spec: fntest.Edit("spec.parameters.databases", []any{"ledger", "reports"}), Removes: []string{"database-archive"}, Check: fntest.Desires("instance", "database-reports")},
				fntest.ConvergeStep("settles"),
			},
		}
	}
	scenarios["gcp/WaitsForCluster"] = fntest.Scenario{
		Reason: "A Database whose Cluster is not there yet asks for it and composes nothing, saying why; once delivered, it converges.",
		XR:     dbXR("gcp", onCluster),
		Steps: []fntest.Step{
			{Name: "no Cluster yet", Hold: true, Check: fntest.All(
				fntest.Condition(database.ConditionNetworkReady, "FALSE", "Waiting"),
				fntest.ConditionMentions(database.ConditionNetworkReady, `Cluster "prod-cluster"`),
				fntest.IsReady(false), fntest.TTL(ttlConverging),
				func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
					t.Helper()
					if rsp.GetRequirements().GetResources()[clusterref.ForDatabase.Requirement].GetMatchName() != "prod-cluster" {
						t.Errorf("the function did not ask for Cluster prod-cluster: %v", rsp.GetRequirements())
					}
					if n := len(rsp.GetDesired().GetResources()); n != 0 {
						t.Errorf("%d resources desired while waiting, want none", n)
					}
				},
			)},
			{Name: "Cluster delivered", World: func(w *fntest.World) { w.Extra = required("gcp", w.XR) }, Converge: true, Check: fntest.IsReady(true)},
			{Name: "Cluster gone again", World: func(w *fntest.World) { w.Extra = nil }, Check: fntest.All(fntest.Desires("instance", "database-ledger"), fntest.Condition(database.ConditionNetworkReady, "FALSE", "Waiting"))},
		},
	}
	scenarios["gcp/ClusterPrivateServices"] = fntest.Scenario{
		Reason: "On a Cluster with private services access, a GCP Database composes no range and no peering: its instance joins the Cluster's network, and a Usage of the Cluster's connection, named (with the labels that select it beside the name), holds the connection's deletion while the instance lives.",
		XR:     dbXR("gcp", onCluster),
		Extra:  required("gcp", dbXR("gcp", onCluster)),
		Steps: []fntest.Step{convergedOnCluster("gcp"), {Name: "steady", Check: fntest.All(
			fntest.Lacks("network", "private-ip-range", "private-service-connection", "instance-uses-private-service-connection"),
			fntest.Field("instance", "spec.forProvider.settings.ipConfiguration.privateNetworkSelector", map[string]any{"matchLabels": map[string]any{"crossplane.io/composite": "prod-cluster", "platform.example.org/resource": "network"}}),
			fntest.Field("instance-uses-cluster-private-services-connection", "spec.of", map[string]any{
				"apiVersion": "servicenetworking.gcp.m.upbound.io/v1beta1", "kind": "Connection",
				"resourceRef":      map[string]any{"name": required("gcp", dbXR("gcp", onCluster))[connectionReq][0]["metadata"].(map[string]any)["name"]},
				"resourceSelector": map[string]any{"matchLabels": map[string]any{"crossplane.io/composite": "prod-cluster", "platform.example.org/resource": "private-services-connection"}},
			}),
			fntest.Field("instance-uses-cluster-private-services-connection", "spec.by.resourceSelector.matchLabels", map[string]any{"platform.example.org/resource": "instance"}),
		)}},
	}
	scenarios["gcp/ClusterWithoutPrivateServices"] = fntest.Scenario{
		Reason: "A GCP Database on a Cluster without private services access is a Fatal naming the Cluster's field to set; once the Cluster sets it, the Database converges.",
		XR:     dbXR("gcp", onCluster),
		Extra:  clusterAs(dbXR("gcp", onCluster), withoutPrivateServices),
		Steps: []fntest.Step{
			{Name: "refused", Fatal: fatalPrivateServices, Check: fntest.FatalHas("servicenetworking.googleapis.com")},
			{Name: "the Cluster sets it", World: func(w *fntest.World) { w.Extra = clusterAs(w.XR, nil) }, Converge: true, Check: fntest.IsReady(true)},
		},
	}
	scenarios["gcp/WaitsForClusterConnection"] = fntest.Scenario{
		Reason: "The instance waits until the Cluster's private services connection is delivered and ready, saying so, and the Database answers with the converging TTL meanwhile: Crossplane does not re-run it when another XR's resource changes. The Usage of it comes once the instance exists, naming both; what is left to wait for then is its own.",
		XR:     dbXR("gcp", onCluster),
		Extra:  clusterAs(dbXR("gcp", onCluster), func(_ fntest.Object, e map[string][]fntest.Object) { delete(e, connectionReq) }),
		Steps: []fntest.Step{
			{Name: "not delivered", Check: fntest.All(fntest.Lacks("instance", "instance-uses-cluster-private-services-connection"),
				fntest.ConditionMentions(database.ConditionDatabaseReady, "instance waits for cluster-private-services-connection"), fntest.TTL(ttlConverging))},
			{Name: "not ready", World: func(w *fntest.World) { w.Extra = clusterAs(w.XR, connectionReady("False")) }, Check: fntest.All(fntest.Lacks("instance"), fntest.TTL(ttlConverging))},
			{Name: "ready", World: func(w *fntest.World) { w.Extra = clusterAs(w.XR, nil) }, Check: fntest.All(fntest.Desires("instance"), fntest.Lacks("instance-uses-cluster-private-services-connection"), fntest.IsReady(false), fntest.TTL(ttlReady))},
			{Name: "the instance exists", Check: fntest.Desires("instance", "instance-uses-cluster-private-services-connection")},
			{Name: "not ready again", World: func(w *fntest.World) { w.Extra = clusterAs(w.XR, connectionReady("False")) }, Check: fntest.Desires("instance", "instance-uses-cluster-private-services-connection")},
		},
	}
	scenarios["aws/WaitsForClusterSecurityGroup"] = fntest.Scenario{
		Reason: "The ingress rule waits until the Cluster's EKS cluster reports its security group, and the Database answers with the converging TTL meanwhile: that report is another XR's, which does not re-run this one.",
		XR:     dbXR("aws", onCluster),
		Extra:  fntest.Unreported(required("aws", dbXR("aws", onCluster)), clusterref.ForDatabase.ResourceRequirement("cluster"), "status.atProvider.vpcConfig.clusterSecurityGroupId"),
		Steps: []fntest.Step{
			{Name: "not reported", Hold: true, Check: fntest.All(fntest.Lacks("security-group-ingress"), fntest.IsReady(false), fntest.TTL(ttlConverging),
				fntest.ConditionMentions(database.ConditionNetworkReady, "to report its security group"))},
			{Name: "reported", World: func(w *fntest.World) { w.Extra = required("aws", w.XR) }, Hold: true, Check: fntest.All(fntest.Lacks("security-group-ingress"), fntest.IsReady(false), fntest.TTL(ttlReady),
				fntest.ConditionMentions(database.ConditionNetworkReady, "security-group-ingress waits for security-group"))},
			converged,
			{Name: "steady", Check: fntest.Desires("security-group-ingress")},
		},
	}
	scenarios["azure/WaitsForClusterAddressSpace"] = fntest.Scenario{
		Reason: "The delegated subnet waits until the Cluster's virtual network reports its address space, and the Database answers with the converging TTL meanwhile: that report is another XR's, which does not re-run this one.",
		XR:     dbXR("azure", onCluster),
		Extra:  fntest.Unreported(required("azure", dbXR("azure", onCluster)), clusterref.ForDatabase.ResourceRequirement("network"), "spec.forProvider.addressSpace"),
		Steps: []fntest.Step{
			{Name: "not reported", Hold: true, Check: fntest.All(fntest.IsReady(false), fntest.TTL(ttlConverging),
				fntest.ConditionMentions(database.ConditionNetworkReady, "to report its address space"))},
			{Name: "reported", World: func(w *fntest.World) { w.Extra = required("azure", w.XR) }, Check: fntest.All(fntest.IsReady(false), fntest.TTL(ttlReady))},
			converged,
		},
	}
	scenarios["gcp/ClusterTurnsOffPrivateServices"] = fntest.Scenario{
		Reason: "A Cluster whose owner turns private services access off refuses its Databases, which keep everything: their instances' Usages hold the Cluster's connection.",
		XR:     dbXR("gcp", onCluster),
		Extra:  required("gcp", dbXR("gcp", onCluster)),
		Steps: []fntest.Step{
			convergedOnCluster("gcp"),
			{Name: "turned off", World: func(w *fntest.World) { w.Extra = clusterAs(w.XR, withoutPrivateServices) }, Fatal: fatalPrivateServices},
		},
	}
	// The example Database as the version before composed it: the
	// Cluster's range and connection its own, with the Orphan policies.
	example := fntest.MustLoad(filepath.Join(examples, "gcp", "database.yaml"))[0]
	before := fntest.ObservedFile(filepath.Join(examples, "gcp", "observed", "database.yaml"))
	delete(before, "instance-uses-cluster-private-services-connection")
	maps.Copy(before, fntest.ObservedFile(filepath.Join("testdata", "upgrade", "gcp-shared-access.yaml")))
	upgraded := func(w *fntest.World) { w.Observed = maps.Clone(before) }
	scenarios["gcp/UpgradeFromSharedAccess"] = fntest.Scenario{
		Reason: "Upgraded, a Database that composed its Cluster's range and connection (deletionPolicy Orphan) is refused until the Cluster composes them itself; then they are held, named with how to confirm their removal, and confirmed they go without touching the cloud (their policies orphan), the Cluster's managing the same range and peering.",
		XR:     example,
		Extra:  clusterAs(example, withoutPrivateServices),
		Steps: []fntest.Step{
			{Name: "Cluster not yet", World: upgraded, Fatal: fatalPrivateServices},
			{Name: "Cluster composes them", World: func(w *fntest.World) { w.Extra = clusterAs(w.XR, nil) }, Check: fntest.All(
				fntest.Held("private-ip-range", "private-service-connection"),
				fntest.Desires("instance-uses-private-service-connection", "instance-uses-cluster-private-services-connection"),
				fntest.Field("private-ip-range", "spec.managementPolicies", []any{"Observe", "Create", "Update", "LateInitialize"}),
				fntest.Field("private-service-connection", "spec.forProvider.deletionPolicy", "ABANDON"),
			)},
			{Name: "owner confirms", Spec: fntest.Edit("spec.parameters.confirmRemovals", []any{"private-ip-range", "private-service-connection"}),
				Removes: []string{"private-ip-range", "private-service-connection"}, Check: fntest.All(
					fntest.Lacks("instance-uses-private-service-connection"), fntest.Desires("instance", "instance-uses-cluster-private-services-connection"),
					fntest.Condition("RemovalsSettled", "TRUE", "NothingHeld"))},
			convergedOnCluster("gcp"),
		},
	}
	scenarios["aws/SecurityGroupPending"] = fntest.Scenario{
		Reason: "On AWS the database admits the Cluster's nodes by their security group: until the EKS cluster reports it, the rule and the instance wait.",
		XR:     dbXR("aws", onCluster),
		Extra: func() map[string][]fntest.Object {
			e := required("aws", dbXR("aws", onCluster))
			delete(e, "database-cluster-cluster")
			return e
		}(),
		Steps: []fntest.Step{
			{Name: "first", Check: fntest.All(fntest.Desires("security-group", "subnet-group"), fntest.Lacks("security-group-ingress", "instance"))},
			{Name: "again", Check: fntest.ConditionMentions(database.ConditionNetworkReady, "security group")},
		},
	}
	scenarios["aws/ClusterOnOtherCloud"] = fntest.Scenario{
		Reason: "A Cluster on another cloud is out of the database's reach: a Fatal naming clusterRef.",
		XR:     dbXR("aws", onCluster),
		Extra:  required("gcp", dbXR("gcp", onCluster)),
		Steps:  []fntest.Step{{Name: "first", Fatal: `spec.parameters.clusterRef.name: Invalid value: "prod-cluster": Cluster "prod-cluster" runs on cloud "gcp", this Database on "aws"`}},
	}
	scenarios["gcp/LocationMismatch"] = fntest.Scenario{
		Reason: "A database joins its Cluster's network in the Cluster's region.",
		XR:     dbXR("gcp", onCluster, fntest.Set("spec.parameters.location", "europe-west4")),
		Extra:  required("gcp", dbXR("gcp", onCluster)),
		Steps:  []fntest.Step{{Name: "first", Fatal: "spec.parameters.location: Invalid value: \"europe-west4\": a database joins Cluster \"prod-cluster\"'s network privately in its region, us-central1"}},
	}
	scenarios["azure/EveryBadFieldAtOnce"] = fntest.Scenario{
		Reason: "Bad input is one Fatal naming every field: engine, version, size, a database name, and Azure's backup retention.",
		XR: dbXR("azure", fntest.Set("spec.parameters", map[string]any{
			"engine": "mysql", "version": "9", "size": "huge", "backupRetentionDays": 3.0, "databases": []any{"Bad-Name"},
		})),
		Steps: []fntest.Step{{Name: "first", Fatal: "spec.parameters.engine", Check: fntest.FatalHas(
			`spec.parameters.engine: Unsupported value: "mysql": supported values: "postgres"`,
			`spec.parameters.databases[0]: Invalid value: "Bad-Name"`,
		)}, {Name: "engine fixed", Spec: fntest.Edit("spec.parameters.engine", "postgres"), Fatal: "spec.parameters.version", Check: fntest.FatalHas(
			`spec.parameters.version: Unsupported value: "9": supported values: "14", "15", "16", "17"`,
			`spec.parameters.size: Unsupported value: "huge": supported values: "large", "medium", "small"`,
		)}, {Name: "version and size fixed", Spec: func(w *fntest.World) {
			fntest.Edit("spec.parameters.version", "16")(w)
			fntest.Edit("spec.parameters.size", "small")(w)
			fntest.Edit("spec.parameters.databases", nil)(w)
		}, Fatal: `spec.parameters.backupRetentionDays: Invalid value: 3: Flexible Server keeps backups 7 to 35 days`}},
	}
	scenarios["gcp/EnvironmentChangesTier"] = fntest.Scenario{
		Reason: "An environment that maps a size to another tier updates the server in place; it removes nothing.",
		XR:     dbXR("gcp"),
		Steps: []fntest.Step{
			converged,
			{Name: "bigger small", World: fntest.EnvEdit("cluster-platform-cloud-gcp", "database.tiers.small", "db-custom-2-7680"), Check: fntest.Field("instance", "spec.forProvider.settings.tier", "db-custom-2-7680")},
		},
	}
	scenarios["gcp/EnvironmentLosesTiers"] = fntest.Scenario{
		Reason: "An environment without size tiers is a Fatal naming the key; nothing is withdrawn.",
		XR:     dbXR("gcp"),
		Steps: []fntest.Step{
			converged,
			{Name: "tiers gone", World: fntest.EnvEdit("cluster-platform-cloud-gcp", "database.tiers", nil), Fatal: "key database.tiers"},
		},
	}
	scenarios["aws/EnvironmentWronglyTyped"] = fntest.Scenario{
		Reason: "A wrongly typed database setting is a Fatal naming its path, never read as the default.",
		XR:     dbXR("aws"),
		Steps:  []fntest.Step{converged, {Name: "storage as a word", World: fntest.EnvEdit("cluster-platform-baseline", "database.storageGb", "plenty"), Fatal: `environment.database.storageGb: Invalid value: "plenty": must be an integer`}},
	}
	scenarios["aws/TenantOpensDatabase"] = fntest.Scenario{
		Reason: "An XR's overrides cannot make a private database public, nor reach its password.",
		XR:     dbXR("aws"),
		Steps: []fntest.Step{
			converged,
			{Name: "public", Spec: fntest.Edit("spec.parameters.overrides", map[string]any{"instance": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"publiclyAccessible": true}}}}), Fatal: "spec.parameters.overrides.instance.spec.forProvider.publiclyAccessible: Forbidden: a database is reachable only privately"},
			{Name: "password", Spec: fntest.Edit("spec.parameters.overrides", map[string]any{"instance": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"passwordSecretRef": map[string]any{"name": "other"}}}}}), Fatal: "spec.forProvider.passwordSecretRef.name: Forbidden: credentials are the platform's"},
			{Name: "a plaintext password", Spec: fntest.Edit("spec.parameters.overrides", map[string]any{"instance": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"tags": map[string]any{"password": "hunter2"}}}}}), Fatal: "spec.parameters.overrides.instance.spec.forProvider.tags.password: Forbidden: credentials are the platform's"},
			{Name: "a tag", Spec: fntest.Edit("spec.parameters.overrides", map[string]any{"instance": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"tags": map[string]any{"team": "payments"}}}}}), Check: fntest.Field("instance", "spec.forProvider.tags.team", "payments")},
		},
	}
	scenarios["azure/Imported"] = fntest.Scenario{
		Reason: "An existing Flexible Server is composed read-only under its name, and the policy keeps it so.",
		XR: dbXR("azure", fntest.Set("spec.parameters.import", map[string]any{
			"enabled": true, "mode": "observe", "resources": map[string]any{"instance": "ledger"},
		})),
		Steps: []fntest.Step{
			converged,
			{Name: "observe", Check: fntest.Field("instance", "spec.managementPolicies", []any{"Observe"})},
			{Name: "widened by the environment", World: fntest.EnvEdit("cluster-platform-baseline", "overrides", map[string]any{"instance": map[string]any{"spec": map[string]any{"managementPolicies": []any{"*"}}}}), Fatal: "environment.overrides.instance.spec.managementPolicies: Forbidden"},
		},
	}
	scenarios["azure/DeletionProtection"] = fntest.Scenario{
		Reason: "Flexible Server has no deletion protection: with it the server is composed without the Delete policy, without it normally.",
		XR:     dbXR("azure"),
		Steps: []fntest.Step{
			{Name: "protected", Converge: true, Check: fntest.Field("instance", "spec.managementPolicies", []any{"Observe", "Create", "Update", "LateInitialize"})},
			{Name: "unprotected", Spec: fntest.Edit("spec.parameters.deletionProtection", false), Check: fntest.Field("instance", "spec.managementPolicies", nil)},
		},
	}
	fntest.RunAll(t, "database scenarios", run, envs, scenarios)
}

// withVersion asks for a PostgreSQL major version.
func withVersion(v string) func(fntest.Object) { return fntest.Set("spec.parameters.version", v) }

// upgrading checks the Upgrading condition and status.upgrade of the walk
// of a cloud's scenario server from 16 to 17, in one step: on AWS to the
// newest minor of 17 that RDS lists for the 16.4 the simulated RDS runs.
func upgrading(cloud string) fntest.Check {
	step := map[string]string{"aws": "17.5"}[cloud]
	if step == "" {
		step = "17"
	}
	return fntest.All(
		fntest.Condition(database.ConditionUpgrading, "TRUE", "EngineUpgrade"),
		fntest.Status("upgrade", map[string]any{"target": "17", "running": "16", "step": "17",
			"waitingFor": "the server to report running PostgreSQL " + step, "plan": []any{"PostgreSQL " + step}}),
	)
}

// upToDate checks that no walk is under way.
var upToDate = fntest.All(fntest.Condition(database.ConditionUpgrading, "FALSE", "UpToDate"), fntest.NoStatus("upgrade"))

// instanceNoBackups is the observed RDS instance without automated
// backups, as a provider reports one whose retention period is 0.
func instanceNoBackups(w *fntest.World) {
	inst := overlay.DeepCopy(w.Observed["instance"])
	fntest.Set("spec.forProvider.backupRetentionPeriod", 0.0)(inst)
	fntest.Set("status.atProvider.backupRetentionPeriod", 0.0)(inst)
	w.Observed["instance"] = inst
}

func TestDayTwo(t *testing.T) {
	versionField := map[string]struct{ path, v16, v17 string }{
		"gcp":   {"spec.forProvider.databaseVersion", "POSTGRES_16", "POSTGRES_17"},
		"aws":   {"spec.forProvider.engineVersion", "16", "17.5"},
		"azure": {"spec.forProvider.version", "16", "17"},
	}
	// underWay are the steps to an instance that asks for 17 while it
	// still runs 16 (on AWS, once the new parameter group is Ready).
	// asks17 is the instance whose spec asks for 17 while its provider
	// still reports 16: a major upgrade the cloud is carrying out.
	asks17 := func(cloud string) func(*fntest.World) {
		return func(w *fntest.World) {
			f := versionField[cloud]
			inst := overlay.DeepCopy(w.Observed["instance"])
			fntest.Set(f.path, f.v17)(inst)
			if cloud == "aws" {
				fntest.Set("spec.forProvider.parameterGroupNameSelector.matchLabels", map[string]any{"platform.example.org/resource": "parameter-group-postgres17"})(inst)
			}
			w.Observed["instance"] = inst
		}
	}
	underWay := func(cloud string) []fntest.Step {
		return []fntest.Step{
			// On AWS the providers create the new parameter group first.
			{Name: "to 17", Spec: fntest.Edit("spec.parameters.version", "17"), Hold: cloud != "aws"},
			{Name: "the cloud upgrades", World: asks17(cloud), Hold: true, Check: upgrading(cloud)},
		}
	}
	// oldGroup is what an RDS major upgrade leaves to remove.
	oldGroup := map[string][]string{"aws": {"parameter-group-postgres16"}}
	scenarios := map[string]fntest.Scenario{}
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		f := versionField[cloud]
		upgrade := []fntest.Step{
			{Name: "to 17", Spec: fntest.Edit("spec.parameters.version", "17"), Check: fntest.All(upgrading(cloud), fntest.Field("instance", f.path, f.v17))},
			{Name: "settles", Converge: true, Check: upToDate},
			{Name: "steady", Check: fntest.All(upToDate, fntest.Field("instance", f.path, f.v17), fntest.Status("engineVersion", map[string]any{"gcp": "17", "aws": "17.5", "azure": "17"}[cloud]))},
		}
		if cloud == "aws" {
			// RDS: the new family's parameter group first; then the
			// instance moves to it and to 17 in one modification, with
			// allowMajorVersionUpgrade; then the old group goes.
			upgrade = []fntest.Step{
				{Name: "to 17: new parameter group", Spec: fntest.Edit("spec.parameters.version", "17"), Check: fntest.All(
					upgrading(cloud),
					fntest.Desires("parameter-group-postgres16", "parameter-group-postgres17"),
					fntest.Field("parameter-group-postgres17", "spec.forProvider.family", "postgres17"),
					fntest.Field("instance", f.path, f.v16),
					fntest.Field("instance", "spec.forProvider.allowMajorVersionUpgrade", nil),
					fntest.Field("instance", "spec.forProvider.parameterGroupNameSelector.matchLabels", map[string]any{"platform.example.org/resource": "parameter-group-postgres16"}),
				)},
				{Name: "instance moves", Check: fntest.All(
					upgrading(cloud),
					fntest.Field("instance", f.path, f.v17),
					fntest.Field("instance", "spec.forProvider.allowMajorVersionUpgrade", true),
					fntest.Field("instance", "spec.forProvider.parameterGroupNameSelector.matchLabels", map[string]any{"platform.example.org/resource": "parameter-group-postgres17"}),
					fntest.Field("instance", "spec.forProvider.parameterGroupNameSelector.policy", map[string]any{"resolve": "Always"}),
					fntest.Desires("parameter-group-postgres16"),
				)},
				{Name: "old group goes", Removes: []string{"parameter-group-postgres16"}, Check: fntest.All(upToDate, fntest.Lacks("parameter-group-postgres16"),
					fntest.Field("instance", "spec.forProvider.allowMajorVersionUpgrade", nil))},
				{Name: "settles", Converge: true, Check: upToDate},
			}
		}
		scenarios[cloud+"/MajorUpgrade"] = fntest.Scenario{
			Reason: "Raising spec.parameters.version walks the server to it with what the cloud needs, saying the step; nothing else goes.",
			XR:     dbXR(cloud, withVersion("16")),
			Steps:  append([]fntest.Step{converged}, upgrade...),
		}
		scenarios[cloud+"/Downgrade"] = fntest.Scenario{
			Reason: "A lower version than the server runs is a Fatal naming spec.parameters.version, what runs and what is allowed.",
			XR:     dbXR(cloud, withVersion("16")),
			Steps: []fntest.Step{converged, {Name: "to 15", Spec: fntest.Edit("spec.parameters.version", "15"),
				Fatal: `spec.parameters.version: Invalid value: "15": the server runs PostgreSQL 16, and a major version is never downgraded in place`, Check: fntest.FatalHas("allowed: 16, 17")}},
		}
		scenarios[cloud+"/EnvironmentDowngrade"] = fntest.Scenario{
			Reason: "A Database that names no version follows the environment's, which may raise it but not lower it below what runs: the Fatal names the environment's key.",
			XR:     dbXR(cloud),
			Steps: []fntest.Step{
				converged,
				{Name: "environment lowers it", World: fntest.EnvEdit("cluster-platform-baseline", "database.version", "15"), Fatal: `environment.database.version: Invalid value: "15": the server runs PostgreSQL 16`},
				{Name: "environment raises it", World: fntest.EnvEdit("cluster-platform-baseline", "database.version", "17"), Check: upgrading(cloud)},
			},
		}
		scenarios[cloud+"/StorageShrink"] = fntest.Scenario{
			Reason: "Storage only grows: a smaller storageGb than the server has is a Fatal naming spec.parameters.storageGb; a larger one is made.",
			XR:     dbXR(cloud, fntest.Set("spec.parameters.storageGb", 100.0)),
			Steps: []fntest.Step{
				converged,
				{Name: "shrunk", Spec: fntest.Edit("spec.parameters.storageGb", 60.0), Fatal: "spec.parameters.storageGb: Invalid value: 60: the server has"},
				{Name: "grown", Spec: fntest.Edit("spec.parameters.storageGb", 300.0), Check: fntest.IsReady(true)},
			},
		}
		scenarios[cloud+"/StepUnderWayNotTakenBack"] = fntest.Scenario{
			Reason: "A major upgrade under way is never taken back: lowering the version again keeps asking for the step until the server runs it.",
			XR:     dbXR(cloud, withVersion("16")),
			Steps: append(append([]fntest.Step{converged}, underWay(cloud)...),
				fntest.Step{Name: "lowered again", Spec: fntest.Edit("spec.parameters.version", "16"), Check: fntest.All(
					fntest.Field("instance", f.path, f.v17), fntest.Condition(database.ConditionUpgrading, "TRUE", "EngineUpgrade"))},
				fntest.Step{Name: "the server runs 17: 16 is a downgrade now", Fatal: `spec.parameters.version: Invalid value: "16": the server runs PostgreSQL 17`},
				fntest.Step{Name: "owner asks for 17", Spec: fntest.Edit("spec.parameters.version", "17"), Removes: oldGroup[cloud], Converge: true, Check: fntest.All(fntest.Field("instance", f.path, f.v17), upToDate)},
			),
		}
	}
	// storageField is where each cloud's server asks for its storage, with
	// a value below what the scenarios' servers have.
	storageField := map[string][2]any{
		"gcp": {"settings", map[string]any{"diskSize": 10.0}}, "aws": {"allocatedStorage", 10.0}, "azure": {"storageMb", 10240.0},
	}
	versionOverride := map[string]map[string]any{
		"gcp": {"databaseVersion": "POSTGRES_15"}, "aws": {"engineVersion": "15"}, "azure": {"version": "15"},
	}
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		overridden := func(fp map[string]any) func(*fntest.World) {
			return fntest.Edit("spec.parameters.overrides", map[string]any{"instance": map[string]any{"spec": map[string]any{"forProvider": fp}}})
		}
		sf := storageField[cloud]
		scenarios[cloud+"/OverridesCannotWalk"] = fntest.Scenario{
			Reason: "Neither a version nor a smaller storage reaches the server through overrides: the version is the walk's, a Fatal names the override; storage only grows.",
			XR:     dbXR(cloud, withVersion("16"), fntest.Set("spec.parameters.storageGb", 100.0)),
			Steps: []fntest.Step{
				converged,
				{Name: "version overridden", Spec: overridden(versionOverride[cloud]), Fatal: "spec.parameters.overrides.instance.spec.forProvider", Check: fntest.FatalHas("Forbidden: versions move only through spec.parameters.version")},
				{Name: "storage overridden", Spec: overridden(map[string]any{sf[0].(string): sf[1]}), Fatal: "spec.parameters.overrides.instance.spec.forProvider", Check: fntest.FatalHas("can only raise in place")},
			},
		}
	}
	refused := func(w *fntest.World) {
		asks17("aws")(w)
		inst := w.Observed["instance"]
		fntest.Set("status.conditions", []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "Available"},
			map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "update failed: InvalidParameterCombination: Cannot upgrade postgres from 16.1 to 17.2"},
		})(inst)
	}
	scenarios["aws/RefusedStepTakenBack"] = fntest.Scenario{
		Reason: "A major step RDS refused (an old minor it cannot upgrade from) is not under way: it waits on the refusal, and the owner can take it back to what runs.",
		XR:     dbXR("aws", withVersion("16")),
		Steps: []fntest.Step{
			converged,
			{Name: "to 17", Spec: fntest.Edit("spec.parameters.version", "17")},
			{Name: "RDS refuses", World: refused, Hold: true, Check: fntest.All(
				fntest.Field("instance", "spec.forProvider.engineVersion", "17.5"),
				fntest.ConditionMentions(database.ConditionUpgrading, "fails to apply PostgreSQL 17.5"))},
			{Name: "owner takes it back", Spec: fntest.Edit("spec.parameters.version", "16"), World: refused, Hold: true, Check: fntest.All(
				fntest.Field("instance", "spec.forProvider.engineVersion", "16"),
				fntest.Field("instance", "spec.forProvider.allowMajorVersionUpgrade", nil),
				fntest.Condition(database.ConditionUpgrading, "FALSE", "UpToDate"))},
		},
	}
	scenarios["aws/MajorUpgradeWithoutBackups"] = fntest.Scenario{
		Reason: "A major upgrade of a server without automated backups cannot be taken back: a Fatal says so and names the field.",
		XR:     dbXR("aws", withVersion("16")),
		Steps: []fntest.Step{
			converged,
			{Name: "backups off", World: instanceNoBackups, Spec: fntest.Edit("spec.parameters.version", "17"), Fatal: `spec.parameters.version: Invalid value: "17": the server runs PostgreSQL 16 without automated backups`},
		},
	}
	scenarios["azure/AutoGrowKept"] = fntest.Scenario{
		Reason: "Flexible Server's auto-grow raised the server's storage: the render asks for what it has grown to, never less (the provider would force a new server), and a larger storageGb still grows it.",
		XR:     dbXR("azure", fntest.Set("spec.parameters.storageGb", 32.0)),
		Steps: []fntest.Step{
			converged,
			{Name: "the server grows itself", World: func(w *fntest.World) {
				inst := overlay.DeepCopy(w.Observed["instance"])
				fntest.Set("status.atProvider.storageMb", 65536.0)(inst)
				w.Observed["instance"] = inst
			}, Check: fntest.All(fntest.IsReady(true), fntest.Field("instance", "spec.forProvider.storageMb", 65536.0))},
			{Name: "grown past it", Spec: fntest.Edit("spec.parameters.storageGb", 128.0), Check: fntest.Field("instance", "spec.forProvider.storageMb", 131072.0)},
		},
	}
	scenarios["gcp/NetworkMoveRefused"] = fntest.Scenario{
		Reason: "A Cloud SQL instance is never moved to another network: leaving its Cluster's network is a Fatal naming spec.parameters.clusterRef, and the Usage of the Cluster's peering stays.",
		XR:     dbXR("gcp", onCluster),
		Extra:  required("gcp", dbXR("gcp", onCluster)),
		Steps: []fntest.Step{
			convergedOnCluster("gcp"),
			{Name: "own network", Spec: fntest.Edit("spec.parameters.clusterRef", nil), Fatal: `spec.parameters.clusterRef: Invalid value: "": the Cloud SQL instance is on the network of Cluster prod-cluster`},
		},
	}
	scenarios["gcp/NetworkMoveToClusterRefused"] = fntest.Scenario{
		Reason: "A Cloud SQL instance on a network of its own is not moved into a Cluster's: a Fatal naming spec.parameters.clusterRef.",
		XR:     dbXR("gcp"),
		Steps: []fntest.Step{
			converged,
			{Name: "onto the Cluster", Spec: func(w *fntest.World) { onCluster(w.XR); w.Extra = required("gcp", w.XR) }, Fatal: `spec.parameters.clusterRef: Invalid value: "prod-cluster": the Cloud SQL instance is on a network of its own`},
		},
	}
	fntest.RunAll(t, "database day-two scenarios", run, envs, scenarios)
}
