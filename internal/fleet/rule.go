// Package fleet is the fleet controller: the part of a rollout that needs
// the whole fleet or a clock, which RunFunction, per XR and deterministic,
// cannot have. It reads every Cluster and XCluster and the baseline
// EnvironmentConfigs, decides each gated Cluster with package rollout (the
// same code preview --fleet and the portal's fleet view use: one answer,
// three readers), and writes each one's decision as a rollout.Ruling, a
// ConfigMap in the platform's namespace that the Cluster requires by name.
//
// It writes nothing else: no XR, no status. It keeps no state of its own
// (restarted, it reads the fleet again), and when it is not running the
// gated Clusters hold and say so (the function finds no Ruling for the
// target it asks for). Rule and Baseline are its decisions, pure and
// deterministic for a given time; Controller runs them on client-go's
// shared informers under leader election.
package fleet

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// A Baseline is what a rollout reads of the environment: the baseline
// EnvironmentConfigs' Cluster keys, which hold the fleet's waves.
type Baseline struct {
	// Target is what the environment asks every Cluster that pins
	// nothing to run (cluster.Settings.RolloutTarget): the Kubernetes
	// minor and the chart catalog's versions. A Cluster's own target
	// (what its cloud's and plane type's layers, and its XR, make of it)
	// is what it reports in status.rollout (rollout.WantsOf).
	Target rollout.Target
	// Settings are its rollout keys.
	Settings rollout.Settings
	// Sources are the EnvironmentConfigs read, in name order.
	Sources []string
	// Problems are what is wrong with the rollout keys: a Baseline with
	// problems has no waves, and rules on nothing.
	Problems []string
}

// BaselineOf reads the baseline EnvironmentConfigs among configs (objects
// of any kind; those labelled as the platform's baseline count): merged in
// name order as the function merges its baseline layer
// (xpsim.MergeEnvironment), their Cluster keys decoded by
// cluster.BaselineOf, as the function reads them from a protobuf Struct.
func BaselineOf(configs []map[string]any) Baseline {
	var b Baseline
	var objs []xpsim.Object
	for _, c := range configs {
		meta, _ := c["metadata"].(map[string]any)
		labels, _ := meta["labels"].(map[string]any)
		if labels[envcfg.SelectorLabel] != envcfg.SelectorValue || labels[envcfg.LabelBaseline] != envcfg.BaselineValue {
			continue
		}
		name, _ := meta["name"].(string)
		b.Sources = append(b.Sources, name)
		objs = append(objs, c)
	}
	slices.Sort(b.Sources)
	if len(objs) == 0 {
		return b
	}
	env, _ := xpsim.MergeEnvironment(objs, "", "", map[string]string{envcfg.SelectorLabel: envcfg.SelectorValue})[envcfg.ContextKey].(map[string]any)
	// The function reads the environment as Crossplane hands it over, a
	// protobuf Struct, whose numbers are float64; the API server's are
	// int64.
	pb, err := structpb.NewStruct(env)
	if err != nil {
		b.Problems = append(b.Problems, fmt.Sprintf("cannot read the baseline EnvironmentConfigs: %v", err))
		return b
	}
	s, errs := cluster.BaselineOf(pb.AsMap())
	b.Target = s.RolloutTarget()
	for _, e := range errs {
		b.Problems = append(b.Problems, e.Error())
	}
	if len(b.Problems) == 0 {
		b.Settings = s.Rollout
	}
	return b
}

// Rule is the controller's decision at now: a Ruling for every Cluster of
// clusters (XRs of both kinds, as maps) that reports a target it is gated
// on, each decided against the whole fleet (rollout.Rulings). It refuses a
// Baseline with problems: no ruling is better than one on waves that are
// wrong, since a Cluster without one holds.
func Rule(b Baseline, clusters []map[string]any, now time.Time) ([]rollout.Ruling, error) {
	if len(b.Problems) > 0 {
		return nil, fmt.Errorf("cannot rule on the fleet: the baseline EnvironmentConfigs' rollout keys are wrong: %s", strings.Join(b.Problems, "; "))
	}
	if len(b.Settings.Waves) == 0 {
		return nil, nil
	}
	return rollout.Rulings(b.Settings.Waves, clusters, now), nil
}
