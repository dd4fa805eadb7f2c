// Package clusterref finds the Cluster XR that another module's XR names in
// spec.parameters.clusterRef (a Database joins its network, an application
// environment runs on it), with the Cluster's composed resources its cloud
// implementations read, and gives the clouds the registry's side of it: a
// resource that waits for a value the Cluster has not reported (Await),
// and a Use of one of the Cluster's resources. What it finds is a plain
// value of the Cluster's model (cluster.Reported), which the models carry.
// It arrives as required resources, which depend on the XR, so they cannot
// be step-level: an XR with a clusterRef costs Crossplane two calls per
// reconcile.
package clusterref

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// A Read is one of a Cluster's composed resources that a module's cloud
// implementations read, such as the EKS cluster whose security group may
// reach a database.
type Read struct {
	// Resource is its composition-resource name in the Cluster.
	Resource string
	Kind     *registry.ResourceKind
}

// A Reader is one module's access to the Clusters its XRs name: the
// requirement names it asks Crossplane with, and what each cloud reads.
type Reader struct {
	// Requirement is the requirement name of the Cluster; each read
	// resource's is Requirement + "-" + its composition-resource name.
	Requirement string

	mu    sync.RWMutex
	reads map[string][]Read
}

// ForDatabase finds the Cluster a Database joins, asking Crossplane with
// the requirement names database-cluster and database-cluster-<resource>.
// Cloud packages register what they read of it (ForDatabase.Reads) from
// init.
var ForDatabase = &Reader{Requirement: "database-cluster"}

// ForAppEnvironment finds the Cluster an AppEnvironment runs on, asking
// Crossplane with the requirement names environment-cluster and
// environment-cluster-<resource>. Cloud packages register what they read
// of it (ForAppEnvironment.Reads) from init.
var ForAppEnvironment = &Reader{Requirement: "environment-cluster"}

// Reads registers what the named cloud's implementations of the module
// read of the Cluster. Cloud packages call it from init.
func (r *Reader) Reads(cloud string, rs ...Read) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reads == nil {
		r.reads = map[string][]Read{}
	}
	r.reads[cloud] = append(r.reads[cloud], rs...)
}

// ReadsOf returns what the named cloud reads of a Cluster.
func (r *Reader) ReadsOf(cloud string) []Read {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.reads[cloud])
}

// ResourceRequirement is the requirement name of a read resource.
func (r *Reader) ResourceRequirement(resource string) string {
	return r.Requirement + "-" + resource
}

// Await holds r until the Cluster c reports a value r needs: r is Pending
// with a message naming the Cluster and what it waits for (what is
// "EKS cluster to report its security group"), and OnOtherXR, as
// Crossplane does not re-run this XR when the Cluster's resources change.
// A cloud waits for a value of a read with it, and for a read to be ready
// with a registry.Use; TestWaitsForAnotherXR fails when either leaves the
// ready TTL.
func Await(c *cluster.Reported, r *registry.Resource, what string) {
	r.Pending = fmt.Sprintf("waits for Cluster %q's %s", c.Ref, what)
	r.OnOtherXR = true
}

// Selector selects one of Cluster c's composed resources by its
// composition-resource name, as a cross-resource reference of a managed
// resource: by labels, not by controller (the XR does not control the
// Cluster's resources).
func Selector(c *cluster.Reported, resource string) map[string]any {
	return c.Match(map[string]string{registry.LabelResource: resource})
}

// Use is one of Cluster c's composed resources, read through Reads, as
// what a resource of the XR needs (registry.Use): named cluster-<resource>,
// selected by its labels, as far as it was delivered.
func Use(c *cluster.Reported, resource string, k *registry.ResourceKind) registry.Use {
	return registry.Use{Name: "cluster-" + resource, Kind: k, Selector: Selector(c, resource), Observed: c.Observed[resource]}
}

// Find asks Crossplane for the Cluster that x names and for the Cluster's
// composed resources its cloud reads, and returns what was delivered. It
// reports false until the Cluster itself is there. Every requirement is
// returned on every call, the reads' too (their selectors need only x and
// ref): Crossplane fetches them all before its second call and stops there,
// where asking for the reads only once the Cluster came would cost a third
// call on every reconcile.
func (r *Reader) Find(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, x *xr.Composite, ref string) (*cluster.Reported, bool) {
	sel, labels := selector(x, ref)
	response.Require(rsp, r.Requirement, sel)
	observed := map[string]*structpb.Struct{}
	for _, rd := range r.ReadsOf(x.Cloud) {
		name := r.ResourceRequirement(rd.Resource)
		ml := make(map[string]string, len(labels)+1)
		maps.Copy(ml, labels)
		ml[registry.LabelResource] = rd.Resource
		rsel := &fnv1.ResourceSelector{
			ApiVersion: rd.Kind.APIVersion(x.Scope),
			Kind:       rd.Kind.Name(x.Scope),
			Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: ml}},
		}
		if x.Namespace != "" {
			rsel.Namespace = &x.Namespace
		}
		response.Require(rsp, name, rsel)
		if got := req.GetRequiredResources()[name].GetItems(); len(got) > 0 {
			observed[rd.Resource] = got[0].GetResource()
		}
	}
	items := req.GetRequiredResources()[r.Requirement].GetItems()
	if len(items) == 0 {
		return nil, false
	}
	cx, _ := xr.Decode(items[0].GetResource())
	return &cluster.Reported{Ref: ref, XR: cx, Labels: labels, CloudName: cx.CloudName, Location: Region(x.Cloud, location(cx)), Observed: observed}, true
}

// location is where a Cluster runs: its spec.parameters.location, else the
// location the cluster module resolved from the Cluster's environment and
// reported in its status, or "" while it has reported none.
func location(cx *xr.Cluster) string {
	if cx.Parameters.Location != "" {
		return cx.Parameters.Location
	}
	return object.String(cx.Status, xr.StatusLocation)
}

// selector selects the Cluster named ref for x, and the labels of that
// Cluster's composed resources: in x's namespace for a namespaced XR; for
// an XR of a claim, the Cluster claim of that name in the claim's
// namespace; otherwise the cluster-scoped XCluster ref.
func selector(x *xr.Composite, ref string) (*fnv1.ResourceSelector, map[string]string) {
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

// Region is the region of a Cluster's location: a GKE zone's region.
func Region(cloud, location string) string {
	if cloud != "gcp" {
		return location
	}
	if i := strings.LastIndex(location, "-"); i > 0 && strings.Count(location, "-") == 2 {
		return location[:i]
	}
	return location
}
