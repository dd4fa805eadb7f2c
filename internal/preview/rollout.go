package preview

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// FleetCluster is a Cluster of the fleet as the environment's change
// reaches it (reported): what the rollout report places in its wave, and
// the fleet controller's ruling on it.
type FleetCluster struct {
	rollout.Member
	// Pins is the XR's own spec.parameters.version, which wins over the
	// environment's version: the environment's change does not move it.
	Pins string
	// Wants is the target it reports its environment asks it for
	// (rollout.WantsOf), when Reports says it reports one.
	Wants   rollout.Target
	Reports bool
	// Refused is the Fatal that refused it, under the old environment or
	// the new one.
	Refused string
	// Ruling is the fleet controller's ruling on it (fleet.Rule); nil
	// when the controller rules on nothing for it (the rollout does not
	// hold it, it pins its version, reports no target, or the rollout keys
	// are invalid).
	Ruling *rollout.Ruling
	// Says and Saying are its own status.rollout verdict and message: what
	// it does when no ruling holds it (Adopt, Keep, Pinned).
	Says, Saying string
}

// clusterOf is the Cluster obj (rollout.MemberOf), as the API server
// holds it (reported), which fatal refused unless empty.
func clusterOf(obj xpsim.Object, fatal string) *FleetCluster {
	c := &FleetCluster{Member: rollout.MemberOf(obj), Refused: fatal}
	c.Wants, c.Reports = rollout.WantsOf(obj)
	if st, ok := obj["status"].(map[string]any); ok {
		r, _ := st["rollout"].(map[string]any)
		c.Says, _ = r["verdict"].(string)
		c.Saying, _ = r["message"].(string)
	}
	spec, _ := obj["spec"].(map[string]any)
	params, _ := spec["parameters"].(map[string]any)
	if v, ok := params["version"]; ok && v != nil {
		c.Pins = fmt.Sprint(v)
	}
	return c
}

// reported is a Cluster XR as the API server holds it once Crossplane's
// first reconcile under the new environment has run: first, the XR that
// reconcile renders (the status the function desires, with the
// conditions Crossplane derives), Synced True; or, when that reconcile is
// refused (fatal, under the old environment or the new one), stands, the
// XR as it stood, with Synced False for the Fatal, as Crossplane writes no
// other status then. Each condition is observed at the object's
// generation, as Crossplane observes them, and keeps the
// lastTransitionTime of file's condition of its type while its status is
// the same (when the file has one, as kubectl prints it); every other
// time is unknown, since crossplane render's fixed time is no time a
// Cluster turned Ready, so that no wave's soak counts from it.
func reported(file, stands, first xpsim.Object, fatal string) xpsim.Object {
	out := overlay.DeepCopy(first)
	synced := condition("Synced", "True", "ReconcileSuccess", "")
	if fatal != "" || first == nil {
		out, synced = overlay.DeepCopy(stands), condition("Synced", "False", "ReconcileError", fatal)
	}
	status, _ := out["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		out["status"] = status
	}
	own := map[string]map[string]any{}
	fileStatus, _ := file["status"].(map[string]any)
	list, _ := fileStatus["conditions"].([]any)
	for _, c := range list {
		if m, ok := c.(map[string]any); ok {
			own[fmt.Sprint(m["type"])] = m
		}
	}
	old, _ := status["conditions"].([]any)
	conds := setCondition(slices.Clone(old), synced)
	meta, _ := out["metadata"].(map[string]any)
	for i, c := range conds {
		m, _ := c.(map[string]any)
		m = maps.Clone(m)
		delete(m, "lastTransitionTime")
		if o := own[fmt.Sprint(m["type"])]; o != nil && o["status"] == m["status"] && o["lastTransitionTime"] != nil {
			m["lastTransitionTime"] = o["lastTransitionTime"]
		}
		if g, ok := meta["generation"]; ok {
			m["observedGeneration"] = g
		}
		conds[i] = m
	}
	status["conditions"] = conds
	return out
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

// WaveCluster is one Cluster of a wave, as the change reaches it, with
// the fleet controller's ruling on it.
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
	// Target is the target it reports it is asked for (status.rollout,
	// rollout.Target.String), "" when it reports none.
	Target string `json:"target,omitempty"`
	// Verdict, Message and Until are the fleet controller's ruling on it
	// (fleet.Rule): what the function then does. Verdict is Pinned for a
	// Cluster that pins its version; for one the rollout does not hold
	// (no ruling), its own status.rollout's verdict and message, "" when
	// it reports none.
	Verdict string `json:"verdict,omitempty"`
	Message string `json:"message,omitempty"`
	Until   string `json:"until,omitempty"`
	// Note says, in words, why it is in this wave when by default, that
	// it pins its version, that it failed, and its ruling.
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
// Clusters (the impacts' FleetCluster, each with the fleet controller's
// ruling on it), or nil when the change moves no Kubernetes version and
// the updated environment sets no rollout waves. Which wave a Cluster is
// in is rollout.WaveOf's. Each wave's gate is rollout.GateOf's at now, on
// the same fleet the controller ruled on: for a Cluster of the wave that
// asks for the target the wave's Clusters report (the first in
// namespace/name order that has not adopted it, else the first), from
// what that Cluster has adopted; when none of them reports one, for the
// updated environment's Kubernetes minor and the chart versions it moves,
// from what the old environment asked.
func RolloutOf(old, updated World, xrs []Impact, now time.Time) *Rollout {
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
	byWave := make([]map[string][]WaveCluster, len(shown))
	// gates are, per wave, the Cluster whose target its gate is for.
	gates := make([]*FleetCluster, len(shown))
	for _, c := range clusters {
		i := rollout.WaveOf(shown, c.Member)
		if byWave[i] == nil {
			byWave[i] = map[string][]WaveCluster{}
		}
		byWave[i][c.Cloud] = append(byWave[i][c.Cloud], waveCluster(waves, i, c))
		if c.Reports && (gates[i] == nil || gates[i].adopted() && !c.adopted()) {
			gates[i] = &c
		}
	}
	for i, w := range shown {
		target, from := gateOf(r, gates[i])
		d := rollout.GateOf(waves, i, from, target, members, func(string) bool { return true }, now)
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

// adopted reports whether the Cluster follows no target of the rollout's
// now: it pins its version, is being deleted, or asks for or runs the
// target it reports (rollout.Fleet.Decide's Keep).
func (c *FleetCluster) adopted() bool {
	return c.Pinned || c.Deleting || c.Asks.Equal(c.Wants) || c.Runs.Holds(c.Wants)
}

// gateOf is the target a wave's gate is for and what its Cluster asks for
// now: the target c reports and what c has adopted; without c, the
// updated environment's minor and the chart versions it moves, and what
// the old environment asked for them (nothing, when it asked for the
// same: the gate is then a Cluster's that runs nothing of the target).
func gateOf(r *Rollout, c *FleetCluster) (target, from rollout.Target) {
	if c != nil {
		return c.Wants, c.Asks
	}
	target = rollout.Target{Kubernetes: r.Target, Charts: r.Charts}
	from = rollout.Target{Kubernetes: r.From, Charts: r.FromCharts}
	if from.Equal(target) {
		from = rollout.Target{}
	}
	return target, from
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
	if c.Reports {
		wc.Target = c.Wants.String()
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
	case c.Refused != "":
		notes = append(notes, "refused: "+c.Refused)
	case c.Failed:
		notes = append(notes, "failed: "+c.Reason)
	case !c.Ready && c.Reason != "":
		notes = append(notes, "not Ready: "+c.Reason)
	}
	switch r := c.Ruling; {
	case r != nil:
		wc.Verdict, wc.Message = string(r.Verdict), r.Message
		note := "ruled " + wc.Verdict
		if !r.Until.IsZero() {
			wc.Until = r.Until.UTC().Format(time.RFC3339)
			note += " until " + wc.Until
		}
		notes = append(notes, note)
	case c.Pinned:
		wc.Verdict = string(rollout.Pinned)
	default:
		// The rollout does not hold it: it says what it does.
		wc.Verdict, wc.Message = c.Says, c.Saying
	}
	wc.Note = strings.Join(notes, "; ")
	return wc
}
