package azure

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Azure name rules.
const (
	// maxClusterName keeps the DNS prefix (54), the resource group (90)
	// and every derived name within Azure's limits.
	maxClusterName = 40
	// maxPoolName is AKS's limit on Linux node pool names, which take only
	// lower-case letters and digits.
	maxPoolName = 12
	// maxNotifications is the most notifications a consumption budget has.
	maxNotifications = 5
)

var (
	reSubscription = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	reLocation     = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	rePoolName     = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
)

// checkCluster checks Azure's rules: names (resource group, DNS prefix, AKS
// node pools), subscription ID and location.
func checkCluster(ctx *registry.Context, c cluster.Cluster) field.ErrorList {
	x, env := ctx.XR, ctx.Env
	var errs field.ErrorList
	if systemVMSize(env) == "" {
		sys := cmp.Or(settingsOf(env).SystemPool.Size, defaultSystemSize)
		errs = append(errs, field.NotSupported(field.NewPath("environment", Name, envSystemPool, "size"), sys, slices.Sorted(maps.Keys(cluster.SettingsOf(env).Sizes))))
	}
	errs = append(errs, xr.ValidateCloudName(x, maxClusterName, "AKS cluster", "the resource group and DNS prefix derive from it")...)
	if x.PlaneID != "" && !reSubscription.MatchString(x.PlaneID) {
		errs = append(errs, field.Invalid(xr.LabelPath(xr.LabelPlaneID), x.PlaneID, "must be an Azure subscription ID (a GUID)"))
	}
	if l := c.Location; l != "" && !reLocation.MatchString(l) {
		errs = append(errs, field.Invalid(xr.ParametersPath("location"), l, "must be an Azure region such as westeurope"))
	}
	seen := map[string]string{}
	for _, p := range c.Pools {
		n := poolCloudName(p.Name)
		if len(n) > maxPoolName || !rePoolName.MatchString(n) || n == systemPoolName || n == systemPoolName+"tmp" {
			errs = append(errs, field.Invalid(cluster.PoolPath(p), p.Key, fmt.Sprintf("an AKS node pool name is at most %d lower-case letters and digits, starting with a letter ('-' is dropped), and not %q", maxPoolName, systemPoolName)))
		}
		if other, dup := seen[n]; dup {
			errs = append(errs, field.Duplicate(cluster.PoolPath(p), fmt.Sprintf("pools %q and %q would both be AKS node pool %q ('-' is dropped)", other, p.Key, n)))
		}
		seen[n] = p.Key
	}
	return errs
}

// checkBudget checks that a consumption budget has at most
// maxNotifications thresholds.
func checkBudget(_ *registry.Context, b cluster.Budget) field.ErrorList {
	if len(b.Thresholds) > maxNotifications {
		return field.ErrorList{field.TooMany(xr.ParametersPath("budget", "thresholds"), len(b.Thresholds), maxNotifications)}
	}
	return nil
}

// poolCloudName is the AKS name of a pool: its name without '-'.
func poolCloudName(pool string) string { return strings.ReplaceAll(pool, "-", "") }

// base is the cloud name every other name derives from.
func base(ctx *registry.Context) string { return ctx.XR.CloudName }

func tags(ctx *registry.Context) map[string]any {
	return map[string]any{"cluster": base(ctx), "managed-by": "crossplane"}
}

// inGroup is the start of a forProvider of a resource in the cluster's
// resource group: with its location and tags when it has one (location
// is not empty).
func inGroup(ctx *registry.Context, location string) map[string]any {
	fp := map[string]any{"resourceGroupNameSelector": ctx.Selector(rResourceGroup)}
	if location != "" {
		fp["location"] = location
		fp["tags"] = tags(ctx)
	}
	return fp
}

// systemVMSize is the VM size of AKS's system node pool: azure.systemPool's
// machineType, else the machine type of its size class, else the
// environment's nodeDefaults.machineType; empty when none is set.
func systemVMSize(env *envcfg.Env) string {
	sys := settingsOf(env).SystemPool
	s := cluster.SettingsOf(env)
	return cmp.Or(sys.MachineType, s.Sizes[cmp.Or(sys.Size, defaultSystemSize)], s.NodeDefaults.MachineType)
}

// systemPool is AKS's system node pool, which the cluster resource
// composes, for the estimate.
func systemPool(env *envcfg.Env) []cluster.NodePool {
	sys := settingsOf(env).SystemPool
	return []cluster.NodePool{{
		Name: systemPoolName, Key: systemPoolName, Fixed: true, MachineType: systemVMSize(env),
		MinNodes: envcfg.Or(sys.MinNodes, defaultSystemMin), MaxNodes: envcfg.Or(sys.MaxNodes, defaultSystemMax),
	}}
}

// resourceGroupName is the name of the cluster's resource group.
func resourceGroupName(ctx *registry.Context) string { return base(ctx) + "-rg" }
