package main

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// engineVersionField is where each cloud's database server asks for its
// PostgreSQL version, with the value of 17.
var engineVersionField = map[string][2]string{
	"gcp":   {"spec.forProvider.databaseVersion", "POSTGRES_17"},
	"aws":   {"spec.forProvider.engineVersion", "17"},
	"azure": {"spec.forProvider.version", "17"},
}

// newGroupReady is the AWS example Database's stack with the parameter
// group of the postgres17 family created and Ready beside the old one.
func newGroupReady(o map[string]xpsim.Object) {
	g := overlay.DeepCopy(o["parameter-group-postgres16"])
	fntest.Set("metadata.name", "orders-db-parameter-group-postgres17")(g)
	fntest.Set("metadata.annotations", map[string]any{
		"crossplane.io/composition-resource-name": "parameter-group-postgres17",
		"crossplane.io/external-name":             "orders-db-postgres17",
		"platform.example.org/component":          "instance",
	})(g)
	g["metadata"].(map[string]any)["labels"].(map[string]any)["platform.example.org/resource"] = "parameter-group-postgres17"
	fntest.Set("spec.forProvider.family", "postgres17")(g)
	fntest.Set("status.atProvider.family", "postgres17")(g)
	o["parameter-group-postgres17"] = g
}

// dataDayTwoCases are the day-two changes where the data lives: a
// Database's major upgrade (on AWS before and after its new parameter
// group is Ready), a downgrade, a storage shrink and a move of a Cloud
// SQL instance to another network, and a rename of an AppEnvironment's
// namespace, on every cloud.
func dataDayTwoCases() []dayTwo {
	var out []dayTwo
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		db, app := cloud+"/database.yaml", cloud+"/appenvironment.yaml"
		f := engineVersionField[cloud]
		major := dayTwo{attack: attack{name: cloud + "-database-major", example: db, xr: set("spec.parameters.version", "17")},
			check: wants("instance", f[0], f[1])}
		if cloud == "aws" {
			major.check = all(wants("instance", f[0], "16"), wants("parameter-group-postgres17", "spec.forProvider.family", "postgres17"),
				wants("parameter-group-postgres16", "spec.forProvider.family", "postgres16"))
			out = append(out, dayTwo{attack: attack{name: "aws-database-major-group-ready", example: db, xr: set("spec.parameters.version", "17")},
				observed: newGroupReady,
				// 17.5: the newest minor of 17 that RDS lists as a
				// target of the 16.4 the instance runs
				// (internal/clouds/aws/rdsupgrades.go).
				check: all(wants("instance", f[0], "17.5"), wants("instance", "spec.forProvider.allowMajorVersionUpgrade", true),
					wants("instance", "spec.forProvider.parameterGroupNameSelector.matchLabels", map[string]any{"platform.example.org/resource": "parameter-group-postgres17"}),
					wants("parameter-group-postgres16", "spec.forProvider.family", "postgres16"))})
		}
		out = append(out, major,
			dayTwo{attack: attack{name: cloud + "-database-downgrade", example: db, xr: set("spec.parameters.version", "15"),
				fatal: `spec.parameters.version: Invalid value: "15": the server runs PostgreSQL 16, and a major version is never downgraded in place`}},
			dayTwo{attack: attack{name: cloud + "-database-shrink", example: db, xr: set("spec.parameters.storageGb", 20),
				fatal: `spec.parameters.storageGb: Invalid value: 20: the server has`}},
			dayTwo{attack: attack{name: cloud + "-app-namespace-rename", example: app, xr: set("spec.parameters.namespace", "renamed"),
				fatal: `spec.parameters.namespace: Invalid value: "renamed": the environment runs in namespace`}},
		)
	}
	return append(out, dayTwo{attack: attack{name: "gcp-database-network-move", example: "gcp/database.yaml", xr: set("spec.parameters.clusterRef", nil),
		fatal: `spec.parameters.clusterRef: Invalid value: "": the Cloud SQL instance is on the network of Cluster prod-cluster`}})
}
