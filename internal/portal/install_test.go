package portal

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/names"
)

// The install manifests, from this package's folder.
const (
	installManifest = "../../examples/install/portal/portal.yaml"
	policyManifest  = "../../examples/install/portal/policy.yaml"
	examplesDir     = "../../examples"
)

// rule is an RBAC policy rule.
type rule struct {
	APIGroups     []string `json:"apiGroups"`
	Resources     []string `json:"resources"`
	Verbs         []string `json:"verbs"`
	ResourceNames []string `json:"resourceNames,omitempty"`
}

// manifest is the part of a Kubernetes object these tests read.
type manifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Rules []rule            `json:"rules"`
	Data  map[string]string `json:"data"`
	Spec  struct {
		Parameters struct {
			Domain string `json:"domain"`
		} `json:"parameters"`
	} `json:"spec"`
}

var separator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// documents reads the YAML documents of a file, leaving out empty ones.
func documents(path string) ([]manifest, error) {
	b, err := os.ReadFile(path) //nolint:gosec // the repository's own examples
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	var out []manifest
	for i, doc := range separator.Split(string(b), -1) {
		m := manifest{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return nil, fmt.Errorf("cannot parse document %d of %s: %w", i, path, err)
		}
		if m.Kind != "" {
			out = append(out, m)
		}
	}
	return out, nil
}

// role returns the rules of the object of a kind and name in docs.
func role(t *testing.T, docs []manifest, kind, name string) []rule {
	t.Helper()
	for _, d := range docs {
		if d.Kind == kind && d.Metadata.Name == name {
			return d.Rules
		}
	}
	t.Fatalf("%s has no %s %s", installManifest, kind, name)
	return nil
}

// allows reports whether rules let a verb be done to a resource (with its
// subresource, "userextras/<key>") of a group, as RBAC matches them:
// exactly, by "*", or a subresource by "*/<subresource>".
func allows(rules []rule, group, resource, verb string) bool {
	_, sub, _ := strings.Cut(resource, "/")
	for _, r := range rules {
		if len(r.ResourceNames) > 0 {
			continue
		}
		if !slices.Contains(r.Verbs, verb) && !slices.Contains(r.Verbs, "*") {
			continue
		}
		if !slices.Contains(r.APIGroups, group) && !slices.Contains(r.APIGroups, "*") {
			continue
		}
		for _, rr := range r.Resources {
			if rr == "*" || rr == resource || (sub != "" && rr == "*/"+sub) {
				return true
			}
		}
	}
	return false
}

// plural is the resource name Kubernetes derives from a kind by default.
func plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		return k + "es"
	case strings.HasSuffix(k, "y") && !strings.ContainsAny(k[len(k)-2:len(k)-1], "aeiou"):
		return k[:len(k)-1] + "ies"
	}
	return k + "s"
}

// TestInstallRBAC checks the portal's ClusterRole and Role against what
// the portal does: review tokens and access, impersonate its callers, read
// policies in its own namespace only, never write an environment in its
// own name and never read a Secret.
func TestInstallRBAC(t *testing.T) {
	docs, err := documents(installManifest)
	if err != nil {
		t.Fatal(err)
	}
	portal := role(t, docs, "ClusterRole", "portal")
	policies := role(t, docs, "Role", "portal")
	editor := role(t, docs, "ClusterRole", "appenvironment-editor")

	cases := map[string]struct {
		reason   string
		rules    []rule
		group    string
		resource string
		verb     string
		want     bool
	}{
		"TokenReviews": {
			reason: "The portal authenticates a caller's bearer token with a TokenReview.",
			rules:  portal, group: "authentication.k8s.io", resource: "tokenreviews", verb: "create", want: true,
		},
		"SubjectAccessReviews": {
			reason: "The portal checks a caller's right to watch an environment with a SubjectAccessReview.",
			rules:  portal, group: "authorization.k8s.io", resource: "subjectaccessreviews", verb: "create", want: true,
		},
		"ImpersonateUsers": {
			reason: "The portal acts as its callers.",
			rules:  portal, group: "", resource: "users", verb: "impersonate", want: true,
		},
		"ImpersonateGroups": {
			reason: "The portal acts as its callers, with their groups.",
			rules:  portal, group: "", resource: "groups", verb: "impersonate", want: true,
		},
		"ImpersonateServiceAccounts": {
			reason: "A service account calling the portal is impersonated as a service account.",
			rules:  portal, group: "", resource: "serviceaccounts", verb: "impersonate", want: true,
		},
		"ImpersonateUIDs": {
			reason: "The portal acts as its callers, with their UIDs.",
			rules:  portal, group: "authentication.k8s.io", resource: "uids", verb: "impersonate", want: true,
		},
		"ImpersonateCredentialID": {
			reason: "A service account token's user has the extra field credential-id, which the portal passes on: RBAC matches it only by its full name.",
			rules:  portal, group: "authentication.k8s.io", resource: "userextras/authentication.kubernetes.io/credential-id", verb: "impersonate", want: true,
		},
		"ImpersonatePodName": {
			reason: "A pod's service account token's user has the extra field pod-name.",
			rules:  portal, group: "authentication.k8s.io", resource: "userextras/authentication.kubernetes.io/pod-name", verb: "impersonate", want: true,
		},
		"ReadEnvironments": {
			reason: "The live streams watch the environments with the portal's identity.",
			rules:  portal, group: envGroup, resource: envResource, verb: "watch", want: true,
		},
		"ReadClusters": {
			reason: "The fleet view watches every namespace's Clusters with the portal's identity.",
			rules:  portal, group: clusterGVR.Group, resource: clusterGVR.Resource, verb: "watch", want: true,
		},
		"ListClusters": {
			reason: "The fleet view's informer lists every namespace's Clusters first.",
			rules:  portal, group: clusterGVR.Group, resource: clusterGVR.Resource, verb: "list", want: true,
		},
		"NoWriteClusters": {
			reason: "The fleet view only reads Clusters.",
			rules:  portal, group: clusterGVR.Group, resource: clusterGVR.Resource, verb: "update",
		},
		"ReadXClusters": {
			reason: "The fleet view watches the legacy XClusters too: one fleet, one rollout, whichever API made a Cluster.",
			rules:  portal, group: xclusterGVR.Group, resource: xclusterGVR.Resource, verb: "watch", want: true,
		},
		"ListXClusters": {
			reason: "The fleet view's XCluster informer lists them first.",
			rules:  portal, group: xclusterGVR.Group, resource: xclusterGVR.Resource, verb: "list", want: true,
		},
		"NoWriteXClusters": {
			reason: "The fleet view only reads XClusters.",
			rules:  portal, group: xclusterGVR.Group, resource: xclusterGVR.Resource, verb: "patch",
		},
		"ReadEnvironmentConfigs": {
			reason: "The fleet view watches the baseline EnvironmentConfigs: the target and the rollout waves.",
			rules:  portal, group: envConfigGVR.Group, resource: envConfigGVR.Resource, verb: "watch", want: true,
		},
		"NoWriteEnvironmentConfigs": {
			reason: "The portal never writes the environment: an approval is a change in Git.",
			rules:  portal, group: envConfigGVR.Group, resource: envConfigGVR.Resource, verb: "patch",
		},
		"NoWriteEnvironments": {
			reason: "The portal writes environments only as their requester, never in its own name.",
			rules:  portal, group: envGroup, resource: envResource, verb: "create",
		},
		"NoDeleteEnvironments": {
			reason: "The portal deletes environments only as their requester, never in its own name.",
			rules:  portal, group: envGroup, resource: envResource, verb: "delete",
		},
		"NoSecretsClusterWide": {
			reason: "The portal reads no Secret.",
			rules:  portal, group: "", resource: "secrets", verb: "get",
		},
		"NoListSecretsClusterWide": {
			reason: "The portal reads no Secret.",
			rules:  portal, group: "", resource: "secrets", verb: "list",
		},
		"NoSecretsInItsNamespace": {
			reason: "The portal reads no Secret, not even in its own namespace.",
			rules:  policies, group: "", resource: "secrets", verb: "get",
		},
		"NoConfigMapsClusterWide": {
			reason: "Policies are read in the portal's own namespace only.",
			rules:  portal, group: "", resource: "configmaps", verb: "get",
		},
		"Policies": {
			reason: "The portal gets a namespace's policy ConfigMap in its own namespace.",
			rules:  policies, group: "", resource: "configmaps", verb: "get", want: true,
		},
		"NoListPolicies": {
			reason: "The portal gets a policy by its name and lists none.",
			rules:  policies, group: "", resource: "configmaps", verb: "list",
		},
		"NoWritePolicies": {
			reason: "The portal never writes a policy.",
			rules:  policies, group: "", resource: "configmaps", verb: "update",
		},
		"EditorCreates": {
			reason: "A developer creates environments through the portal, which acts as them.",
			rules:  editor, group: envGroup, resource: envResource, verb: "create", want: true,
		},
		"EditorWatches": {
			reason: "A developer's stream is opened once a SubjectAccessReview says they may watch.",
			rules:  editor, group: envGroup, resource: envResource, verb: "watch", want: true,
		},
		"EditorDeletes": {
			reason: "A developer deletes environments through the portal.",
			rules:  editor, group: envGroup, resource: envResource, verb: "delete", want: true,
		},
		"EditorNoUpdate": {
			reason: "A developer chooses among the policy's choices through the portal: no edit of a spec.",
			rules:  editor, group: envGroup, resource: envResource, verb: "update",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := allows(tc.rules, tc.group, tc.resource, tc.verb); got != tc.want {
				t.Errorf("%s\nallows(%s %q %s): want %t, got %t", tc.reason, tc.verb, tc.group, tc.resource, tc.want, got)
			}
		})
	}

	// No rule of any role of the file may reach Secrets, in any way.
	for _, d := range docs {
		for _, r := range d.Rules {
			core := slices.Contains(r.APIGroups, "") || slices.Contains(r.APIGroups, "*")
			if core && (slices.Contains(r.Resources, "secrets") || slices.Contains(r.Resources, "*")) {
				t.Errorf("%s %s grants %v on %v of groups %q: the portal must never be able to read Secrets", d.Kind, d.Metadata.Name, r.Verbs, r.Resources, r.APIGroups)
			}
		}
	}
}

// TestInstallRBACFleet checks the portal's ClusterRole against what the
// fleet view reads (fleetResources): the Clusters, XClusters and baseline
// EnvironmentConfigs of the version rollout, and for a platform release
// the XRs of every kind it moves, the legacy XRs' claims and the
// Composition revisions; each it may get, list and watch, and none it may
// write.
func TestInstallRBACFleet(t *testing.T) {
	docs, err := documents(installManifest)
	if err != nil {
		t.Fatal(err)
	}
	portal := role(t, docs, "ClusterRole", "portal")
	want := map[string]bool{"get": true, "list": true, "watch": true, "create": false, "update": false, "patch": false, "delete": false}
	for _, gvr := range fleetResources() {
		got := map[string]bool{}
		for verb := range want {
			got[verb] = allows(portal, gvr.Group, gvr.Resource, verb)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the fleet view reads %s: the portal's ClusterRole's verbs on it, -want, +got:\n%s", gvr.GroupResource(), diff)
		}
	}
	if n := len(fleetResources()); n != 12 {
		t.Errorf("the fleet view reads %d resources, want 12: the version rollout's three, the release's five other XR kinds, the three claim kinds and the Composition revisions", n)
	}
}

// composedKinds returns the groups and kinds of the composed resources in
// the observed files of the namespaced AppEnvironment and Database
// examples of every cloud: what an environment the portal creates
// composes, directly or through its Database. The legacy examples are
// cluster-scoped XRs composing cluster-scoped resources, which the portal
// neither creates nor watches.
func composedKinds() (map[string][]string, []string, error) {
	var files []string
	for _, pattern := range []string{"*appenvironment*.yaml", "*database*.yaml"} {
		m, err := filepath.Glob(filepath.Join(examplesDir, "*", "observed", pattern))
		if err != nil {
			return nil, nil, fmt.Errorf("cannot list the observed examples: %w", err)
		}
		for _, f := range m {
			if !strings.Contains(filepath.Base(f), "legacy") {
				files = append(files, f)
			}
		}
	}
	kinds := map[string][]string{}
	for _, f := range files {
		docs, err := documents(f)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range docs {
			group, _, ok := strings.Cut(d.APIVersion, "/")
			if !ok {
				group = ""
			}
			if !slices.Contains(kinds[group], d.Kind) {
				kinds[group] = append(kinds[group], d.Kind)
			}
		}
	}
	slices.Sort(files)
	return kinds, files, nil
}

// TestInstallComposedKinds checks that the portal's ClusterRole lets it
// get, list and watch every kind the examples' AppEnvironments and
// Databases compose, without which a stream's row would wait for its
// watch forever.
func TestInstallComposedKinds(t *testing.T) {
	docs, err := documents(installManifest)
	if err != nil {
		t.Fatal(err)
	}
	portal := role(t, docs, "ClusterRole", "portal")
	kinds, files, err := composedKinds()
	if err != nil {
		t.Fatal(err)
	}
	// Every cloud's AppEnvironment and Database must have been read.
	var clouds []string
	for _, f := range files {
		clouds = append(clouds, filepath.Base(filepath.Dir(filepath.Dir(f)))+"/"+filepath.Base(f))
	}
	want := []string{"aws/appenvironment.yaml", "aws/database.yaml", "azure/appenvironment.yaml", "azure/database.yaml", "gcp/appenvironment.yaml", "gcp/database.yaml"}
	if diff := cmp.Diff(want, clouds); diff != "" {
		t.Errorf("observed examples read: -want, +got:\n%s", diff)
	}
	if len(kinds) == 0 {
		t.Fatal("no composed resources found in the observed examples")
	}
	for group, ks := range kinds {
		for _, kind := range ks {
			t.Run(group+"/"+kind, func(t *testing.T) {
				if group == "" {
					t.Fatalf("an environment composes %s of the core group: the portal watches no core kind", kind)
				}
				if !Composed(schema.GroupKind{Group: group, Kind: kind}) {
					t.Errorf("an environment composes %s of group %s, which Composed leaves out: its row would not be watched", kind, group)
				}
				for _, verb := range []string{"get", "list", "watch"} {
					if !allows(portal, group, plural(kind), verb) {
						t.Errorf("ClusterRole portal does not grant %s on %s (%s) of group %s, which an environment composes", verb, plural(kind), kind, group)
					}
				}
			})
		}
	}
}

// TestInstallPolicy checks the example policy: it parses, each of its
// sizes builds a valid environment, and it agrees with the examples: the
// Cluster's plane and domain and the cloud's database size classes.
func TestInstallPolicy(t *testing.T) {
	docs, err := documents(policyManifest)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0].Kind != "ConfigMap" {
		t.Fatalf("%s: want one ConfigMap, got %d documents", policyManifest, len(docs))
	}
	cm := docs[0]
	ns, ok := strings.CutPrefix(cm.Metadata.Name, "portal-policy-")
	if !ok || cm.Metadata.Namespace != "crossplane-system" {
		t.Errorf("the policy ConfigMap is %s/%s, not portal-policy-<namespace> in the portal's namespace crossplane-system", cm.Metadata.Namespace, cm.Metadata.Name)
	}
	p, err := ParsePolicy(cm.Data[PolicyKey])
	if err != nil {
		t.Fatal(err)
	}

	clusters, err := documents(filepath.Join(examplesDir, p.Cloud, "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cluster := clusters[0]
	if got := cluster.Metadata.Labels["planeId"]; got != p.PlaneID {
		t.Errorf("policy planeId %q, the example %s Cluster's %q", p.PlaneID, p.Cloud, got)
	}
	if got := cluster.Metadata.Labels["planeType"]; got != p.PlaneType {
		t.Errorf("policy planeType %q, the example %s Cluster's %q", p.PlaneType, p.Cloud, got)
	}
	// The hosts the policy gives the namespace's environments are the
	// namespace's in the example environment's tenancy of names; its
	// Cluster (a copy of the example, on that domain) may have it too.
	ten, err := exampleTenancy()
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{p.Domain, "api-x." + p.Domain, "x." + p.Domain} {
		if r := ten.Host(ns, h); r != names.Assigned {
			t.Errorf("policy domain %q: %s", p.Domain, r.Why(fmt.Sprintf("host %q", h), ns, "hosts"))
		}
	}

	tiers, err := databaseTiers(p.Cloud)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range p.SizeNames() {
		t.Run(size, func(t *testing.T) {
			s := p.Sizes[size]
			if s.Database != "" && !slices.Contains(tiers, s.Database) {
				t.Errorf("size %s: database size class %q is not one of the %s EnvironmentConfig's: %v", size, s.Database, p.Cloud, tiers)
			}
			req := &Request{Name: "feature-x", Size: size, Database: s.Database != "", Frontend: p.Domain != ""}
			if _, errs := p.Build(ns, req, "alice", []string{p.Cloud}); len(errs) > 0 {
				t.Errorf("size %s: cannot build an environment: %v", size, errs)
			}
		})
	}
}

// exampleTenancy is the tenancy of names of the example environment.
func exampleTenancy() (*names.Tenancy, error) {
	path := filepath.Join(examplesDir, "envconfigs", "baseline.yaml")
	b, err := os.ReadFile(path) //nolint:gosec // the repository's own examples
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	var ec struct {
		Data struct {
			Tenancy names.Tenancy `json:"tenancy"`
		} `json:"data"`
	}
	if err := yaml.Unmarshal(b, &ec); err != nil {
		return nil, fmt.Errorf("cannot parse %s: %w", path, err)
	}
	return &ec.Data.Tenancy, nil
}

// databaseTiers are the database size classes of a cloud's example
// EnvironmentConfig.
func databaseTiers(cloud string) ([]string, error) {
	path := filepath.Join(examplesDir, "envconfigs", "cloud-"+cloud+".yaml")
	b, err := os.ReadFile(path) //nolint:gosec // the repository's own examples
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	var ec struct {
		Data struct {
			Database struct {
				Tiers map[string]string `json:"tiers"`
			} `json:"database"`
		} `json:"data"`
	}
	if err := yaml.Unmarshal(b, &ec); err != nil {
		return nil, fmt.Errorf("cannot parse %s: %w", path, err)
	}
	var out []string
	for k := range ec.Data.Database.Tiers {
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("cannot find database.tiers in %s", path)
	}
	slices.Sort(out)
	return out, nil
}
