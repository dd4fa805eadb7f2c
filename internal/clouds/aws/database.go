package aws

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/database"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Kinds of the database module, at the versions provider-upjet-aws v2 and
// provider-sql serve.
var (
	rdsInstanceKind = registry.Upjet(Name, "rds", "Instance", "v1beta3", "spec.forProvider.engine", "spec.forProvider.instanceClass").As(registry.Credentials).
			WithGuarded(registry.WhyPrivate, "spec.forProvider.publiclyAccessible").
			WithGuarded(whyEngineWalk, "spec.forProvider.parameterGroupName", "spec.forProvider.parameterGroupNameRef", "spec.forProvider.parameterGroupNameSelector", "spec.forProvider.allowMajorVersionUpgrade").Replaces(
		// The walk of database.Engine moves it; overrides may not.
		terraform.Walk("engineVersion", "aws_db_instance.engine_version (a major version only with allow_major_version_upgrade and a parameter group of its family)", "internal/service/rds/instance.go:316-320, 2324-2330"),
		terraform.Raise("allocatedStorage", "aws_db_instance.allocated_storage (grows in place; RDS refuses a decrease)", "internal/service/rds/instance.go:96-121"),
		terraform.Refuse("engine", "aws_db_instance.engine", "internal/service/rds/instance.go:300-309"),
		terraform.Refuse("username", "aws_db_instance.username", "internal/service/rds/instance.go:690-696"),
		terraform.Refuse("dbName", "aws_db_instance.db_name", "internal/service/rds/instance.go:222-230"),
		terraform.Refuse("storageEncrypted", "aws_db_instance.storage_encrypted", "internal/service/rds/instance.go:656-660"),
		terraform.Refuse("kmsKeyId", "aws_db_instance.kms_key_id", "internal/service/rds/instance.go:366-372"),
		terraform.Refuse("availabilityZone", "aws_db_instance.availability_zone", "internal/service/rds/instance.go:143-148"))
	dbSubnetGroupKind  = registry.Upjet(Name, "rds", "SubnetGroup", "v1beta1").Replaces()
	parameterGroupKind = registry.Upjet(Name, "rds", "ParameterGroup", "v1beta1", "spec.forProvider.family").Replaces(
		terraform.Refuse("family", "aws_db_parameter_group.family", "internal/service/rds/parameter_group.go:60-64"),
		terraform.Refuse("description", "aws_db_parameter_group.description", "internal/service/rds/parameter_group.go:54-59"))
	securityGroupKind = registry.Upjet(Name, "ec2", "SecurityGroup", "v1beta1").Replaces(
		terraform.Refuse("name", "aws_security_group.name", "internal/service/ec2/vpc_security_group.go:79-86"),
		terraform.Refuse("description", "aws_security_group.description", "internal/service/ec2/vpc_security_group.go:70-76"),
		terraform.Refuse("vpcId", "aws_security_group.vpc_id", "internal/service/ec2/vpc_security_group.go:112-116"),
		terraform.Refuse("vpcIdSelector", "aws_security_group.vpc_id", "internal/service/ec2/vpc_security_group.go:112-116"))
	sgIngressKind = registry.Upjet(Name, "ec2", "SecurityGroupIngressRule", "v1beta1", "spec.forProvider.ipProtocol").Replaces(
		terraform.Refuse("securityGroupIdSelector", "aws_vpc_security_group_ingress_rule.security_group_id (RequiresReplace)", "internal/service/ec2/vpc_security_group_ingress_rule.go:221-226"),
		terraform.Refuse("cidrIpv4", "aws_vpc_security_group_ingress_rule.cidr_ipv4 (a change of source type, ModifyPlan)", "internal/service/ec2/vpc_security_group_ingress_rule.go:387-404, 522-535"),
		terraform.Refuse("referencedSecurityGroupId", "aws_vpc_security_group_ingress_rule.referenced_security_group_id (a change of source type, ModifyPlan)", "internal/service/ec2/vpc_security_group_ingress_rule.go:387-404, 522-535"),
		terraform.Refuse("referencedSecurityGroupIdSelector", "aws_vpc_security_group_ingress_rule.referenced_security_group_id (a change of source type, ModifyPlan)", "internal/service/ec2/vpc_security_group_ingress_rule.go:387-404, 522-535"))
	// provider-sql creates the databases beyond the first, which RDS
	// creates itself, through the instance's connection secret.
	sqlProviderConfigKind = (&registry.ResourceKind{
		Kind:       "ProviderConfig",
		Namespaced: "postgresql.sql.m.crossplane.io/v1alpha1",
		Cluster:    "postgresql.sql.crossplane.io/v1alpha1",
		Ready:      registry.ReadyWhenObserved,
		Required:   []string{"spec.credentials.source"},
		Roles:      registry.Access,
	}).WithoutTable("provider-sql's ProviderConfig is configuration, no cloud resource")
	sqlDatabaseKind = (&registry.ResourceKind{
		Kind:       "Database",
		Namespaced: "postgresql.sql.m.crossplane.io/v1alpha1",
		Cluster:    "postgresql.sql.crossplane.io/v1alpha1",
		Provider:   "sql",
	}).
		WithoutTable("provider-sql is no Terraform provider; the database's name is its external name, which is never changed")
)

// whyEngineWalk is why a server's version and what moves with it are
// guarded: database.Engine walks them.
const whyEngineWalk = "a database's engine version and its parameter group move only through spec.parameters.version, in the steps its cloud upgrades in place"

// Composition-resource names of a Database.
const (
	rDBNetwork        = "network"
	rDBSubnetPrefix   = "subnet-"
	rDBSubnetGroup    = "subnet-group"
	rDBSecurityGroup  = "security-group"
	rDBIngress        = "security-group-ingress"
	rParamGroupPrefix = "parameter-group-"
	rDBInstance       = "instance"
	rSQLConfig        = "sql-provider-config"
	rSchemaPrefix     = "database-"
	tierDatabase      = "database"
)

func init() {
	registry.Implement(Cloud, dbNetwork)
	registry.Implement(Cloud, dbInstance)
	registry.Implement(Cloud, dbSchema)
	registry.Check(Cloud, checkDBInstance)
	// The EKS cluster, whose security group the database admits.
	clusterref.ForDatabase.Reads(Name, clusterref.Read{Resource: rCluster, Kind: clusterKind})
	database.Engines.Register(Name, database.Engine{
		Asked: func(obs *structpb.Struct) string { return object.String(obs, "spec", "forProvider", "engineVersion") },
		// engine_version_actual is what RDS runs; engine_version keeps
		// what was asked (internal/service/rds/instance.go:316-325 of
		// terraform-provider-aws v6.34.0).
		Runs: func(obs *structpb.Struct) string {
			return object.String(obs, "status", "atProvider", "engineVersionActual")
		},
		StorageGB: func(obs *structpb.Struct) int64 {
			return int64(object.Get(obs, "spec", "forProvider", "allocatedStorage").GetNumberValue())
		},
		// RDS keeps automated backups while the retention period is
		// above 0 (backup_retention_period).
		Backups: func(obs *structpb.Struct) bool {
			return object.Get(obs, "status", "atProvider", "backupRetentionPeriod").GetNumberValue() > 0 || object.Get(obs, "spec", "forProvider", "backupRetentionPeriod").GetNumberValue() > 0
		},
		// RDS upgrades a minor to another major version only to the
		// minors it lists for it (rdsMajorUpgrades).
		Minors: rdsMajorUpgrades,
		Source: rdsUpgradesSource,
	})
}

// dbNetwork renders where the RDS instance lives and who reaches it: a
// subnet group and a security group admitting PostgreSQL from the
// Cluster's nodes (its EKS cluster security group, which EKS managed node
// groups use) on the Cluster's private subnets; or a VPC of its own with a
// subnet in each of two zones, admitting the VPC's range.
func dbNetwork(ctx *registry.Context, n database.Network) ([]*registry.Resource, error) {
	reg := n.Location
	sg := &registry.Resource{
		Name: rDBSecurityGroup,
		Kind: securityGroupKind,
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"region":      reg,
			"name":        n.Name + "-db",
			"description": "PostgreSQL of database " + n.Name,
			"tags":        dbTags(n.Name, n.Name+"-db"),
		}}},
	}
	ingress := map[string]any{
		"region":                  reg,
		"securityGroupIdSelector": ctx.Selector(rDBSecurityGroup),
		"ipProtocol":              "tcp",
		"fromPort":                database.Port,
		"toPort":                  database.Port,
		"tags":                    dbTags(n.Name, n.Name+"-db"),
	}
	rule := &registry.Resource{Name: rDBIngress, Kind: sgIngressKind, DependsOn: []string{rDBSecurityGroup}}
	group := &registry.Resource{Name: rDBSubnetGroup, Kind: dbSubnetGroupKind}
	groupFP := map[string]any{"region": reg, "description": "Subnets of database " + n.Name, "tags": dbTags(n.Name, n.Name+"-db")}

	if c := n.Cluster; c != nil {
		sg.Body["spec"].(map[string]any)["forProvider"].(map[string]any)["vpcIdSelector"] = clusterref.Selector(c, rNetwork)
		groupFP["subnetIdSelector"] = c.Match(map[string]string{labelTier: tierPrivate})
		group.Body = object.Object{"spec": map[string]any{"forProvider": groupFP}}
		nodes := object.String(object.Get(c.Observed[rCluster], "status", "atProvider", "vpcConfig").GetStructValue(), "clusterSecurityGroupId")
		if nodes == "" {
			clusterref.Await(c, rule, "EKS cluster to report its security group")
		} else {
			ingress["referencedSecurityGroupId"] = nodes
			ingress["description"] = "PostgreSQL from the nodes of cluster " + c.CloudName
			rule.Body = object.Object{"spec": map[string]any{"forProvider": ingress}}
		}
		return []*registry.Resource{sg, rule, group}, nil
	}

	vpc := &registry.Resource{
		Name: rDBNetwork,
		Kind: vpcKind,
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"region":             reg,
			"cidrBlock":          n.CIDR.String(),
			"enableDnsHostnames": true,
			"enableDnsSupport":   true,
			"tags":               dbTags(n.Name, n.Name+"-db"),
		}}},
	}
	out := []*registry.Resource{vpc}
	sg.Body["spec"].(map[string]any)["forProvider"].(map[string]any)["vpcIdSelector"] = ctx.Selector(rDBNetwork)
	sg.DependsOn = []string{rDBNetwork}
	ingress["cidrIpv4"] = n.CIDR.String()
	ingress["description"] = "PostgreSQL from the database's own network"
	rule.Body = object.Object{"spec": map[string]any{"forProvider": ingress}}
	// RDS needs subnets in two zones.
	zs := zones(ctx.Env, reg)
	if len(zs) < 2 {
		return nil, fmt.Errorf("RDS needs two availability zones; environment key aws.zones.%s names %d", reg, len(zs))
	}
	var subnets []string
	for i, zone := range zs[:2] {
		cidr, err := cluster.Subnet(n.CIDR, 1, i)
		if err != nil {
			return nil, fmt.Errorf("cannot carve the database subnet of zone %s: %w", zone, err)
		}
		name := rDBSubnetPrefix + zoneID(reg, zone)
		subnets = append(subnets, name)
		out = append(out, &registry.Resource{
			Name: name,
			Kind: subnetKind,
			Body: object.Object{
				"metadata": map[string]any{"labels": map[string]any{labelTier: tierDatabase}},
				"spec": map[string]any{"forProvider": map[string]any{
					"region":           reg,
					"availabilityZone": zone,
					"cidrBlock":        cidr.String(),
					"vpcIdSelector":    ctx.Selector(rDBNetwork),
					"tags":             dbTags(n.Name, n.Name+"-db-"+zoneID(reg, zone)),
				}},
			},
			DependsOn: []string{rDBNetwork},
		})
	}
	groupFP["subnetIdSelector"] = tierSelector(tierDatabase)
	group.Body = object.Object{"spec": map[string]any{"forProvider": groupFP}}
	group.DependsOn = subnets
	return append(out, sg, rule, group), nil
}

// dbInstance renders the RDS instance: encrypted, private, TLS enforced
// through its parameter group, Multi-AZ for high availability, the
// administrator's password generated by the provider into
// i.PasswordSecret, and the connection details (endpoint, address, host,
// port, username, password) in i.ConnectionSecret. It creates the first
// database itself; provider-sql creates the others through the same
// connection details.
func dbInstance(ctx *registry.Context, i database.Instance) ([]*registry.Resource, error) {
	family := i.Engine + i.Version
	params := rParamGroupPrefix + family
	// A major upgrade moves the instance to a parameter group of the new
	// family in the same modification, which RDS carries out only with
	// allow_major_version_upgrade (internal/service/rds/instance.go:
	// 2324-2330 of terraform-provider-aws v6.34.0; a custom group of the
	// old family is refused). The new group is created first; the
	// instance moves once it is Ready, and is never moved back while the
	// step is under way (its spec asks for the new version or group). The
	// selector re-resolves (resolve: Always): once resolved, a selector is
	// never read again.
	//
	// A step asks for the minor the walk chose (i.EngineVersion: RDS
	// upgrades a minor to another major version only to the minors it
	// lists); until it moves, the instance is kept where it runs
	// (i.KeptVersion, never below what runs), else at what its spec asks.
	major := i.Running != "" && i.Running != i.Version
	step := cmp.Or(i.EngineVersion, i.Version)
	version, paramsSelector := step, ctx.Selector(params)
	if major {
		old := i.Engine + i.Running
		inst := ctx.Observed(rDBInstance)
		asked := object.String(inst, "spec", "forProvider", "engineVersion")
		moved := database.Major(asked) == i.Version ||
			object.String(inst, "spec", "forProvider", "parameterGroupNameSelector", "matchLabels", registry.LabelResource) == params
		if !moved && !object.IsConditionTrue(ctx.Observed(params), "Ready") {
			version, paramsSelector = cmp.Or(i.KeptVersion, asked, i.Running), ctx.Selector(rParamGroupPrefix+old)
		}
		paramsSelector["policy"] = map[string]any{"resolve": "Always"}
	}
	password := object.Object{"name": i.PasswordSecret, "key": database.PasswordKey}
	if !ctx.Namespaced() {
		password["namespace"] = ctx.SecretNamespace()
	}
	fp := map[string]any{ //nolint:gosec // passwordSecretRef names a Secret; no credential is written here
		"region":                           i.Location,
		"engine":                           i.Engine,
		"engineVersion":                    version,
		"instanceClass":                    i.Tier,
		"allocatedStorage":                 i.StorageGB,
		"maxAllocatedStorage":              min(4*i.StorageGB, xr.MaxStorageGB),
		"storageType":                      "gp3",
		"storageEncrypted":                 true,
		"multiAz":                          i.HighAvailability,
		"backupRetentionPeriod":            i.BackupRetentionDays,
		"backupWindow":                     "01:00-01:30",
		"maintenanceWindow":                maintenanceWindow(i.Maintenance),
		"deletionProtection":               i.DeletionProtection,
		"skipFinalSnapshot":                false,
		"finalSnapshotIdentifier":          i.Name + "-final",
		"publiclyAccessible":               false,
		"port":                             database.Port,
		"username":                         i.Username,
		"autoGeneratePassword":             true,
		"passwordSecretRef":                password,
		"iamDatabaseAuthenticationEnabled": true,
		"autoMinorVersionUpgrade":          true,
		"copyTagsToSnapshot":               true,
		"dbSubnetGroupNameSelector":        ctx.Selector(rDBSubnetGroup),
		"vpcSecurityGroupIdSelector":       ctx.Selector(rDBSecurityGroup),
		"parameterGroupNameSelector":       paramsSelector,
		"tags":                             dbTags(i.Name, i.Name),
	}
	if major && version == step {
		fp["allowMajorVersionUpgrade"] = true
	}
	if len(i.Databases) > 0 {
		fp["dbName"] = i.Databases[0]
	}
	out := []*registry.Resource{parameterGroup(i, family)}
	if major {
		// The old family's group stays until the instance runs the new
		// version on the new group; the group of a step before goes.
		out = append(out, parameterGroup(i, i.Engine+i.Running))
	}
	out = append(out, retiredParameterGroups(ctx, i, params)...)
	out = append(out, []*registry.Resource{
		{
			Name:         rDBInstance,
			Kind:         rdsInstanceKind,
			ExternalName: i.Name,
			Body: object.Object{"spec": map[string]any{
				"forProvider":                fp,
				"writeConnectionSecretToRef": ctx.ConnectionSecretRef(i.ConnectionSecret),
			}},
			DependsOn: []string{rDBSubnetGroup, rDBSecurityGroup, rDBIngress, params},
			Outputs: func(obs *structpb.Struct, _ map[string][]byte, o *registry.Outputs) {
				o.Host = object.String(obs, "status", "atProvider", "address")
				o.EngineVersion = object.String(obs, "status", "atProvider", "engineVersionActual")
			},
		},
	}...)
	if len(i.Databases) > 1 {
		secret := object.Object{"name": i.ConnectionSecret}
		if !ctx.Namespaced() {
			secret["namespace"] = ctx.SecretNamespace()
		}
		out = append(out, &registry.Resource{
			Name: rSQLConfig,
			Kind: sqlProviderConfigKind,
			Body: object.Object{
				"metadata": map[string]any{"name": ctx.XR.Name + "-sql"},
				"spec": map[string]any{
					"credentials": map[string]any{
						"source":              "PostgreSQLConnectionSecret",
						"connectionSecretRef": secret,
						// RDS's endpoint key carries the port too.
						"secretKeyMapping": map[string]any{"endpoint": "address"},
					},
					"sslMode":         "require",
					"defaultDatabase": i.Databases[0],
				},
			},
			DependsOn: []string{rDBInstance},
		})
	}
	return out, nil
}

// parameterGroup is the instance's parameter group of a family: TLS
// enforced.
func parameterGroup(i database.Instance, family string) *registry.Resource {
	return &registry.Resource{
		Name:         rParamGroupPrefix + family,
		Kind:         parameterGroupKind,
		ExternalName: i.Name + "-" + family,
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"region":      i.Location,
			"family":      family,
			"description": "Parameters of database " + i.Name,
			"parameter":   []any{map[string]any{"name": "rds.force_ssl", "value": "1", "applyMethod": "immediate"}},
			"tags":        dbTags(i.Name, i.Name),
		}}},
	}
}

// retiredParameterGroups retires the parameter groups of older families,
// what a major upgrade left behind, once the instance runs the version of
// the family it runs on and is on its group (as its provider reports, or
// as its selector asks: the version and the group change together); the
// groups of keep (the next step's) stay. Until then they are kept.
func retiredParameterGroups(ctx *registry.Context, i database.Instance, keep ...string) []*registry.Resource {
	if i.Running == "" {
		return nil
	}
	current := rParamGroupPrefix + i.Engine + i.Running
	inst := ctx.Observed(rDBInstance)
	on := object.String(inst, "status", "atProvider", "parameterGroupName")
	if on != object.Annotation(ctx.Observed(current), registry.AnnotationExternalName) &&
		(on != "" || object.String(inst, "spec", "forProvider", "parameterGroupNameSelector", "matchLabels", registry.LabelResource) != current) {
		return nil
	}
	on = i.Name + "-" + i.Engine + i.Running
	var out []*registry.Resource
	for _, name := range ctx.Generations(i.ID()) {
		if name == current || slices.Contains(keep, name) || !strings.HasPrefix(name, rParamGroupPrefix) {
			continue
		}
		out = append(out, &registry.Resource{Name: name, Kind: parameterGroupKind,
			Retire: fmt.Sprintf("instance %s runs PostgreSQL %s on parameter group %s", i.Name, i.Running, on)})
	}
	return out
}

// dbSchema renders one database: nothing for the first, which the RDS
// instance creates; a provider-sql Database for the others.
func dbSchema(ctx *registry.Context, s database.Schema) ([]*registry.Resource, error) {
	if len(s.Instance.Databases) == 0 || s.Name == s.Instance.Databases[0] {
		return nil, nil
	}
	return []*registry.Resource{{
		Name:         rSchemaPrefix + s.Name,
		Kind:         sqlDatabaseKind,
		ExternalName: s.Name,
		Body: object.Object{"spec": map[string]any{
			"providerConfigRef": ctx.LocalProviderConfigRef(ctx.XR.Name + "-sql"),
			"forProvider":       map[string]any{"encoding": "UTF8"},
		}},
		DependsOn: []string{rSQLConfig},
	}}, nil
}

// dbTags are the AWS tags of a database's resources.
func dbTags(database, name string) map[string]any {
	return map[string]any{"Name": name, "database": database, "managed-by": "crossplane"}
}

// maintenanceWindow is RDS's form of a one-hour window: sun:03:00-sun:04:00.
func maintenanceWindow(m database.Maintenance) string {
	day := strings.ToLower(m.Day[:3])
	end, endDay := m.Hour+1, day
	if end == 24 {
		end, endDay = 0, strings.ToLower(database.Weekdays[int(m.Weekday())%7][:3])
	}
	return fmt.Sprintf("%s:%02d:00-%s:%02d:00", day, m.Hour, endDay, end)
}

// checkDBInstance checks AWS's rules for an RDS instance: its identifier,
// the account and the region.
func checkDBInstance(ctx *registry.Context, i database.Instance) field.ErrorList {
	errs := xr.ValidateCloudName(ctx.XR, maxClusterName, "RDS instance", "")
	if strings.Contains(ctx.XR.CloudName, "--") {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), ctx.XR.CloudName, "RDS identifiers may not contain two consecutive hyphens"))
	}
	if !reAccount.MatchString(ctx.XR.PlaneID) {
		errs = append(errs, field.Invalid(xr.LabelPath(xr.LabelPlaneID), ctx.XR.PlaneID, "must be a 12-digit AWS account ID"))
	}
	if !reRegion.MatchString(i.Location) {
		errs = append(errs, field.Invalid(xr.ParametersPath("location"), i.Location, "must be an AWS region such as eu-west-1"))
	}
	if i.Network.Cluster == nil && i.Network.CIDR.IsValid() && (i.Network.CIDR.Bits() < 16 || i.Network.CIDR.Bits() > 27) {
		errs = append(errs, field.Invalid(xr.ParametersPath("network", "cidr"), i.Network.CIDR.String(), "an AWS VPC of a database must be a /16 to /27, split into two subnets"))
	}
	return errs
}
