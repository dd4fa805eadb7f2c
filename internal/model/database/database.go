// Package database is the Database's model: a Database XR asks for a
// managed PostgreSQL server, reachable only privately: on the network of
// the Cluster it names, or on a network of its own. Build turns the XR
// into a Plan of Components (package component) that each cloud
// implements (Cloud SQL on GCP, RDS on AWS, Flexible Server on Azure);
// Engine is what a cloud says of its servers for the day-2 rules.
package database

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Kinds of the module's Components. Every cloud implements each of them
// (TestRegistrations).
const (
	KindNetwork  component.Kind = "DatabaseNetwork"
	KindInstance component.Kind = "DatabaseInstance"
	KindSchema   component.Kind = "DatabaseSchema"
)

// ResourceInstance is the composition-resource name of the server on
// every cloud, where its Engine reads what runs.
const ResourceInstance = "instance"

// Kinds lists the module's Component kinds.
var Kinds = []component.Kind{KindNetwork, KindInstance, KindSchema}

// Conditions of a Database XR, in the order they are set.
const (
	ConditionNetworkReady  = cluster.ConditionNetworkReady
	ConditionDatabaseReady = "DatabaseReady"
	// ConditionUpgrading is True while the server walks to another major
	// version.
	ConditionUpgrading = "Upgrading"
)

// Port is the port PostgreSQL listens on, on every cloud.
const Port = 5432

// Defaults of the environment's database keys.
const (
	DefaultEngine              = xr.EnginePostgres
	DefaultVersion             = "16"
	DefaultSize                = "medium"
	DefaultStorageGB           = 20
	DefaultBackupRetentionDays = 7
	DefaultDeletionProtection  = true
	DefaultNetworkCIDR         = "10.30.0.0/24"
	DefaultMaintenanceDay      = "Sunday"
	DefaultMaintenanceHour     = 3
	DefaultUsername            = "dbadmin"
)

// DefaultVersions are the major versions offered unless the environment
// says otherwise: those every cloud serves.
var DefaultVersions = []string{"14", "15", "16", "17"}

// Weekdays are the days of a maintenance window.
var Weekdays = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

// Settings are the environment's database keys, under data.database,
// decoded once per call (SettingsOf). Every key is optional; the README lists the
// defaults. Tiers and prices are per cloud (put them in the cloud layer).
type Settings struct {
	// Engine is the engine of a Database that names none. Default
	// postgres.
	Engine string `json:"engine"`
	// Version is the major version of a Database that names none.
	// Default 16.
	Version string `json:"version"`
	// Versions are the major versions a Database may ask for. Default 14
	// to 17.
	Versions []string `json:"versions"`
	// StorageGB is a Database's storage in GiB. Default 20.
	StorageGB *int64 `json:"storageGb"`
	// HighAvailability gives a Database a standby in another zone.
	// Default false.
	HighAvailability *bool `json:"highAvailability"`
	// BackupRetentionDays are the days of backups and point-in-time
	// recovery. Default 7.
	BackupRetentionDays *int64 `json:"backupRetentionDays"`
	// DeletionProtection refuses to delete the server. Default true.
	DeletionProtection *bool `json:"deletionProtection"`
	// Location is the region of a Database with neither clusterRef nor
	// location (put it in the cloud's config).
	Location string `json:"location"`
	// Tiers map size classes to the cloud's tiers: a Cloud SQL tier, an
	// RDS instance class or a Flexible Server SKU (put them in the
	// cloud's config).
	Tiers map[string]string `json:"tiers"`
	// Username is the administrator's login. Default dbadmin.
	Username string `json:"username"`
	// Network is a Database's own network, without clusterRef.
	Network struct {
		// CIDR is its address range. Default 10.30.0.0/24.
		CIDR string `json:"cidr"`
	} `json:"network"`
	// MaintenanceWindow is a weekly hour, in UTC, for the cloud's
	// maintenance of the server.
	MaintenanceWindow struct {
		// Day is its weekday, Monday to Sunday. Default Sunday.
		Day string `json:"day"`
		// Hour is the hour it starts, 0 to 23. Default 3.
		Hour *int64 `json:"hour"`
	} `json:"maintenanceWindow"`
	// Prices are the estimate's price table, in USD.
	Prices struct {
		// Tiers are the price of a server per hour, by tier.
		Tiers map[string]float64 `json:"tiers"`
		// StorageGBMonth is the price of a GiB of storage per month.
		StorageGBMonth *float64 `json:"storageGbMonth"`
	} `json:"prices"`
}

// SettingsOf returns the environment's database keys, decoded once per Env.
func SettingsOf(env *envcfg.Env) *Settings { return envcfg.Section[Settings](env, SettingsKey) }

// PasswordKey is the key of the administrator's password in its Secret
// (Instance.PasswordSecret).
const PasswordKey = "password"

// SettingsKey is the environment key of the database settings.
const SettingsKey = "database"

// Network is how clients reach the database: privately, on the Cluster's
// network (Cluster set) or on a network of its own.
type Network struct {
	// Name is the cloud name the network's resources derive from.
	Name     string
	Location string
	// Cluster is the Cluster whose network the database joins; nil for a
	// network of its own.
	Cluster *cluster.Reported
	// CIDR is the range of a network of its own; on Azure, when joining a
	// Cluster, the range of the database's delegated subnet in it (zero:
	// the cloud derives one).
	CIDR netip.Prefix
}

// Instance is the database server.
type Instance struct {
	// Name is the server's cloud name.
	Name                string
	Location            string
	Engine              string
	Version             string
	Size                string
	Tier                string
	StorageGB           int64
	HighAvailability    bool
	BackupRetentionDays int64
	DeletionProtection  bool
	Maintenance         Maintenance
	// Username is the administrator's login.
	Username string
	// ConnectionSecret is the Secret the provider writes the connection
	// details to; PasswordSecret holds the administrator's password, which
	// the provider generates where it can. The function never reads either.
	ConnectionSecret string
	PasswordSecret   string
	Network          *Network
	// Databases are the names of the server's databases, in the spec's
	// order.
	Databases []string
	// Running is the major version the server runs, "" before it reports
	// one; Version is the one it is asked for now (a step of Upgrade).
	Running string
	// EngineVersion is the version to ask for in full where the cloud
	// needs a minor (Upgrade.Version); "" asks for Version alone.
	// KeptVersion keeps the server at Running while a step waits
	// (Upgrade.Kept); "" asks for Running alone.
	EngineVersion, KeptVersion string
	// GrownGB is the storage, in GiB, the server has grown to by itself
	// (the cloud's auto-grow), where its provider would read a spec below
	// it as a shrink: a render asks for no less (Engine.Grown).
	GrownGB int64
}

// Maintenance is a weekly maintenance window of one hour, in UTC.
type Maintenance struct {
	// Day is a weekday, Monday to Sunday.
	Day  string
	Hour int64
}

// Weekday is the window's day, 1 (Monday) to 7 (Sunday).
func (m Maintenance) Weekday() int64 { return int64(slices.Index(Weekdays, m.Day) + 1) }

// Schema is one database in the server.
type Schema struct {
	Name     string
	Instance *Instance
}

// Kind implements component.Component.
func (Network) Kind() component.Kind { return KindNetwork }

// ID implements component.Component.
func (Network) ID() string { return "db-network" }

// Condition implements component.Component.
func (Network) Condition() string { return ConditionNetworkReady }

// Kind implements component.Component.
func (Instance) Kind() component.Kind { return KindInstance }

// ID implements component.Component.
func (Instance) ID() string { return "instance" }

// Condition implements component.Component.
func (Instance) Condition() string { return ConditionDatabaseReady }

// Kind implements component.Component.
func (Schema) Kind() component.Kind { return KindSchema }

// ID implements component.Component.
func (s Schema) ID() string { return "database/" + s.Name }

// Condition implements component.Component.
func (Schema) Condition() string { return ConditionDatabaseReady }

// Plan is the agnostic description of a Database.
type Plan struct {
	Components []component.Component
	Network    *Network
	Instance   *Instance
	Schemas    []Schema
	// Upgrade is the server's walk to the version the XR asks for.
	Upgrade Upgrade
}

// Build plans a Database. cluster is the Cluster it joins, nil without
// clusterRef; srv is the server that runs, as the cloud's Engine reads it
// (the zero Server before it is created). Every error names a field path:
// of the XR for bad input, of the environment for bad configuration.
func Build(x *xr.Database, s Settings, cl *cluster.Reported, eng Engine, srv Server) (*Plan, field.ErrorList) {
	var errs field.ErrorList
	par := x.Parameters
	inst := &Instance{
		Name:                x.CloudName,
		Engine:              cmp.Or(par.Engine, s.Engine, DefaultEngine),
		Version:             cmp.Or(par.Version, s.Version, DefaultVersion),
		Size:                cmp.Or(par.Size, DefaultSize),
		StorageGB:           envcfg.Or(par.StorageGB, envcfg.Or(s.StorageGB, DefaultStorageGB)),
		HighAvailability:    envcfg.Or(par.HighAvailability, envcfg.Or(s.HighAvailability, false)),
		BackupRetentionDays: envcfg.Or(par.BackupRetentionDays, envcfg.Or(s.BackupRetentionDays, DefaultBackupRetentionDays)),
		DeletionProtection:  envcfg.Or(par.DeletionProtection, envcfg.Or(s.DeletionProtection, DefaultDeletionProtection)),
		Maintenance:         Maintenance{Day: cmp.Or(s.MaintenanceWindow.Day, DefaultMaintenanceDay), Hour: envcfg.Or(s.MaintenanceWindow.Hour, DefaultMaintenanceHour)},
		Username:            cmp.Or(s.Username, DefaultUsername),
		ConnectionSecret:    x.Name + "-connection",
		PasswordSecret:      x.Name + "-password",
	}
	if !slices.Contains(xr.Engines, inst.Engine) {
		errs = append(errs, field.NotSupported(envPath("engine"), inst.Engine, xr.Engines))
	}
	versions := s.Versions
	if len(versions) == 0 {
		versions = DefaultVersions
	}
	versionPath, storagePath := xr.ParametersPath("version"), xr.ParametersPath("storageGb")
	if par.Version == "" {
		versionPath = envPath("version")
	}
	if par.StorageGB == nil {
		storagePath = envPath("storageGb")
	}
	var upgrade Upgrade
	if !slices.Contains(versions, inst.Version) {
		errs = append(errs, field.NotSupported(versionPath, inst.Version, versions))
	} else {
		var ferr *field.Error
		upgrade, ferr = eng.Walk(inst.Version, srv, versionPath)
		switch {
		case ferr != nil:
			errs = append(errs, ferr)
		case upgrade.Major() && (!srv.Backups || inst.BackupRetentionDays < 1):
			errs = append(errs, field.Invalid(versionPath, inst.Version, fmt.Sprintf("the server runs PostgreSQL %s without automated backups, and a major upgrade cannot be taken back without one: turn backups on first (spec.parameters.backupRetentionDays), then upgrade", srv.Runs)))
		default:
			inst.Version, inst.Running = upgrade.Step, srv.Runs
			inst.EngineVersion, inst.KeptVersion = upgrade.Version, upgrade.Kept
		}
	}
	inst.GrownGB = srv.GrownGB
	if srv.StorageGB > 0 && eng.offered(inst.StorageGB) < srv.StorageGB {
		errs = append(errs, field.Invalid(storagePath, inst.StorageGB, fmt.Sprintf("the server has %d GiB, and no cloud shrinks a database's storage in place: keep at least %d (storage only grows)", srv.StorageGB, srv.StorageGB)))
	}
	switch tier, ok := s.Tiers[inst.Size]; {
	case len(s.Tiers) == 0:
		errs = append(errs, field.Invalid(xr.ParametersPath("size"), inst.Size, "the environment maps no size classes to server tiers (key database.tiers); add them to the cloud's EnvironmentConfig"))
	case !ok:
		errs = append(errs, field.NotSupported(xr.ParametersPath("size"), inst.Size, slices.Sorted(maps.Keys(s.Tiers))))
	default:
		inst.Tier = tier
	}
	if !slices.Contains(Weekdays, inst.Maintenance.Day) {
		errs = append(errs, field.NotSupported(envPath("maintenanceWindow", "day"), inst.Maintenance.Day, Weekdays))
	}
	if h := inst.Maintenance.Hour; h < 0 || h > 23 {
		errs = append(errs, field.Invalid(envPath("maintenanceWindow", "hour"), h, "must be an hour of the day, 0 to 23 (UTC)"))
	}

	net := &Network{Name: x.CloudName, Cluster: cl}
	if cl != nil && cl.Location == "" {
		// Run waits for it; a database never joins a network of an
		// unknown region.
		errs = append(errs, cl.LocationRequired())
	}
	switch {
	case par.Location != "":
		net.Location = par.Location
		if cl != nil && cl.Location != "" && cl.Location != par.Location {
			errs = append(errs, field.Invalid(xr.ParametersPath("location"), par.Location, fmt.Sprintf("a database joins Cluster %q's network privately in its region, %s; leave location unset or make it %s", cl.Ref, cl.Location, cl.Location)))
		}
	case cl != nil:
		net.Location = cl.Location
	default:
		net.Location = s.Location
	}
	if net.Location == "" && cl == nil {
		errs = append(errs, field.Required(xr.ParametersPath("location"), "the region of the database: set it, name a Cluster in clusterRef, or set the environment's database.location"))
	}
	cidr, path := par.Network.CIDR, xr.ParametersPath("network", "cidr")
	if cidr == "" && cl == nil {
		cidr, path = cmp.Or(s.Network.CIDR, DefaultNetworkCIDR), envPath("network", "cidr")
	}
	if cidr != "" {
		pfx, err := xr.ParseCIDR(cidr)
		if err != nil {
			errs = append(errs, field.Invalid(path, cidr, err.Error()))
		}
		net.CIDR = pfx
	}
	inst.Location, inst.Network = net.Location, net

	inst.Databases = par.Databases
	if len(inst.Databases) == 0 {
		inst.Databases = []string{DefaultDatabaseName(cmp.Or(x.BareName, x.CloudName))}
	}
	// The components are values: build them once the plan is complete.
	p := &Plan{Network: net, Instance: inst, Components: []component.Component{*net, *inst}, Upgrade: upgrade}
	for _, n := range inst.Databases {
		sc := Schema{Name: n, Instance: inst}
		p.Schemas = append(p.Schemas, sc)
		p.Components = append(p.Components, sc)
	}
	return p, errs
}

// DefaultDatabaseName is the database created when the XR names none: the
// XR's cloud name with '-' as '_'.
func DefaultDatabaseName(cloudName string) string { return strings.ReplaceAll(cloudName, "-", "_") }

// Removal implements component.Remover: only the spec decides which databases
// a server holds, so one that is no longer planned was removed by the spec;
// the network and the server are never removed by a plan.
func (p *Plan) Removal(id string) component.Removal {
	name, isSchema := strings.CutPrefix(id, "database/")
	if !isSchema {
		return component.Removal{Why: fmt.Sprintf("its component %s is still composed, but no longer with this resource (an input other than the spec changed, such as the environment or clusterRef's Cluster)", id)}
	}
	for _, s := range p.Schemas {
		if s.Name == name {
			return component.Removal{Why: fmt.Sprintf("database %q is still composed, but no longer with this resource", name)}
		}
	}
	return component.Removal{BySpec: true, Why: fmt.Sprintf("database %q is no longer in spec.parameters.databases", name)}
}

// Estimate is the monthly cost of the server: its tier per hour (twice
// with a standby for high availability) and its storage. A tier without a
// price is left out and named in the environment's missing keys.
func (p *Plan) Estimate(env *envcfg.Env, s Settings) float64 {
	i := p.Instance
	hours := env.Shared().HoursPerMonth()
	usd := 0.0
	if perHour, ok := s.Prices.Tiers[i.Tier]; ok {
		n := 1.0
		if i.HighAvailability {
			n = 2
		}
		usd += perHour * n * hours
	} else {
		env.Need(SettingsKey, "prices", "tiers", i.Tier)
	}
	if s.Prices.StorageGBMonth != nil {
		usd += *s.Prices.StorageGBMonth * float64(i.StorageGB)
	} else {
		env.Need(SettingsKey, "prices", "storageGbMonth")
	}
	return float64(int64(usd*100+0.5)) / 100
}

func envPath(keys ...string) *field.Path {
	p := field.NewPath("environment", SettingsKey)
	for _, k := range keys {
		p = p.Child(k)
	}
	return p
}
