package registry

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// The test kinds play roles whose deletion order matters (UsageRules), so
// that the cluster's edge to the network gets a Usage.
var (
	testNetworkKind = &ResourceKind{Kind: "Net", Namespaced: "net.test.m.example.org/v1", Cluster: "net.test.example.org/v2", Provider: "test", Required: []string{"spec.forProvider.region"}, Roles: ComputeIdentity}
	testClusterKind = &ResourceKind{Kind: "K8s", Namespaced: "k8s.test.m.example.org/v1", Cluster: "k8s.test.example.org/v1", Provider: "test", Roles: Compute}
)

// testCloud implements two components: a network of one resource and a
// cluster that depends on it.
func testCloud() *Cloud {
	c := &Cloud{Name: "test"}
	Implement(c, func(_ *Context, _ cluster.Network) ([]*Resource, error) {
		return []*Resource{{
			Name: "network", Kind: testNetworkKind, ExternalName: "net-1",
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{"region": "r1", "tags": []any{"a"}}}},
		}}, nil
	})
	Implement(c, func(ctx *Context, _ cluster.Cluster) ([]*Resource, error) {
		return []*Resource{{
			Name: ClusterResource, Kind: testClusterKind,
			Body:      object.Object{"spec": map[string]any{"forProvider": map[string]any{"networkSelector": ctx.Selector("network")}}},
			DependsOn: []string{"network"},
		}}, nil
	})
	return c
}

// composite is an XR named x of the test cloud in the supplied scope, with
// the supplied shared parameters.
func composite(scope xr.Scope, x xr.Composite) *xr.Composite {
	x.Name, x.Cloud, x.Scope = "x", "test", scope
	if scope == xr.Namespaced {
		x.Namespace = "ns"
	}
	return &x
}

// observedNamed is an observed resource of that name, with annotations.
func observedNamed(name string, annotations map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(map[string]any{"metadata": map[string]any{"name": name, "annotations": annotations}})
	if err != nil {
		panic(err)
	}
	return s
}

// existing are the network and the cluster of the test cloud as observed
// once they exist.
func existing() map[string]*structpb.Struct {
	return map[string]*structpb.Struct{
		"network": observedNamed("x-net", map[string]any{AnnotationExternalName: "net-1"}),
		"cluster": observedNamed("x-k8s", nil),
	}
}

func observedWith(annotations map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		panic(err)
	}
	return s
}

func TestRender(t *testing.T) {
	comps := []component.Component{cluster.Network{}, cluster.Cluster{}}
	type args struct {
		x        *xr.Composite
		env      map[string]any
		observed map[string]*structpb.Struct
	}
	type want struct {
		objects  map[string]object.Object
		warnings []string
		err      string
	}
	netNamespaced := object.Object{
		"apiVersion": "net.test.m.example.org/v1", "kind": "Net",
		"metadata": map[string]any{
			"labels":      map[string]any{LabelResource: "network", LabelCloud: "test"},
			"annotations": map[string]any{AnnotationComponent: "network", AnnotationExternalName: "net-1"},
		},
		"spec": map[string]any{
			"forProvider":       map[string]any{"region": "r1", "tags": []any{"a"}},
			"providerConfigRef": object.Object{"name": "default", "kind": "ClusterProviderConfig"},
		},
	}
	usage := func(kind, apiVersion, ofAPIVersion, byAPIVersion string) object.Object {
		return object.Object{
			"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{
				"labels":      map[string]any{LabelCloud: "test"},
				"annotations": map[string]any{AnnotationComponent: "cluster"},
			},
			"spec": map[string]any{
				"replayDeletion": true,
				"of": map[string]any{"apiVersion": ofAPIVersion, "kind": "Net", "resourceRef": map[string]any{"name": "x-net"}, "resourceSelector": object.Object{
					"matchControllerRef": true, "matchLabels": map[string]any{LabelResource: "network"}}},
				"by": map[string]any{"apiVersion": byAPIVersion, "kind": "K8s", "resourceRef": map[string]any{"name": "x-k8s"}, "resourceSelector": object.Object{
					"matchControllerRef": true, "matchLabels": map[string]any{LabelResource: "cluster"}}},
			},
		}
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Namespaced": {
			reason: "Namespaced XRs get .m. apiVersions, a ClusterProviderConfig reference, labels, annotations and, once both ends exist, a Usage naming them per edge.",
			args:   args{x: composite(xr.Namespaced, xr.Composite{}), observed: existing()},
			want: want{objects: map[string]object.Object{
				"network": netNamespaced,
				"cluster": {
					"apiVersion": "k8s.test.m.example.org/v1", "kind": "K8s",
					"metadata": map[string]any{
						"labels":      map[string]any{LabelResource: "cluster", LabelCloud: "test"},
						"annotations": map[string]any{AnnotationComponent: "cluster"},
					},
					"spec": map[string]any{
						"forProvider":       map[string]any{"networkSelector": object.Object{"matchControllerRef": true, "matchLabels": map[string]any{LabelResource: "network"}}},
						"providerConfigRef": object.Object{"name": "default", "kind": "ClusterProviderConfig"},
					},
				},
				"cluster-uses-network": usage("Usage", "protection.crossplane.io/v1beta1", "net.test.m.example.org/v1", "k8s.test.m.example.org/v1"),
			}},
		},
		"ClusterScoped": {
			reason: "Cluster-scoped XRs get legacy apiVersions, a name-only provider config reference from the environment, and ClusterUsages.",
			args: args{
				x:        composite(xr.ClusterScoped, xr.Composite{}),
				env:      map[string]any{"providerConfigs": map[string]any{"test": map[string]any{"name": "team-a"}}},
				observed: existing(),
			},
			want: want{objects: map[string]object.Object{
				"network": {
					"apiVersion": "net.test.example.org/v2", "kind": "Net",
					"metadata": netNamespaced["metadata"],
					"spec": map[string]any{
						"forProvider":       map[string]any{"region": "r1", "tags": []any{"a"}},
						"providerConfigRef": object.Object{"name": "team-a"},
					},
				},
				"cluster-uses-network": usage("ClusterUsage", "protection.crossplane.io/v1beta1", "net.test.example.org/v2", "k8s.test.example.org/v1"),
			}},
		},
		"Overlays": {
			reason: "Environment overrides, then XR overrides, then spec.forProvider are merged: maps merge, lists replace, null removes.",
			args: args{
				x: func() *xr.Composite {
					x := composite(xr.Namespaced, xr.Composite{Overrides: map[string]map[string]any{
						"network": {"spec": map[string]any{"forProvider": map[string]any{"tags": []any{"xr"}, "mtu": 1500.0}}},
					}})
					x.ForProvider = map[string]any{"network": "explicit"}
					return x
				}(),
				env: map[string]any{"overrides": map[string]any{
					"network": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"tags": []any{"env"}, "mtu": 1400.0, "description": "env"}}},
				}},
			},
			want: want{objects: map[string]object.Object{
				"network": {"spec": map[string]any{"forProvider": map[string]any{"region": "r1", "tags": []any{"xr"}, "mtu": 1500.0, "description": "env"}}},
				"cluster": {"spec": map[string]any{"forProvider": map[string]any{"network": "explicit"}}},
			}},
		},
		"OverlayUnknownName": {
			reason: "An XR's overlay for a name nothing renders is refused, naming the names that exist.",
			args: args{x: composite(xr.Namespaced, xr.Composite{Overrides: map[string]map[string]any{
				"netwrok": {"spec": map[string]any{}}, //nolint:misspell // a misspelt override is what the case is about
			}})},
			want: want{err: `spec.parameters.overrides.netwrok: Invalid value: "netwrok": names no resource this XR composes; known names: cluster, network`}, //nolint:misspell // a misspelt override is what the case is about
		},
		"EnvironmentOverlayUnknownName": {
			reason: "The environment's overlay for a name this XR does not render is a warning: the environment serves the whole fleet.",
			args:   args{x: composite(xr.Namespaced, xr.Composite{}), env: map[string]any{"overrides": map[string]any{"nodepool-gpu": map[string]any{"spec": map[string]any{}}}}},
			want:   want{warnings: []string{"environment overrides.nodepool-gpu matches no composed resource; known names: cluster, network"}},
		},
		"ImportKeyUnknown": {
			reason: "An import key that names nothing would create a new resource instead of adopting one: refused, naming the importable names.",
			args:   args{x: composite(xr.Namespaced, xr.Composite{Import: xr.Import{Enabled: true, Resources: map[string]string{"clustr": "existing"}}})},
			want:   want{err: `spec.parameters.import.resources[clustr]: Invalid value: "clustr": names no managed resource this XR composes; importable names: cluster, network`},
		},
		"OverlayRemovesRequired": {
			reason: "An overlay must not remove a field the kind requires.",
			args: args{x: composite(xr.Namespaced, xr.Composite{Overrides: map[string]map[string]any{
				"network": {"spec": map[string]any{"forProvider": map[string]any{"region": nil}}},
			}})},
			want: want{err: `spec.parameters.overrides.network: Forbidden: removes spec.forProvider.region, which Net "network" requires`},
		},
		"OverlayChangesKind": {
			reason: "An overlay must not change what a resource is.",
			args: args{x: composite(xr.Namespaced, xr.Composite{Overrides: map[string]map[string]any{
				"network": {"kind": "Other"},
			}})},
			want: want{err: "spec.parameters.overrides.network.kind: Forbidden: " + ruleIdentity},
		},
		"OverlayNamesResource": {
			reason: "Overlays cannot name composed resources.",
			args: args{x: composite(xr.Namespaced, xr.Composite{Overrides: map[string]map[string]any{
				"network": {"metadata": map[string]any{"name": "mine"}},
			}})},
			want: want{err: "spec.parameters.overrides.network.metadata.name: Forbidden: " + ruleIdentity},
		},
		"ImportObserve": {
			reason: "An imported resource gets its external name and read-only management policies.",
			args:   args{x: composite(xr.Namespaced, xr.Composite{Import: xr.Import{Enabled: true, Mode: xr.ImportObserve, Resources: map[string]string{"network": "existing-net"}}})},
			want: want{objects: map[string]object.Object{
				"network": {
					"metadata": map[string]any{"annotations": map[string]any{AnnotationComponent: "network", AnnotationExternalName: "existing-net", AnnotationImportMode: "observe"}},
					"spec":     map[string]any{"managementPolicies": []any{"Observe"}},
				},
			}},
		},
		"ImportManageOnly": {
			reason: "import.only composes just the imported resources; manage never includes Delete.",
			args:   args{x: composite(xr.Namespaced, xr.Composite{Import: xr.Import{Enabled: true, Mode: xr.ImportManage, Only: true, Resources: map[string]string{"cluster": "existing"}}})},
			want: want{objects: map[string]object.Object{
				"cluster": {"spec": map[string]any{"managementPolicies": []any{"Observe", "Create", "Update", "LateInitialize"}}},
			}},
		},
		"ImportTurnedOff": {
			reason: "A resource imported before keeps its external name and stays undeletable after import is turned off.",
			args: args{
				x:        composite(xr.Namespaced, xr.Composite{}),
				observed: map[string]*structpb.Struct{"cluster": observedWith(map[string]any{AnnotationImportMode: "observe", AnnotationExternalName: "existing"})},
			},
			want: want{objects: map[string]object.Object{
				"cluster": {
					"metadata": map[string]any{"annotations": map[string]any{AnnotationComponent: "cluster", AnnotationExternalName: "existing", AnnotationImportMode: "observe"}},
					"spec":     map[string]any{"managementPolicies": []any{"Observe", "Create", "Update", "LateInitialize"}},
				},
			}},
		},
		"ImportReleased": {
			reason: "import.release lets a formerly imported resource be managed, and deleted, normally; it keeps its external name.",
			args: args{
				x:        composite(xr.Namespaced, xr.Composite{Import: xr.Import{Release: true}}),
				observed: map[string]*structpb.Struct{"cluster": observedWith(map[string]any{AnnotationImportMode: "observe", AnnotationExternalName: "existing"})},
			},
			want: want{objects: map[string]object.Object{
				"cluster": {
					"metadata": map[string]any{"annotations": map[string]any{AnnotationComponent: "cluster", AnnotationExternalName: "existing"}},
					"spec":     map[string]any{},
				},
			}},
		},
		"ExternalNameChanged": {
			reason: "A rendered external name that differs from the observed one would point the resource at another cloud object.",
			args: args{
				x:        composite(xr.Namespaced, xr.Composite{}),
				observed: map[string]*structpb.Struct{"network": observedWith(map[string]any{AnnotationExternalName: "net-0"})},
			},
			want: want{err: `composed resource "network" is "net-0" in the cloud and would become "net-1": cloud names are immutable once created (check the clusterName label, metadata.name and spec.parameters)`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := NewContext(tc.args.x, envcfg.New(tc.args.env), testCloud(), tc.args.observed)
			rs, err := ctx.Cloud.Render(ctx, comps)
			if tc.want.err != "" || err != nil {
				if diff := cmp.Diff(tc.want.err, errString(err)); diff != "" {
					t.Fatalf("%s\nRender(...) error: -want, +got:\n%s", tc.reason, diff)
				}
				return
			}
			if diff := cmp.Diff(tc.want.warnings, ctx.Warnings(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nRender(...) warnings: -want, +got:\n%s", tc.reason, diff)
			}
			got := map[string]object.Object{}
			for _, r := range rs {
				got[r.Name] = r.Object
			}
			for name, w := range tc.want.objects {
				// Compare only the parts the case names.
				if diff := cmp.Diff(w, project(got[name], w)); diff != "" {
					t.Errorf("%s\nRender(...) %s: -want, +got:\n%s", tc.reason, name, diff)
				}
			}
			if name == "ImportReleased" {
				if _, set := got["cluster"]["spec"].(map[string]any)["managementPolicies"]; set {
					t.Errorf("%s\nRender(...) released resource still has managementPolicies", tc.reason)
				}
			}
			if name == "ImportManageOnly" && len(rs) != 1 {
				t.Errorf("%s\nRender(...) rendered %d resources, want only the imported one", tc.reason, len(rs))
			}
		})
	}
}

// project keeps the parts of got that want names, recursively.
func project(got any, want any) any {
	wm, ok := want.(object.Object)
	if !ok {
		if m, isMap := want.(map[string]any); isMap {
			wm, ok = m, true
		}
	}
	gm, gok := got.(map[string]any)
	if !ok || !gok {
		return got
	}
	out := map[string]any{}
	for k, wv := range wm {
		if gv, ok := gm[k]; ok {
			out[k] = project(gv, wv)
		}
	}
	if _, typed := want.(object.Object); typed {
		return object.Object(out)
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestRenderErrors(t *testing.T) {
	cases := map[string]struct {
		reason string
		comps  []component.Component
		want   string
	}{
		"NotImplemented": {
			reason: "A component the cloud does not implement is an error, never a silent skip.",
			comps:  []component.Component{cluster.Network{}, cluster.Egress{}},
			want:   `cloud "test" does not implement Egress (needed for egress)`,
		},
		"UnknownDependency": {
			reason: "A dependency on a resource nothing renders is an error.",
			comps:  []component.Component{cluster.Cluster{}},
			want:   `composed resource "cluster" depends on "network", which is not rendered`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := NewContext(composite(xr.Namespaced, xr.Composite{}), envcfg.New(nil), testCloud(), nil)
			_, err := ctx.Cloud.Render(ctx, tc.comps)
			if diff := cmp.Diff(tc.want, errString(err)); diff != "" {
				t.Errorf("%s\nRender(...) error: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestImplementTwicePanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "implements Network twice") {
			t.Errorf("Implement twice: recovered %v, want a panic naming the kind", r)
		}
	}()
	c := testCloud()
	Implement(c, func(*Context, cluster.Network) ([]*Resource, error) { return nil, nil })
}

func TestAPIVersion(t *testing.T) {
	if got := testNetworkKind.APIVersion(xr.Namespaced); got != "net.test.m.example.org/v1" {
		t.Errorf("APIVersion(Namespaced) = %q", got)
	}
	if got := testNetworkKind.APIVersion(xr.ClusterScoped); got != "net.test.example.org/v2" {
		t.Errorf("APIVersion(Cluster) = %q", got)
	}
}

func TestRenderUses(t *testing.T) {
	// The network of another XR, selected by its labels.
	otherNet := Use{Name: "other-network", Kind: testNetworkKind, Selector: map[string]any{"matchLabels": map[string]any{"crossplane.io/composite": "other", LabelResource: "network"}},
		Observed: observedNamed("other-net", nil)}
	unordered := otherNet
	unordered.Kind = &ResourceKind{Kind: "Zone", Namespaced: "zone.test.m.example.org/v1", Cluster: "zone.test.example.org/v1", Provider: "test"}
	clash := otherNet
	clash.Name = "network"
	type args struct {
		scope xr.Scope
		use   Use
	}
	type want struct {
		usages map[string]object.Object
		err    string
	}
	usage := func(kind, apiVersion, ofAPIVersion, byAPIVersion string) object.Object {
		return object.Object{
			"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{
				"labels":      map[string]any{LabelCloud: "test"},
				"annotations": map[string]any{AnnotationComponent: "cluster"},
			},
			"spec": map[string]any{
				"replayDeletion": true,
				"of":             map[string]any{"apiVersion": ofAPIVersion, "kind": "Net", "resourceRef": map[string]any{"name": "other-net"}, "resourceSelector": otherNet.Selector},
				"by": map[string]any{"apiVersion": byAPIVersion, "kind": "K8s", "resourceRef": map[string]any{"name": "x-k8s"}, "resourceSelector": object.Object{
					"matchControllerRef": true, "matchLabels": map[string]any{LabelResource: "cluster"}}},
			},
		}
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Namespaced": {
			reason: "A resource of another XR whose deletion must wait gets a Usage that names it, beside the labels that select it, and is named after it.",
			args:   args{scope: xr.Namespaced, use: otherNet},
			want: want{usages: map[string]object.Object{
				"cluster-uses-other-network": usage("Usage", "protection.crossplane.io/v1beta1", "net.test.m.example.org/v1", "k8s.test.m.example.org/v1"),
			}},
		},
		"ClusterScoped": {
			reason: "A cluster-scoped XR's is a ClusterUsage of the legacy kind.",
			args:   args{scope: xr.ClusterScoped, use: otherNet},
			want: want{usages: map[string]object.Object{
				"cluster-uses-other-network": usage("ClusterUsage", "protection.crossplane.io/v1beta1", "net.test.example.org/v2", "k8s.test.example.org/v1"),
			}},
		},
		"OrderDoesNotMatter": {
			reason: "Across XRs as within one, only the edges of UsageRules get a Usage.",
			args:   args{scope: xr.Namespaced, use: unordered},
			want:   want{},
		},
		"NameClash": {
			reason: "What another XR holds must not be named like one of this XR's resources: its Usage would be named like theirs.",
			args:   args{scope: xr.Namespaced, use: clash},
			want:   want{err: `generated names clash: "network", which composed resource "cluster" uses in another XR, is the name of one of this XR's composed resources`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &Cloud{Name: "test"}
			Implement(c, func(_ *Context, _ cluster.Network) ([]*Resource, error) {
				return []*Resource{{Name: "network", Kind: testNetworkKind, Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{"region": "r1"}}}}}, nil
			})
			Implement(c, func(_ *Context, _ cluster.Cluster) ([]*Resource, error) {
				return []*Resource{{Name: ClusterResource, Kind: testClusterKind, DependsOn: []string{"network"}, Uses: []Use{tc.args.use}}}, nil
			})
			ctx := NewContext(composite(tc.args.scope, xr.Composite{}), envcfg.New(nil), c, existing())
			rs, err := c.Render(ctx, []component.Component{cluster.Network{}, cluster.Cluster{}})
			if diff := cmp.Diff(tc.want.err, errString(err)); diff != "" {
				t.Fatalf("%s\nRender(...) error: -want, +got:\n%s", tc.reason, diff)
			}
			if err != nil {
				return
			}
			got := map[string]object.Object{}
			for _, r := range rs {
				if r.UsageBy != "" {
					got[r.Name] = r.Object
				}
			}
			for name, w := range tc.want.usages {
				if diff := cmp.Diff(w, project(got[name], w)); diff != "" {
					t.Errorf("%s\nRender(...) %s: -want, +got:\n%s", tc.reason, name, diff)
				}
			}
			names := slices.Sorted(maps.Keys(got))
			want := slices.Sorted(maps.Keys(tc.want.usages))
			// The edge within the XR keeps its Usage whatever the other.
			want = append([]string{"cluster-uses-network"}, want...)
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("%s\nRender(...) Usages: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestUsageNamesItsEnds checks that a Usage is rendered only once both its
// ends exist, naming them, and says what it waits for until then.
func TestUsageNamesItsEnds(t *testing.T) {
	type want struct {
		pending  string
		ofName   string
		byName   string
		selector bool
	}
	cases := map[string]struct {
		reason   string
		observed map[string]*structpb.Struct
		want     want
	}{
		"NeitherExists": {
			reason: "Before either end exists there is no name to give: the Usage waits.",
			want:   want{pending: "waits until cluster and network exist, to name them"},
		},
		"OnlyWhatIsUsedExists": {
			reason:   "The user does not exist yet (it is composed in this reconcile): the Usage waits for the next.",
			observed: map[string]*structpb.Struct{"network": observedNamed("x-net", map[string]any{AnnotationExternalName: "net-1"})},
			want:     want{pending: "waits until cluster and network exist, to name them"},
		},
		"BothExist": {
			reason:   "Both ends are named, so that Crossplane's Usage controller need not list their kinds; the selectors stay for reading which resources it joins.",
			observed: existing(),
			want:     want{ofName: "x-net", byName: "x-k8s", selector: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := NewContext(composite(xr.Namespaced, xr.Composite{}), envcfg.New(nil), testCloud(), tc.observed)
			rs, err := ctx.Cloud.Render(ctx, []component.Component{cluster.Network{}, cluster.Cluster{}})
			if err != nil {
				t.Fatal(err)
			}
			var u *Rendered
			for _, r := range rs {
				if r.Name == "cluster-uses-network" {
					u = r
				}
			}
			if u == nil {
				t.Fatalf("%s\nno Usage cluster-uses-network rendered", tc.reason)
			}
			got := want{pending: u.Pending}
			if u.Object != nil {
				spec := u.Object["spec"].(map[string]any)
				of, by := spec["of"].(map[string]any), spec["by"].(map[string]any)
				got.ofName, _ = of["resourceRef"].(map[string]any)["name"].(string)
				got.byName, _ = by["resourceRef"].(map[string]any)["name"].(string)
				_, got.selector = of["resourceSelector"]
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nRender(...) cluster-uses-network: -want, +got:\n%s", tc.reason, diff)
			}
			if tc.want.pending != "" && u.Object != nil {
				t.Errorf("%s\nRender(...) a Pending Usage has an object", tc.reason)
			}
		})
	}
}
