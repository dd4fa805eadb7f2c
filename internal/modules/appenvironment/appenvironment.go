// Package appenvironment is the AppEnvironment module ("module:
// environment" in the Input): it runs an AppEnvironment XR on the machinery
// every module shares (package engine), with its model
// (internal/model/appenvironment): the Cluster it runs on, the environments
// beside it on that Cluster, the plan, the render, status and conditions.
package appenvironment

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/engine"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/appenvironment"
	"github.com/seed-6471616d/function-cluster-platform/internal/names"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// RequirementSiblings is the requirement name of the other AppEnvironments
// of the XR's namespace (for a claim, of its cloud), among which no other
// may own the same namespace of the same Cluster.
const RequirementSiblings = "environment-siblings"

// notRequested explains empty condition groups.
var notRequested = map[string]string{
	appenvironment.ConditionBucketReady:   "No bucket requested (spec.parameters.bucket)",
	appenvironment.ConditionDatabaseReady: "No database requested (spec.parameters.database)",
	appenvironment.ConditionFrontendReady: "No front end requested (spec.parameters.frontend)",
}

// Run computes the response to a request for an AppEnvironment XR. rsp
// must already carry the desired state of earlier pipeline steps. An error
// means the desired state cannot be computed; the caller returns it as a
// Fatal result, so that Crossplane changes nothing.
func Run(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, opts response.Options) error {
	x, errs := xr.DecodeAppEnvironment(req.GetObserved().GetComposite().GetResource())
	errs = append(errs, xr.ValidateAppEnvironment(x, registry.Clouds())...)
	c, err := engine.Begin(req, rsp, opts, &x.Composite, errs)
	if c == nil {
		return err
	}
	// Without a valid clusterRef there is nothing to look up.
	if err := c.Invalid(); err != nil {
		return err
	}
	ref := x.Parameters.ClusterRef.Name
	cluster, found := clusterref.ForAppEnvironment.Find(req, rsp, &x.Composite, ref)
	// An environment that holds its claims reads its siblings no more
	// (claims.go).
	keys, held := claimKeys(x), heldClaims(x)
	var siblings []*xr.AppEnvironment
	if !held.settles(keys) {
		siblings = findSiblings(req, rsp, x)
	}
	if !found {
		st := status(req, x, nil, nil)
		if kept, ok := keptClaims(x); ok {
			st["claims"] = kept
		}
		return c.Wait(st, waitingFor(clusterAbsent(x, ref)))
	}
	c.Errs = append(c.Errs, cluster.Check(&x.Composite, "AppEnvironment", "an environment runs on a Cluster")...)
	c.Errs = append(c.Errs, checkNamespaceOwner(x, siblings)...)
	c.Errs = append(c.Errs, checkTenancy(c, x)...)
	c.Errs = append(c.Errs, checkNameOwners(x, siblings, c.Tenancy())...)
	running := appenvironment.ReadRunning(c.Observed)
	c.Errs = append(c.Errs, appenvironment.CheckRenames(x, running)...)
	// The bucket, the identity and what goes with them live in the
	// Cluster's region, which it may not have reported yet: never plan
	// without it.
	if why := cluster.AwaitLocation(); why != "" && len(c.Errs) == 0 {
		st := status(req, x, nil, nil)
		st["claims"] = claimsStatus(keys, held)
		return c.Wait(st, waitingFor("Waiting for the region of the Cluster the environment runs on (spec.parameters.clusterRef): "+why))
	}
	plan, perrs := appenvironment.Build(x, c.Env, cluster, running)
	c.Errs = append(c.Errs, perrs...)
	if err := c.Invalid(); err != nil {
		return err
	}
	c.Warnings = append(c.Warnings, plan.Warnings...)
	st, err := c.Render(plan.Components, plan)
	if err != nil {
		return err
	}
	conds := append(st.Conditions(appenvironment.ConditionTypes, notRequested), st.RemovalsCondition())
	out := status(req, x, plan, st)
	out["claims"] = claimsStatus(keys, held)
	return c.Finish(st, out, conds)
}

// status returns the AppEnvironment's own status fields. A field the
// observed resources cannot fill this time keeps its last value.
func status(req *fnv1.RunFunctionRequest, x *xr.AppEnvironment, plan *appenvironment.Plan, st *engine.State) map[string]any {
	out := map[string]any{"namespace": x.AppNamespace(), "ready": st != nil && st.Ready()}
	if plan == nil {
		return out
	}
	be := plan.Backend
	out["url"] = fmt.Sprintf("http://%s.%s.svc.cluster.local:%d", appenvironment.BackendName, be.Namespace, be.Port)
	if i := plan.Ingress; i != nil {
		scheme := "http"
		if i.TLS {
			scheme = "https"
		}
		out["url"] = scheme + "://" + i.Host
	}
	o := st.Outputs(req)
	if plan.Database != nil {
		host := object.String(req.GetObserved().GetResources()[appenvironment.ResourceDatabase].GetResource(), "status", "host")
		if host == "" {
			host = object.String(x.Status, "databaseHost")
		}
		if host != "" {
			out["databaseHost"] = host
		}
	}
	if b := plan.Bucket; b != nil {
		out["bucketName"] = b.Name
		if o.BucketURL == "" {
			o.BucketURL = object.String(x.Status, "bucketUrl")
		}
		if o.BucketURL != "" {
			out["bucketUrl"] = o.BucketURL
		}
	}
	if e, ok := estimate(req, plan); ok {
		out["estimatedMonthlyUsd"] = e
	}
	if f := plan.Frontend; f != nil {
		out["frontendUrl"] = f.URL()
		out["frontendBucketName"] = f.Bucket
		if o.CDNEndpoint == "" {
			o.CDNEndpoint = object.String(x.Status, "cdnEndpoint")
		}
		if o.CDNEndpoint != "" {
			out["cdnEndpoint"] = o.CDNEndpoint
		}
	}
	return out
}

// estimate is the environment's monthly price, {min, max} in USD: its
// nested Database's estimate, as the Database reports it, and its front
// end's fixed price. ok is false unless every part the environment has is
// priced (a part not yet estimated would make the sum a made-up figure)
// and at least one is.
func estimate(req *fnv1.RunFunctionRequest, plan *appenvironment.Plan) (map[string]any, bool) {
	var lo, hi float64
	parts := 0
	if plan.Database != nil {
		db := object.Get(req.GetObserved().GetResources()[appenvironment.ResourceDatabase].GetResource(), "status", "estimatedMonthlyUsd").GetStructValue()
		if db == nil {
			return nil, false
		}
		lo += db.GetFields()["min"].GetNumberValue()
		hi += db.GetFields()["max"].GetNumberValue()
		parts++
	}
	if plan.Frontend != nil {
		p := plan.FrontendPerMonth
		if p == nil {
			return nil, false
		}
		lo, hi = lo+*p, hi+*p
		parts++
	}
	return map[string]any{"min": round2(lo), "max": round2(hi)}, parts > 0
}

// round2 rounds to cents.
func round2(v float64) float64 { return math.Round(v*100) / 100 }

// clusterAbsent says that an AppEnvironment waits for its Cluster, which
// is not there yet.
func clusterAbsent(x *xr.AppEnvironment, ref string) string {
	where := "namespace " + x.Namespace
	if x.Namespace == "" {
		where = "the claim's namespace"
	}
	return fmt.Sprintf("Waiting for Cluster %q (%s), which the environment runs on (spec.parameters.clusterRef): it is not there yet", ref, where)
}

// waitingFor are the conditions of an AppEnvironment waiting for its
// Cluster, for the reason msg says.
func waitingFor(msg string) []response.Condition {
	out := make([]response.Condition, 0, len(appenvironment.ConditionTypes))
	for _, t := range appenvironment.ConditionTypes {
		out = append(out, response.Condition{Type: t, Status: response.StatusFalse, Reason: engine.ReasonWaiting, Message: msg})
	}
	return out
}

// findSiblings asks Crossplane for the other AppEnvironments that could run
// on the same Cluster: those of the XR's namespace (a Cluster is referenced
// from its own namespace), or for a cluster-scoped XR those of its cloud.
func findSiblings(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, x *xr.AppEnvironment) []*xr.AppEnvironment {
	sel := &fnv1.ResourceSelector{
		ApiVersion: x.APIVersion,
		Kind:       x.Kind,
		Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{xr.LabelCloud: x.Cloud}}},
	}
	if x.Namespace != "" {
		sel.Namespace = &x.Namespace
	}
	response.Require(rsp, RequirementSiblings, sel)
	var out []*xr.AppEnvironment
	for _, item := range req.GetRequiredResources()[RequirementSiblings].GetItems() {
		// A sibling that does not decode has no namespace to claim.
		if s, errs := xr.DecodeAppEnvironment(item.GetResource()); len(errs) == 0 && s.Name != x.Name {
			out = append(out, s)
		}
	}
	return out
}

// checkNamespaceOwner refuses a namespace of the Cluster that another
// AppEnvironment owns: the namespace, and everything in it, belongs to one
// environment, which deletes it with itself. Which one owns it is ahead's:
// the one that holds it, else the older, else the name.
func checkNamespaceOwner(x *xr.AppEnvironment, siblings []*xr.AppEnvironment) field.ErrorList {
	for _, s := range siblings {
		if !sameCluster(x, s) || s.AppNamespace() != x.AppNamespace() {
			continue
		}
		if !ahead(s, x, namespaceKey(x)) {
			continue
		}
		p := xr.ParametersPath("namespace")
		if x.Parameters.Namespace == "" {
			p = field.NewPath("metadata", "name")
		}
		return field.ErrorList{field.Forbidden(p, fmt.Sprintf("namespace %q of Cluster %q belongs to AppEnvironment %q, which owns it and deletes it with itself; choose another (spec.parameters.namespace)", x.AppNamespace(), x.Parameters.ClusterRef.Name, s.Name))}
	}
	return nil
}

// checkNameOwners refuses a host or a bucket another AppEnvironment of the
// same plane has (ahead: the one that holds it, else the older, else the
// name): two environments publishing the same host would take over each
// other's records, certificates and validation tokens, and two naming the
// same bucket would share it (a provider adopts an existing bucket of its
// name), opening one's objects to the other's CDN or backend.
func checkNameOwners(x *xr.AppEnvironment, siblings []*xr.AppEnvironment, t *names.Tenancy) field.ErrorList {
	var errs field.ErrorList
	for _, s := range siblings {
		if s.Cloud != x.Cloud || s.PlaneID != x.PlaneID {
			continue
		}
		s.CloudName = siblingCloudName(s, t)
		theirs, mine := claimedNames(s), claimedNames(x)
		for _, v := range slices.Sorted(maps.Keys(mine)) {
			n := mine[v]
			if owner, ok := theirs[v]; ok && owner.kind == n.kind && ahead(s, x, nameKey(n)) {
				errs = append(errs, field.Forbidden(n.path, fmt.Sprintf("%s %q is AppEnvironment %q's (%s): an environment's hosts and buckets are its own; choose another", n.kind, n.value, s.Name, owner.path)))
			}
		}
	}
	return errs
}

// checkTenancy refuses the hosts and chosen bucket names the platform team
// did not assign to the XR's namespace (engine.Call.CheckHost and
// CheckName): hosts and bucket names are global, and one namespace's XR
// must never publish another's host or adopt its bucket.
func checkTenancy(c *engine.Call, x *xr.AppEnvironment) field.ErrorList {
	var errs field.ErrorList
	add := func(err *field.Error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	par := x.Parameters
	if i := par.Ingress; i != nil {
		add(c.CheckHost(xr.ParametersPath("ingress", "host"), i.Host))
	}
	if b := par.Bucket; b != nil {
		add(c.CheckName(xr.ParametersPath("bucket", "name"), "bucket", b.Name))
	}
	if f := par.Frontend; f != nil {
		add(c.CheckHost(xr.ParametersPath("frontend", "host"), f.Host))
		add(c.CheckName(xr.ParametersPath("frontend", "bucketName"), "bucket", f.BucketName))
	}
	return errs
}

// siblingCloudName is the cloud name a sibling derives its bucket names
// from, as the engine gives it to the sibling's own render when it has no
// resources yet.
func siblingCloudName(s *xr.AppEnvironment, t *names.Tenancy) string {
	ns := s.Tenant()
	if ns == "" || t.Of(ns).BareNames {
		return s.BareName
	}
	return names.Tenant(ns, s.BareName, names.MaxBase)
}

// claimed is a host or a bucket an AppEnvironment has, and the field that
// gives it.
type claimed struct {
	kind, value string
	path        *field.Path
}

// claimedNames are an AppEnvironment's hosts (its Ingress's and its front
// end's) and bucket names (its bucket's and its front end's, named or
// derived), keyed by value.
func claimedNames(x *xr.AppEnvironment) map[string]claimed {
	out := map[string]claimed{}
	add := func(kind, value string, path *field.Path) {
		if value != "" {
			out[value] = claimed{kind: kind, value: value, path: path}
		}
	}
	par := x.Parameters
	if i := par.Ingress; i != nil {
		add("host", i.Host, xr.ParametersPath("ingress", "host"))
	}
	if b := par.Bucket; b != nil {
		p := xr.ParametersPath("bucket", "name")
		if b.Name == "" {
			p = field.NewPath("metadata", "name")
		}
		add("bucket", cmp.Or(b.Name, x.CloudName+appenvironment.AssetsBucketSuffix), p)
	}
	if f := par.Frontend; f != nil {
		add("host", f.Host, xr.ParametersPath("frontend", "host"))
		p := xr.ParametersPath("frontend", "bucketName")
		if f.BucketName == "" {
			p = field.NewPath("metadata", "name")
		}
		add("bucket", cmp.Or(f.BucketName, x.CloudName+appenvironment.FrontendBucketSuffix), p)
	}
	return out
}

// older reports whether a was created before b, or at the same second
// with a smaller name.
func older(a, b *xr.AppEnvironment) bool {
	return a.CreationTimestamp.Before(b.CreationTimestamp) ||
		a.CreationTimestamp.Equal(b.CreationTimestamp) && a.Name < b.Name
}

// sameCluster reports whether two AppEnvironments name the same Cluster:
// the same name in the same namespace, or for claims in the same claim
// namespace.
func sameCluster(a, b *xr.AppEnvironment) bool {
	return a.Parameters.ClusterRef.Name == b.Parameters.ClusterRef.Name &&
		a.Namespace == b.Namespace && a.Labels[xr.LabelClaimNamespace] == b.Labels[xr.LabelClaimNamespace]
}
