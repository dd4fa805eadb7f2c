package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// A dayTwo case changes a converged example Cluster the way its owner does
// on day 200, or reports what its providers would (or what an earlier
// version of the function composed, for a Database), and renders it through
// the crossplane CLI against its converged observed resources: the
// function must refuse it with a Fatal naming the field, or render a
// desired state that check accepts, that withdraws nothing, and that
// validates against the provider CRDs.
type dayTwo struct {
	attack
	// observed changes what the providers report.
	observed func(map[string]xpsim.Object)
	// check inspects the render.
	check func(rendered map[string]xpsim.Object) error
}

// versionField is where each cloud's cluster and pools ask for a version.
var versionField = map[string]struct{ cluster, pool string }{
	"gcp":   {"spec.forProvider.minMasterVersion", "spec.forProvider.version"},
	"aws":   {"spec.forProvider.version", "spec.forProvider.version"},
	"azure": {"spec.forProvider.kubernetesVersion", "spec.forProvider.orchestratorVersion"},
}

// runningField is where each cloud's cluster reports the version it runs.
var runningField = map[string]string{
	"gcp":   "status.atProvider.masterVersion",
	"aws":   "status.atProvider.version",
	"azure": "status.atProvider.currentKubernetesVersion",
}

// lookup reads a dotted path of an object.
func lookup(o xpsim.Object, path string) any {
	var cur any = map[string]any(o)
	for _, p := range strings.Split(path, ".") {
		m, _ := cur.(map[string]any)
		cur = m[p]
	}
	return cur
}

// wants checks a field of a rendered resource.
func wants(name, path string, want any) func(map[string]xpsim.Object) error {
	return func(r map[string]xpsim.Object) error {
		o, ok := r[name]
		if !ok {
			return fmt.Errorf("%s is not rendered", name)
		}
		if got := lookup(o, path); fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("%s %s = %v, want %v", name, path, got, want)
		}
		return nil
	}
}

// all runs every check.
func all(checks ...func(map[string]xpsim.Object) error) func(map[string]xpsim.Object) error {
	return func(r map[string]xpsim.Object) error {
		for _, c := range checks {
			if err := c(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// upgradedPools checks that every pool resource asks for version (or, for
// none, asks for none).
func upgradedPools(cloud, version string) func(map[string]xpsim.Object) error {
	return func(r map[string]xpsim.Object) error {
		for name, o := range r {
			if !strings.HasPrefix(name, "nodepool-") || strings.Contains(name, "-uses-") {
				continue
			}
			if got, _ := lookup(o, versionField[cloud].pool).(string); got != version {
				return fmt.Errorf("%s %s = %q, want %q", name, versionField[cloud].pool, got, version)
			}
		}
		return nil
	}
}

// onePoolMoves checks that, the control plane having reported to, at most
// one pool resource asks for it (lifecycle.parallelPools 1) and the others
// for from.
func onePoolMoves(cloud, from, to string) func(map[string]xpsim.Object) error {
	return func(r map[string]xpsim.Object) error {
		moved := 0
		for name, o := range r {
			if !strings.HasPrefix(name, "nodepool-") || strings.Contains(name, "-uses-") {
				continue
			}
			switch got, _ := lookup(o, versionField[cloud].pool).(string); got {
			case to:
				moved++
			case from:
			default:
				return fmt.Errorf("%s asks for %q, want %s or %s", name, got, from, to)
			}
		}
		if moved > 1 {
			return fmt.Errorf("%d pools move at once", moved)
		}
		return nil
	}
}

// rotated checks that a pool has a new generation beside it, the old one
// rendered as it is observed.
func rotated(pool string) func(map[string]xpsim.Object) error {
	return func(r map[string]xpsim.Object) error {
		if _, ok := r["nodepool-"+pool]; !ok {
			return fmt.Errorf("nodepool-%s is not kept while its new generation is created", pool)
		}
		for name := range r {
			if rest, ok := strings.CutPrefix(name, "nodepool-"+pool+"-"); ok && !strings.Contains(rest, "-") {
				return nil
			}
		}
		return fmt.Errorf("no new generation of pool %s is rendered: %v", pool, slices.Sorted(maps.Keys(r)))
	}
}

// reports sets what the providers report of a resource.
func reports(name, path string, v any) func(map[string]xpsim.Object) {
	return func(o map[string]xpsim.Object) { fntest.Set(path, v)(o[name]) }
}

// inProduction labels the XR with the rollout wave production and removes
// its version pin, which leaves a Cluster out of the rollout: it follows
// the environment's version.
func inProduction(o xpsim.Object) {
	labels, _ := o["metadata"].(map[string]any)["labels"].(map[string]any)
	labels["platform.example.org/wave"] = "production"
	set("spec.parameters.version", nil)(o)
}

// rolloutEnv raises the environment's version to 1.34 with two waves,
// staging before production.
func rolloutEnv(e map[string]xpsim.Object) {
	envSet("baseline.yaml", "version", "1.34")(e)
	envSet("baseline.yaml", "rollout", map[string]any{"waves": []any{map[string]any{"name": "staging"}, map[string]any{"name": "production"}}})(e)
}

// chartEnv moves the catalog's cert-manager to v1.19.2 with the same two
// waves.
func chartEnv(e map[string]xpsim.Object) {
	envSet("baseline.yaml", "charts.cert-manager.version", "v1.19.2")(e)
	envSet("baseline.yaml", "rollout", map[string]any{"waves": []any{map[string]any{"name": "staging"}, map[string]any{"name": "production"}}})(e)
}

// stagingCluster is a Cluster of wave staging on another cloud than the
// example's, in another namespace, as the API server holds it for the
// fleet controller: its control plane and pool run runs, its releases the
// charts' versions (status.charts; none when nil), and it is Ready.
func stagingCluster(cloud, runs string, charts map[string]any) xpsim.Object {
	if charts == nil {
		charts = map[string]any{}
	}
	other := map[string]string{"gcp": "aws", "aws": "azure", "azure": "gcp"}[cloud]
	return xpsim.Object{
		"apiVersion": "platform.example.org/v1alpha1", "kind": "Cluster",
		"metadata": map[string]any{"name": "staging-" + other, "namespace": "staging",
			"labels": map[string]any{"cloud": other, "platform.example.org/wave": "staging"}},
		"status": map[string]any{
			"upgrade":   map[string]any{"target": runs, "controlPlane": runs},
			"nodePools": []any{map[string]any{"name": "default", "version": runs}},
			"charts":    charts,
			"conditions": []any{
				map[string]any{"type": "Ready", "status": "True", "reason": "Available"},
				map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
			},
		},
	}
}

// sharedAccessBefore is what a GCP Database on a Cluster composed of the
// Cluster's private services access before the Cluster composed it.
const sharedAccessBefore = "internal/modules/database/testdata/upgrade/gcp-shared-access.yaml"

// dayTwoCases are upgrades, skips, downgrades, rotations and maintenance
// windows on every cloud, private nodes on GKE, a Spot pool made regular on
// AKS, an EKS zone added, and a GCP Database under an upgraded function.
func dayTwoCases() []dayTwo {
	var out []dayTwo
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		ex := cloud + "/cluster.yaml"
		vf := versionField[cloud]
		pools := upgradedPools(cloud, "1.33")
		if cloud == "gcp" {
			pools = upgradedPools(cloud, "") // a release channel upgrades them
		}
		poolsAfterReport := onePoolMoves(cloud, "1.33", "1.34")
		if cloud == "gcp" {
			poolsAfterReport = upgradedPools(cloud, "")
		}
		running := map[string]string{"gcp": "1.34.5-gke.1200000", "aws": "1.34", "azure": "1.34.5"}[cloud]
		out = append(out,
			dayTwo{attack: attack{name: cloud + "-upgrade", example: ex, xr: set("spec.parameters.version", "1.34")},
				check: all(wants("cluster", vf.cluster, "1.34"), pools)},
			dayTwo{attack: attack{name: cloud + "-upgrade-reported", example: ex, xr: set("spec.parameters.version", "1.34")},
				observed: func(o map[string]xpsim.Object) {
					reports("cluster", vf.cluster, "1.34")(o)
					reports("cluster", runningField[cloud], running)(o)
				},
				check: all(wants("cluster", vf.cluster, "1.34"), poolsAfterReport)},
			dayTwo{attack: attack{name: cloud + "-skip", example: ex, xr: set("spec.parameters.version", "1.35")},
				check: all(wants("cluster", vf.cluster, "1.34"), pools)},
			dayTwo{attack: attack{name: cloud + "-downgrade", example: ex, xr: set("spec.parameters.version", "1.31"),
				fatal: `spec.parameters.version: Invalid value: "1.31": the control plane runs 1.33 and is never downgraded; allowed targets: 1.33, 1.34, 1.35, 1.36`}},
			dayTwo{attack: attack{name: cloud + "-outside-window", example: ex, xr: set("spec.parameters.version", "1.37"),
				fatal: `the environment supports 1.29 to 1.36`}},
			// The environment moves to 1.34 with rollout waves: the
			// example Cluster, of wave production, keeps 1.33 while a
			// staging Cluster of another cloud runs 1.33, and moves once
			// it runs 1.34 Ready.
			dayTwo{attack: attack{name: cloud + "-rollout-held", example: ex, xr: inProduction, env: rolloutEnv, fleet: []xpsim.Object{stagingCluster(cloud, "1.33", nil)}},
				check: all(wants("cluster", vf.cluster, "1.33"), pools)},
			dayTwo{attack: attack{name: cloud + "-rollout-moves", example: ex, xr: inProduction, env: rolloutEnv, fleet: []xpsim.Object{stagingCluster(cloud, "1.34", nil)}},
				check: all(wants("cluster", vf.cluster, "1.34"), pools)},
			// A new cert-manager in the catalog: production's release
			// keeps v1.19.1 while staging runs it, and moves after.
			dayTwo{attack: attack{name: cloud + "-rollout-chart-held", example: ex, xr: inProduction, env: chartEnv, fleet: []xpsim.Object{stagingCluster(cloud, "1.33", map[string]any{"cert-manager": "v1.19.1"})}},
				check: all(wants("cluster", vf.cluster, "1.33"), wants("release-cert-manager", "spec.forProvider.chart.version", "v1.19.1"))},
			dayTwo{attack: attack{name: cloud + "-rollout-chart-moves", example: ex, xr: inProduction, env: chartEnv, fleet: []xpsim.Object{stagingCluster(cloud, "1.33", map[string]any{"cert-manager": "v1.19.2"})}},
				check: all(wants("cluster", vf.cluster, "1.33"), wants("release-cert-manager", "spec.forProvider.chart.version", "v1.19.2"))},
			dayTwo{attack: attack{name: cloud + "-maintenance", example: ex, xr: set("spec.parameters.maintenance", map[string]any{"day": "Sunday", "startTime": "01:00", "durationHours": 12})},
				check: map[string]func(map[string]xpsim.Object) error{
					"gcp":   wants("cluster", "spec.forProvider.maintenancePolicy.recurringWindow.recurrence", "FREQ=WEEKLY;BYDAY=SU"),
					"aws":   wants("cluster", "spec.forProvider.version", "1.33"),
					"azure": all(wants("cluster", "spec.forProvider.maintenanceWindowAutoUpgrade.dayOfWeek", "Sunday"), wants("cluster", "spec.forProvider.maintenanceWindowNodeOs.duration", 12)),
				}[cloud]},
		)
	}
	out = append(out,
		// A machine type GKE changes in place; spot it cannot.
		dayTwo{attack: attack{name: "gcp-machine-type", example: "gcp/cluster.yaml", xr: set("spec.parameters.pools.default.size", "large")},
			check: wants("nodepool-default", "spec.forProvider.nodeConfig.machineType", "e2-standard-8")},
		dayTwo{attack: attack{name: "gcp-rotate-spot", example: "gcp/cluster.yaml", xr: set("spec.parameters.pools.default.spot", true)}, check: rotated("default")},
		dayTwo{attack: attack{name: "aws-rotate-instance-type", example: "aws/cluster.yaml", xr: set("spec.parameters.pools.default.size", "large")}, check: rotated("default")},
		dayTwo{attack: attack{name: "azure-rotate-vm-size", example: "azure/cluster.yaml", xr: set("spec.parameters.pools.default.size", "large")}, check: rotated("default")},
		dayTwo{attack: attack{name: "aws-rotate-imported", example: "aws/cluster.yaml",
			xr:    both(set("spec.parameters.pools.default.size", "large"), set("spec.parameters.import", map[string]any{"enabled": true, "mode": "manage", "resources": map[string]any{"nodepool-default": "default"}})),
			fatal: "node pool default is imported"}},
		dayTwo{attack: attack{name: "azure-system-pool-cycles", example: "azure/cluster.yaml", env: envSet("cloud-azure.yaml", "azure.systemPool.size", "medium")},
			check: wants("cluster", "spec.forProvider.defaultNodePool.vmSize", "Standard_D4s_v5")},
		// Private nodes: made public, GKE keeps its private nodes and
		// their Cloud NAT, and opens the endpoint in place; the private
		// zone, which holds records, is held for its owner to remove;
		// made private, a public cluster would need the control plane's
		// range, which GKE sets only at creation: refused.
		dayTwo{attack: attack{name: "gcp-private-to-public", example: "gcp/cluster.yaml", xr: set("spec.parameters.privateCluster", false), held: []string{"private-dns-zone"}},
			check: all(wants("cluster", "spec.forProvider.privateClusterConfig.enablePrivateNodes", true), wants("cluster", "spec.forProvider.privateClusterConfig.enablePrivateEndpoint", false),
				wants("nat", "spec.forProvider.sourceSubnetworkIpRangesToNat", "ALL_SUBNETWORKS_ALL_IP_RANGES"))},
		dayTwo{attack: attack{name: "gcp-public-to-private", example: "gcp/legacy.yaml", xr: set("spec.parameters.privateCluster", true),
			fatal: `spec.parameters.privateCluster: Invalid value: true: GKE cluster "legacy-prod" runs public nodes`}},
		// A Spot pool made regular rotates (azurerm priority is ForceNew),
		// its new generation regular with surge settings, the Spot one
		// kept as it is, without them.
		dayTwo{attack: attack{name: "azure-spot-to-regular", example: "azure/cluster.yaml", xr: set("spec.parameters.pools.batch.spot", false)},
			check: all(rotated("batch"), wants("nodepool-batch", "spec.forProvider.priority", "Spot"), wants("nodepool-batch", "spec.forProvider.upgradeSettings", nil))},
		// Node groups that resolved their subnets when the environment
		// had two zones rotate into the third's.
		dayTwo{attack: attack{name: "aws-zone-added", example: "aws/cluster.yaml"},
			observed: func(o map[string]xpsim.Object) {
				ids := []any{lookup(o["subnet-private-a"], "status.atProvider.id"), lookup(o["subnet-private-b"], "status.atProvider.id")}
				for _, pool := range []string{"nodepool-default", "nodepool-batch"} {
					reports(pool, "spec.forProvider.subnetIds", ids)(o)
				}
			},
			check: rotated("batch")},
		dayTwo{attack: attack{name: "gcp-short-maintenance", example: "gcp/cluster.yaml", xr: set("spec.parameters.maintenance", map[string]any{"day": "Sunday", "startTime": "01:00", "durationHours": 4}),
			fatal: "spec.parameters.maintenance.durationHours: Invalid value: 4: GKE needs maintenance windows that allow at least 48 hours in any 32 days"}},
		// The function upgraded under a Database that composed its
		// Cluster's private services range and connection itself (with
		// the Orphan policies): they are held for its owner to confirm,
		// as they were, while the instance holds the Cluster's.
		dayTwo{attack: attack{name: "gcp-database-upgraded", example: "gcp/database.yaml", held: []string{"private-ip-range", "private-service-connection"}},
			observed: func(o map[string]xpsim.Object) {
				delete(o, "instance-uses-cluster-private-services-connection")
				maps.Copy(o, fntest.ObservedFile(sharedAccessBefore))
			},
			check: all(wants("private-service-connection", "spec.forProvider.deletionPolicy", "ABANDON"),
				wants("instance-uses-cluster-private-services-connection", "spec.of.resourceSelector.matchLabels", map[string]any{"crossplane.io/composite": "prod-cluster", "platform.example.org/resource": "private-services-connection"}))},
	)
	return append(out, dataDayTwoCases()...)
}

// dayTwoRun replays every case through the crossplane CLI and validates
// every render.
func dayTwoRun(crossplane, out, crds, cache, image string) error {
	comps, xrds, err := apis()
	if err != nil {
		return err
	}
	envs, err := exampleEnvs()
	if err != nil {
		return err
	}
	extensions := append(dirs(crds), slices.Compact(slices.Sorted(maps.Values(xrds)))...)
	refused, rendered := 0, 0
	for _, c := range dayTwoCases() {
		dir := filepath.Join(out, c.name)
		a := c.attack
		if c.observed != nil {
			a.observedEdit = c.observed
		}
		msg, err := a.replay(crossplane, comps, envs, dir)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		if a.fatal != "" {
			refused++
			fmt.Printf("day-two   %-28s %-20s %s\n", c.name, c.example, msg)
			continue
		}
		objs, err := xpsim.Load(filepath.Join(dir, "render.yaml"))
		if err != nil {
			return err
		}
		byName := map[string]xpsim.Object{}
		for _, o := range objs {
			if n := xpsim.CompositionResourceName(o); n != "" {
				byName[n] = o
			}
		}
		if c.check != nil {
			if err := c.check(byName); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
		}
		if !validateOne(crossplane, extensions, filepath.Join(dir, "render.yaml"), cache, image, fmt.Sprintf("%-28s", c.name)) {
			return fmt.Errorf("%s: the render does not validate", c.name)
		}
		rendered++
		fmt.Printf("day-two   %-28s %-20s %s\n", c.name, c.example, strings.Replace(msg, "updated in place", "rendered and checked", 1))
	}
	fmt.Printf("day-two   %d cases through the crossplane CLI: %d refused with a Fatal naming the field, %d rendered, checked, nothing withdrawn, and validated\n", refused+rendered, refused, rendered)
	return nil
}
