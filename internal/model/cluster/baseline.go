package cluster

import (
	"cmp"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
)

// BaselineOf reads the Cluster keys (SettingsOf) of an environment merged
// from the baseline EnvironmentConfigs alone (the layer labelled
// baseline=default, as xpsim.MergeEnvironment merges it, apiVersion and
// kind ignored): what the fleet's rollout is read from by preview --fleet
// and the portal's fleet view, which know no Cluster's cloud or plane
// type. It returns what is wrong with the rollout keys too
// (environment.rollout), each error naming its key.
func BaselineOf(environment map[string]any) (*Settings, field.ErrorList) {
	data := maps.Clone(environment)
	delete(data, "apiVersion")
	delete(data, "kind")
	env := envcfg.New(data)
	s := SettingsOf(env)
	path := field.NewPath("environment", "rollout")
	var errs field.ErrorList
	for _, e := range env.Errors() {
		if e.Field == path.String() || strings.HasPrefix(e.Field, path.String()+".") {
			errs = append(errs, e)
		}
	}
	return s, append(errs, s.Rollout.Validate(path)...)
}

// RolloutTarget is what the environment asks every Cluster that pins
// nothing to run, as the rollout gates it: the Kubernetes minor of version
// (else DefaultVersion), and the catalog's version (Catalog) of each chart
// it does not disable and has a repository for. A Cluster's own target
// leaves out the charts its XR pins or turns off; those it does not run
// prove and hold nothing (rollout.Target.Covers).
func (s *Settings) RolloutTarget() rollout.Target {
	t := rollout.Target{Kubernetes: rollout.Minor(cmp.Or(s.Version, DefaultVersion)), Charts: map[string]string{}}
	for name, c := range Catalog(s) {
		if !c.Disabled && c.Repository != "" && c.Version != "" {
			t.Charts[name] = c.Version
		}
	}
	return t
}
