package azure

import (
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// azurerm is the release the conditions were read from: the tag the
// generated tables name, commit 6556cf11372b7249890d4ccc2ce78ba57d02f349.
const azurerm = "@v4.80.0"

// Where azurerm's other conditions are.
const (
	postgres       = "internal/services/postgres/postgresql_flexible_server_resource.go"
	storageAccount = "internal/services/storage/storage_account_resource.go"
)

// conditions are the conditions on which azurerm replaces a resource for
// a change of a field its custom diff replaces only on a condition (the
// generated entries with a Rule), read from its source and evaluated the
// way it evaluates them: old is what the resource has, new what the render
// asks for, each "" / 0 / false when unset, as Terraform's GetChange gives
// them.
var conditions = registry.Conditions{
	// The AKS default node pool's (kubernetes_cluster_resource.go) and a
	// user pool's (kubernetes_cluster_node_pool_resource.go) upgrade
	// settings: only unsetting one replaces, "the behaviour of the API
	// requires this".
	"azurerm_kubernetes_cluster.default_node_pool.upgrade_settings.drain_timeout_in_minutes": {
		Replaces: lifecycle.Unsets, Summary: "when the timeout is unset (old != 0 && new == 0)", Source: aksCluster + ":65-67" + azurerm,
	},
	"azurerm_kubernetes_cluster.default_node_pool.upgrade_settings.undrainable_node_behavior": {
		Replaces: lifecycle.Unsets, Summary: `when it is unset (old != "" && new == "")`, Source: aksCluster + ":68-70" + azurerm,
	},
	"azurerm_kubernetes_cluster_node_pool.upgrade_settings.drain_timeout_in_minutes": {
		Replaces: lifecycle.Unsets, Summary: "when the timeout is unset (old != 0 && new == 0)", Source: aksPool + ":85-88" + azurerm,
	},
	"azurerm_kubernetes_cluster_node_pool.upgrade_settings.undrainable_node_behavior": {
		Replaces: lifecycle.Unsets, Summary: `when it is unset (old != "" && new == "")`, Source: aksPool + ":89-91" + azurerm,
	},
	// Ubuntu* and AzureLinux* are the only OS SKUs a pool migrates
	// between in place.
	"azurerm_kubernetes_cluster_node_pool.os_sku": {
		Replaces: func(d lifecycle.Diff) bool { return !linuxSKU(d.Old) || !linuxSKU(d.New) },
		Summary:  "unless both the old and the new SKU are Ubuntu* or AzureLinux*", Source: aksPool + ":70-83" + azurerm,
	},
	"azurerm_kubernetes_cluster.oidc_issuer_enabled": {
		Replaces: lifecycle.Unsets, Summary: "when it is disabled (true to false)", Source: aksCluster + ":71-74" + azurerm,
	},
	// Migrating from a managed identity to a service principal is not
	// allowed, the other way round is.
	"azurerm_kubernetes_cluster.service_principal.client_id": {
		Replaces: func(d lifecycle.Diff) bool { return lifecycle.Str(d.Old) == "msi" || lifecycle.Str(d.Old) == "" },
		Summary:  `when the cluster had no service principal (old == "msi" || old == "")`, Source: aksCluster + ":76-78" + azurerm,
	},
	"azurerm_kubernetes_cluster.windows_profile.gmsa": {
		Replaces: lifecycle.Unsets, Summary: "when the block is removed", Source: aksCluster + ":79-81" + azurerm,
	},
	"azurerm_kubernetes_cluster.windows_profile.gmsa.dns_server": {
		Replaces: lifecycle.Unsets, Summary: `when it is unset (old != "" && new == "")`, Source: aksCluster + ":82-84" + azurerm,
	},
	"azurerm_kubernetes_cluster.windows_profile.gmsa.root_domain": {
		Replaces: lifecycle.Unsets, Summary: `when it is unset (old != "" && new == "")`, Source: aksCluster + ":85-87" + azurerm,
	},
	"azurerm_kubernetes_cluster.api_server_access_profile.subnet_id": {
		Replaces: lifecycle.Unsets, Summary: `when it is unset (old != "" && new == "")`, Source: aksCluster + ":88-90" + azurerm,
	},
	// A default pool left under temporary_name_for_rotation by a failed
	// resize is renamed back in place; any other rename replaces the
	// cluster.
	"azurerm_kubernetes_cluster.default_node_pool.name": {
		Replaces: func(d lifecycle.Diff) bool {
			old := lifecycle.Str(d.Old)
			return old == "" || old != lifecycle.Str(d.NewAt("defaultNodePool.temporaryNameForRotation"))
		},
		Summary: "unless the pool runs under its temporaryNameForRotation (a failed resize)", Source: aksCluster + ":91-102" + azurerm,
	},
	"azurerm_kubernetes_cluster.network_profile.network_data_plane": {
		Replaces: func(d lifecycle.Diff) bool {
			old := lifecycle.Str(d.Old)
			return old != "" && (old != "azure" || lifecycle.Str(d.New) != "cilium")
		},
		Summary: "unless it was unset, or goes from azure to cilium", Source: aksCluster + ":103-116" + azurerm,
	},
	// kubenet to azure is a migration to Azure CNI Overlay, in place when
	// the plugin mode is (or becomes) overlay.
	"azurerm_kubernetes_cluster.network_profile.network_plugin": {
		Replaces: func(d lifecycle.Diff) bool {
			return lifecycle.Str(d.Old) != "kubenet" || lifecycle.Str(d.New) != "azure" || !strings.EqualFold(lifecycle.Str(d.NewAt("networkProfile.networkPluginMode")), "overlay")
		},
		Summary: "unless it goes from kubenet to azure with networkPluginMode overlay", Source: aksCluster + ":117-133" + azurerm,
	},
	"azurerm_kubernetes_cluster.network_profile.network_plugin_mode": {
		Replaces: func(d lifecycle.Diff) bool { return !strings.EqualFold(lifecycle.Str(d.New), "overlay") },
		Summary:  "unless it becomes overlay", Source: aksCluster + ":140-142" + azurerm,
	},
	// Azure migrates Azure Network Policy Manager and Calico to Cilium in
	// place.
	"azurerm_kubernetes_cluster.network_profile.network_policy": {
		Replaces: func(d lifecycle.Diff) bool {
			old, new := lifecycle.Str(d.Old), lifecycle.Str(d.New)
			inPlace := (old == "azure" || old == "calico") && new == "cilium"
			return old != "" && !inPlace
		},
		Summary: "unless it was unset, or goes from azure or calico to cilium", Source: aksCluster + ":143-161" + azurerm,
	},
	"azurerm_kubernetes_cluster.network_profile.pod_cidr": {
		Replaces: func(d lifecycle.Diff) bool { return lifecycle.Str(d.Old) != "" },
		Summary:  `once it is set (old != "")`, Source: aksCluster + ":162-164" + azurerm,
	},
	"azurerm_kubernetes_cluster.network_profile.pod_cidrs": {
		Replaces: func(d lifecycle.Diff) bool { return lifecycle.Len(d.Old) > 0 },
		Summary:  "once it is set (len(old) > 0)", Source: aksCluster + ":165-167" + azurerm,
	},
	"azurerm_public_ip.domain_name_label_scope": {
		Replaces: func(d lifecycle.Diff) bool { return lifecycle.Str(d.Old) != "" || lifecycle.Str(d.New) == "" },
		Summary:  "unless it is set where it was unset", Source: "internal/services/network/public_ip_resource.go:200-202" + azurerm,
	},
	"azurerm_postgresql_flexible_server.version": {
		Source: postgres + ":390-402" + azurerm,
		Why:    "the hand entry walks the version (a major upgrade in place, never down): the provider replaces only on a downgrade (old > new), which the walk never asks for",
	},
	"azurerm_postgresql_flexible_server.administrator_login": {
		Replaces: func(d lifecycle.Diff) bool { return lifecycle.Str(d.Old) != "" },
		Summary:  `once it is set (old != "")`, Source: postgres + ":403-408" + azurerm,
	},
	"azurerm_postgresql_flexible_server.storage_mb": {
		Source: postgres + ":409-474" + azurerm,
		Why:    "the hand entry is a Raise (storage never shrinks): the provider replaces on a decrease (new > 0 && old > new), which the Raise refuses",
	},
	// Dropping a user-assigned identity (to system-assigned, or none)
	// replaces the server.
	"azurerm_postgresql_flexible_server.identity.type": {
		Replaces: func(d lifecycle.Diff) bool {
			old, new := identityType(d.Old), identityType(d.New)
			return (old == "UserAssigned" || old == "SystemAssigned, UserAssigned") && (new == "SystemAssigned" || new == "None")
		},
		Summary: "when a UserAssigned identity goes (to SystemAssigned or None)", Source: postgres + ":474-495" + azurerm,
	},
	"azurerm_postgresql_flexible_server.cluster.size": {
		Replaces: func(d lifecycle.Diff) bool {
			return lifecycle.Len(d.OldAt("cluster")) > 0 && lifecycle.Len(d.NewAt("cluster")) > 0 && lifecycle.Num(d.New) < lifecycle.Num(d.Old)
		},
		Summary: "when the cluster shrinks (new < old)", Source: postgres + ":496-520" + azurerm,
	},
	"azurerm_storage_account.account_kind": {
		Replaces: func(d lifecycle.Diff) bool {
			old := lifecycle.Str(d.Old)
			return old != "" && old != "Storage" && lifecycle.Str(d.New) != "StorageV2"
		},
		Summary: "unless it goes from Storage, or to StorageV2", Source: storageAccount + ":1103-1114" + azurerm,
	},
	"azurerm_storage_account.large_file_share_enabled": {
		Replaces: lifecycle.Unsets, Summary: "when it is disabled (true to false)", Source: storageAccount + ":1116-1121" + azurerm,
	},
	// Once Locked, an immutability policy stays; other moves the provider
	// refuses as errors, not replacements.
	"azurerm_storage_account.immutability_policy.state": {
		Replaces: func(d lifecycle.Diff) bool { return lifecycle.Str(d.Old) == "Locked" },
		Summary:  "once it is Locked", Source: storageAccount + ":1151-1173" + azurerm,
	},
	"azurerm_storage_account.account_replication_type": {
		Replaces: func(d lifecycle.Diff) bool {
			old, new := replication(d.Old), replication(d.New)
			return old != "" && new != "" && old != new
		},
		Summary: "between the LRS family (LRS, GRS, RAGRS) and the ZRS family (ZRS, GZRS, RAGZRS)", Source: storageAccount + ":1183-1197" + azurerm,
	},
}

// linuxSKU reports whether an OS SKU is one AKS migrates a pool between in
// place: Ubuntu* or AzureLinux*.
func linuxSKU(v any) bool {
	s := lifecycle.Str(v)
	return strings.HasPrefix(s, "Ubuntu") || strings.HasPrefix(s, "AzureLinux")
}

// identityType is an identity block's type, None without one, as azurerm
// reads it.
func identityType(v any) string {
	if s := lifecycle.Str(v); s != "" {
		return s
	}
	return "None"
}

// replication is the family of a storage account's replication type:
// LRS for LRS, GRS and RAGRS, ZRS for ZRS, GZRS and RAGZRS, "" for any
// other.
func replication(v any) string {
	switch strings.ToUpper(lifecycle.Str(v)) {
	case "LRS", "GRS", "RAGRS":
		return "LRS"
	case "ZRS", "GZRS", "RAGZRS":
		return "ZRS"
	}
	return ""
}
