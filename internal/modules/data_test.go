package modules_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// holdsData reports whether a composed resource holds data its owner would
// lose with it: database servers and their databases, buckets and storage
// accounts, DNS zones with their records, a nested Database, and the
// workload namespace with its volumes. The list is the test's own, from
// the providers' kinds, not the function's.
func holdsData(o fntest.Object) bool {
	av, _ := o["apiVersion"].(string)
	group, _, _ := strings.Cut(av, "/")
	group = strings.Replace(group, ".m.", ".", 1)
	switch group + "/" + fmt.Sprint(o["kind"]) {
	case "sql.gcp.upbound.io/DatabaseInstance", "sql.gcp.upbound.io/Database",
		"rds.aws.upbound.io/Instance", "postgresql.sql.crossplane.io/Database",
		"dbforpostgresql.azure.upbound.io/FlexibleServer", "dbforpostgresql.azure.upbound.io/FlexibleServerDatabase",
		"storage.gcp.upbound.io/Bucket", "s3.aws.upbound.io/Bucket", "storage.azure.upbound.io/Account", "storage.azure.upbound.io/Container",
		"dns.gcp.upbound.io/ManagedZone", "route53.aws.upbound.io/Zone", "network.azure.upbound.io/DNSZone",
		"platform.example.org/Database", "platform.example.org/XDatabase":
		return true
	case "kubernetes.crossplane.io/Object", "kubernetes.m.crossplane.io/Object":
		spec, _ := o["spec"].(map[string]any)
		fp, _ := spec["forProvider"].(map[string]any)
		manifest, _ := fp["manifest"].(map[string]any)
		k := manifest["kind"]
		return k == "Namespace" || k == "PersistentVolumeClaim"
	}
	return false
}

// A specEdit is a change an owner may make to an example XR's spec. One
// that removes something explicitly (a list entry, a section, a
// confirmation) names the composed resources it may take with it.
type specEdit struct {
	path  string
	value any
	// removes are the composition-resource names, or prefixes ending in
	// '*', the edit removes explicitly.
	removes []string
}

// specEdits are the edits tried on each module's example: renames of what
// names derive from, versions and sizes down and up, moves to another
// Cluster or region, and explicit removals.
var specEdits = map[string][]specEdit{
	"database": {
		{path: "spec.parameters.version", value: "15"},
		{path: "spec.parameters.version", value: "17"},
		{path: "spec.parameters.version", value: "14"},
		{path: "spec.parameters.storageGb", value: 10.0},
		{path: "spec.parameters.storageGb", value: 500.0},
		{path: "spec.parameters.location", value: "elsewhere-1"},
		{path: "spec.parameters.clusterRef", value: map[string]any{"name": "other-cluster"}},
		{path: "spec.parameters.clusterRef", value: nil},
		{path: "spec.parameters.network", value: map[string]any{"cidr": "10.99.0.0/24"}},
		{path: "spec.parameters.size", value: "large"},
		{path: "spec.parameters.deletionProtection", value: false},
		{path: "spec.parameters.databases", value: []any{"renamed"}, removes: []string{"database-*"}},
		{path: "spec.parameters.databases", value: nil, removes: []string{"database-*"}},
		{path: "spec.parameters.confirmRemovals", value: []any{"instance"}, removes: []string{"instance"}},
	},
	"appenvironment": {
		{path: "spec.parameters.namespace", value: "renamed"},
		{path: "spec.parameters.clusterRef", value: map[string]any{"name": "other-cluster"}},
		{path: "spec.parameters.database.size", value: "large"},
		{path: "spec.parameters.database.version", value: "15"},
		{path: "spec.parameters.bucket.name", value: "acme-renamed-bucket"},
		{path: "spec.parameters.bucket.website", value: false},
		{path: "spec.parameters.ingress.host", value: "renamed.prod.example.com"},
		{path: "spec.parameters.frontend.host", value: "renamed-app.prod.example.com"},
		{path: "spec.parameters.database", value: nil, removes: []string{"database", "database-connection"}},
		{path: "spec.parameters.bucket", value: nil, removes: []string{"bucket*"}},
		{path: "spec.parameters.frontend", value: nil, removes: []string{"frontend*"}},
	},
	"cluster": {
		{path: "spec.parameters.domain", value: "renamed.example.com"},
		{path: "spec.parameters.location", value: "elsewhere-1"},
		// The documented statement that removes the zones (docs/api.md).
		{path: "spec.parameters.createDnsZones", value: false, removes: []string{"public-dns-zone", "private-dns-zone"}},
		// Made public, a cluster keeps its private zone (docs/safety.md,
		// removal authority); GKE keeps its private nodes and their NAT.
		{path: "spec.parameters.privateCluster", value: false},
		{path: "spec.parameters.version", value: "1.20"},
		{path: "spec.parameters.network", value: map[string]any{"cidr": "10.99.0.0/16"}},
		{path: "spec.parameters.parentZone", value: nil},
	},
}

// noDataLost renders the example XR of a cloud and module against its
// converged stack with the edits applied in turn, each against what the
// one before rendered, and fails if a resource that holds data goes
// without an edit that removed it explicitly. A Fatal changes nothing.
func noDataLost(t *testing.T, cloud, kind string, edits []specEdit) {
	t.Helper()
	x := fntest.ClaimComposite(overlay.DeepCopy(fntest.MustLoad(filepath.Join(examples, cloud, kind+".yaml"))[0]))
	m, ok := modules.ForKind(fmt.Sprint(x["kind"]))
	if !ok {
		t.Fatalf("no module serves %v", x["kind"])
	}
	extra, err := fntest.Required(examples, cloud, x, m.Clusters)
	if err != nil {
		t.Fatal(err)
	}
	envs := fntest.MustLoad(filepath.Join(examples, "envconfigs"))
	observed := fntest.ComposedBy(fntest.ObservedFile(filepath.Join(examples, cloud, "observed", kind+".yaml")), fmt.Sprint(x["metadata"].(map[string]any)["name"]))
	var removes, done []string
	for _, e := range edits {
		fntest.Set(e.path, overlay.DeepCopyValue(e.value))(x)
		removes = append(removes, e.removes...)
		done = append(done, fmt.Sprintf("%s=%v", e.path, e.value))
		req, err := fntest.Request{XR: x, EnvironmentConfigs: envs, Observed: observed, Extra: extra}.Proto()
		if err != nil {
			t.Fatal(err)
		}
		rsp := runner(m)(req)
		if fntest.Fatal(rsp) != "" {
			continue
		}
		desired := fntest.Desired(rsp)
		for _, name := range slices.Sorted(maps.Keys(observed)) {
			if _, ok := desired[name]; ok || !holdsData(observed[name]) || explicit(name, removes) {
				continue
			}
			t.Errorf("%s %s after %s: %s %q, which holds data, is no longer desired, and no edit removed it", cloud, kind, strings.Join(done, ", "), observed[name]["kind"], name)
		}
		observed = fntest.ObserveAll(rsp, observed)
	}
}

// explicit reports whether an edit removed the named resource explicitly.
func explicit(name string, removes []string) bool {
	for _, r := range removes {
		if p, ok := strings.CutSuffix(r, "*"); ok && strings.HasPrefix(name, p) || name == r {
			return true
		}
	}
	return false
}

// TestNoDataLost tries every edit, and every pair of edits, on each
// module's example on each cloud.
func TestNoDataLost(t *testing.T) {
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		for _, kind := range []string{"cluster", "database", "appenvironment"} {
			edits := specEdits[kind]
			t.Run(cloud+"/"+kind, func(t *testing.T) {
				for i := range edits {
					noDataLost(t, cloud, kind, []specEdit{edits[i]})
					for j := range edits {
						if j != i {
							noDataLost(t, cloud, kind, []specEdit{edits[i], edits[j]})
						}
					}
				}
			})
		}
	}
}

// FuzzNoDataLost tries sequences of up to four edits.
func FuzzNoDataLost(f *testing.F) {
	f.Add(uint8(0), uint8(1), []byte{0, 11})
	f.Add(uint8(1), uint8(2), []byte{0, 4, 9})
	f.Add(uint8(2), uint8(0), []byte{0, 1, 2, 3})
	clouds, kinds := []string{"gcp", "aws", "azure"}, []string{"cluster", "database", "appenvironment"}
	f.Fuzz(func(t *testing.T, cloudIdx, kindIdx uint8, picks []byte) {
		if len(picks) == 0 || len(picks) > 4 {
			t.Skip("one to four edits")
		}
		kind := kinds[int(kindIdx)%len(kinds)]
		edits := make([]specEdit, 0, len(picks))
		for _, p := range picks {
			edits = append(edits, specEdits[kind][int(p)%len(specEdits[kind])])
		}
		noDataLost(t, clouds[int(cloudIdx)%len(clouds)], kind, edits)
	})
}
