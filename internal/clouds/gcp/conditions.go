package gcp

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// google is the release the conditions were read from (the tag the
// generated tables name).
const google = "@v7.39.0"

// Where google declares the resources whose custom diffs the conditions
// come from.
const (
	gkeCluster  = "google/services/container/resource_container_cluster.go"
	sqlInstance = "google/services/sql/resource_sql_database_instance.go"
)

// conditions are the conditions on which google replaces a resource for a
// change of a field its custom diff replaces only on a condition (the
// generated entries with a Rule), read from its source and evaluated the
// way it evaluates them: old is what the resource has, new what the render
// asks for, each "" / 0 / false when unset, as Terraform's GetChange gives
// them.
var conditions = registry.Conditions{
	// A range grows in place (expandIpCidrRange); any other change
	// replaces the subnetwork.
	"google_compute_subnetwork.ip_cidr_range": {
		Replaces: func(d lifecycle.Diff) bool { return !expands(lifecycle.Str(d.Old), lifecycle.Str(d.New)) },
		Summary:  "unless the new range contains the old one (an expansion)",
		Source:   "google/services/compute/resource_compute_subnetwork.go:63-80, 385" + google,
	},
	// isBeenEnabled: enabling is in place, disabling replaces the cluster.
	"google_container_cluster.enable_l4_ilb_subsetting": {
		Replaces: lifecycle.Unsets, Summary: "when it is disabled (true to false)", Source: gkeCluster + ":215-226, 246" + google,
	},
	"google_container_cluster.enable_fqdn_network_policy": {
		Replaces: lifecycle.Unsets, Summary: "when it is disabled (true to false)", Source: gkeCluster + ":215-226, 247" + google,
	},
	"google_container_cluster.dns_config.additive_vpc_scope_dns_domain": {
		Replaces: func(d lifecycle.Diff) bool { return lifecycle.Bool(d.NewAt("enableAutopilot")) },
		Summary:  "on an Autopilot cluster (enableAutopilot)", Source: gkeCluster + ":8272-8274" + google,
	},
	"google_sql_database_instance.settings.disk_size": {
		Source: sqlInstance + ":186-219" + google,
		Why:    "the hand entry is a Raise (storage never shrinks): the provider replaces on a decrease with disk autoresize off (and ignores one with it on), which the Raise refuses either way",
	},
	// Only the old primary's side of a switchover names its new master in
	// place.
	"google_sql_database_instance.master_instance_name": {
		Replaces: func(d lifecycle.Diff) bool { return !switchover(d) },
		Summary:  "unless it is the old primary's side of a switchover", Source: sqlInstance + ":240-243, 3818-3840" + google,
	},
	"google_sql_database_instance.replica_configuration.cascadable_replica": {
		Replaces: func(d lifecycle.Diff) bool { return !switchover(d) },
		Summary:  "unless it is the old primary's side of a switchover", Source: sqlInstance + ":244-246, 3818-3840" + google,
	},
	"google_sql_database_instance.settings.ip_configuration.private_network": {
		Replaces: lifecycle.Unsets, Summary: `when it is unset (old != "" && new == "")`, Source: sqlInstance + ":1553-1563" + google,
	},
	"google_sql_database_instance.settings.auto_upgrade_enabled": {
		Replaces: lifecycle.Unsets, Summary: "when it is disabled (true to false)", Source: sqlInstance + ":1566-1581" + google,
	},
	// isPolicyLocked: a locked retention policy stays locked.
	"google_storage_bucket.retention_policy.is_locked": {
		Replaces: lifecycle.Unsets, Summary: "when it is unlocked (true to false)", Source: "google/services/storage/resource_storage_bucket.go:81, 875-886" + google,
	},
}

// expands reports whether a new range contains the old one, as
// IsShrinkageIpCidr reads them. A range either does not parse is no
// expansion: google's validation has already refused it there, while the
// function sees values nothing has validated.
func expands(old, new string) bool {
	o, err := netip.ParsePrefix(old)
	if err != nil {
		return false
	}
	n, err := netip.ParsePrefix(new)
	if err != nil {
		return false
	}
	return n.Bits() <= o.Bits() && n.Masked().Contains(o.Masked().Addr())
}

// switchover is isSwitchoverFromOldPrimarySide: the instance was a primary
// and becomes a replica of its old replica, which leaves its replica
// names, on SQL Server only as a cascadable replica.
func switchover(d lifecycle.Diff) bool {
	if lifecycle.Len(d.NewAt("replicaConfiguration")) != 1 {
		return false
	}
	master := lifecycle.Str(d.NewAt("masterInstanceName"))
	primaryToReplica := lifecycle.Str(d.OldAt("instanceType")) == "CLOUD_SQL_INSTANCE" && lifecycle.Str(d.NewAt("instanceType")) == "READ_REPLICA_INSTANCE"
	sqlServer := strings.HasPrefix(lifecycle.Str(d.NewAt("databaseVersion")), "SQLSERVER")
	return primaryToReplica && lists(d.OldAt("replicaNames"), master) && !lists(d.NewAt("replicaNames"), master) &&
		(!sqlServer || lifecycle.Bool(d.NewAt("replicaConfiguration.cascadableReplica")))
}

// lists reports whether a list of instance names holds one.
func lists(list any, name string) bool {
	l, _ := list.([]any)
	return slices.Contains(l, any(name))
}
