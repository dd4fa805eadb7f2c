package database

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/engine"
	"github.com/seed-6471616d/function-cluster-platform/internal/module"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Requirement names of the Cluster a Database joins, and of its composed
// resources the cloud reads.
const (
	RequirementCluster         = "database-cluster"
	requirementResourcesPrefix = "database-cluster-"
)

// notRequested explains an empty condition group.
var notRequested = map[string]string{}

// A Read is one of a Cluster's composed resources that a cloud's database
// implementations read, such as the EKS cluster whose security group may
// reach the database.
type Read struct {
	// Resource is its composition-resource name in the Cluster.
	Resource string
	Kind     *registry.Kind
}

var (
	readsMu sync.RWMutex
	reads   = map[string][]Read{}
)

// Reads registers what the named cloud's database implementations read of
// the Cluster a Database joins. Cloud packages call it from init; the
// module asks Crossplane for those resources.
func Reads(cloud string, rs ...Read) {
	readsMu.Lock()
	defer readsMu.Unlock()
	reads[cloud] = append(reads[cloud], rs...)
}

// Run computes the response to a request for a Database XR. rsp must
// already carry the desired state of earlier pipeline steps. An error means
// the desired state cannot be computed; the caller returns it as a Fatal
// result, so that Crossplane changes nothing.
func Run(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, opts module.Options) error {
	x, errs := xr.DecodeDatabase(req.GetObserved().GetComposite().GetResource())
	errs = append(errs, xr.ValidateDatabase(x, registry.Clouds())...)
	c, err := engine.Begin(req, rsp, opts, &x.Composite, errs)
	if c == nil {
		return err
	}
	s := *SettingsOf(c.Env)

	var cluster *Cluster
	if ref := x.Parameters.ClusterRef; ref != nil && ref.Name != "" && len(c.Errs) == 0 {
		var found bool
		cluster, found = findCluster(req, rsp, x, ref.Name)
		if !found {
			return c.Wait(status(req, x, nil, nil, 0), waitingFor(x, ref.Name))
		}
		c.Errs = append(c.Errs, checkCluster(x, cluster, req)...)
	}
	plan, perrs := Build(x, s, cluster)
	c.Errs = append(c.Errs, perrs...)
	if err := c.Invalid(); err != nil {
		return err
	}
	estimate := plan.Estimate(c.Env, s)

	st, err := c.Render(plan.Components, plan, nil)
	if err != nil {
		return err
	}
	conds := append(st.Conditions([]string{ConditionNetworkReady, ConditionDatabaseReady}, notRequested), st.RemovalsCondition())
	return c.Finish(st, status(req, x, plan, st, estimate), conds)
}

// status returns the Database's own status fields. A field the observed
// resources cannot fill this time keeps its last value.
func status(req *fnv1.RunFunctionRequest, x *xr.Database, plan *Plan, st *engine.State, estimate float64) map[string]any {
	out := map[string]any{}
	var o registry.Outputs
	if st != nil {
		o = st.Outputs(req)
	}
	if o.Host == "" {
		o.Host = object.String(x.Status, "host")
	}
	if o.EngineVersion == "" {
		o.EngineVersion = object.String(x.Status, "engineVersion")
	}
	if o.Host != "" {
		out["host"] = o.Host
		out["port"] = int64(Port)
	}
	if o.EngineVersion != "" {
		out["engineVersion"] = o.EngineVersion
	}
	if plan != nil {
		out["connectionSecret"] = plan.Instance.ConnectionSecret
		out["estimatedMonthlyUsd"] = map[string]any{"min": estimate, "max": estimate}
	}
	return out
}

// waitingFor are the conditions of a Database waiting for its Cluster.
func waitingFor(x *xr.Database, ref string) []module.Condition {
	where := "namespace " + x.Namespace
	if x.Namespace == "" {
		where = "the claim's namespace"
	}
	msg := fmt.Sprintf("Waiting for Cluster %q (%s), whose private network the database joins (spec.parameters.clusterRef): it is not there yet", ref, where)
	return []module.Condition{
		{Type: ConditionNetworkReady, Status: module.StatusFalse, Reason: engine.ReasonWaiting, Message: msg},
		{Type: ConditionDatabaseReady, Status: module.StatusFalse, Reason: engine.ReasonWaiting, Message: msg},
	}
}

// findCluster asks Crossplane for the Cluster a Database joins and for the
// Cluster's composed resources its cloud reads, and returns what was
// delivered. It reports false until the Cluster itself is there. The
// requirements are returned on every call, so that they stay stable.
func findCluster(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, x *xr.Database, ref string) (*Cluster, bool) {
	sel, labels := clusterSelector(x, ref)
	module.Require(rsp, RequirementCluster, sel)
	items := req.GetRequiredResources()[RequirementCluster].GetItems()
	if len(items) == 0 {
		return nil, false
	}
	cx, _ := xr.Decode(items[0].GetResource())
	c := &Cluster{Ref: ref, Labels: labels, CloudName: cx.CloudName, Location: region(x.Cloud, cx.Parameters.Location), Observed: map[string]*structpb.Struct{}}

	readsMu.RLock()
	rs := reads[x.Cloud]
	readsMu.RUnlock()
	for _, r := range rs {
		name := requirementResourcesPrefix + r.Resource
		ml := make(map[string]string, len(labels)+1)
		maps.Copy(ml, labels)
		ml[registry.LabelResource] = r.Resource
		rsel := &fnv1.ResourceSelector{
			ApiVersion: r.Kind.APIVersion(x.Scope),
			Kind:       r.Kind.Kind,
			Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: ml}},
		}
		if x.Namespace != "" {
			rsel.Namespace = &x.Namespace
		}
		module.Require(rsp, name, rsel)
		if got := req.GetRequiredResources()[name].GetItems(); len(got) > 0 {
			c.Observed[r.Resource] = got[0].GetResource()
		}
	}
	return c, true
}

// clusterSelector selects the Cluster named ref for a Database, and the
// labels of that Cluster's composed resources: in the Database's namespace
// for a namespaced XR; for an XR of a claim, the Cluster claim of that name
// in the claim's namespace; otherwise the cluster-scoped XCluster ref.
func clusterSelector(x *xr.Database, ref string) (*fnv1.ResourceSelector, map[string]string) {
	if x.Scope == xr.Namespaced {
		ns := x.Namespace
		return &fnv1.ResourceSelector{
			ApiVersion: xr.ClusterAPIVersion, Kind: xr.ClusterKind,
			Match: &fnv1.ResourceSelector_MatchName{MatchName: ref}, Namespace: &ns,
		}, map[string]string{xr.LabelComposite: ref}
	}
	if ns := x.Labels[xr.LabelClaimNamespace]; ns != "" {
		labels := map[string]string{xr.LabelClaimName: ref, xr.LabelClaimNamespace: ns}
		return &fnv1.ResourceSelector{
			ApiVersion: xr.LegacyClusterAPIVersion, Kind: xr.LegacyClusterKind,
			Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: labels}},
		}, labels
	}
	return &fnv1.ResourceSelector{
		ApiVersion: xr.LegacyClusterAPIVersion, Kind: xr.LegacyClusterKind,
		Match: &fnv1.ResourceSelector_MatchName{MatchName: ref},
	}, map[string]string{xr.LabelComposite: ref}
}

// checkCluster refuses a Cluster on another cloud or in another project,
// account or subscription: its network is out of the database's reach.
func checkCluster(x *xr.Database, c *Cluster, req *fnv1.RunFunctionRequest) field.ErrorList {
	cx, _ := xr.Decode(req.GetRequiredResources()[RequirementCluster].GetItems()[0].GetResource())
	p := xr.ParametersPath("clusterRef", "name")
	var errs field.ErrorList
	if cx.Cloud != x.Cloud {
		errs = append(errs, field.Invalid(p, c.Ref, fmt.Sprintf("Cluster %q runs on cloud %q, this Database on %q: a database joins a network of its own cloud", c.Ref, cx.Cloud, x.Cloud)))
	}
	if cx.PlaneID != x.PlaneID {
		errs = append(errs, field.Invalid(p, c.Ref, fmt.Sprintf("Cluster %q is in %q (planeId), this Database in %q: a database joins a network of its own project, account or subscription", c.Ref, cx.PlaneID, x.PlaneID)))
	}
	return errs
}

// region is the region of a Cluster's location: a GKE zone's region.
func region(cloud, location string) string {
	if cloud != "gcp" {
		return location
	}
	if i := strings.LastIndex(location, "-"); i > 0 && strings.Count(location, "-") == 2 {
		return location[:i]
	}
	return location
}

// ReadsOf returns what the named cloud reads of a Cluster.
func ReadsOf(cloud string) []Read {
	readsMu.RLock()
	defer readsMu.RUnlock()
	return slices.Clone(reads[cloud])
}
