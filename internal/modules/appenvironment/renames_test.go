package appenvironment_test

import (
	"testing"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// namedSchema is the nested Database as an earlier version composed it:
// its database under another name than the namespace now derives.
func namedSchema(name string) func(*fntest.World) {
	return func(w *fntest.World) {
		db := overlay.DeepCopy(w.Observed["database"])
		fntest.Set("spec.parameters.databases", []any{name})(db)
		w.Observed["database"] = db
	}
}

// nestedRuns is the nested Database reporting the PostgreSQL it runs.
func nestedRuns(v string) func(*fntest.World) {
	return func(w *fntest.World) {
		db := overlay.DeepCopy(w.Observed["database"])
		fntest.Set("status.engineVersion", v)(db)
		w.Observed["database"] = db
	}
}

func TestRenames(t *testing.T) {
	scenarios := map[string]fntest.Scenario{}
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		scenarios[cloud+"/NamespaceRenamed"] = fntest.Scenario{
			Reason: "A rename of the namespace the environment runs in is a Fatal naming spec.parameters.namespace: nothing in it, nor the database named after it, goes.",
			XR:     appXR(cloud),
			Extra:  required(appXR(cloud)),
			Steps: []fntest.Step{
				converged,
				{Name: "renamed", Spec: fntest.Edit("spec.parameters.namespace", "wiki-renamed"),
					Fatal: `spec.parameters.namespace: Invalid value: "wiki-renamed": the environment runs in namespace "wiki" of Cluster "prod-cluster"`},
				{Name: "restored", Spec: fntest.Edit("spec.parameters.namespace", "wiki"), Check: fntest.All(fntest.IsReady(true),
					fntest.Field("database", "spec.parameters.databases", []any{"wiki"}))},
			},
		}
		scenarios[cloud+"/SchemaKeepsItsName"] = fntest.Scenario{
			Reason: "The backend's database keeps the name it was created under, read back from the nested Database, whatever the namespace derives now: a derived name never removes a database.",
			XR:     appXR(cloud),
			Extra:  required(appXR(cloud)),
			Steps: []fntest.Step{
				converged,
				{Name: "created under another name", World: namedSchema("wiki_v1"), Check: fntest.Field("database", "spec.parameters.databases", []any{"wiki_v1"})},
				{Name: "steady", Check: fntest.All(fntest.IsReady(true), fntest.Field("database", "spec.parameters.databases", []any{"wiki_v1"}))},
			},
		}
	}
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		scenarios[cloud+"/DatabaseNeverDown"] = fntest.Scenario{
			Reason: "A database version below what the nested Database runs, or a storage below what it has, is a Fatal naming this XR's field, spec.parameters.database.*; higher ones pass down.",
			XR:     appXR(cloud, fntest.Set("spec.parameters.database", map[string]any{"size": "small", "version": "16", "storageGb": 50.0})),
			Extra:  required(appXR(cloud)),
			Steps: []fntest.Step{
				converged,
				{Name: "the nested Database runs 16", World: nestedRuns("16"), Spec: fntest.Edit("spec.parameters.database.version", "15"),
					Fatal: `spec.parameters.database.version: Invalid value: "15": the environment's database runs PostgreSQL 16`},
				{Name: "storage down", Spec: func(w *fntest.World) {
					fntest.Edit("spec.parameters.database.version", "16")(w)
					fntest.Edit("spec.parameters.database.storageGb", 20.0)(w)
				}, Fatal: `spec.parameters.database.storageGb: Invalid value: 20: the environment's database has 50 GiB`},
				{Name: "up", Spec: func(w *fntest.World) {
					fntest.Edit("spec.parameters.database.version", "17")(w)
					fntest.Edit("spec.parameters.database.storageGb", 100.0)(w)
				}, Check: fntest.All(fntest.Field("database", "spec.parameters.version", "17"), fntest.Field("database", "spec.parameters.storageGb", 100.0))},
			},
		}
	}
	fntest.RunAll(t, "AppEnvironment renames", run, envs, scenarios)
}
