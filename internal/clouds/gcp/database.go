package gcp

import (
	"fmt"
	"reflect"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/database"
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
		// The walk of database.Engine moves it; overrides may not.
		terraform.Walk("databaseVersion", "google_sql_database_instance.database_version (an in-place major version upgrade)", "google/services/sql/resource_sql_database_instance.go:1101-1106, 2590-2611"),
		terraform.Raise("settings.diskSize", "google_sql_database_instance.settings.disk_size (grows in place; a decrease replaces the instance, ForceNewIfChange isDiskShrinkage)", "google/services/sql/resource_sql_database_instance.go:186-219, 239"),
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
	registry.Check(Cloud, checkDBNetwork)
	// The Cluster's private services connection, which the instance waits
	// for and holds while it lives.
	clusterref.ForDatabase.Reads(Name, clusterref.Read{Resource: rPrivateServicesConnection, Kind: serviceConnectionKind})
	database.Engines.Register(Name, database.Engine{
		Asked: func(obs *structpb.Struct) string { return object.String(obs, "spec", "forProvider", "databaseVersion") },
		Runs: func(obs *structpb.Struct) string {
			return object.String(obs, "status", "atProvider", "databaseVersion")
		},
		StorageGB: func(obs *structpb.Struct) int64 {
			return int64(object.Get(obs, "spec", "forProvider", "settings", "diskSize").GetNumberValue())
		},
		Backups: func(obs *structpb.Struct) bool {
			return object.Get(obs, "status", "atProvider", "settings", "backupConfiguration", "enabled").GetBoolValue() ||
				object.Get(obs, "spec", "forProvider", "settings", "backupConfiguration", "enabled").GetBoolValue()
		},
		// database_version changes in place: the provider patches the
		// instance, which Cloud SQL carries out as an in-place major
		// version upgrade (google/services/sql/resource_sql_database_instance.go:
		// 1101-1106, 2590-2611 of terraform-provider-google v7.39.0), to any
		// later major version ("Upgrade the database major version in
		// place", Cloud SQL for PostgreSQL docs); never down.
		Targets: map[string][]string{"13": {"14", "15", "16", "17"}, "14": {"15", "16", "17"}, "15": {"16", "17"}, "16": {"17"}},
		Source:  "Cloud SQL's in-place major version upgrade",
	})
}

// dbNetwork renders the network of a Database of its own, with private
// services access for Cloud SQL in it, all deleted with the Database.
// Joining a Cluster, the network and its private services access are the
// Cluster's (privateServices; checkDBNetwork): the Database composes
// nothing of its own for it.
//
// Upgrading: a Database on a Cluster composed the Cluster's private
// services range and connection itself before (private-ip-range and
// private-service-connection, with deletionPolicy Orphan and the
// connection's ABANDON), left in the network for good once the last
// Database went. This no longer renders them; the engine holds them, as
// every resource that no statement of the spec removed: the Database
// reports them in RemovalsSettled (False, AwaitingOwner) and a Warning,
// until its owner lists them in spec.parameters.confirmRemovals, which
// deletes only the managed resources (their policies leave the cloud
// objects, which the Cluster's now manage). Until the Cluster sets
// privateServices the Database is refused (checkDBNetwork), which changes
// nothing.
func dbNetwork(ctx *registry.Context, n database.Network) ([]*registry.Resource, error) {
	if n.Cluster != nil {
		return nil, nil
	}
	network := &registry.Resource{
		Name:         rDBNetwork,
		Kind:         networkKind,
		ExternalName: n.Name + "-db",
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"project":               ctx.XR.PlaneID,
			"autoCreateSubnetworks": false,
			"routingMode":           "REGIONAL",
			"description":           "Private network of database " + n.Name,
		}}},
	}
	return append([]*registry.Resource{network}, privateServicesAccess(ctx, rPSARange, rPSAConnect, psaRangeName(n.Name), ctx.Selector(rDBNetwork), []string{rDBNetwork})...), nil
}

// checkDBNetwork refuses a Database on a Cluster without private services
// access, naming the Cluster's field to set; and a move of a Cloud SQL
// instance to another network (another Cluster's, or its own instead of
// the Cluster's, or back), naming spec.parameters.clusterRef: the
// instance's private network is resolved once from its selector, which
// upjet never reads again, so the move would never be made while the
// Usage of the old network's peering went.
func checkDBNetwork(ctx *registry.Context, n database.Network) field.ErrorList {
	errs := needPrivateServices(n.Cluster, xr.ParametersPath("clusterRef", "name"))
	obs := ctx.Observed(rDBInstance)
	was := object.Get(obs, "spec", "forProvider", "settings", "ipConfiguration", "privateNetworkSelector").GetStructValue()
	if was == nil {
		return errs
	}
	// The labels say which network; an overlay may add to the selector
	// (a resolve policy) without moving anything.
	if now := instanceNetwork(ctx, n); !reflect.DeepEqual(was.AsMap()["matchLabels"], now["matchLabels"]) {
		joined := "a network of its own"
		if labels, _ := was.AsMap()["matchLabels"].(map[string]any); labels[xr.LabelComposite] != nil {
			c := labels[xr.LabelComposite]
			joined = fmt.Sprintf("the network of Cluster %v", c)
		}
		errs = append(errs, field.Invalid(xr.ParametersPath("clusterRef"), clusterRefName(n), fmt.Sprintf("the Cloud SQL instance is on %s, and its private network is not moved (its provider resolved the network once, and the instance's private IP stays there): restore spec.parameters.clusterRef, or create a new Database and move the data", joined)))
	}
	return errs
}

// clusterRefName is the Cluster a Database's network joins, "" for none.
func clusterRefName(n database.Network) string {
	if n.Cluster == nil {
		return ""
	}
	return n.Cluster.Ref
}

// instanceNetwork is the selector of the network a Cloud SQL instance is
// on: the Cluster's, or the Database's own.
func instanceNetwork(ctx *registry.Context, n database.Network) object.Object {
	if c := n.Cluster; c != nil {
		return object.Object(clusterref.Selector(c, rNetwork))
	}
	return object.Object(ctx.Selector(rDBNetwork))
}

// dbInstance renders the Cloud SQL instance on private IP only, with
// TLS enforced, backups and point-in-time recovery, and the administrator
// user, whose password is read from the Secret i.PasswordSecret: provider-
// upjet-gcp cannot generate one, so the platform supplies it (the function
// never reads it).
func dbInstance(ctx *registry.Context, i database.Instance) ([]*registry.Resource, error) {
	netSel := instanceNetwork(ctx, *i.Network)
	deps, uses := []string{rPSAConnect}, []registry.Use(nil)
	if c := i.Network.Cluster; c != nil {
		// The Cluster's network and peering: created once the peering is
		// ready, and the peering's deletion held while the instance lives.
		deps, uses = nil, []registry.Use{clusterref.Use(c, rPrivateServicesConnection, serviceConnectionKind)}
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
			DependsOn: deps,
			Uses:      uses,
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
