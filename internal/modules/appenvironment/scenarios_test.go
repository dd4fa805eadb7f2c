package appenvironment_test

import (
	"maps"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/appenvironment"
	appenvironmentrun "github.com/seed-6471616d/function-cluster-platform/internal/modules/appenvironment"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// appXR is a namespaced AppEnvironment that is not one of the examples, on
// the example Cluster prod-cluster: a backend with a database, a bucket
// and an Ingress.
func appXR(cloud string, mutate ...func(fntest.Object)) fntest.Object {
	o := fntest.Object{
		"apiVersion": "platform.example.org/v1alpha1",
		"kind":       "AppEnvironment",
		"metadata": map[string]any{
			"name":      "wiki",
			"namespace": "platform",
			"labels":    map[string]any{"cloud": cloud, "planeId": fntest.PlaneIDs[cloud], "planeType": "production"},
		},
		"spec": map[string]any{"parameters": map[string]any{
			"clusterRef": map[string]any{"name": "prod-cluster"},
			"backend":    map[string]any{"image": "ghcr.io/acme/wiki:5.1.0", "replicas": 2.0},
			"database":   map[string]any{"size": "small"},
			"bucket":     map[string]any{"name": "acme-wiki-uploads"},
			"ingress":    map[string]any{"host": "wiki.prod.example.com", "tls": true},
		}},
	}
	for _, m := range mutate {
		m(o)
	}
	return o
}

// sentinel is a password planted where a careless function could copy it
// from: the nested Database's observed status and connection details. It
// must never appear in a response.
const sentinel = "s3ntinel-Pa55word-9f2c"

// plant puts the sentinel into what the function observes of the nested
// Database.
func plant(w *fntest.World) {
	db := w.Observed[appenvironment.ResourceDatabase]
	if db == nil {
		return
	}
	db = maps.Clone(db)
	st := maps.Clone(db["status"].(map[string]any))
	st["password"] = sentinel
	db["status"] = st
	w.Observed = maps.Clone(w.Observed)
	w.Observed[appenvironment.ResourceDatabase] = db
	w.Connections = maps.Clone(w.Connections)
	if w.Connections == nil {
		w.Connections = map[string]map[string][]byte{}
	}
	w.Connections[appenvironment.ResourceDatabase] = map[string][]byte{"password": []byte(sentinel), "username": []byte("dbadmin")}
}

// noSentinel checks that the whole response, desired state, status and
// results, holds no trace of the planted password.
func noSentinel(t *testing.T, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	b, err := protojson.Marshal(rsp)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), sentinel) {
		t.Errorf("the response holds the database's password")
	}
}

// bucketResources are each cloud's resources of the bucket component.
var bucketResources = map[string][]string{
	"gcp":   {"bucket", "bucket-access"},
	"aws":   {"bucket", "bucket-public-access-block", "bucket-encryption", "bucket-ownership", "bucket-access"},
	"azure": {"bucket", "bucket-container", "bucket-access"},
}

var converged = fntest.Step{Name: "converge", Converge: true, Check: fntest.All(
	fntest.IsReady(true), fntest.TTL(ttlReady),
	fntest.Condition(appenvironment.ConditionNamespaceReady, "TRUE", "Available"),
	fntest.Condition(appenvironment.ConditionIdentityReady, "TRUE", "Available"),
	fntest.Condition(appenvironment.ConditionBucketReady, "TRUE", "Available"),
	fntest.Condition(appenvironment.ConditionDatabaseReady, "TRUE", "Available"),
	fntest.Condition(appenvironment.ConditionBackendReady, "TRUE", "Available"),
	fntest.Status("ready", true), fntest.Status("namespace", "wiki"), fntest.Status("url", "https://wiki.prod.example.com"),
	fntest.Status("databaseHost", nil), fntest.Status("bucketName", "acme-wiki-uploads"), fntest.Status("bucketUrl", nil),
)}

func TestScenarios(t *testing.T) {
	scenarios := map[string]fntest.Scenario{}
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		scenarios[cloud+"/Converges"] = fntest.Scenario{
			Reason: "An AppEnvironment on a Cluster converges: namespace, identity, bucket, database, backend and Ingress, and the status says where everything is. The database's password never shows, wherever it is planted.",
			XR:     appXR(cloud),
			Extra:  required(appXR(cloud)),
			Steps: []fntest.Step{
				converged,
				{Name: "password planted", World: plant, Check: fntest.All(noSentinel, fntest.IsReady(true))},
			},
		}
		scenarios[cloud+"/BucketRemoved"] = fntest.Scenario{
			Reason: "Removing spec.parameters.bucket removes the bucket and its grant, and nothing else; the identity stays.",
			XR:     appXR(cloud),
			Extra:  required(appXR(cloud)),
			Steps: []fntest.Step{
				converged,
				{Name: "bucket removed", Spec: fntest.Edit("spec.parameters.bucket", nil), Removes: bucketResources[cloud], Check: fntest.Desires("identity", "service-account", "deployment")},
				fntest.ConvergeStep("settles"),
			},
		}
		scenarios[cloud+"/WaitsForCluster"] = fntest.Scenario{
			Reason: "An AppEnvironment whose Cluster is not there yet asks for it and composes nothing, saying why; once delivered, it converges; if the Cluster goes, nothing is withdrawn.",
			XR:     appXR(cloud),
			Steps: []fntest.Step{
				{Name: "no Cluster yet", Hold: true, Check: fntest.All(
					fntest.Condition(appenvironment.ConditionBackendReady, "FALSE", "Waiting"),
					fntest.ConditionMentions(appenvironment.ConditionNamespaceReady, `Cluster "prod-cluster"`),
					fntest.IsReady(false), fntest.TTL(ttlConverging),
					func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
						t.Helper()
						if rsp.GetRequirements().GetResources()[clusterref.ForAppEnvironment.Requirement].GetMatchName() != "prod-cluster" {
							t.Errorf("the function did not ask for Cluster prod-cluster: %v", rsp.GetRequirements())
						}
						if n := len(rsp.GetDesired().GetResources()); n != 0 {
							t.Errorf("%d resources desired while waiting, want none", n)
						}
					},
				)},
				{Name: "Cluster delivered", World: func(w *fntest.World) { w.Extra = required(w.XR) }, Converge: true, Check: fntest.IsReady(true)},
				{Name: "Cluster gone again", World: func(w *fntest.World) { w.Extra = nil }, Check: fntest.All(fntest.Desires("deployment", "database", "bucket"), fntest.Condition(appenvironment.ConditionBackendReady, "FALSE", "Waiting"))},
			},
		}
	}
	scenarios["azure/WaitsForClusterIssuer"] = fntest.Scenario{
		Reason: "The identity's federation waits until the Cluster's AKS cluster reports its OIDC issuer, and the AppEnvironment answers with the converging TTL meanwhile: that report is another XR's, which does not re-run this one. Once it came, what is left to wait for is its own.",
		XR:     appXR("azure"),
		Extra:  fntest.Unreported(required(appXR("azure")), clusterref.ForAppEnvironment.ResourceRequirement("cluster"), "status.atProvider.oidcIssuerUrl"),
		Steps: []fntest.Step{
			{Name: "not reported", Check: fntest.All(fntest.Lacks("identity-federation"), fntest.IsReady(false), fntest.TTL(ttlConverging))},
			{Name: "reported", World: func(w *fntest.World) { w.Extra = required(w.XR) }, Check: fntest.All(fntest.IsReady(false), fntest.TTL(ttlReady))},
			converged,
			{Name: "steady", Check: fntest.Desires("identity-federation")},
		},
	}
	scenarios["gcp/Ordering"] = fntest.Scenario{
		Reason: "The Deployment waits for db-connection-details, which waits until the nested Database says where its password is; these edges order creation only: their order of deletion does not matter (registry.UsageRules), so none gets a Usage.",
		XR:     appXR("gcp"),
		Extra:  required(appXR("gcp")),
		Steps: []fntest.Step{
			{Name: "first", Check: fntest.All(
				fntest.Desires("namespace", "database", "identity", "bucket"),
				fntest.Lacks("database-connection", "deployment", "service-account"),
				fntest.ConditionMentions(appenvironment.ConditionDatabaseReady, "status.passwordSecret"),
			)},
			{Name: "second", Check: fntest.All(fntest.Desires("database-connection"), fntest.Lacks("deployment", "database-connection-uses-database"))},
			{Name: "the rest", Converge: true, Check: fntest.All(fntest.Desires("deployment"),
				fntest.Lacks("deployment-uses-database-connection", "deployment-uses-service-account", "service-account-uses-identity-workload-user"),
				fntest.Field("deployment", "spec.readiness.policy", "DeriveFromCelQuery"))},
		},
	}
	scenarios["gcp/DatabaseRemoved"] = fntest.Scenario{
		Reason: "Removing spec.parameters.database removes the Database and db-connection-details; the backend stops reading them.",
		XR:     appXR("gcp"),
		Extra:  required(appXR("gcp")),
		Steps: []fntest.Step{
			converged,
			{Name: "database removed", Spec: fntest.Edit("spec.parameters.database", nil), Removes: []string{"database", "database-connection"},
				Check: fntest.Condition(appenvironment.ConditionDatabaseReady, "TRUE", "NotRequested")},
		},
	}
	scenarios["aws/BudgetAddedThenRemoved"] = fntest.Scenario{
		Reason: "A budget is a nested WorkloadBudget that owns the backend's replicas; removing it gives them back to the Deployment.",
		XR:     appXR("aws"),
		Extra:  required(appXR("aws")),
		Steps: []fntest.Step{
			converged,
			{Name: "budget", Spec: fntest.Edit("spec.parameters.budget", map[string]any{"limitUsd": 200.0, "enforcement": "enabled"}), Converge: true, Check: fntest.All(
				fntest.Field("budget", "spec.targets", []any{map[string]any{"name": "backend", "replicas": 2.0}}),
				fntest.Field("budget", "spec.targetNamespace", "wiki"),
				fntest.Field("budget", "spec.providerConfigRef", map[string]any{"kind": "ProviderConfig", "name": "prod-cluster"}),
				fntest.Field("deployment", "spec.forProvider.manifest.spec.replicas", nil),
			)},
			{Name: "budget removed", Spec: fntest.Edit("spec.parameters.budget", nil), Removes: []string{"budget"}, Check: fntest.Field("deployment", "spec.forProvider.manifest.spec.replicas", 2.0)},
		},
	}
	scenarios["azure/EnvironmentChanges"] = fntest.Scenario{
		Reason: "An environment that changes the ingress class and the backend's default resources updates in place; it withdraws nothing.",
		XR:     appXR("azure"),
		Extra:  required(appXR("azure")),
		Steps: []fntest.Step{
			converged,
			{Name: "class", World: fntest.EnvEdit("cluster-platform-baseline", "appEnvironment.ingressClass", "traefik"), Check: fntest.Field("ingress", "spec.forProvider.manifest.spec.ingressClassName", "traefik")},
			{Name: "wrongly typed", World: fntest.EnvEdit("cluster-platform-baseline", "appEnvironment.resources", "big"), Fatal: `environment.appEnvironment.resources: Invalid value: "big": must be an object`},
		},
	}
	scenarios["aws/Orphan"] = fntest.Scenario{
		Reason: "deletionPolicy Orphan leaves the bucket in the cloud and protects the database from deletion.",
		XR:     appXR("aws", fntest.Set("spec.parameters.deletionPolicy", "Orphan")),
		Extra:  required(appXR("aws")),
		Steps: []fntest.Step{{Name: "first", Check: fntest.All(
			fntest.Field("bucket", "spec.managementPolicies", []any{"Observe", "Create", "Update", "LateInitialize"}),
			fntest.Field("database", "spec.parameters.deletionProtection", true),
		)}},
	}
	refusals := map[string]struct {
		cloud string
		set   func(fntest.Object)
		fatal []string
	}{
		"SystemNamespace":   {"gcp", fntest.Set("spec.parameters.namespace", "kube-system"), []string{`spec.parameters.namespace: Forbidden: namespace "kube-system" belongs to the system or to the Cluster's add-ons`}},
		"AddonNamespace":    {"gcp", fntest.Set("spec.parameters.namespace", "cert-manager"), []string{`namespace "cert-manager" belongs to the system or to the Cluster's add-ons`}},
		"HostOutsideDomain": {"aws", fntest.Set("spec.parameters.ingress.host", "wiki.example.net"), []string{`spec.parameters.ingress.host: Invalid value: "wiki.example.net": must be prod.example.com or a name under it, the domain of Cluster "prod-cluster"`}},
		"CredentialInEnv":   {"azure", fntest.Set("spec.parameters.backend.env", map[string]any{"API_TOKEN": "abc123"}), []string{`spec.parameters.backend.env[API_TOKEN]: Forbidden: holds a plaintext credential`}},
		"DatabaseVariable":  {"gcp", fntest.Set("spec.parameters.backend.env", map[string]any{"DB_HOST": "elsewhere"}), []string{`spec.parameters.backend.env[DB_HOST]: Forbidden: DB_ variables are the database's`}},
		"AWSPublicBucket":   {"aws", fntest.Set("spec.parameters.bucket.public", true), []string{`spec.parameters.bucket.public: Forbidden: a public bucket would open the bucket to the internet over plain HTTP; on AWS a site is served by spec.parameters.frontend`}},
		"AzureBucketName":   {"azure", fntest.Set("spec.parameters.bucket.name", "Acme_Wiki"), []string{`spec.parameters.bucket.name: Invalid value: "Acme_Wiki": an Azure blob container name`}},
		"GCPBucketName":     {"gcp", fntest.Set("spec.parameters.bucket.name", "google-wiki"), []string{`spec.parameters.bucket.name: Invalid value: "google-wiki": a Cloud Storage bucket name`}},
		"UnknownSize":       {"aws", fntest.Set("spec.parameters.database.size", "huge"), []string{`spec.parameters.database.size: Unsupported value: "huge": supported values: "large", "medium", "small"`}},
		"EveryBadFieldAtOnce": {"gcp", fntest.Set("spec.parameters.backend", map[string]any{"port": 0.0, "replicas": 500.0, "resources": map[string]any{"requests": map[string]any{"cpu": "lots", "gpu": "1"}}}), []string{
			`spec.parameters.backend.image: Required value`,
			`spec.parameters.backend.port: Invalid value: 0: must be a port, 1 to 65535`,
			`spec.parameters.backend.replicas: Invalid value: 500: must be between 0 and 100`,
			`spec.parameters.backend.resources.requests[cpu]: Invalid value: "lots"`,
			`spec.parameters.backend.resources.requests[gpu]: Unsupported value: "gpu"`,
		}},
		"TenantMovesTheDeployment":      {"gcp", fntest.Set("spec.parameters.overrides", map[string]any{"deployment": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"manifest": map[string]any{"metadata": map[string]any{"namespace": "kube-system"}}}}}}), []string{`spec.parameters.overrides.deployment.spec.forProvider.manifest.metadata.namespace: Forbidden`}},
		"TenantReconfiguresTheDatabase": {"gcp", fntest.Set("spec.parameters.overrides", map[string]any{"database": map[string]any{"spec": map[string]any{"parameters": map[string]any{"deletionProtection": true}}}}), []string{`spec.parameters.overrides.database.spec.parameters.deletionProtection: Forbidden: an XR's overrides reach spec.forProvider`}},
	}
	for name, r := range refusals {
		x := appXR(r.cloud, r.set)
		scenarios[r.cloud+"/Refuses"+name] = fntest.Scenario{
			Reason: "Bad input is a Fatal naming the field, before anything is composed.",
			XR:     x,
			Extra:  required(appXR(r.cloud)),
			Steps:  []fntest.Step{{Name: "first", Fatal: r.fatal[0], Check: fntest.FatalHas(r.fatal...)}},
		}
	}
	scenarios["gcp/RefusesOtherCloudsCluster"] = fntest.Scenario{
		Reason: "An environment runs on a Cluster of its own cloud and project.",
		XR:     appXR("aws"),
		Extra:  required(appXR("gcp")),
		Steps:  []fntest.Step{{Name: "first", Fatal: `spec.parameters.clusterRef.name: Invalid value: "prod-cluster": Cluster "prod-cluster" runs on cloud "gcp", this AppEnvironment on "aws"`}},
	}
	scenarios["gcp/RefusesDatabaseWithoutPrivateServices"] = fntest.Scenario{
		Reason: "On GCP, an environment's database on a Cluster without private services access is refused at once, naming the Cluster's field to set, rather than left to its nested Database's refusal; without a database it runs.",
		XR:     appXR("gcp"),
		Extra: func() map[string][]fntest.Object {
			e := maps.Clone(required(appXR("gcp")))
			c := overlay.DeepCopy(e[clusterref.ForAppEnvironment.Requirement][0])
			fntest.Set("spec.parameters.network.privateServices", nil)(c)
			e[clusterref.ForAppEnvironment.Requirement] = []fntest.Object{c}
			return e
		}(),
		Steps: []fntest.Step{
			{Name: "first", Fatal: `spec.parameters.database: Invalid value: "prod-cluster": Cloud SQL joins Cluster "prod-cluster"'s network through private services access, which the Cluster does not compose: set spec.parameters.network.privateServices to true on Cluster "prod-cluster"`},
			{Name: "no database", Spec: fntest.Edit("spec.parameters.database", nil), Converge: true, Check: fntest.All(fntest.IsReady(true), fntest.Lacks("database"))},
		},
	}
	scenarios["gcp/RefusesBudgetOnClaim"] = fntest.Scenario{
		Reason: "A budget needs a namespaced AppEnvironment: the legacy Cluster composes no namespaced provider config for its WorkloadBudget.",
		XR:     legacyXR(fntest.Set("spec.parameters.budget", map[string]any{"limitUsd": 100.0})),
		Extra:  required(legacyXR()),
		Steps:  []fntest.Step{{Name: "first", Fatal: `spec.parameters.budget: Forbidden: a budget needs a namespaced AppEnvironment`}},
	}
	scenarios["gcp/Claim"] = fntest.Scenario{
		Reason: "The XR of a claim runs on the Cluster claim of its namespace and converges, with a cluster-scoped XDatabase.",
		XR:     legacyXR(),
		Extra:  required(legacyXR()),
		Steps: []fntest.Step{{Name: "converge", Converge: true, Check: fntest.All(fntest.IsReady(true),
			fntest.Field("database", "kind", "XDatabase"),
			fntest.Field("deployment", "spec.providerConfigRef.name", "legacy-prod-x7k2p"),
		)}},
	}
	// sibling is another AppEnvironment of the namespace, created at ts,
	// whose workload namespace is ns.
	sibling := func(name, ts, ns string) fntest.Object {
		return appXR("gcp", fntest.Set("metadata.name", name), fntest.Set("metadata.creationTimestamp", ts), fntest.Set("spec.parameters.namespace", ns),
			fntest.Set("spec.parameters.ingress.host", name+".prod.example.com"), fntest.Set("spec.parameters.bucket.name", "acme-"+name+"-uploads"))
	}
	withSiblings := func(sibs ...fntest.Object) map[string][]fntest.Object {
		e := required(appXR("gcp"))
		e[appenvironmentrun.RequirementSiblings] = sibs
		return e
	}
	me := fntest.Set("metadata.creationTimestamp", "2026-06-01T00:00:00Z")
	scenarios["gcp/NamespaceOwned"] = fntest.Scenario{
		Reason: "A namespace of a Cluster belongs to the oldest AppEnvironment that asks for it: a younger one is refused, naming the owner, rather than take it over (and delete it with itself).",
		XR:     appXR("gcp", me),
		Extra:  withSiblings(sibling("old-wiki", "2026-01-01T00:00:00Z", "wiki")),
		Steps:  []fntest.Step{{Name: "first", Fatal: `metadata.name: Forbidden: namespace "wiki" of Cluster "prod-cluster" belongs to AppEnvironment "old-wiki"`}},
	}
	scenarios["gcp/NamespaceOwnedByMe"] = fntest.Scenario{
		Reason: "The oldest owner keeps its namespace when a younger AppEnvironment asks for it too, and AppEnvironments in other namespaces of the Cluster do not matter.",
		XR:     appXR("gcp", me),
		Extra:  withSiblings(sibling("new-wiki", "2026-09-01T00:00:00Z", "wiki"), sibling("blog", "2026-01-01T00:00:00Z", "blog")),
		Steps:  []fntest.Step{converged},
	}
	scenarios["gcp/HostAndBucketOwned"] = fntest.Scenario{
		Reason: "A host or a bucket an older AppEnvironment of the plane has is refused, naming the owner: two environments publishing one host would take over each other's records and certificates, and two naming one bucket would share it.",
		XR:     appXR("gcp", me, withFrontend),
		Extra: withSiblings(
			appXR("gcp", fntest.Set("metadata.name", "shop"), fntest.Set("metadata.creationTimestamp", "2026-01-01T00:00:00Z"), fntest.Set("spec.parameters.namespace", "shop"),
				fntest.Set("spec.parameters.ingress.host", "www.prod.example.com"), fntest.Set("spec.parameters.bucket.name", "wiki-frontend")),
			appXR("gcp", fntest.Set("metadata.name", "later"), fntest.Set("metadata.creationTimestamp", "2026-09-01T00:00:00Z"), fntest.Set("spec.parameters.namespace", "later"))),
		Steps: []fntest.Step{{Name: "first", Fatal: `spec.parameters.frontend.host: Forbidden: host "www.prod.example.com" is AppEnvironment "shop"'s (spec.parameters.ingress.host)`,
			Check: fntest.FatalHas(`metadata.name: Forbidden: bucket "wiki-frontend" is AppEnvironment "shop"'s (spec.parameters.bucket.name)`)}},
	}
	fntest.RunAll(t, "AppEnvironment scenarios", run, envs, scenarios)
}

// legacyXR is the XR of a claim "AppEnvironment docs" in namespace team-a,
// on the legacy Cluster claim legacy-prod there.
func legacyXR(mutate ...func(fntest.Object)) fntest.Object {
	o := fntest.Object{
		"apiVersion": "legacy.platform.example.org/v1alpha1",
		"kind":       "XAppEnvironment",
		"metadata": map[string]any{
			"name": "docs-k2j4x",
			"labels": map[string]any{"cloud": "gcp", "planeId": "my-project-123", "planeType": "production",
				"crossplane.io/claim-name": "docs", "crossplane.io/claim-namespace": "team-a"},
		},
		"spec": map[string]any{"parameters": map[string]any{
			"clusterRef": map[string]any{"name": "legacy-prod"},
			"backend":    map[string]any{"image": "ghcr.io/acme/docs:1.0.0"},
			"database":   map[string]any{},
		}},
	}
	for _, m := range mutate {
		m(o)
	}
	return o
}
