package cluster_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/fleet"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
)

// Sentinels the fuzzer plants through forbidden inputs. None may ever reach
// a desired state that is not a Fatal: the checks look for the values
// themselves, independently of how the function detects them.
const (
	sentinelSecret  = "fuzz-s3cret-value" //nolint:gosec // a sentinel the fuzzer plants; the test asserts it never reaches desired state
	sentinelNumber  = 4242424242.5
	sentinelAccount = "fuzz-evil-account"
	sentinelName    = "fuzz-adopted-name"
	sentinelRepo    = "https://fuzz-evil.example.com/charts"
)

// FuzzRun renders an XR with the example environment through the whole
// cluster module, lets the providers create what it asks for, and then
// applies a sequence of operations between calls: environment edits and
// removals (layers, keys, private clusters, pools, charts, CIDRs, zones),
// forbidden overrides of either principal, planted plaintext credentials,
// planeType flips, imports of existing resources, an empty context
// environment, resources vanishing or turning not ready, and the providers
// acting. After every call it checks,
// independently of the function's own code:
//
//   - no withdrawal: unless the response is Fatal, every composed resource
//     observed before the call is still desired (no operation is a spec
//     change that removes anything);
//   - nothing forbidden lands: no desired resource holds a planted secret,
//     account, external name or chart repository;
//   - import protection holds: a resource observed as imported stays
//     marked imported, and never gets the Delete or "*" policy.
//
// It must never panic (RunFunction would recover a panic into a Fatal and
// hide it from the fuzzer, so this target calls the module directly). The
// seed corpus lives in testdata/fuzz/FuzzRun.
func FuzzRun(f *testing.F) {
	for _, ex := range []string{"gcp/cluster.yaml", "aws/cluster.yaml", "azure/cluster.yaml", "gcp/legacy.yaml", "aws/legacy.yaml"} {
		b, err := json.Marshal(fntest.MustLoad(filepath.Join(examples, ex))[0])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, []byte{})
		f.Add(b, []byte{1, 0, 15, 0, 2, 3, 15, 0, 3, 1, 8, 2, 10, 4, 9, 1, 14, 5, 13, 7, 16, 0, 17, 0, 15, 0})
		f.Add(b, []byte{12, 0, 6, 9, 7, 0, 5, 4, 0, 1, 18, 0, 0, 2, 11, 3, 10, 0, 10, 1, 10, 2, 10, 3, 10, 5})
		f.Add(b, []byte{19, 0, 15, 0, 10, 0, 20, 0, 8, 1, 17, 0, 15, 0, 19, 1, 10, 3, 20, 0, 8, 0, 1, 0, 15, 0})
	}
	f.Fuzz(func(t *testing.T, data, ops []byte) {
		var xr map[string]any
		if json.Unmarshal(data, &xr) != nil || xr == nil || len(ops) > 64 {
			return
		}
		w := &fntest.World{XR: xr, Envs: envs, Observed: map[string]fntest.Object{}}
		rsp := call(t, w)
		// Let the providers build the stack, as far as it goes.
		for round := 0; round < 12 && fntest.Fatal(rsp) == ""; round++ {
			w.Observed = fntest.ObserveAll(rsp, w.Observed)
			rsp = call(t, w)
		}
		for i := 0; i+1 < len(ops); i += 2 {
			mutate(w, rsp, ops[i], ops[i+1])
			rsp = call(t, w)
		}
	})
}

// call runs one reconcile of the world and checks the invariants.
func call(t testing.TB, w *fntest.World) *fnv1.RunFunctionResponse {
	t.Helper()
	ruled(t, w)
	req, err := w.Request().Proto()
	if err != nil {
		t.Skip("not a valid request:", err)
	}
	rsp := run(req)
	if fntest.Fatal(rsp) != "" {
		return rsp
	}
	desired := fntest.Desired(rsp)
	for _, name := range slices.Sorted(maps.Keys(w.Observed)) {
		obs := w.Observed[name]
		if annotation(obs, "platform.example.org/component") == "" {
			continue
		}
		d, ok := desired[name]
		if !ok && fntest.Rotated(name, w.Observed, desired) != "" {
			// An older generation of a node pool whose new one is Ready.
			continue
		}
		if !ok {
			t.Fatalf("WITHDRAWN: observed composed resource %q is no longer desired, and no spec change removed it", name)
		}
		if mode := annotation(obs, "platform.example.org/import-mode"); mode != "" {
			if annotation(d, "platform.example.org/import-mode") == "" {
				t.Fatalf("IMPORT WEAKENED: %q lost its import marker", name)
			}
			for _, p := range policiesOf(d) {
				if p == "*" || p == "Delete" {
					t.Fatalf("IMPORT WEAKENED: imported %q got management policy %q", name, p)
				}
			}
		}
	}
	for name, d := range desired {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, sentinel := range []string{sentinelSecret, strconv.FormatFloat(sentinelNumber, 'f', -1, 64), sentinelAccount, sentinelName, sentinelRepo} {
			if strings.Contains(s, sentinel) {
				t.Fatalf("FORBIDDEN: desired %q holds %q", name, sentinel)
			}
		}
	}
	return rsp
}

// mutate applies one operation to the world. None of them is a spec change
// that removes anything: only fleet-wide inputs, the providers' reports and
// overrides the function must refuse change.
func mutate(w *fntest.World, last *fnv1.RunFunctionResponse, op, arg byte) {
	names := slices.Sorted(maps.Keys(w.Observed))
	pick := func() string {
		if len(names) == 0 {
			return "cluster"
		}
		return names[int(arg)%len(names)]
	}
	switch op % 21 {
	case 0:
		if len(w.Envs) > 0 {
			i := int(arg) % len(w.Envs)
			w.Envs = append(slices.Clip(w.Envs[:i]), w.Envs[i+1:]...)
		}
	case 1:
		fntest.EnvEdit("cluster-platform-baseline", "privateCluster", false)(w)
	case 2:
		fntest.EnvEdit("cluster-platform-baseline", "pools", map[string]any{fmt.Sprintf("p%d", arg%4): map[string]any{"size": "small"}})(w)
	case 3:
		fntest.EnvEdit("cluster-platform-baseline", "charts."+chartOf(arg)+".disabled", true)(w)
	case 4:
		fntest.EnvEdit("cluster-platform-baseline", "monitoring.enabled", false)(w)
	case 5:
		keys := []string{"sizes", "charts", "nodeDefaults", "network", "pools", "gcp", "aws", "azure", "prices", "monitoring", "privateCluster", "version"}
		fntest.EnvWithout(keys[int(arg)%len(keys)])(w)
	case 6:
		fntest.EnvEdit("cluster-platform-baseline", "network.cidr", fmt.Sprintf("10.%d.0.0/16", arg))(w)
	case 7:
		fntest.EnvEdit("cluster-platform-cloud-aws", "aws.zones.us-east-1", []any{"us-east-1c", "us-east-1b", "us-east-1a"})(w)
	case 8:
		// The low bit picks the shape, the rest the resource.
		shapes := []map[string]any{
			{"metadata": map[string]any{"annotations": map[string]any{"crossplane.io/external-name": sentinelName}}},
			{"spec": map[string]any{"managementPolicies": []any{"*"}, "deletionPolicy": "Delete"}},
		}
		target := "cluster"
		if len(names) > 0 {
			target = names[int(arg/2)%len(names)]
		}
		envOverride(target, shapes[arg%2])(w)
	case 9:
		envOverride("release-"+chartOf(arg), forProvider(map[string]any{"values": plantSecret(arg)}))(w)
	case 10:
		forbidden := []map[string]any{
			spec(map[string]any{"managementPolicies": []any{"*"}}),
			spec(map[string]any{"providerConfigRef": map[string]any{"name": sentinelAccount}}),
			spec(map[string]any{"writeConnectionSecretToRef": map[string]any{"name": "k", "namespace": sentinelAccount}}),
			annotations(map[string]any{"crossplane.io/external-name": sentinelName, "platform.example.org/import-mode": nil}),
			forProvider(map[string]any{"chart": map[string]any{"repository": sentinelRepo}}),
			spec(map[string]any{"credentials": map[string]any{"secretRef": map[string]any{"namespace": sentinelAccount}}}),
			forProvider(map[string]any{"networkSelector": map[string]any{"matchLabels": map[string]any{"team": sentinelAccount}}}),
		}
		target := pick()
		if int(arg)%len(forbidden) == 4 {
			// A chart source means something only on a Helm release:
			// aim it at one (on another kind it is not a field at all).
			target = "release-" + chartOf(arg)
		}
		override(target, nth(forbidden, arg))(w)
	case 11:
		fntest.Set("spec.parameters.charts", map[string]any{chartOf(arg): map[string]any{"values": plantSecret(arg)}})(w.XR)
	case 12:
		fntest.Set("metadata.labels.planeType", nth([]string{"production", "fuzz", "lab"}, arg))(w.XR)
	case 13:
		w.Observed = maps.Clone(w.Observed)
		delete(w.Observed, pick())
	case 14:
		if len(names) > 0 {
			fntest.ObservedCondition(pick(), "Ready", "False", "fuzzed")(w)
		}
	case 15:
		if fntest.Fatal(last) == "" {
			w.Observed = fntest.ObserveAll(last, w.Observed)
		}
	case 16:
		w.Envs = nil
		w.Context = fntest.Object{envcfg.ContextKey: map[string]any{"apiVersion": "internal.crossplane.io/v1alpha1", "kind": "Environment"}}
	case 17:
		w.Envs, w.Context = envs, nil
	case 19:
		// Import a resource under the name it already has in the cloud,
		// observe-only or managed: an XR change that removes nothing.
		name := pick()
		if ext := annotation(w.Observed[name], "crossplane.io/external-name"); ext != "" {
			fntest.Set("spec.parameters.import", map[string]any{
				"enabled": true, "mode": nth([]string{"observe", "manage"}, arg), "resources": map[string]any{name: ext},
			})(w.XR)
		}
	case 20:
		// The XR's author withdraws their overrides and chart values.
		fntest.Set("spec.parameters.overrides", nil)(w.XR)
		fntest.Set("spec.parameters.charts", nil)(w.XR)
	case 18:
		// The XR's status as Crossplane would store it from the last
		// response, so that the layers it used are recorded.
		if st, ok := last.GetDesired().GetComposite().GetResource().AsMap()["status"]; ok {
			w.XR = overlay.DeepCopy(w.XR)
			w.XR["status"] = st
		}
	}
}

// nth picks the item a fuzzed byte selects.
func nth[T any](items []T, arg byte) T { return items[int(arg)%len(items)] }

// chartOf picks one of the built-in charts.
func chartOf(arg byte) string {
	switch arg % 3 {
	case 0:
		return "cert-manager"
	case 1:
		return "ingress-nginx"
	default:
		return "kube-prometheus-stack"
	}
}

// plantSecret returns Helm values that hold the sentinel credential in one
// of the shapes a plaintext check must catch.
func plantSecret(arg byte) map[string]any {
	shapes := []map[string]any{
		{"adminPassword": sentinelSecret},
		{"auth": map[string]any{"password": sentinelNumber}},
		{"env": []any{map[string]any{"name": "DB_PASSWORD", "value": sentinelSecret}}},
		{"oauth": map[string]any{"clientSecret": sentinelSecret}},
		{"apiToken": sentinelSecret},
		{"extraObjects": []any{map[string]any{"kind": "Secret", "stringData": map[string]any{"x": sentinelSecret}}}},
	}
	return nth(shapes, arg)
}

func annotation(o fntest.Object, key string) string {
	meta, _ := o["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	s, _ := ann[key].(string)
	return s
}

func policiesOf(o fntest.Object) []string {
	spec, _ := o["spec"].(map[string]any)
	l, _ := spec["managementPolicies"].([]any)
	out := make([]string, 0, len(l))
	for _, p := range l {
		s, _ := p.(string)
		out = append(out, s)
	}
	return out
}

// rulingTime is the fleet controller's clock in these tests.
var rulingTime = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// requirementRuling is the requirement of the fleet controller's ruling,
// written out here apart from the function's constant.
const requirementRuling = "rollout-ruling"

// ruled stands in for the fleet controller and for Crossplane, as a
// control plane running both would deliver the ruling to the function.
// A test puts the fleet a control plane holds in w.Extra under names
// starting with "rollout-" or "xrollout-" (Clusters and XClusters, any
// grouping); ruled takes them out, renders the XR once as Crossplane's
// first call of a reconcile would (no ruling delivered) to read the
// status.rollout it reports, writes that to the XR as the API server
// would hold it, rules on the whole fleet and the XR with fleet.Rule (the
// controller's own code) at rulingTime, and delivers the XR's ruling under
// the function's requirement: none when the controller has none for it,
// as Crossplane delivers a ConfigMap that does not exist. A world with
// no fleet in w.Extra is left alone.
func ruled(t testing.TB, w *fntest.World) {
	t.Helper()
	var fleetObjs []map[string]any
	for _, k := range slices.Sorted(maps.Keys(w.Extra)) {
		if k == requirementRuling || !strings.HasPrefix(strings.TrimPrefix(k, "x"), "rollout-") {
			continue
		}
		fleetObjs = append(fleetObjs, w.Extra[k]...)
		delete(w.Extra, k)
	}
	if fleetObjs == nil {
		return
	}
	delete(w.Extra, requirementRuling)
	req, err := w.Request().Proto()
	if err != nil {
		t.Skip("not a valid request:", err)
	}
	first := run(req)
	self := overlay.DeepCopy(w.XR)
	if r := rolloutStatus(first); r != nil {
		st, _ := self["status"].(map[string]any)
		if st == nil {
			st = map[string]any{}
			self["status"] = st
		}
		st["rollout"] = r
	}
	configs := append(make([]map[string]any, 0, len(w.Envs)), w.Envs...)
	rulings, err := fleet.Rule(fleet.BaselineOf(configs), append(fleetObjs, self), rulingTime)
	if err != nil {
		t.Fatalf("the fleet controller rules on nothing: %v", err)
	}
	ref := rollout.RefOf(self)
	w.Extra[requirementRuling] = []fntest.Object{}
	for _, r := range rulings {
		if r.Cluster == ref {
			w.Extra[requirementRuling] = []fntest.Object{r.Object(fleet.BaselineOf(configs).Settings.RulingNamespace())}
		}
	}
}
