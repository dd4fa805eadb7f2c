package azure

import (
	"fmt"
	"hash/fnv"
	"net/netip"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/database"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Kinds of the database module, at the versions provider-upjet-azure v2
// serves.
var (
	flexibleServerKind = registry.Upjet(Name, "dbforpostgresql", "FlexibleServer", "v1beta2", "spec.forProvider.version", "spec.forProvider.skuName").
				WithGuarded(registry.WhyPrivate, "spec.forProvider.publicNetworkAccessEnabled").Replaces(
		inGroupReplaces("azurerm_postgresql_flexible_server", "internal/services/postgres/postgresql_flexible_server_resource.go:73"),
		terraform.Refuse("delegatedSubnetIdSelector", "azurerm_postgresql_flexible_server.delegated_subnet_id", "internal/services/postgres/postgresql_flexible_server_resource.go:206-209"),
		terraform.Refuse("geoRedundantBackupEnabled", "azurerm_postgresql_flexible_server.geo_redundant_backup_enabled", "internal/services/postgres/postgresql_flexible_server_resource.go:276-280"),
		terraform.Refuse("administratorLogin", "azurerm_postgresql_flexible_server.administrator_login", "internal/services/postgres/postgresql_flexible_server_resource.go:403-408"),
		// The walk of database.Engine moves it (never down: a lower
		// version replaces the server); overrides may not.
		terraform.Walk("version", "azurerm_postgresql_flexible_server.version (a major upgrade in place; a downgrade replaces)", "internal/services/postgres/postgresql_flexible_server_resource.go:390-402"),
		terraform.Raise("storageMb", "azurerm_postgresql_flexible_server.storage_mb (grows in place; shrinking replaces)", "internal/services/postgres/postgresql_flexible_server_resource.go:409-431"))
	flexibleServerDBKind = registry.Upjet(Name, "dbforpostgresql", "FlexibleServerDatabase", "v1beta1").Replaces(
		terraform.Refuse("serverIdSelector", "azurerm_postgresql_flexible_server_database.server_id", "internal/services/postgres/postgresql_flexible_server_database_resource.go:48-51"),
		terraform.Refuse("charset", "azurerm_postgresql_flexible_server_database.charset", "internal/services/postgres/postgresql_flexible_server_database_resource.go:55-58"),
		terraform.Refuse("collation", "azurerm_postgresql_flexible_server_database.collation", "internal/services/postgres/postgresql_flexible_server_database_resource.go:64-67"))
)

// Composition-resource names of a Database.
const (
	rDBResourceGroup = "resource-group"
	rDBNetwork       = "network"
	rDBSubnet        = "subnet"
	rDBZone          = "private-dns-zone"
	rDBZoneLink      = "private-dns-zone-link"
	rDBInstance      = "instance"
	rSchemaPrefix    = "database-"
)

// dbSubnetBits is the size of a database's delegated subnet in a Cluster's
// network: a /28, the least Flexible Server takes.
const dbSubnetBits = 28

// storageSizesGiB are the storage sizes Flexible Server offers.
var storageSizesGiB = []int64{32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32767}

func init() {
	registry.Implement(Cloud, dbNetwork)
	registry.Implement(Cloud, dbInstance)
	registry.Implement(Cloud, dbSchema)
	registry.Check(Cloud, checkDBInstance)
	// The Cluster's virtual network, whose address space the database's
	// delegated subnet is carved from.
	clusterref.ForDatabase.Reads(Name, clusterref.Read{Resource: rNetwork, Kind: vnetKind})
	database.Engines.Register(Name, database.Engine{
		Asked: func(obs *structpb.Struct) string { return object.String(obs, "spec", "forProvider", "version") },
		Runs:  func(obs *structpb.Struct) string { return object.String(obs, "status", "atProvider", "version") },
		StorageGB: func(obs *structpb.Struct) int64 {
			return int64(object.Get(obs, "spec", "forProvider", "storageMb").GetNumberValue()) / 1024
		},
		// What auto-grow made of it: the provider reports the server's
		// storage (storage.storageSizeGB × 1024) as status.atProvider.storageMb.
		Grown: func(obs *structpb.Struct) int64 {
			return int64(object.Get(obs, "status", "atProvider", "storageMb").GetNumberValue()) / 1024
		},
		Offered: offeredStorage,
		// Flexible Server always keeps automated backups, 7 to 35 days
		// (backup_retention_days, which checkDBInstance holds to that).
		Backups: func(*structpb.Struct) bool { return true },
		// A higher version is patched in place, an in-place major version
		// upgrade to any later version; a lower one replaces the server
		// (internal/services/postgres/postgresql_flexible_server_resource.go:
		// 390-402, 1096-1099 of terraform-provider-azurerm v4.80.0; "Major
		// version upgrade", Azure Database for PostgreSQL flexible server
		// docs).
		Targets: map[string][]string{"13": {"14", "15", "16", "17"}, "14": {"15", "16", "17"}, "15": {"16", "17"}, "16": {"17"}},
		Source:  "Flexible Server's in-place major version upgrade",
	})
}

func dbTags(name string) map[string]any {
	return map[string]any{"database": name, "managed-by": "crossplane"}
}

// dbNetwork renders Flexible Server's private access: a resource group of
// the database's own, a subnet delegated to Flexible Server, and a private
// DNS zone linked to the network. Joining a Cluster, the subnet is a /28 of
// the second half of the Cluster's address space (which its nodes leave
// free; spec.parameters.network.cidr picks one), chosen by the database's
// name; otherwise the database gets a virtual network of its own.
func dbNetwork(ctx *registry.Context, n database.Network) ([]*registry.Resource, error) {
	rg := &registry.Resource{
		Name:         rDBResourceGroup,
		Kind:         resourceGroupKind,
		ExternalName: n.Name + "-db-rg",
		Body:         object.Object{"spec": map[string]any{"forProvider": map[string]any{"location": n.Location, "tags": dbTags(n.Name)}}},
	}
	zone := &registry.Resource{
		Name:         rDBZone,
		Kind:         privateZoneKind,
		ExternalName: n.Name + ".private.postgres.database.azure.com",
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"resourceGroupNameSelector": ctx.Selector(rDBResourceGroup),
			"tags":                      dbTags(n.Name),
		}}},
		DependsOn: []string{rDBResourceGroup},
	}
	subnetFP := map[string]any{
		"defaultOutboundAccessEnabled": false,
		"delegation": []any{map[string]any{
			"name": "flexible-server",
			"serviceDelegation": map[string]any{
				"name":    "Microsoft.DBforPostgreSQL/flexibleServers",
				"actions": []any{"Microsoft.Network/virtualNetworks/subnets/join/action"},
			},
		}},
	}
	subnet := &registry.Resource{Name: rDBSubnet, Kind: subnetKind}
	link := map[string]any{
		"resourceGroupNameSelector":  ctx.Selector(rDBResourceGroup),
		"privateDnsZoneNameSelector": ctx.Selector(rDBZone),
		"registrationEnabled":        false,
		"tags":                       dbTags(n.Name),
	}
	out := []*registry.Resource{rg, zone}
	linkDeps := []string{rDBZone}

	if c := n.Cluster; c != nil {
		subnet.ExternalName = n.Name + "-db"
		subnetFP["resourceGroupNameSelector"] = clusterref.Selector(c, rResourceGroup)
		subnetFP["virtualNetworkNameSelector"] = clusterref.Selector(c, rNetwork)
		link["virtualNetworkIdSelector"] = clusterref.Selector(c, rNetwork)
		cidr := n.CIDR
		if !cidr.IsValid() {
			space := object.Strings(c.Observed[rNetwork], "spec", "forProvider", "addressSpace")
			if len(space) == 0 {
				clusterref.Await(c, subnet, "virtual network to report its address space")
			} else {
				var err error
				if cidr, err = delegatedSubnet(space[0], n.Name); err != nil {
					return nil, err
				}
			}
		}
		if cidr.IsValid() {
			subnetFP["addressPrefixes"] = []any{cidr.String()}
			subnet.Body = object.Object{"spec": map[string]any{"forProvider": subnetFP}}
		}
	} else {
		out = append(out, &registry.Resource{
			Name:         rDBNetwork,
			Kind:         vnetKind,
			ExternalName: n.Name + "-db-vnet",
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"location":                  n.Location,
				"resourceGroupNameSelector": ctx.Selector(rDBResourceGroup),
				"addressSpace":              []any{n.CIDR.String()},
				"tags":                      dbTags(n.Name),
			}}},
			DependsOn: []string{rDBResourceGroup},
		})
		subnet.ExternalName = "database"
		subnetFP["resourceGroupNameSelector"] = ctx.Selector(rDBResourceGroup)
		subnetFP["virtualNetworkNameSelector"] = ctx.Selector(rDBNetwork)
		subnetFP["addressPrefixes"] = []any{n.CIDR.String()}
		subnet.Body = object.Object{"spec": map[string]any{"forProvider": subnetFP}}
		subnet.DependsOn = []string{rDBNetwork}
		link["virtualNetworkIdSelector"] = ctx.Selector(rDBNetwork)
		linkDeps = append(linkDeps, rDBNetwork)
	}
	return append(out, subnet, &registry.Resource{
		Name:         rDBZoneLink,
		Kind:         zoneLinkKind,
		ExternalName: n.Name + "-db",
		Body:         object.Object{"spec": map[string]any{"forProvider": link}},
		DependsOn:    linkDeps,
	}), nil
}

// delegatedSubnet is the database's /28 in the second half of a Cluster's
// address space, chosen by the database's name.
func delegatedSubnet(space, name string) (netip.Prefix, error) {
	pfx, err := xr.ParseCIDR(space)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("cannot read the Cluster's address space %q: %w", space, err)
	}
	if pfx.Bits() > dbSubnetBits-1 {
		return netip.Prefix{}, fmt.Errorf("the Cluster's address space %s is too small to carve a /%d for the database from its second half; set spec.parameters.network.cidr", space, dbSubnetBits)
	}
	half, err := cluster.Subnet(pfx, 1, 1)
	if err != nil {
		return netip.Prefix{}, err
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	// At most 2^26 slots: half is at most a /2 of a prefix of at least /1.
	slots := uint64(1) << (dbSubnetBits - half.Bits())
	return cluster.Subnet(half, dbSubnetBits-half.Bits(), int(uint64(h.Sum32())%slots)) //nolint:gosec // the slot is below slots, at most 2^26

}

// dbInstance renders the PostgreSQL Flexible Server on its delegated
// subnet, without public access, with zone-redundant high availability when
// asked, the administrator's password generated by the provider into
// i.PasswordSecret. Flexible Server has no deletion protection of its own:
// with deletionProtection the function composes it with the Orphan deletion
// policy, so that deleting the XR leaves the server.
func dbInstance(ctx *registry.Context, i database.Instance) ([]*registry.Resource, error) {
	storage := offeredStorage(i.StorageGB)
	if storage != i.StorageGB {
		ctx.Warn("Flexible Server offers storage of 32, 64, 128, ... GiB: the database gets %d GiB for storageGb %d", storage, i.StorageGB)
	}
	// Auto-grow raises the server's storage by itself; the provider reads
	// storage_mb back from the server (read, line 846) and forces a new
	// server for a spec below it, auto_grow_enabled or not (CustomizeDiff,
	// lines 415-429 of internal/services/postgres/
	// postgresql_flexible_server_resource.go at v4.80.0): the server keeps
	// what it has grown to. RDS and Cloud SQL need nothing of the kind:
	// their providers ignore a spec below a size their autoscaling reached
	// (aws_db_instance.allocated_storage's DiffSuppressFunc while
	// max_allocated_storage is above it; google_sql_database_instance's
	// diskSizeCutomizeDiff clears the diff while disk_autoresize is on).
	storage = max(storage, i.GrownGB)
	password := object.Object{"name": i.PasswordSecret, "key": database.PasswordKey}
	if !ctx.Namespaced() {
		password["namespace"] = ctx.SecretNamespace()
	}
	fp := map[string]any{
		"location":                       i.Location,
		"resourceGroupNameSelector":      ctx.Selector(rDBResourceGroup),
		"version":                        i.Version,
		"skuName":                        i.Tier,
		"storageMb":                      storage * 1024,
		"autoGrowEnabled":                true,
		"backupRetentionDays":            i.BackupRetentionDays,
		"geoRedundantBackupEnabled":      false,
		"delegatedSubnetIdSelector":      ctx.Selector(rDBSubnet),
		"privateDnsZoneIdSelector":       ctx.Selector(rDBZone),
		"publicNetworkAccessEnabled":     false,
		"administratorLogin":             i.Username,
		"autoGeneratePassword":           true,
		"administratorPasswordSecretRef": password,
		"authentication":                 map[string]any{"passwordAuthEnabled": true, "activeDirectoryAuthEnabled": false},
		// Azure counts the days of the week from Sunday, 0.
		"maintenanceWindow": map[string]any{"dayOfWeek": i.Maintenance.Weekday() % 7, "startHour": i.Maintenance.Hour, "startMinute": 0},
		"tags":              dbTags(i.Name),
	}
	if i.HighAvailability {
		fp["highAvailability"] = map[string]any{"mode": "ZoneRedundant"}
	}
	return []*registry.Resource{{
		Name:         rDBInstance,
		Kind:         flexibleServerKind,
		ExternalName: i.Name,
		Body: object.Object{"spec": map[string]any{
			"forProvider":                fp,
			"writeConnectionSecretToRef": ctx.ConnectionSecretRef(i.ConnectionSecret),
		}},
		Orphan:    i.DeletionProtection,
		DependsOn: []string{rDBSubnet, rDBZoneLink},
		Outputs: func(obs *structpb.Struct, _ map[string][]byte, o *registry.Outputs) {
			o.Host = object.String(obs, "status", "atProvider", "fqdn")
			o.EngineVersion = object.String(obs, "status", "atProvider", "version")
		},
	}}, nil
}

// dbSchema renders one database of the Flexible Server.
func dbSchema(ctx *registry.Context, s database.Schema) ([]*registry.Resource, error) {
	return []*registry.Resource{{
		Name:         rSchemaPrefix + s.Name,
		Kind:         flexibleServerDBKind,
		ExternalName: s.Name,
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"serverIdSelector": ctx.Selector(rDBInstance),
			"charset":          "UTF8",
			"collation":        "en_US.utf8",
		}}},
		DependsOn: []string{rDBInstance},
	}}, nil
}

// offeredStorage is the storage Flexible Server gives for gb: the
// smallest size it offers that holds gb.
func offeredStorage(gb int64) int64 {
	for _, s := range storageSizesGiB {
		if s >= gb {
			return s
		}
	}
	return storageSizesGiB[len(storageSizesGiB)-1]
}

// checkDBInstance checks Azure's rules for a Flexible Server: its name, the
// subscription, the region and the backup retention.
func checkDBInstance(ctx *registry.Context, i database.Instance) field.ErrorList {
	errs := xr.ValidateCloudName(ctx.XR, maxClusterName, "Flexible Server", "")
	if !reSubscription.MatchString(ctx.XR.PlaneID) {
		errs = append(errs, field.Invalid(xr.LabelPath(xr.LabelPlaneID), ctx.XR.PlaneID, "must be an Azure subscription ID (a GUID)"))
	}
	if !reLocation.MatchString(i.Location) {
		errs = append(errs, field.Invalid(xr.ParametersPath("location"), i.Location, "must be an Azure region such as westeurope"))
	}
	if d := i.BackupRetentionDays; d < 7 {
		errs = append(errs, field.Invalid(xr.ParametersPath("backupRetentionDays"), d, "Flexible Server keeps backups 7 to 35 days"))
	}
	return errs
}
