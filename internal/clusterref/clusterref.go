// Package clusterref finds the Cluster XR that another module's XR names in
// spec.parameters.clusterRef (a Database joins its network, an application
// environment runs on it), with the Cluster's composed resources its cloud
// implementations read. What it finds arrives as required resources, which
// depend on the XR, so they cannot be step-level: an XR with a clusterRef
// costs Crossplane two calls per reconcile.
package clusterref

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/module"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// A Read is one of a Cluster's composed resources that a module's cloud
// implementations read, such as the EKS cluster whose security group may
// reach a database.
type Read struct {
	// Resource is its composition-resource name in the Cluster.
	Resource string
	Kind     *registry.Kind
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

// Cluster is what an XR knows of the Cluster it names.
type Cluster struct {
	// Ref is the name spec.parameters.clusterRef gives.
	Ref string
	// XR is the Cluster XR, decoded; Name is its own name (for a claim,
	// the XCluster's generated one).
	XR *xr.Cluster
	// Labels select the Cluster's composed resources (with the resource
	// label added): the composite's name, or a claim's name and namespace.
	Labels map[string]string
	// CloudName is the name the Cluster's cloud resources derive from.
	CloudName string
	// Location is the Cluster's region: of its spec.parameters.location,
	// else of the location it reports in its status (the environment's,
	// see xr.StatusLocation); empty while it names none and has not
	// reported one (see AwaitLocation).
	Location string
	// Observed are the Cluster's composed resources the cloud reads (see
	// Reads), by composition-resource name, as far as they were delivered.
	Observed map[string]*structpb.Struct
}

// Await holds r until the Cluster reports a value r needs: r is Pending
// with a message naming the Cluster and what it waits for (what is
// "EKS cluster to report its security group"), and OnOtherXR, as
// Crossplane does not re-run this XR when the Cluster's resources change.
// A cloud waits for a value of a read with it, and for a read to be ready
// with a registry.Use; TestWaitsForAnotherXR fails when either leaves the
// ready TTL.
func (c *Cluster) Await(r *registry.Resource, what string) {
	r.Pending = fmt.Sprintf("waits for Cluster %q's %s", c.Ref, what)
	r.OnOtherXR = true
}

// Find asks Crossplane for the Cluster that x names and for the Cluster's
// composed resources its cloud reads, and returns what was delivered. It
// reports false until the Cluster itself is there. Every requirement is
// returned on every call, the reads' too (their selectors need only x and
// ref): Crossplane fetches them all before its second call and stops there,
// where asking for the reads only once the Cluster came would cost a third
// call on every reconcile.
func (r *Reader) Find(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, x *xr.Composite, ref string) (*Cluster, bool) {
	sel, labels := selector(x, ref)
	module.Require(rsp, r.Requirement, sel)
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
		module.Require(rsp, name, rsel)
		if got := req.GetRequiredResources()[name].GetItems(); len(got) > 0 {
			observed[rd.Resource] = got[0].GetResource()
		}
	}
	items := req.GetRequiredResources()[r.Requirement].GetItems()
	if len(items) == 0 {
		return nil, false
	}
	cx, _ := xr.Decode(items[0].GetResource())
	return &Cluster{Ref: ref, XR: cx, Labels: labels, CloudName: cx.CloudName, Location: Region(x.Cloud, location(cx)), Observed: observed}, true
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

// AwaitLocation says why an XR that needs the Cluster's location waits for
// it, or returns "" once it is known. A Cluster that names no location
// runs in its environment's, which it reports in status.location once the
// function rendered it; until then its dependents compose nothing that
// needs it (engine.Call.Wait), rather than an empty region.
func (c *Cluster) AwaitLocation() string {
	if c.Location != "" {
		return ""
	}
	return fmt.Sprintf("Cluster %q names no location in spec.parameters.location and has not reported the one its environment gives it in status.location yet (the Cluster's own conditions say whether it renders)", c.Ref)
}

// LocationRequired is the error of an XR that needs the Cluster's location
// where it is unknown (see AwaitLocation): it names clusterRef and the
// Cluster's fields that would give it.
func (c *Cluster) LocationRequired() *field.Error {
	return field.Invalid(xr.ParametersPath("clusterRef", "name"), c.Ref, fmt.Sprintf("Cluster %q has no location: it names none in spec.parameters.location and reports none in status.location; set the Cluster's spec.parameters.location or its environment's location", c.Ref))
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

// Check refuses a Cluster on another cloud or in another project, account
// or subscription than x, whose kind is what (say, "Database") and which
// needs the Cluster's own: why is completed by "of its own cloud", as in
// "a database joins a network".
func (c *Cluster) Check(x *xr.Composite, what, why string) field.ErrorList {
	p := xr.ParametersPath("clusterRef", "name")
	var errs field.ErrorList
	if c.XR.Cloud != x.Cloud {
		errs = append(errs, field.Invalid(p, c.Ref, fmt.Sprintf("Cluster %q runs on cloud %q, this %s on %q: %s of its own cloud", c.Ref, c.XR.Cloud, what, x.Cloud, why)))
	}
	if c.XR.PlaneID != x.PlaneID {
		errs = append(errs, field.Invalid(p, c.Ref, fmt.Sprintf("Cluster %q is in %q (planeId), this %s in %q: %s of its own project, account or subscription", c.Ref, c.XR.PlaneID, what, x.PlaneID, why)))
	}
	return errs
}

// Selector selects one of the Cluster's composed resources by its
// composition-resource name, as a cross-resource reference of a managed
// resource: by labels, not by controller (the XR does not control the
// Cluster's resources).
func (c *Cluster) Selector(resource string) map[string]any {
	return c.Match(map[string]string{registry.LabelResource: resource})
}

// Use is one of the Cluster's composed resources, read through Reads, as
// what a resource of the XR needs (registry.Use): named cluster-<resource>,
// selected by its labels, as far as it was delivered.
func (c *Cluster) Use(resource string, k *registry.Kind) registry.Use {
	return registry.Use{Name: "cluster-" + resource, Kind: k, Selector: c.Selector(resource), Observed: c.Observed[resource]}
}

// Match selects the Cluster's composed resources that carry the supplied
// labels too, such as its private subnets.
func (c *Cluster) Match(labels map[string]string) map[string]any {
	ml := make(map[string]any, len(c.Labels)+len(labels))
	for k, v := range c.Labels {
		ml[k] = v
	}
	for k, v := range labels {
		ml[k] = v
	}
	return map[string]any{"matchLabels": ml}
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
