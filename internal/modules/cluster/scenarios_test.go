package cluster_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// world is everything a reconcile sees: the XR, the environment, what the
// providers report and what earlier pipeline steps desire.
type world struct {
	xr          fntest.Object
	envs        []fntest.Object
	fetched     bool
	context     fntest.Object
	observed    map[string]fntest.Object
	connections map[string]map[string][]byte
	desired     map[string]fntest.Object
	spend       []fntest.Object
}

func (w *world) request() fntest.Request {
	return fntest.Request{
		XR:                 w.xr,
		EnvironmentConfigs: w.envs,
		Fetched:            w.fetched,
		Context:            w.context,
		Observed:           w.observed,
		Connections:        w.connections,
		Desired:            w.desired,
		Spend:              w.spend,
	}
}

// step is one reconcile of a scenario.
type step struct {
	name string
	// spec is the user's change to the XR before this reconcile.
	spec func(w *world)
	// world is any other change before this reconcile: the environment,
	// the providers' reports, the pipeline context.
	world func(w *world)
	// removes names the resources whose removal the spec change of this
	// step asks for; a removed resource's Usages may go with it.
	removes []string
	// fatal, when set, is a part of the Fatal result the step must give.
	fatal string
	// check asserts more about the response.
	check func(t *testing.T, rsp *fnv1.RunFunctionResponse)
	// hold keeps the providers from acting on this reconcile's desired state.
	hold bool
	// converge repeats the step, letting the providers act after each
	// reconcile, until everything desired is ready.
	converge bool
}

// scenario is a sequence of reconciles of one XR.
type scenario struct {
	reason string
	xr     fntest.Object
	steps  []step
}

// removedBy reports whether the spec change that removes the named
// resources accounts for the removal of name: the resource itself or a
// Usage it takes part in.
func removedBy(name string, removes []string) bool {
	for _, r := range removes {
		if name == r || strings.HasPrefix(name, r+"-uses-") || strings.HasSuffix(name, "-uses-"+r) {
			return true
		}
	}
	return false
}

// checkInvariant is the safety invariant checked after every reconcile: a
// composed resource that was observed before the reconcile is still desired,
// unless the spec change of this step removed it, or the response is Fatal
// (then Crossplane changes nothing).
func checkInvariant(t *testing.T, where string, before map[string]fntest.Object, rsp *fnv1.RunFunctionResponse, removes []string) {
	t.Helper()
	if fntest.Fatal(rsp) != "" {
		return
	}
	desired := rsp.GetDesired().GetResources()
	for _, name := range slices.Sorted(maps.Keys(before)) {
		if _, ok := desired[name]; ok || removedBy(name, removes) {
			continue
		}
		t.Errorf("%s: INVARIANT VIOLATED: observed composed resource %q is no longer desired, and the spec change did not remove it", where, name)
	}
	for _, r := range removes {
		if _, ok := desired[r]; ok {
			t.Errorf("%s: %q is still desired after the spec removed it", where, r)
		}
	}
}

func (s scenario) run(t *testing.T) int {
	t.Helper()
	w := &world{xr: overlay.DeepCopy(s.xr), envs: envs, observed: map[string]fntest.Object{}}
	calls := 0
	for i, st := range s.steps {
		where := fmt.Sprintf("step %d (%s)", i+1, st.name)
		if st.spec != nil {
			st.spec(w)
		}
		if st.world != nil {
			st.world(w)
		}
		for round := 1; ; round++ {
			before := w.observed
			req, err := w.request().Proto()
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			rsp := run(req)
			calls++
			checkInvariant(t, where, before, rsp, st.removes)
			msg := fntest.Fatal(rsp)
			switch {
			case st.fatal == "" && msg != "":
				t.Fatalf("%s: unexpected Fatal: %s", where, msg)
			case st.fatal != "" && !strings.Contains(msg, st.fatal):
				t.Fatalf("%s: want a Fatal containing %q, got %q", where, st.fatal, msg)
			}
			if !st.converge && st.check != nil {
				st.check(t, rsp)
			}
			if msg == "" && !st.hold {
				w.observed = fntest.ObserveAll(rsp, w.observed)
				w.connections = fntest.Connections(rsp)
			}
			if !st.converge || fntest.AllReady(rsp) && len(rsp.GetDesired().GetResources()) == len(before) {
				if st.converge && st.check != nil {
					st.check(t, rsp)
				}
				break
			}
			if round > 30 {
				t.Fatalf("%s: did not converge in 30 reconciles", where)
			}
		}
	}
	return calls
}

// Checks used by the scenarios.

func desires(names ...string) func(*testing.T, *fnv1.RunFunctionResponse) {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		for _, n := range names {
			if _, ok := rsp.GetDesired().GetResources()[n]; !ok {
				t.Errorf("%q is not desired; desired: %v", n, slices.Sorted(maps.Keys(rsp.GetDesired().GetResources())))
			}
		}
	}
}

func lacks(names ...string) func(*testing.T, *fnv1.RunFunctionResponse) {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		for _, n := range names {
			if _, ok := rsp.GetDesired().GetResources()[n]; ok {
				t.Errorf("%q is desired, want it absent", n)
			}
		}
	}
}

func condition(typ, status, reason string) func(*testing.T, *fnv1.RunFunctionResponse) {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		for _, c := range rsp.GetConditions() {
			if c.GetType() != typ {
				continue
			}
			if got := strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_"); got != status || c.GetReason() != reason {
				t.Errorf("condition %s is %s/%s (%s), want %s/%s", typ, got, c.GetReason(), c.GetMessage(), status, reason)
			}
			return
		}
		t.Errorf("no condition %s", typ)
	}
}

func warns(part string) func(*testing.T, *fnv1.RunFunctionResponse) {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
		ws, _ := st["warnings"].([]any)
		for _, w := range ws {
			if strings.Contains(w.(string), part) {
				return
			}
		}
		t.Errorf("no warning containing %q", part)
	}
}

func field(name, path string, want any) func(*testing.T, *fnv1.RunFunctionResponse) {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		r, ok := rsp.GetDesired().GetResources()[name]
		if !ok {
			t.Errorf("%q is not desired", name)
			return
		}
		var cur any = r.GetResource().AsMap()
		for _, p := range strings.Split(path, ".") {
			m, _ := cur.(map[string]any)
			cur = m[p]
		}
		if fmt.Sprint(cur) != fmt.Sprint(want) {
			t.Errorf("%s %s = %v, want %v", name, path, cur, want)
		}
	}
}

func ready(want bool) func(*testing.T, *fnv1.RunFunctionResponse) {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		if got := fntest.AllReady(rsp); got != want {
			t.Errorf("everything ready = %t, want %t", got, want)
		}
	}
}

func ttl(want time.Duration) func(*testing.T, *fnv1.RunFunctionResponse) {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		if got := rsp.GetMeta().GetTtl().AsDuration(); got != want {
			t.Errorf("TTL %s, want %s", got, want)
		}
	}
}

func requires(t *testing.T, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	if rsp.GetRequirements().GetResources()[envcfg.FallbackRequirementName] == nil {
		t.Errorf("the function did not ask for the EnvironmentConfigs")
	}
}

func all(checks ...func(*testing.T, *fnv1.RunFunctionResponse)) func(*testing.T, *fnv1.RunFunctionResponse) {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		for _, c := range checks {
			c(t, rsp)
		}
	}
}

// Changes used by the scenarios.

func edit(path string, v any) func(*world) {
	return func(w *world) { fntest.Set(path, v)(w.xr) }
}

func observedCondition(name, typ, status, message string) func(*world) {
	return func(w *world) {
		o := overlay.DeepCopy(w.observed[name])
		if o == nil {
			return
		}
		st, _ := o["status"].(map[string]any)
		if st == nil {
			st = map[string]any{}
			o["status"] = st
		}
		conds := []any{map[string]any{"type": typ, "status": status, "reason": "Simulated", "message": message}}
		prev, _ := st["conditions"].([]any)
		for _, c := range prev {
			if c.(map[string]any)["type"] != typ {
				conds = append(conds, c)
			}
		}
		st["conditions"] = conds
		w.observed = maps.Clone(w.observed)
		w.observed[name] = o
	}
}

func vanish(name string) func(*world) {
	return func(w *world) {
		w.observed = maps.Clone(w.observed)
		delete(w.observed, name)
	}
}

// envWithout returns the example EnvironmentConfigs with a key removed from
// every config.
func envWithout(key string) func(*world) {
	return func(w *world) {
		var out []fntest.Object
		for _, e := range envs {
			e = overlay.DeepCopy(e)
			delete(e["data"].(map[string]any), key)
			out = append(out, e)
		}
		w.envs = out
	}
}

// envEdit sets a dotted path of the data of the named example
// EnvironmentConfig; nil deletes it.
func envEdit(config, path string, v any) func(*world) {
	return func(w *world) {
		out := make([]fntest.Object, 0, len(w.envs))
		for _, e := range w.envs {
			e = overlay.DeepCopy(e)
			if e["metadata"].(map[string]any)["name"] == config {
				fntest.Set("data."+path, v)(e)
			}
			out = append(out, e)
		}
		w.envs = out
	}
}

// envDrop removes the named EnvironmentConfig.
func envDrop(config string) func(*world) {
	return func(w *world) {
		out := make([]fntest.Object, 0, len(w.envs))
		for _, e := range w.envs {
			if e["metadata"].(map[string]any)["name"] != config {
				out = append(out, e)
			}
		}
		w.envs = out
	}
}

// spendUSD sets the month-to-date spend the budget's spend ConfigMap holds.
func spendUSD(v string) func(*world) {
	return func(w *world) { w.spend = []fntest.Object{fntest.SpendConfigMap("team-edge", "spend", v)} }
}

func converge(name string) step { return step{name: name, converge: true} }

// converged is the scenario prefix that brings the XR's stack up.
var converged = step{name: "converge", converge: true, check: all(ready(true), ttl(ttlReady))}

func TestScenarios(t *testing.T) {
	scenarios := map[string]scenario{
		"FirstCreate": {
			reason: "The first reconcile of a new XR composes only what needs nothing else, and says the XR is not ready.",
			xr:     fntest.GCPXR(),
			steps: []step{{name: "first reconcile", hold: true, check: all(
				desires("network", "node-service-account", "public-dns-zone"),
				lacks("subnet", "cluster", "nodepool-general", "release-cert-manager"),
				condition("ClusterReady", "FALSE", "Waiting"), ready(false), ttl(ttlConverging),
			)}},
		},
		"ConvergeStepByStep": {
			reason: "Each reconcile composes what became possible; the stack converges and the TTL lengthens once ready.",
			xr:     fntest.GCPXR(),
			steps: []step{
				{name: "network first", check: desires("network")},
				{name: "subnet once the network is ready", check: all(desires("subnet", "router"), lacks("cluster"))},
				{name: "cluster once the subnet is ready", check: all(desires("cluster", "nat"), lacks("nodepool-general"))},
				{name: "pools once the cluster is ready", check: all(desires("nodepool-general", "nodepool-gpu"), lacks("helm-provider-config"))},
				converged,
				{name: "steady state", check: all(ready(true), ttl(ttlReady), condition("AddonsReady", "TRUE", "Available"))},
			},
		},
		"ConvergeAWS": {
			reason: "An EKS stack converges.",
			xr:     fntest.AWSXR(),
			steps:  []step{converged},
		},
		"ConvergeAzure": {
			reason: "An AKS stack converges; the role assignment waits for the identity's principal ID.",
			xr:     fntest.AzureXR(),
			steps: []step{
				{name: "first", hold: true, check: all(desires("resource-group"), lacks("network-role-assignment"))},
				converged,
			},
		},
		"EnvironmentLost": {
			reason: "With the EnvironmentConfigs gone from context and requirements, the function asks for them and keeps everything.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "no environment", world: func(w *world) { w.envs = nil }, hold: true, check: all(requires, desires("cluster", "nodepool-gpu", "release-cert-manager"))},
				{name: "fetched, still none", world: func(w *world) { w.envs = []fntest.Object{}; w.fetched = true }, fatal: "no EnvironmentConfig found"},
				{name: "restored", world: func(w *world) { w.envs = envs; w.fetched = false }, check: ready(true)},
			},
		},
		"EnvironmentKeyRemoved": {
			reason: "A removed environment key with a default changes nothing; one without (the size classes) is a Fatal, not a deletion.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "monitoring key removed", world: envWithout("monitoring"), check: desires("release-kube-prometheus-stack")},
				{name: "size classes removed", world: envWithout("sizes"), fatal: "size classes"},
			},
		},
		"CloudLabelFlipped": {
			reason: "Flipping the cloud label of a composed XR is a Fatal; flipping it back carries on.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "gcp to aws", spec: edit("metadata.labels.cloud", "aws"), fatal: "cloud is immutable"},
				{name: "gcp to azure", spec: edit("metadata.labels.cloud", "azure"), fatal: "cloud is immutable"},
				{name: "back to gcp", spec: edit("metadata.labels.cloud", "gcp"), check: ready(true)},
			},
		},
		"LocationChanged": {
			reason: "Moving a composed cluster to another region is refused: providers cannot move resources.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "new region", spec: edit("spec.parameters.location", "europe-west1"), fatal: "cannot change once it exists"},
				{name: "restored", spec: edit("spec.parameters.location", "europe-west4"), check: ready(true)},
			},
		},
		"ClusterNameChanged": {
			reason: "A new clusterName label would rename every cloud resource: Fatal.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "renamed", spec: edit("metadata.labels.clusterName", "edge-two"), fatal: "cloud names are immutable"},
			},
		},
		"PoolAdded": {
			reason: "A new pool is added; nothing else changes.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "add pool", spec: edit("spec.parameters.pools.web", map[string]any{"size": "medium", "minNodes": 1.0, "maxNodes": 2.0}), check: desires("nodepool-web")},
				converge("pool comes up"),
			},
		},
		"PoolResized": {
			reason: "A resized pool is updated in place.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "resize", spec: edit("spec.parameters.pools.general.maxNodes", 9.0), check: all(
					field("nodepool-general", "spec.forProvider.autoscaling.maxNodeCount", 9),
					field("nodepool-general", "metadata.annotations.crossplane\\.io/external-name", nil),
				)},
			},
		},
		"PoolRemoved": {
			reason: "Removing a pool removes that pool and its Usages only.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "remove gpu", spec: edit("spec.parameters.pools.gpu", nil), removes: []string{"nodepool-gpu"}, check: desires("nodepool-general", "cluster")},
				converge("settles"),
			},
		},
		"AWSPoolRemoved": {
			reason: "On AWS, removing a pool removes its node group only; the add-ons that waited for it stay.",
			xr:     fntest.AWSXR(),
			steps: []step{
				converged,
				{name: "remove gpu", spec: edit("spec.parameters.pools.gpu", nil), removes: []string{"nodepool-gpu"}, check: desires("addon-coredns", "nodepool-general")},
			},
		},
		"DomainRemoved": {
			reason: "Removing the domain keeps the zones (with a warning) until createDnsZones is false.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "domain removed", spec: edit("spec.parameters.domain", nil), check: all(desires("public-dns-zone", "private-dns-zone"), warns("holding composed resource \"public-dns-zone\""), condition("RemovalsSettled", "FALSE", "AwaitingOwner"))},
				{name: "zones off", spec: edit("spec.parameters.createDnsZones", false), removes: []string{"public-dns-zone", "private-dns-zone"}, check: condition("DnsReady", "TRUE", "NotRequested")},
			},
		},
		"PrivateClusterToggled": {
			reason: "Making the cluster public removes the NAT and the private zone; making it private again brings them back.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "public", spec: edit("spec.parameters.privateCluster", false), removes: []string{"router", "nat", "private-dns-zone"}, check: desires("cluster", "nodepool-gpu")},
				converge("settles"),
				{name: "private again", spec: edit("spec.parameters.privateCluster", true), check: desires("router")},
				converge("settles"),
			},
		},
		"AzurePrivateToggled": {
			reason: "On Azure, making the cluster public removes the NAT gateway, its IP and association, and the private zone.",
			xr:     fntest.AzureXR(),
			steps: []step{
				converged,
				{name: "public", spec: edit("spec.parameters.privateCluster", false), removes: []string{"nat", "nat-public-ip", "nat-subnet-association", "private-dns-zone", "private-dns-zone-link"}},
			},
		},
		"ClusterNotReadyForOneCall": {
			reason: "A cluster that turns not ready keeps all its dependents; the XR reports it.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "cluster not ready", world: observedCondition("cluster", "Ready", "False", "upgrading"), hold: true, check: all(
					desires("nodepool-general", "helm-provider-config", "release-ingress-nginx"),
					condition("ClusterReady", "FALSE", "Creating"), ready(false), ttl(ttlConverging),
				)},
				converge("recovers"),
			},
		},
		"ClusterDisappearsForOneCall": {
			reason: "A cluster missing from the observed state for one reconcile is desired again, and so is everything that depends on it.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "cluster gone", world: vanish("cluster"), hold: true, check: desires("cluster", "nodepool-general", "nodepool-gpu", "kubernetes-provider-config")},
				converge("recovers"),
			},
		},
		"ProviderSyncedFalse": {
			reason: "A provider that cannot reconcile is reported in the condition with its message; nothing is dropped.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "synced false", world: observedCondition("nodepool-gpu", "Synced", "False", "quota exceeded for GPUS_ALL_REGIONS"), hold: true, check: all(
					condition("NodePoolsReady", "FALSE", "ReconcileError"), desires("nodepool-gpu"),
				)},
			},
		},
		"OverrideBreaksRequiredField": {
			reason: "An override that removes a required field is a Fatal; dropping it carries on.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "bad override", spec: edit("spec.parameters.overrides", map[string]any{"cluster": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"location": nil}}}}), fatal: "removes spec.forProvider.location"},
				{name: "override removed", spec: edit("spec.parameters.overrides", nil), check: ready(true)},
			},
		},
		"DuplicatePoolNames": {
			reason: "Two pools that normalise to one name are a Fatal, never two resources fighting over one name.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "duplicate", spec: edit("spec.parameters.pools.General", map[string]any{"size": "small"}), fatal: "both normalise to the name"},
			},
		},
		"XRDeleted": {
			reason: "While the XR is being deleted nothing new is composed and nothing existing is dropped.",
			xr:     fntest.GCPXR(),
			steps: []step{
				{name: "partly up", hold: false, check: desires("network")},
				{name: "deleting", world: func(w *world) { fntest.Set("metadata.deletionTimestamp", "2026-11-21T10:00:00Z")(w.xr) }, hold: true, check: all(desires("network"), lacks("cluster"))},
			},
		},
		"ImportObserveManageRelease": {
			reason: "An imported cluster is read-only, then managed without deletion, stays undeletable when import is off, and is released on request.",
			xr: fntest.GCPXR(fntest.Set("spec.parameters.import", map[string]any{
				"enabled": true, "mode": "observe", "resources": map[string]any{"cluster": "edge"},
			})),
			steps: []step{
				converged,
				{name: "observe", check: field("cluster", "spec.managementPolicies", []any{"Observe"})},
				{name: "manage", spec: edit("spec.parameters.import.mode", "manage"), check: field("cluster", "spec.managementPolicies", []any{"Observe", "Create", "Update", "LateInitialize"})},
				{name: "back to observe", spec: edit("spec.parameters.import.mode", "observe"), check: field("cluster", "spec.managementPolicies", []any{"Observe"})},
				{name: "import off", spec: edit("spec.parameters.import", nil), check: field("cluster", "spec.managementPolicies", []any{"Observe", "Create", "Update", "LateInitialize"})},
				{name: "released", spec: edit("spec.parameters.import", map[string]any{"release": true}), check: field("cluster", "spec.managementPolicies", nil)},
			},
		},
		"ImportOnly": {
			reason: "import.only composes just the imported resources, on AWS too.",
			xr: fntest.AWSXR(fntest.Set("spec.parameters.import", map[string]any{
				"enabled": true, "only": true, "resources": map[string]any{"network": "vpc-0123456789abcdef0", "public-dns-zone": "Z0123456789"},
			})),
			steps: []step{
				{name: "first", check: all(desires("network", "public-dns-zone"), lacks("cluster", "subnet-private-a"))},
				converge("settles"),
			},
		},
		"EarlierStepPassedThrough": {
			reason: "What an earlier pipeline step desires passes through every reconcile untouched.",
			xr:     fntest.GCPXR(),
			steps: []step{
				{name: "with an earlier step", world: func(w *world) {
					w.desired = map[string]fntest.Object{"audit-config": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "audit"}, "data": map[string]any{"level": "full"}}}
				}, check: field("audit-config", "data.level", "full")},
				converged,
				{name: "still there", check: field("audit-config", "data.level", "full")},
			},
		},
		"ChartDisabled": {
			reason: "Disabling a chart removes its release and nothing else.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "disable ingress", spec: edit("spec.parameters.charts", map[string]any{"ingress-nginx": map[string]any{"disabled": true}}), removes: []string{"release-ingress-nginx"}},
			},
		},
		"EnvironmentRoleRemoved": {
			reason: "A node role dropped from the environment (not the spec) is kept, with a warning.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "roles shrink", world: func(w *world) {
					var out []fntest.Object
					for _, e := range envs {
						e = overlay.DeepCopy(e)
						if g, ok := e["data"].(map[string]any)["gcp"].(map[string]any); ok {
							g["nodeServiceAccountRoles"] = []any{"roles/container.defaultNodeServiceAccount"}
						}
						out = append(out, e)
					}
					w.envs = out
				}, check: all(desires("node-iam-artifactregistry-reader"), warns("holding composed resource \"node-iam-artifactregistry-reader\""))},
			},
		},
		"WarningsReportedOnce": {
			reason: "A warning that persists is an event once; the status lists it.",
			xr:     fntest.GCPXR(),
			steps: []step{
				{name: "first", world: envEdit("cluster-platform-baseline", "overrides", map[string]any{"no-such-resource": map[string]any{}}), check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
					if n := countWarnings(rsp); n != 1 {
						t.Errorf("got %d Warning results, want 1", n)
					}
				}},
				{name: "second, with the status of the first", world: func(w *world) {
					fntest.Set("status.warnings", []any{"environment overrides.no-such-resource matches no composed resource; known names: cluster, helm-provider-config, kubernetes-provider-config, nat, network, node-iam-artifactregistry-reader, node-iam-container-defaultnodeserviceaccount, node-service-account, nodepool-general, nodepool-gpu, private-dns-zone, public-dns-zone, release-cert-manager, release-ingress-nginx, release-kube-prometheus-stack, router, subnet"})(w.xr)
				}, check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
					if n := countWarnings(rsp); n != 0 {
						t.Errorf("got %d Warning results for a warning the status already lists, want 0", n)
					}
				}},
			},
		},
		"BudgetPausedAndUnpaused": {
			reason: "An exhausted budget with enforcement holds the pools at their floor without removing anything; spend back under the limit, or deleting the XR, releases them.",
			xr: fntest.AzureXR(fntest.Set("spec.parameters.budget", map[string]any{
				"limitUsd": 1000.0, "enforcement": "enabled",
				"spendRef": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "spend", "fieldPath": "data.spentUsd"},
			})),
			steps: []step{
				{name: "converge within budget", world: spendUSD("100"), converge: true, check: field("nodepool-general", "spec.forProvider.maxCount", 4)},
				{name: "budget exhausted", world: spendUSD("1000"), check: all(
					field("nodepool-general", "spec.forProvider.maxCount", 2), field("nodepool-general", "spec.forProvider.minCount", 2),
					field("nodepool-gpu", "spec.forProvider.maxCount", 1), field("nodepool-gpu", "spec.forProvider.minCount", 0),
					condition("BudgetOK", "FALSE", "BudgetExhausted"),
				)},
				{name: "spend back under", world: spendUSD("10"), check: all(field("nodepool-general", "spec.forProvider.maxCount", 4), condition("BudgetOK", "TRUE", "WithinBudget"))},
				{name: "exhausted again", world: spendUSD("5000"), check: field("nodepool-general", "spec.forProvider.maxCount", 2)},
				{name: "XR deleted", world: func(w *world) { fntest.Set("metadata.deletionTimestamp", "2026-11-21T10:00:00Z")(w.xr) }, hold: true, check: field("nodepool-general", "spec.forProvider.maxCount", 4)},
			},
		},
		"EventsOnTransitionsOnly": {
			reason: "Conditions that did not change emit no events.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "same conditions", world: func(w *world) {
					conds := []any{}
					for _, typ := range []string{"NetworkReady", "ClusterReady", "NodePoolsReady", "AddonsReady", "DnsReady"} {
						conds = append(conds, map[string]any{"type": typ, "status": "True", "reason": "Available"})
					}
					conds = append(conds, map[string]any{"type": "RemovalsSettled", "status": "True", "reason": "NothingHeld"})
					fntest.Set("status.conditions", conds)(w.xr)
				}, check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
					for _, r := range rsp.GetResults() {
						if r.GetSeverity() == fnv1.Severity_SEVERITY_NORMAL {
							t.Errorf("unexpected event on a steady state: %s", r.GetMessage())
						}
					}
				}},
			},
		},
	}
	runAll(t, "scenarios", scenarios)
}

// runAll runs every scenario as a subtest and logs how many reconciles the
// invariant was checked after.
func runAll(t *testing.T, what string, scenarios map[string]scenario) {
	t.Helper()
	calls := 0
	for name, s := range scenarios {
		t.Run(name, func(t *testing.T) {
			t.Log(s.reason)
			calls += s.run(t)
		})
	}
	t.Logf("%d %s, %d reconciles; invariant checked after each: an observed composed resource stays desired unless the step's spec change removed it, or the response is Fatal", len(scenarios), what, calls)
}

func countWarnings(rsp *fnv1.RunFunctionResponse) int {
	n := 0
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING {
			n++
		}
	}
	return n
}
