package xr

import (
	"fmt"
	"regexp"
	"slices"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/object"
)

// EnginePostgres is PostgreSQL, the one engine every cloud serves here.
// MySQL is not offered: ../shared/crds serves no Azure MySQL kind, and
// every engine runs on every cloud.
const EnginePostgres = "postgres"

// Engines are the engines a Database may run.
var Engines = []string{EnginePostgres}

// Bounds of a Database.
const (
	MinStorageGB           = 10
	MaxStorageGB           = 65536
	MinBackupRetentionDays = 1
	MaxBackupRetentionDays = 35
	MaxDatabases           = 20
)

var (
	reDBVersion  = regexp.MustCompile(`^[0-9]{1,2}$`)
	reSchemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)
)

// Database is the observed Database XR.
type Database struct {
	Composite
	Parameters DatabaseParameters
}

// DatabaseParameters is spec.parameters of a Database, but for the
// parameters every kind shares (see Composite).
type DatabaseParameters struct {
	Engine              string
	Version             string
	Size                string
	StorageGB           *int64
	HighAvailability    *bool
	BackupRetentionDays *int64
	DeletionProtection  *bool
	// Location is the region; it defaults to the Cluster's when ClusterRef
	// is set, else to the environment's.
	Location string
	// ClusterRef names a Cluster whose private network the database joins.
	ClusterRef *ClusterRef
	// Databases are the names of the databases to create in the server.
	Databases []string
	// Network is the database's own network, used without ClusterRef (and,
	// on Azure, the range of its delegated subnet in the cluster's network).
	Network DatabaseNetwork
}

// ClusterRef names a Cluster in the Database's namespace (for a claim,
// another claim in the claim's namespace).
type ClusterRef struct {
	Name string
}

// DatabaseNetwork is spec.parameters.network of a Database.
type DatabaseNetwork struct {
	CIDR string
}

// DecodeDatabase reads the observed Database XR. It returns every type
// error it finds, each naming its field path.
func DecodeDatabase(s *structpb.Struct) (*Database, field.ErrorList) {
	d := &decoder{}
	x := &Database{Composite: decodeComposite(s)}
	sf := d.object(object.Get(s, "spec"), field.NewPath("spec"))
	p := pathParameters
	f := d.fields(sf["parameters"], p, fieldsDatabaseParameters...)
	par := DatabaseParameters{
		Engine:              d.str(f["engine"], p.Child("engine")),
		Version:             d.str(f["version"], p.Child("version")),
		Size:                d.str(f["size"], p.Child("size")),
		StorageGB:           d.integer(f["storageGb"], p.Child("storageGb")),
		HighAvailability:    d.boolean(f["highAvailability"], p.Child("highAvailability")),
		BackupRetentionDays: d.integer(f["backupRetentionDays"], p.Child("backupRetentionDays")),
		DeletionProtection:  d.boolean(f["deletionProtection"], p.Child("deletionProtection")),
		Location:            d.str(f["location"], p.Child("location")),
		Databases:           d.strings(f["databases"], p.Child("databases")),
	}
	if v, ok := f["clusterRef"]; ok && !isNull(v) {
		rp := p.Child("clusterRef")
		rf := d.fields(v, rp, fieldsClusterRef...)
		par.ClusterRef = &ClusterRef{Name: d.str(rf["name"], rp.Child("name"))}
	}
	np := p.Child("network")
	nf := d.fields(f["network"], np, fieldsDatabaseNetwork...)
	par.Network.CIDR = d.str(nf["cidr"], np.Child("cidr"))
	x.Parameters = par
	d.decodeCommon(&x.Composite, f, p)
	return x, d.errs
}

// ValidateDatabase checks the cloud-independent rules of a Database XR.
// Size classes, versions and defaults come from the environment; the
// module checks them there.
func ValidateDatabase(x *Database, clouds []string) field.ErrorList {
	errs := ValidateComposite(&x.Composite, clouds)
	p := x.Parameters
	if p.Engine != "" && !slices.Contains(Engines, p.Engine) {
		errs = append(errs, field.NotSupported(ParametersPath("engine"), p.Engine, Engines))
	}
	if p.Version != "" && !reDBVersion.MatchString(p.Version) {
		errs = append(errs, field.Invalid(ParametersPath("version"), p.Version, "must be a major version such as \"16\""))
	}
	if n := p.StorageGB; n != nil && (*n < MinStorageGB || *n > MaxStorageGB) {
		errs = append(errs, field.Invalid(ParametersPath("storageGb"), *n, fmt.Sprintf("must be between %d and %d", MinStorageGB, MaxStorageGB)))
	}
	if n := p.BackupRetentionDays; n != nil && (*n < MinBackupRetentionDays || *n > MaxBackupRetentionDays) {
		errs = append(errs, field.Invalid(ParametersPath("backupRetentionDays"), *n, fmt.Sprintf("must be between %d and %d", MinBackupRetentionDays, MaxBackupRetentionDays)))
	}
	if r := p.ClusterRef; r != nil {
		for _, msg := range validation.IsDNS1123Subdomain(r.Name) {
			errs = append(errs, field.Invalid(ParametersPath("clusterRef", "name"), r.Name, msg))
		}
	}
	if p.Network.CIDR != "" {
		if _, err := ParseCIDR(p.Network.CIDR); err != nil {
			errs = append(errs, field.Invalid(ParametersPath("network", "cidr"), p.Network.CIDR, err.Error()))
		}
	}
	dp := ParametersPath("databases")
	if len(p.Databases) > MaxDatabases {
		return append(errs, field.TooMany(dp, len(p.Databases), MaxDatabases))
	}
	seen := map[string]bool{}
	for i, n := range p.Databases {
		switch {
		case !reSchemaName.MatchString(n):
			errs = append(errs, field.Invalid(dp.Index(i), n, "a database name starts with a lower-case letter or '_', has only lower-case letters, digits and '_', and at most 63 characters"))
		case seen[n]:
			errs = append(errs, field.Duplicate(dp.Index(i), n))
		}
		seen[n] = true
	}
	return errs
}
