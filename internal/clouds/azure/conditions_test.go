package azure

import (
	"testing"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// TestConditions holds azurerm's conditions (conditions.go) against its
// generated tables, and each both ways: a change azurerm makes in place,
// and one it replaces the resource for.
func TestConditions(t *testing.T) {
	type args = fntest.ConditionArgs
	const (
		poolDrain   = "azurerm_kubernetes_cluster_node_pool.upgrade_settings.drain_timeout_in_minutes"
		poolUndrain = "azurerm_kubernetes_cluster_node_pool.upgrade_settings.undrainable_node_behavior"
		sysDrain    = "azurerm_kubernetes_cluster.default_node_pool.upgrade_settings.drain_timeout_in_minutes"
		sysUndrain  = "azurerm_kubernetes_cluster.default_node_pool.upgrade_settings.undrainable_node_behavior"
		sysName     = "azurerm_kubernetes_cluster.default_node_pool.name"
		plugin      = "azurerm_kubernetes_cluster.network_profile.network_plugin"
		identity    = "azurerm_postgresql_flexible_server.identity.type"
		size        = "azurerm_postgresql_flexible_server.cluster.size"
		replicated  = "azurerm_storage_account.account_replication_type"
	)
	cluster := map[string]any{"size": 3.0}
	fntest.Conditions(t, generatedTables, conditions, map[string]fntest.ConditionCase{
		"PoolDrainTimeoutRaised":      {Reason: "A user pool's drain timeout raised 30 -> 45 is made in place.", Args: args{Attribute: poolDrain, Old: 30.0, New: 45.0}},
		"PoolDrainTimeoutSet":         {Reason: "Setting a drain timeout where none was is made in place.", Args: args{Attribute: poolDrain, New: 30.0}},
		"PoolDrainTimeoutUnset":       {Reason: "Unsetting it (0, Terraform's unset) replaces the pool.", Args: args{Attribute: poolDrain, Old: 30.0, New: 0.0}, Want: true},
		"PoolUndrainableChanged":      {Reason: "Another undrainable node behavior is made in place.", Args: args{Attribute: poolUndrain, Old: "Cordon", New: "Schedule"}},
		"PoolUndrainableUnset":        {Reason: "Unsetting it replaces the pool.", Args: args{Attribute: poolUndrain, Old: "Cordon", New: ""}, Want: true},
		"SystemDrainTimeoutRaised":    {Reason: "The default pool's drain timeout raised is made in place.", Args: args{Attribute: sysDrain, Old: 30.0, New: 45.0}},
		"SystemDrainTimeoutUnset":     {Reason: "Unsetting it replaces the cluster.", Args: args{Attribute: sysDrain, Old: 30.0, New: nil}, Want: true},
		"SystemUndrainableSet":        {Reason: "Setting it is made in place.", Args: args{Attribute: sysUndrain, New: "Cordon"}},
		"SystemUndrainableUnset":      {Reason: "Unsetting it replaces the cluster.", Args: args{Attribute: sysUndrain, Old: "Cordon"}, Want: true},
		"OSSKUUbuntuToAzureLinux":     {Reason: "Ubuntu to AzureLinux is a migration AKS makes in place.", Args: args{Attribute: "azurerm_kubernetes_cluster_node_pool.os_sku", Old: "Ubuntu", New: "AzureLinux"}},
		"OSSKUToWindows":              {Reason: "Any other SKU replaces the pool.", Args: args{Attribute: "azurerm_kubernetes_cluster_node_pool.os_sku", Old: "Ubuntu", New: "Windows2022"}, Want: true},
		"OIDCEnabled":                 {Reason: "Enabling the OIDC issuer is made in place.", Args: args{Attribute: "azurerm_kubernetes_cluster.oidc_issuer_enabled", Old: false, New: true}},
		"OIDCDisabled":                {Reason: "Disabling it replaces the cluster.", Args: args{Attribute: "azurerm_kubernetes_cluster.oidc_issuer_enabled", Old: true, New: false}, Want: true},
		"ServicePrincipalRotated":     {Reason: "Another service principal is made in place.", Args: args{Attribute: "azurerm_kubernetes_cluster.service_principal.client_id", Old: "a", New: "b"}},
		"ServicePrincipalFromMSI":     {Reason: "A service principal where a managed identity was replaces the cluster.", Args: args{Attribute: "azurerm_kubernetes_cluster.service_principal.client_id", Old: "msi", New: "b"}, Want: true},
		"GMSAAdded":                   {Reason: "Adding gMSA is made in place.", Args: args{Attribute: "azurerm_kubernetes_cluster.windows_profile.gmsa", New: map[string]any{"dnsServer": "10.0.0.10"}}},
		"GMSARemoved":                 {Reason: "Removing it replaces the cluster.", Args: args{Attribute: "azurerm_kubernetes_cluster.windows_profile.gmsa", Old: map[string]any{"dnsServer": "10.0.0.10"}}, Want: true},
		"GMSADNSServerChanged":        {Reason: "Another gMSA DNS server is made in place.", Args: args{Attribute: "azurerm_kubernetes_cluster.windows_profile.gmsa.dns_server", Old: "10.0.0.10", New: "10.0.0.11"}},
		"GMSADNSServerUnset":          {Reason: "Unsetting it replaces the cluster.", Args: args{Attribute: "azurerm_kubernetes_cluster.windows_profile.gmsa.dns_server", Old: "10.0.0.10", New: ""}, Want: true},
		"GMSARootDomainSet":           {Reason: "Setting the root domain is made in place.", Args: args{Attribute: "azurerm_kubernetes_cluster.windows_profile.gmsa.root_domain", New: "corp.example"}},
		"GMSARootDomainUnset":         {Reason: "Unsetting it replaces the cluster.", Args: args{Attribute: "azurerm_kubernetes_cluster.windows_profile.gmsa.root_domain", Old: "corp.example", New: ""}, Want: true},
		"APIServerSubnetMoved":        {Reason: "The API server's subnet moved to another is made in place.", Args: args{Attribute: "azurerm_kubernetes_cluster.api_server_access_profile.subnet_id", Old: "/subnets/a", New: "/subnets/b"}},
		"APIServerSubnetUnset":        {Reason: "Unsetting it replaces the cluster.", Args: args{Attribute: "azurerm_kubernetes_cluster.api_server_access_profile.subnet_id", Old: "/subnets/a", New: ""}, Want: true},
		"DefaultPoolBackFromTempName": {Reason: "A default pool left under its temporaryNameForRotation by a failed resize is renamed back in place.", Args: args{Attribute: sysName, Old: "systemtmp", New: "system", Desired: map[string]any{"defaultNodePool": map[string]any{"temporaryNameForRotation": "systemtmp"}}}},
		"DefaultPoolRenamed":          {Reason: "Any other rename of the default pool replaces the cluster.", Args: args{Attribute: sysName, Old: "system", New: "other", Observed: map[string]any{"defaultNodePool": map[string]any{"temporaryNameForRotation": "systemtmp"}}}, Want: true},
		"DataPlaneAzureToCilium":      {Reason: "azure to cilium is an in-place upgrade.", Args: args{Attribute: "azurerm_kubernetes_cluster.network_profile.network_data_plane", Old: "azure", New: "cilium"}},
		"DataPlaneCiliumToAzure":      {Reason: "cilium to azure replaces the cluster.", Args: args{Attribute: "azurerm_kubernetes_cluster.network_profile.network_data_plane", Old: "cilium", New: "azure"}, Want: true},
		"PluginKubenetToOverlay":      {Reason: "kubenet to azure with the overlay plugin mode is an in-place migration.", Args: args{Attribute: plugin, Old: "kubenet", New: "azure", Desired: map[string]any{"networkProfile": map[string]any{"networkPluginMode": "Overlay"}}}},
		"PluginKubenetToAzureFlat":    {Reason: "kubenet to azure without the overlay replaces the cluster.", Args: args{Attribute: plugin, Old: "kubenet", New: "azure", Observed: map[string]any{"networkProfile": map[string]any{"networkPluginMode": ""}}}, Want: true},
		"PluginModeToOverlay":         {Reason: "The overlay plugin mode is set in place.", Args: args{Attribute: "azurerm_kubernetes_cluster.network_profile.network_plugin_mode", New: "overlay"}},
		"PluginModeFromOverlay":       {Reason: "Leaving it replaces the cluster.", Args: args{Attribute: "azurerm_kubernetes_cluster.network_profile.network_plugin_mode", Old: "overlay", New: ""}, Want: true},
		"PolicyCalicoToCilium":        {Reason: "calico to cilium is an in-place upgrade.", Args: args{Attribute: "azurerm_kubernetes_cluster.network_profile.network_policy", Old: "calico", New: "cilium"}},
		"PolicyAzureToCalico":         {Reason: "azure to calico replaces the cluster.", Args: args{Attribute: "azurerm_kubernetes_cluster.network_profile.network_policy", Old: "azure", New: "calico"}, Want: true},
		"PodCIDRSet":                  {Reason: "A pod CIDR where none was is set in place.", Args: args{Attribute: "azurerm_kubernetes_cluster.network_profile.pod_cidr", New: "10.244.0.0/16"}},
		"PodCIDRChanged":              {Reason: "Changing a pod CIDR replaces the cluster.", Args: args{Attribute: "azurerm_kubernetes_cluster.network_profile.pod_cidr", Old: "10.244.0.0/16", New: "10.245.0.0/16"}, Want: true},
		"PodCIDRsSet":                 {Reason: "Pod CIDRs where none were are set in place.", Args: args{Attribute: "azurerm_kubernetes_cluster.network_profile.pod_cidrs", New: []any{"10.244.0.0/16"}}},
		"PodCIDRsChanged":             {Reason: "Changing them replaces the cluster.", Args: args{Attribute: "azurerm_kubernetes_cluster.network_profile.pod_cidrs", Old: []any{"10.244.0.0/16"}, New: []any{"10.245.0.0/16"}}, Want: true},
		"DomainLabelScopeSet":         {Reason: "A domain name label scope where none was is set in place.", Args: args{Attribute: "azurerm_public_ip.domain_name_label_scope", New: "TenantReuse"}},
		"DomainLabelScopeChanged":     {Reason: "Changing one replaces the address.", Args: args{Attribute: "azurerm_public_ip.domain_name_label_scope", Old: "TenantReuse", New: "NoReuse"}, Want: true},
		"AdminLoginSet":               {Reason: "An administrator login where none was is set in place.", Args: args{Attribute: "azurerm_postgresql_flexible_server.administrator_login", New: "admin"}},
		"AdminLoginChanged":           {Reason: "Changing one replaces the server.", Args: args{Attribute: "azurerm_postgresql_flexible_server.administrator_login", Old: "admin", New: "root"}, Want: true},
		"IdentityAdded":               {Reason: "SystemAssigned where there was none is made in place.", Args: args{Attribute: identity, New: "SystemAssigned"}},
		"IdentityUserAssignedDropped": {Reason: "UserAssigned to SystemAssigned replaces the server.", Args: args{Attribute: identity, Old: "UserAssigned", New: "SystemAssigned"}, Want: true},
		"ClusterGrows":                {Reason: "A cluster grown is made in place.", Args: args{Attribute: size, Old: 3.0, New: 4.0, Observed: map[string]any{"cluster": cluster}, Desired: map[string]any{"cluster": map[string]any{"size": 4.0}}}},
		"ClusterShrinks":              {Reason: "A cluster shrunk replaces the server.", Args: args{Attribute: size, Old: 3.0, New: 2.0, Observed: map[string]any{"cluster": cluster}, Desired: map[string]any{"cluster": map[string]any{"size": 2.0}}}, Want: true},
		"KindStorageToStorageV2":      {Reason: "Storage to StorageV2 is an in-place upgrade.", Args: args{Attribute: "azurerm_storage_account.account_kind", Old: "Storage", New: "StorageV2"}},
		"KindBlobToFile":              {Reason: "BlobStorage to FileStorage replaces the account.", Args: args{Attribute: "azurerm_storage_account.account_kind", Old: "BlobStorage", New: "FileStorage"}, Want: true},
		"LargeFileShareEnabled":       {Reason: "Enabling large file shares is made in place.", Args: args{Attribute: "azurerm_storage_account.large_file_share_enabled", Old: false, New: true}},
		"LargeFileShareDisabled":      {Reason: "Disabling them replaces the account.", Args: args{Attribute: "azurerm_storage_account.large_file_share_enabled", Old: true, New: false}, Want: true},
		"ImmutabilityLocked":          {Reason: "Unlocked to Locked is made in place.", Args: args{Attribute: "azurerm_storage_account.immutability_policy.state", Old: "Unlocked", New: "Locked"}},
		"ImmutabilityFromLocked":      {Reason: "Any change of a Locked policy replaces the account.", Args: args{Attribute: "azurerm_storage_account.immutability_policy.state", Old: "Locked", New: "Unlocked"}, Want: true},
		"ReplicationLRSToGRS":         {Reason: "LRS to GRS stays in the LRS family, in place.", Args: args{Attribute: replicated, Old: "LRS", New: "GRS"}},
		"ReplicationLRSToZRS":         {Reason: "LRS to ZRS crosses families and replaces the account.", Args: args{Attribute: replicated, Old: "LRS", New: "ZRS"}, Want: true},
	})
}
