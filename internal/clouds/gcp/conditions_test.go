package gcp

import (
	"testing"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// TestConditions holds google's conditions (conditions.go) against its
// generated tables, and each both ways: a change google makes in place,
// and one it replaces the resource for.
func TestConditions(t *testing.T) {
	type args = fntest.ConditionArgs
	const (
		cidr      = "google_compute_subnetwork.ip_cidr_range"
		master    = "google_sql_database_instance.master_instance_name"
		cascading = "google_sql_database_instance.replica_configuration.cascadable_replica"
	)
	// The old primary's side of a switchover: it was a primary with
	// replica db-2, which becomes its master.
	oldPrimary := map[string]any{"instanceType": "CLOUD_SQL_INSTANCE", "replicaNames": []any{"db-2"}, "databaseVersion": "POSTGRES_16"}
	switched := map[string]any{"instanceType": "READ_REPLICA_INSTANCE", "replicaNames": []any{}, "masterInstanceName": "db-2", "replicaConfiguration": map[string]any{"failoverTarget": false}}
	sqlServer := map[string]any{"instanceType": "CLOUD_SQL_INSTANCE", "replicaNames": []any{"db-2"}, "databaseVersion": "SQLSERVER_2022_STANDARD"}
	fntest.Conditions(t, generatedTables, conditions, map[string]fntest.ConditionCase{
		"RangeExpanded":           {Reason: "A subnetwork's range grown to one that contains it is expanded in place.", Args: args{Attribute: cidr, Old: "10.0.0.0/20", New: "10.0.0.0/19"}},
		"RangeMoved":              {Reason: "A range that does not contain the old one replaces the subnetwork.", Args: args{Attribute: cidr, Old: "10.0.0.0/20", New: "10.1.0.0/20"}, Want: true},
		"RangeShrunk":             {Reason: "A smaller range replaces it.", Args: args{Attribute: cidr, Old: "10.0.0.0/20", New: "10.0.0.0/21"}, Want: true},
		"RangeUnparsable":         {Reason: "A range that does not parse is no expansion: refused, not passed to the provider in place.", Args: args{Attribute: cidr, Old: "10.0.0.0/20", New: "10.0.0.0/20-changed"}, Want: true},
		"L4SubsettingEnabled":     {Reason: "Enabling L4 ILB subsetting is made in place.", Args: args{Attribute: "google_container_cluster.enable_l4_ilb_subsetting", Old: false, New: true}},
		"L4SubsettingDisabled":    {Reason: "Disabling it replaces the cluster.", Args: args{Attribute: "google_container_cluster.enable_l4_ilb_subsetting", Old: true, New: false}, Want: true},
		"FQDNPolicyEnabled":       {Reason: "Enabling FQDN network policy is made in place.", Args: args{Attribute: "google_container_cluster.enable_fqdn_network_policy", New: true}},
		"FQDNPolicyDisabled":      {Reason: "Disabling it replaces the cluster.", Args: args{Attribute: "google_container_cluster.enable_fqdn_network_policy", Old: true, New: false}, Want: true},
		"AdditiveDomainStandard":  {Reason: "A Standard cluster's additive VPC scope DNS domain changes in place.", Args: args{Attribute: "google_container_cluster.dns_config.additive_vpc_scope_dns_domain", Old: "a.example", New: "b.example", Observed: map[string]any{"enableAutopilot": false}}},
		"AdditiveDomainAutopilot": {Reason: "An Autopilot cluster's is replaced.", Args: args{Attribute: "google_container_cluster.dns_config.additive_vpc_scope_dns_domain", Old: "a.example", New: "b.example", Observed: map[string]any{"enableAutopilot": true}}, Want: true},
		"MasterSwitchover":        {Reason: "The old primary naming its old replica as master (a switchover) is made in place.", Args: args{Attribute: master, New: "db-2", Observed: oldPrimary, Desired: switched}},
		"MasterSet":               {Reason: "Naming a master otherwise replaces the instance.", Args: args{Attribute: master, New: "db-9", Observed: oldPrimary, Desired: map[string]any{"instanceType": "READ_REPLICA_INSTANCE", "masterInstanceName": "db-9", "replicaConfiguration": map[string]any{}}}, Want: true},
		"CascadableSwitchover":    {Reason: "SQL Server's side of a switchover as a cascadable replica is made in place.", Args: args{Attribute: cascading, Old: false, New: true, Observed: sqlServer, Desired: map[string]any{"instanceType": "READ_REPLICA_INSTANCE", "replicaNames": []any{}, "masterInstanceName": "db-2", "replicaConfiguration": map[string]any{"cascadableReplica": true}}}},
		"CascadableNoCascade":     {Reason: "SQL Server's switchover without a cascadable replica replaces the instance.", Args: args{Attribute: cascading, Old: true, New: false, Observed: sqlServer, Desired: map[string]any{"instanceType": "READ_REPLICA_INSTANCE", "replicaNames": []any{}, "masterInstanceName": "db-2", "replicaConfiguration": map[string]any{"cascadableReplica": false}}}, Want: true},
		"PrivateNetworkMoved":     {Reason: "Another private network is made in place.", Args: args{Attribute: "google_sql_database_instance.settings.ip_configuration.private_network", Old: "projects/p/global/networks/a", New: "projects/p/global/networks/b"}},
		"PrivateNetworkUnset":     {Reason: "Unsetting it replaces the instance.", Args: args{Attribute: "google_sql_database_instance.settings.ip_configuration.private_network", Old: "projects/p/global/networks/a", New: ""}, Want: true},
		"AutoUpgradeEnabled":      {Reason: "Enabling auto upgrade is made in place.", Args: args{Attribute: "google_sql_database_instance.settings.auto_upgrade_enabled", New: true}},
		"AutoUpgradeDisabled":     {Reason: "Disabling it replaces the instance.", Args: args{Attribute: "google_sql_database_instance.settings.auto_upgrade_enabled", Old: true, New: false}, Want: true},
		"RetentionLocked":         {Reason: "Locking a retention policy is made in place.", Args: args{Attribute: "google_storage_bucket.retention_policy.is_locked", Old: false, New: true}},
		"RetentionUnlocked":       {Reason: "Unlocking it replaces the bucket.", Args: args{Attribute: "google_storage_bucket.retention_policy.is_locked", Old: true, New: false}, Want: true},
	})
}
