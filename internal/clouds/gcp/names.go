package gcp

import (
	"cmp"
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// GCP name rules.
const (
	// maxClusterName is GKE's limit on cluster names; every other name is
	// derived from the cluster name and fits GCP's limit of 63.
	maxClusterName = 40
	// maxAccountID is the limit on service account IDs (6 to 30).
	maxAccountID = 30
	// minWeeklyMaintenanceHours is the shortest weekly window GKE takes:
	// its windows must allow 48 hours in any 32 days, which may hold only
	// four of a weekly window's days.
	minWeeklyMaintenanceHours = 12
)

var (
	reProject  = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
	reLocation = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+(-[a-z])?$`)
)

// checkCluster checks GCP's rules: names, project ID, location, the
// maintenance window and the control plane range; and that a cluster that
// runs public nodes is not made private (checkPrivateNodes).
func checkCluster(ctx *registry.Context, c cluster.Cluster) field.ErrorList {
	x := ctx.XR
	var errs field.ErrorList
	errs = append(errs, xr.ValidateCloudName(x, maxClusterName, "GKE cluster", "")...)
	if x.PlaneID != "" && !reProject.MatchString(x.PlaneID) {
		errs = append(errs, field.Invalid(xr.LabelPath(xr.LabelPlaneID), x.PlaneID, "must be a GCP project ID: 6 to 30 lower-case letters, digits or '-', starting with a letter"))
	}
	if l := c.Location; l != "" && !reLocation.MatchString(l) {
		errs = append(errs, field.Invalid(xr.ParametersPath("location"), l, "must be a GCP region such as us-central1 or a zone such as us-central1-a"))
	}
	// Hours is 0 where spec.parameters.maintenance.durationHours is
	// missing, which the XR's own validation refuses.
	if m := c.Maintenance; m != nil && m.Hours > 0 && m.Hours < minWeeklyMaintenanceHours {
		errs = append(errs, field.Invalid(xr.ParametersPath("maintenance", "durationHours"), m.Hours,
			fmt.Sprintf("GKE needs maintenance windows that allow at least 48 hours in any 32 days; a weekly window must last at least %d hours", minWeeklyMaintenanceHours)))
	}
	if c.Private {
		cp := cmp.Or(settingsOf(ctx.Env).ControlPlaneCIDR, defaultControlPlaneCIDR)
		pfx, err := xr.ParseCIDR(cp)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(field.NewPath("environment", Name, envControlPlaneCIDR), cp, err.Error()))
		case pfx.Bits() != 28:
			errs = append(errs, field.Invalid(field.NewPath("environment", Name, envControlPlaneCIDR), cp, "GKE needs a /28 for the control plane"))
		default:
			for _, r := range []struct {
				name string
				pfx  netip.Prefix
			}{{"cidr", c.Network.CIDR}, {"podsCidr", c.Network.PodsCIDR}, {"servicesCidr", c.Network.ServicesCIDR}} {
				if pfx.Overlaps(r.pfx) {
					errs = append(errs, field.Invalid(field.NewPath("environment", Name, envControlPlaneCIDR), cp, fmt.Sprintf("overlaps spec.parameters.network.%s (%s); address ranges must be disjoint", r.name, r.pfx)))
				}
			}
		}
	}
	return append(errs, checkPrivateNodes(ctx, c)...)
}

// region is the region of a location, which may be a zone.
func region(location string) string {
	if i := strings.LastIndex(location, "-"); i > 0 && strings.Count(location, "-") == 2 {
		return location[:i]
	}
	return location
}

// base is the cloud name every other name derives from.
func base(ctx *registry.Context) string { return ctx.XR.CloudName }

// accountID is the node service account's ID, shortened to GCP's limit.
func accountID(ctx *registry.Context) string {
	return ctx.Join(maxAccountID, base(ctx), "nodes")
}

// serviceAccountEmail is the e-mail of the node service account.
func serviceAccountEmail(ctx *registry.Context) string {
	return accountID(ctx) + "@" + ctx.XR.PlaneID + ".iam.gserviceaccount.com"
}

// regionalZones is how many zones GKE spreads a regional cluster's node
// pools over by default.
const regionalZones = 3

// poolZones is how many zones a node pool's per-zone bounds apply to: a
// regional cluster's pools autoscale between their bounds in each of its
// zones (GKE's minNodeCount and maxNodeCount are per zone), a zonal
// cluster's in its one zone.
func poolZones(location string) int64 {
	if region(location) == location {
		return regionalZones
	}
	return 1
}
