package preview

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// FleetCluster is a Cluster of the fleet as it stands before the
// environment changes: what the rollout report places in its wave.
type FleetCluster struct {
	rollout.Member
	// Pins is the XR's own spec.parameters.version, which wins over the
	// environment's version: the environment's change does not move it.
	Pins string
}

// clusterOf is the Cluster x before the change (rollout.MemberOf): as its
// file's status reports it when the file has conditions (kubectl get -o
// yaml), otherwise as the old environment's reconcile leaves it (before,
// the XR with the status that reconcile desires); failed with fatal's
// words when the old environment refuses it. It is nil for an XR that is
// not a Cluster.
func clusterOf(x, before xpsim.Object, fatal string) *FleetCluster {
	if x["kind"] != xr.ClusterKind && x["kind"] != xr.LegacyClusterKind {
		return nil
	}
	from := before
	if status, _ := x["status"].(map[string]any); status["conditions"] != nil || before == nil {
		from = x
	}
	c := &FleetCluster{Member: rollout.MemberOf(from)}
	if fatal != "" {
		c.Failed, c.Ready, c.Reason = true, false, fatal
	}
	spec, _ := x["spec"].(map[string]any)
	params, _ := spec["parameters"].(map[string]any)
	if v, ok := params["version"]; ok && v != nil {
		c.Pins = fmt.Sprint(v)
	}
	c.Pinned = c.Pins != ""
	return c
}

// Rollout is how the updated environment's rollout waves (package
// rollout) take the fleet's Clusters to its Kubernetes version: each wave
// in order, what gates it, and its Clusters per cloud. The version and the
// waves are the baseline EnvironmentConfigs' (the layer labelled
// baseline=default), as the portal's fleet view reads them.
type Rollout struct {
	// From is the Kubernetes minor the old environment asks for (version,
	// else cluster.DefaultVersion); Target the updated one's.
	From   string `json:"from"`
	Target string `json:"target"`
	// Charts are the chart versions the updated catalog moves, by chart,
	// gated with the Kubernetes minor; FromCharts what the old catalog
	// asks for them.
	Charts     map[string]string `json:"charts,omitempty"`
	FromCharts map[string]string `json:"fromCharts,omitempty"`
	// Message says what is wrong with the rollout keys (then no wave is
	// shown: the function refuses every Cluster with a Fatal), or that
	// the environment sets no waves.
	Message string `json:"message,omitempty"`
	// Waves are the waves in the environment's order; without waves, one
	// unnamed wave of every Cluster.
	Waves []Wave `json:"waves"`
}

// Wave is one wave of a Rollout: its keys, its gate, its Clusters.
type Wave struct {
	// Name is rollout.waves[Index].name; "" when the environment sets no
	// waves, and every Cluster moves at once.
	Name  string `json:"name"`
	Index int    `json:"index"`
	// Namespaces are the namespaces whose Clusters its label admits;
	// empty: every namespace.
	Namespaces []string `json:"namespaces"`
	// Last is set on the last wave, which also counts every Cluster whose
	// label names no wave that admits it (rollout.WaveOf).
	Last bool `json:"last"`
	// After are the earlier waves: each of their Clusters runs the target
	// and is Ready before this wave's Clusters adopt it.
	After []string `json:"after"`
	// MaxUnavailable is how many of its Clusters move at once (0: no
	// limit).
	MaxUnavailable int `json:"maxUnavailable"`
	// RequiresApproval holds the wave until rollout.waves[Index].approved
	// lists the target; Approved says whether it does.
	RequiresApproval bool `json:"requiresApproval"`
	Approved         bool `json:"approved"`
	// Verdict and Message are the wave's gate as the fleet stands before
	// the change (rollout.GateOf): what a Cluster of the wave that does
	// not run the target does now, and why.
	Verdict string `json:"verdict"`
	Message string `json:"message"`
	// Clouds are its Clusters per cloud, in cloud order.
	Clouds []WaveCloud `json:"clouds"`
}

// WaveCloud is a wave's Clusters on one cloud, in namespace/name order.
type WaveCloud struct {
	Cloud    string        `json:"cloud"`
	Clusters []WaveCluster `json:"clusters"`
}

// WaveCluster is one Cluster of a wave, as it stands before the change.
type WaveCluster struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Runs is the Kubernetes minor it runs now (rollout.Member.Runs), ""
	// when it reports none.
	Runs  string `json:"runs"`
	Ready bool   `json:"ready"`
	// Failed and Reason are rollout.Member's.
	Failed bool   `json:"failed"`
	Reason string `json:"reason,omitempty"`
	// Label is its wave label (rollout.Label), when it has one.
	Label string `json:"label,omitempty"`
	// ByDefault is set when it counts in the last wave because its label
	// names no wave that admits its namespace (or it has none).
	ByDefault bool `json:"byDefault"`
	// Pins is its own spec.parameters.version, when it names one.
	Pins string `json:"pins,omitempty"`
	// Note says, in words, why it is in this wave when by default, that
	// it pins its version, and that it failed.
	Note string `json:"note,omitempty"`
}

// baselineSettings are the Cluster keys of the world's baseline
// EnvironmentConfigs (cluster.SettingsOf) and what is wrong with their
// rollout keys. Delivered as required resources, only the platform's
// configs (envcfg.Selector) count, as for the function.
func (w World) baselineSettings() (*cluster.Settings, field.ErrorList) {
	also := map[string]string{envcfg.SelectorLabel: envcfg.SelectorValue}
	if w.InContext {
		also = nil
	}
	merged, _ := xpsim.MergeEnvironment(w.Environment, "", "", also)[envcfg.ContextKey].(map[string]any)
	return cluster.BaselineOf(merged)
}

// RolloutOf is the rollout of an environment change over the fleet's
// Clusters (the impacts' FleetCluster), or nil when the change moves no
// Kubernetes version and the updated environment sets no rollout waves.
// Which wave a Cluster is in is rollout.WaveOf's.
func RolloutOf(old, updated World, xrs []Impact) *Rollout {
	before, _ := old.baselineSettings()
	after, problems := updated.baselineSettings()
	r := &Rollout{
		From:   rollout.Minor(cmp.Or(before.Version, cluster.DefaultVersion)),
		Target: rollout.Minor(cmp.Or(after.Version, cluster.DefaultVersion)),
		Waves:  []Wave{},
	}
	r.Charts, r.FromCharts = movedCharts(before, after)
	waves := after.Rollout.Waves
	if r.From == r.Target && len(r.Charts) == 0 && len(waves) == 0 && len(problems) == 0 {
		return nil
	}
	if len(problems) > 0 {
		r.Message = "the rollout keys are invalid, so the function refuses every Cluster and no wave is shown: " + problems.ToAggregate().Error()
		return r
	}
	var clusters []FleetCluster
	for _, im := range xrs {
		if im.Cluster != nil {
			clusters = append(clusters, *im.Cluster)
		}
	}
	slices.SortFunc(clusters, func(a, b FleetCluster) int { return cmp.Compare(a.Key(), b.Key()) })
	members := make([]rollout.Member, 0, len(clusters))
	for _, c := range clusters {
		members = append(members, c.Member)
	}

	shown := waves
	if len(waves) == 0 {
		r.Message = "the environment sets no rollout waves (rollout.waves): every Cluster adopts " + r.Target + " at once"
		shown = []rollout.Wave{{}}
	}
	target := rollout.Target{Kubernetes: r.Target, Charts: r.Charts}
	// What a Cluster asked for before: the changes approvals must name
	// are the target's differences from it. When nothing moves, the gate
	// shown is a Cluster's that runs nothing of the target yet.
	from := rollout.Target{Kubernetes: r.From, Charts: r.FromCharts}
	if from.Equal(target) {
		from = rollout.Target{}
	}
	byWave := make([]map[string][]WaveCluster, len(shown))
	for _, c := range clusters {
		i := rollout.WaveOf(shown, c.Member)
		if byWave[i] == nil {
			byWave[i] = map[string][]WaveCluster{}
		}
		byWave[i][c.Cloud] = append(byWave[i][c.Cloud], waveCluster(waves, i, c))
	}
	for i, w := range shown {
		d := rollout.GateOf(waves, i, from, target, members, func(string) bool { return true })
		wv := Wave{
			Name: w.Name, Index: i, Namespaces: slices.Clone(w.Namespaces), Last: i == len(shown)-1, After: []string{},
			MaxUnavailable: w.MaxUnavailable, RequiresApproval: w.RequiresApproval,
			Approved: len(w.Approved) > 0 && len(w.Unapproved(target, from)) == 0,
			Verdict:  string(d.Verdict), Message: d.Message, Clouds: []WaveCloud{},
		}
		if wv.Namespaces == nil {
			wv.Namespaces = []string{}
		}
		for _, e := range shown[:i] {
			wv.After = append(wv.After, e.Name)
		}
		for _, cloud := range slices.Sorted(maps.Keys(byWave[i])) {
			wv.Clouds = append(wv.Clouds, WaveCloud{Cloud: cloud, Clusters: byWave[i][cloud]})
		}
		r.Waves = append(r.Waves, wv)
	}
	return r
}

// movedCharts are the chart versions the updated catalog moves (of the
// charts it enables), and what the old catalog asks for them; nil when it
// moves none.
func movedCharts(before, after *cluster.Settings) (to, from map[string]string) {
	old := cluster.Catalog(before)
	for name, c := range cluster.Catalog(after) {
		if c.Disabled || c.Version == old[name].Version {
			continue
		}
		if to == nil {
			to, from = map[string]string{}, map[string]string{}
		}
		to[name], from[name] = c.Version, old[name].Version
	}
	return to, from
}

// waveCluster is Cluster c of wave i of waves (none: the one unnamed
// wave).
func waveCluster(waves []rollout.Wave, i int, c FleetCluster) WaveCluster {
	wc := WaveCluster{
		Name: c.Name, Namespace: c.Namespace, Runs: c.Runs.Kubernetes, Ready: c.Ready, Failed: c.Failed, Reason: c.Reason,
		Label: c.Wave, Pins: c.Pins,
	}
	var notes []string
	if len(waves) > 0 && c.Wave != waves[i].Name {
		wc.ByDefault = true
		j := slices.IndexFunc(waves, func(w rollout.Wave) bool { return w.Name == c.Wave })
		switch {
		case c.Wave == "":
			notes = append(notes, "no wave label: counts in the last wave")
		case j < 0:
			notes = append(notes, fmt.Sprintf("labelled %s, which is no wave: counts in the last wave", c.Wave))
		case c.Namespace == "":
			notes = append(notes, fmt.Sprintf("labelled %s, whose namespaces (rollout.waves[%d].namespaces) admit no cluster-scoped XR: counts in the last wave", c.Wave, j))
		default:
			notes = append(notes, fmt.Sprintf("labelled %s, whose namespaces (rollout.waves[%d].namespaces) do not admit %s: counts in the last wave", c.Wave, j, c.Namespace))
		}
	}
	if c.Pins != "" {
		notes = append(notes, "pins "+c.Pins+" (spec.parameters.version): the environment's version does not move it")
	}
	switch {
	case c.Failed:
		notes = append(notes, "failed: "+c.Reason)
	case !c.Ready && c.Reason != "":
		notes = append(notes, "not Ready: "+c.Reason)
	}
	wc.Note = strings.Join(notes, "; ")
	return wc
}
