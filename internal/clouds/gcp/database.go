package gcp

import (
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/modules/database"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Kinds of the database module, at the versions provider-upjet-gcp v3 serves.
var (
	globalAddressKind = registry.Upjet(Name, "compute", "GlobalAddress", "v1beta1", "spec.forProvider.addressType").Replaces(
		terraform.Refuse("project", "google_compute_global_address.project", "google/services/compute/resource_compute_global_address.go:254-258"),
		terraform.Refuse("prefixLength", "google_compute_global_address.prefix_length", "google/services/compute/resource_compute_global_address.go:209-213"),
		terraform.Refuse("purpose", "google_compute_global_address.purpose", "google/services/compute/resource_compute_global_address.go:220-223"),
		terraform.Refuse("addressType", "google_compute_global_address.address_type", "google/services/compute/resource_compute_global_address.go:162-165"),
		terraform.Refuse("address", "google_compute_global_address.address", "google/services/compute/resource_compute_global_address.go:153-157"),
		terraform.Refuse("description", "google_compute_global_address.description", "google/services/compute/resource_compute_global_address.go:174-177"),
		terraform.Refuse("network", "google_compute_global_address.network", "google/services/compute/resource_compute_global_address.go:198-201"),
		terraform.Refuse("networkSelector", "google_compute_global_address.network", "google/services/compute/resource_compute_global_address.go:198-201"))
	serviceConnectionKind = registry.Upjet(Name, "servicenetworking", "Connection", "v1beta1", "spec.forProvider.service").As(registry.Peering).Replaces(
		terraform.Refuse("network", "google_service_networking_connection.network", "google/services/servicenetworking/resource_service_networking_connection.go:67-70"),
		terraform.Refuse("networkSelector", "google_service_networking_connection.network", "google/services/servicenetworking/resource_service_networking_connection.go:67-70"),
		terraform.Refuse("service", "google_service_networking_connection.service", "google/services/servicenetworking/resource_service_networking_connection.go:80-83"))
	sqlInstanceKind = registry.Upjet(Name, "sql", "DatabaseInstance", "v1beta2", "spec.forProvider.databaseVersion", "spec.forProvider.settings.tier").As(registry.Database, registry.Credentials).
			WithGuarded(registry.WhyPrivate, "spec.forProvider.settings.ipConfiguration.ipv4Enabled", "spec.forProvider.settings.ipConfiguration.authorizedNetworks").Replaces(
		terraform.Refuse("project", "google_sql_database_instance.project", "google/services/sql/resource_sql_database_instance.go:1189-1193"),
		terraform.Refuse("settings.diskType", "google_sql_database_instance.settings.disk_type", "google/services/sql/resource_sql_database_instance.go:577-581"),
		terraform.Refuse("settings.collation", "google_sql_database_instance.settings.collation", "google/services/sql/resource_sql_database_instance.go:532-535"),
		terraform.Refuse("encryptionKeyName", "google_sql_database_instance.encryption_key_name", "google/services/sql/resource_sql_database_instance.go:1107-1111"))
	sqlDatabaseKind = registry.Upjet(Name, "sql", "Database", "v1beta1").Replaces(
		terraform.Refuse("project", "google_sql_database.project", "google/services/sql/resource_sql_database.go:179-183"),
		terraform.Refuse("instanceSelector", "google_sql_database.instance", "google/services/sql/resource_sql_database.go:144-147"))
	sqlUserKind = registry.Upjet(Name, "sql", "User", "v1beta2").Replaces(
		terraform.Refuse("project", "google_sql_user.project", "google/services/sql/resource_sql_user.go:227-231"),
		terraform.Refuse("instanceSelector", "google_sql_user.instance", "google/services/sql/resource_sql_user.go:110-113"),
		terraform.Refuse("type", "google_sql_user.type", "google/services/sql/resource_sql_user.go:151-154"),
		terraform.Refuse("host", "google_sql_user.host", "google/services/sql/resource_sql_user.go:102-106"))
)

// Composition-resource names of a Database.
const (
	rDBNetwork    = "network"
	rPSARange     = "private-ip-range"
	rPSAConnect   = "private-service-connection"
	rDBInstance   = "instance"
	rDBUser       = "user"
	rSchemaPrefix = "database-"
)

// The service private services access peers with.
const serviceNetworking = "servicenetworking.googleapis.com"

func init() {
	registry.Implement(Cloud, dbNetwork)
	registry.Implement(Cloud, dbInstance)
	registry.Implement(Cloud, dbSchema)
	registry.Check(Cloud, checkDBInstance)
}

// dbNetwork renders private services access for Cloud SQL: an internal
// range reserved for Google's services and the peering of the network with
// them. Joining a Cluster, the network is the Cluster's: the range and the
// peering are named after the Cluster, so that every Database on it
// composes the same ones, and they are abandoned, not deleted, with any one
// of them. Otherwise the Database gets a network of its own.
func dbNetwork(ctx *registry.Context, n database.Network) ([]*registry.Resource, error) {
	var out []*registry.Resource
	netSel := object.Object(ctx.Selector(rDBNetwork))
	rangeName := n.Name + "-db-psa"
	var deps []string
	shared := n.Cluster != nil
	if shared {
		netSel = object.Object(n.Cluster.Selector("network"))
		rangeName = n.Cluster.CloudName + "-db-psa"
	} else {
		out = append(out, &registry.Resource{
			Name:         rDBNetwork,
			Kind:         networkKind,
			ExternalName: n.Name + "-db",
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":               ctx.XR.PlaneID,
				"autoCreateSubnetworks": false,
				"routingMode":           "REGIONAL",
				"description":           "Private network of database " + n.Name,
			}}},
		})
		deps = []string{rDBNetwork}
	}
	addr := object.Object{"forProvider": map[string]any{
		"project":         ctx.XR.PlaneID,
		"purpose":         "VPC_PEERING",
		"addressType":     "INTERNAL",
		"prefixLength":    20,
		"networkSelector": netSel,
		"description":     "Private services access of Cloud SQL",
	}}
	conn := object.Object{"forProvider": map[string]any{
		"networkSelector":               netSel,
		"service":                       serviceNetworking,
		"reservedPeeringRangesSelector": ctx.Selector(rPSARange),
		// Another Database on the same network may have created it.
		"updateOnCreationFail": true,
	}}
	if shared {
		conn["forProvider"].(map[string]any)["deletionPolicy"] = "ABANDON"
	}
	return append(out,
		&registry.Resource{Name: rPSARange, Kind: globalAddressKind, ExternalName: rangeName, Body: object.Object{"spec": addr}, DependsOn: deps, Orphan: shared},
		&registry.Resource{Name: rPSAConnect, Kind: serviceConnectionKind, Body: object.Object{"spec": conn}, DependsOn: append([]string{rPSARange}, deps...), Orphan: shared},
	), nil
}

// dbInstance renders the Cloud SQL instance on private IP only, with
// TLS enforced, backups and point-in-time recovery, and the administrator
// user, whose password is read from the Secret i.PasswordSecret: provider-
// upjet-gcp cannot generate one, so the platform supplies it (the function
// never reads it).
func dbInstance(ctx *registry.Context, i database.Instance) ([]*registry.Resource, error) {
	netSel := object.Object(ctx.Selector(rDBNetwork))
	if i.Network.Cluster != nil {
		netSel = object.Object(i.Network.Cluster.Selector("network"))
	}
	availability := "ZONAL"
	if i.HighAvailability {
		availability = "REGIONAL"
	}
	fp := map[string]any{
		"project":            ctx.XR.PlaneID,
		"region":             region(i.Location),
		"databaseVersion":    "POSTGRES_" + i.Version,
		"deletionProtection": i.DeletionProtection,
		"settings": map[string]any{
			"tier":                      i.Tier,
			"edition":                   "ENTERPRISE",
			"availabilityType":          availability,
			"diskType":                  "PD_SSD",
			"diskSize":                  i.StorageGB,
			"diskAutoresize":            true,
			"deletionProtectionEnabled": i.DeletionProtection,
			"backupConfiguration": map[string]any{
				"enabled":                     true,
				"pointInTimeRecoveryEnabled":  true,
				"startTime":                   "01:00",
				"transactionLogRetentionDays": min(i.BackupRetentionDays, 7),
				"backupRetentionSettings":     map[string]any{"retainedBackups": i.BackupRetentionDays, "retentionUnit": "COUNT"},
			},
			"ipConfiguration": map[string]any{
				"ipv4Enabled":            false,
				"privateNetworkSelector": netSel,
				"sslMode":                "ENCRYPTED_ONLY",
			},
			"maintenanceWindow": map[string]any{"day": i.Maintenance.Weekday(), "hour": i.Maintenance.Hour, "updateTrack": "stable"},
			"userLabels":        map[string]any{"managed-by": "crossplane", "database": i.Name},
		},
	}
	password := object.Object{"name": i.PasswordSecret, "key": database.PasswordKey}
	if !ctx.Namespaced() {
		password["namespace"] = ctx.SecretNamespace()
	}
	return []*registry.Resource{
		{
			Name:         rDBInstance,
			Kind:         sqlInstanceKind,
			ExternalName: i.Name,
			Body: object.Object{"spec": map[string]any{
				"forProvider":                fp,
				"writeConnectionSecretToRef": ctx.ConnectionSecretRef(i.ConnectionSecret),
			}},
			DependsOn: []string{rPSAConnect},
			Outputs: func(obs *structpb.Struct, _ map[string][]byte, o *registry.Outputs) {
				o.Host = object.String(obs, "status", "atProvider", "privateIpAddress")
				o.EngineVersion = strings.TrimPrefix(object.String(obs, "status", "atProvider", "databaseVersion"), "POSTGRES_")
			},
		},
		{
			Name:         rDBUser,
			Kind:         sqlUserKind,
			ExternalName: i.Username,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":           ctx.XR.PlaneID,
				"instanceSelector":  ctx.Selector(rDBInstance),
				"type":              "BUILT_IN",
				"passwordSecretRef": password,
			}}},
			DependsOn: []string{rDBInstance},
		},
	}, nil
}

// dbSchema renders one database of the Cloud SQL instance.
func dbSchema(ctx *registry.Context, s database.Schema) ([]*registry.Resource, error) {
	return []*registry.Resource{{
		Name:         rSchemaPrefix + s.Name,
		Kind:         sqlDatabaseKind,
		ExternalName: s.Name,
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"project":          ctx.XR.PlaneID,
			"instanceSelector": ctx.Selector(rDBInstance),
			"charset":          "UTF8",
			"collation":        "en_US.UTF8",
		}}},
		DependsOn: []string{rDBInstance},
	}}, nil
}

// checkDBInstance checks GCP's rules for a Cloud SQL instance: its name,
// the project and the region.
func checkDBInstance(ctx *registry.Context, i database.Instance) field.ErrorList {
	errs := xr.ValidateCloudName(ctx.XR, maxClusterName, "Cloud SQL instance", "")
	if !reProject.MatchString(ctx.XR.PlaneID) {
		errs = append(errs, field.Invalid(xr.LabelPath(xr.LabelPlaneID), ctx.XR.PlaneID, "must be a GCP project ID: 6 to 30 lower-case letters, digits or '-', starting with a letter"))
	}
	if !reLocation.MatchString(i.Location) {
		errs = append(errs, field.Invalid(xr.ParametersPath("location"), i.Location, "must be a GCP region such as us-central1"))
	}
	return errs
}
