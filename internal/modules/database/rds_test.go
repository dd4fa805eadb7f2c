package database_test

import (
	"testing"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/database"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// engineVersion is where an RDS instance asks for its version.
const engineVersion = "spec.forProvider.engineVersion"

// rdsRuns is RDS's automatic minor upgrade of the observed instance: it
// runs v, whatever its spec asks.
func rdsRuns(v string) func(*fntest.World) {
	return func(w *fntest.World) {
		inst := overlay.DeepCopy(w.Observed["instance"])
		fntest.Set("status.atProvider.engineVersionActual", v)(inst)
		w.Observed["instance"] = inst
	}
}

// overrideInstance is the XR author's override of the instance's
// spec.forProvider.
func overrideInstance(fp map[string]any) func(*fntest.World) {
	return fntest.Edit("spec.parameters.overrides", map[string]any{"instance": map[string]any{"spec": map[string]any{"forProvider": fp}}})
}

// walking checks the Upgrading condition and status.upgrade of an RDS walk
// to target, from the major version running, at step, with the minors of
// the steps still to take.
func walking(target, running, step, waiting string, plan ...any) fntest.Check {
	return fntest.All(
		fntest.Condition(database.ConditionUpgrading, "TRUE", "EngineUpgrade"),
		fntest.Status("upgrade", map[string]any{"target": target, "running": running, "step": step,
			"waitingFor": "the server to report running PostgreSQL " + waiting, "plan": plan}),
	)
}

// movesTo checks that the instance is asked for the minor v on the
// parameter group of its family, with allowMajorVersionUpgrade.
func movesTo(v, family string) fntest.Check {
	return fntest.All(
		fntest.Field("instance", engineVersion, v),
		fntest.Field("instance", "spec.forProvider.allowMajorVersionUpgrade", true),
		fntest.Field("instance", "spec.forProvider.parameterGroupNameSelector.matchLabels", map[string]any{"platform.example.org/resource": "parameter-group-" + family}),
	)
}

func TestRDSMajorUpgradeTargets(t *testing.T) {
	withVersions := fntest.EnvEdit("cluster-platform-baseline", "database.versions", []any{"13", "14", "15", "16", "17"})
	scenarios := map[string]fntest.Scenario{
		"aws/WalksThroughListedMinors": {
			Reason: "13.4 (what the simulated RDS runs of 13) lists only minors of 14: raised to 15, the instance steps to the newest, 14.8, then, once it runs it, to 15.3, the newest of 15 that 14.8 lists; each step waits for its parameter group, and the old family's group goes once the instance runs the next.",
			XR:     dbXR("aws", withVersion("13")),
			Steps: []fntest.Step{
				{Name: "converge at 13", World: withVersions, Converge: true, Check: fntest.All(fntest.IsReady(true), fntest.Field("instance", engineVersion, "13"))},
				{Name: "to 15: the group of 14 first", Spec: fntest.Edit("spec.parameters.version", "15"), Check: fntest.All(
					walking("15", "13", "14", "14.8", "PostgreSQL 14.8", "PostgreSQL 15.3"),
					fntest.Field("instance", engineVersion, "13"),
					fntest.Field("instance", "spec.forProvider.allowMajorVersionUpgrade", nil),
					fntest.Field("parameter-group-postgres14", "spec.forProvider.family", "postgres14"))},
				{Name: "to 14.8", Check: fntest.All(walking("15", "13", "14", "14.8", "PostgreSQL 14.8", "PostgreSQL 15.3"), movesTo("14.8", "postgres14"))},
				{Name: "14.8 runs: the group of 15, the one of 13 goes", Removes: []string{"parameter-group-postgres13"}, Check: fntest.All(
					walking("15", "14", "15", "15.3", "PostgreSQL 15.3"),
					fntest.Field("instance", engineVersion, "14.8"),
					fntest.Field("parameter-group-postgres15", "spec.forProvider.family", "postgres15"))},
				{Name: "to 15.3", Check: fntest.All(walking("15", "14", "15", "15.3", "PostgreSQL 15.3"), movesTo("15.3", "postgres15"))},
				{Name: "15.3 runs: the group of 14 goes", Removes: []string{"parameter-group-postgres14"}, Check: fntest.All(upToDate, fntest.Field("instance", engineVersion, "15.3"))},
				{Name: "settles", Converge: true, Check: fntest.All(upToDate, fntest.Field("instance", engineVersion, "15.3"), fntest.Status("engineVersion", "15.3"), fntest.IsReady(true))},
			},
		},
		"aws/UnlistedMinorRefused": {
			Reason: "A walk through a minor the table has no row for is refused before its first step, a Fatal naming spec.parameters.version that says to walk to a listed minor first; once RDS's automatic minor upgrades move the instance to a listed minor, the instance is asked for what it runs (never less), and the walk goes on from there.",
			XR:     dbXR("aws", withVersion("14")),
			Steps: []fntest.Step{
				converged,
				{Name: "to 15: the group of 15 first", Spec: fntest.Edit("spec.parameters.version", "15"), Check: walking("15", "14", "15", "15.3", "PostgreSQL 15.3")},
				{Name: "to 15.3", Check: movesTo("15.3", "postgres15")},
				{Name: "15.3 runs: the group of 14 goes", Removes: []string{"parameter-group-postgres14"}, Check: fntest.All(upToDate, fntest.Field("instance", engineVersion, "15.3"))},
				{Name: "to 16 from 15.3, which has no row", Spec: fntest.Edit("spec.parameters.version", "16"),
					Fatal: `spec.parameters.version: Invalid value: "16": the server runs PostgreSQL 15.3, and the table of RDS for PostgreSQL's major upgrade targets`,
					Check: fntest.FatalHas("lists no major upgrade from 15.3", "walk the server to a minor that is listed first (listed of 15: 15.13;", "allowed now: 15")},
				{Name: "RDS runs 15.13: the walk goes on", World: rdsRuns("15.13"), Hold: true, Check: fntest.All(
					walking("16", "15", "16", "16.9", "PostgreSQL 16.9"),
					fntest.Field("instance", engineVersion, "15.13"),
					fntest.Desires("parameter-group-postgres16"))},
				{Name: "the group of 16 first", Check: fntest.All(fntest.Field("instance", engineVersion, "15.13"), fntest.Field("instance", "spec.forProvider.allowMajorVersionUpgrade", nil))},
				{Name: "to 16.9", Check: movesTo("16.9", "postgres16")},
				{Name: "16.9 runs: the group of 15 goes", Removes: []string{"parameter-group-postgres15"}, Check: fntest.All(upToDate, fntest.Field("instance", engineVersion, "16.9"))},
				{Name: "settles", Converge: true, Check: fntest.All(upToDate, fntest.Field("instance", engineVersion, "16.9"), fntest.IsReady(true))},
			},
		},
		"aws/KeepsWhatRDSRuns": {
			Reason: "An instance a walk left at a minor, which RDS then moves to a newer one, is asked for what it runs, never the older minor (the provider would ask RDS for a downgrade, refused forever); one asked for its major version alone keeps asking for it alone.",
			XR:     dbXR("aws", withVersion("16")),
			Steps: []fntest.Step{
				converged,
				{Name: "asked for the major alone", World: rdsRuns("16.9"), Hold: true, Check: fntest.All(upToDate, fntest.Field("instance", engineVersion, "16"))},
				{Name: "to 17: the group of 17 first", Spec: fntest.Edit("spec.parameters.version", "17"), Check: fntest.All(walking("17", "16", "17", "17.5", "PostgreSQL 17.5"), fntest.Field("instance", engineVersion, "16"))},
				{Name: "to 17.5", Check: movesTo("17.5", "postgres17")},
				{Name: "17.5 runs", Removes: []string{"parameter-group-postgres16"}, Check: fntest.All(upToDate, fntest.Field("instance", engineVersion, "17.5"))},
				{Name: "RDS runs 17.6", World: rdsRuns("17.6"), Hold: true, Check: fntest.All(upToDate, fntest.Field("instance", engineVersion, "17.6"))},
			},
		},
		"aws/OverridesReachNoVersion": {
			Reason: "Overrides reach the fields the walk sets only to be refused, naming the override: not a listed target minor (versions move only through spec.parameters.version), nor allowMajorVersionUpgrade or the parameter group.",
			XR:     dbXR("aws", withVersion("16")),
			Steps: []fntest.Step{
				converged,
				{Name: "a listed target overridden", Spec: overrideInstance(map[string]any{"engineVersion": "17.5"}),
					Fatal: "spec.parameters.overrides.instance.spec.forProvider.engineVersion", Check: fntest.FatalHas("versions move only through spec.parameters.version")},
				{Name: "the flag overridden", Spec: overrideInstance(map[string]any{"allowMajorVersionUpgrade": true}),
					Fatal: "spec.parameters.overrides.instance.spec.forProvider.allowMajorVersionUpgrade", Check: fntest.FatalHas("move only through spec.parameters.version, in the steps its cloud upgrades in place")},
				{Name: "restored", Spec: fntest.Edit("spec.parameters.overrides", nil), Check: fntest.All(upToDate, fntest.Field("instance", engineVersion, "16"))},
			},
		},
	}
	fntest.RunAll(t, "RDS major upgrade scenarios", run, envs, scenarios)
}
