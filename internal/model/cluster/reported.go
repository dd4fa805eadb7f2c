package cluster

import (
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Reported is what a Cluster XR reported to another XR that names it in
// spec.parameters.clusterRef (a Database joins its network, an
// AppEnvironment runs on it): the Cluster and those of its composed
// resources the other XR's clouds read, as delivered (package clusterref
// asks for them and waits for them).
type Reported struct {
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
	// clusterref.Reader.Reads), by composition-resource name, as far as
	// they were delivered.
	Observed map[string]*structpb.Struct
}

// AwaitLocation says why an XR that needs the Cluster's location waits for
// it, or returns "" once it is known. A Cluster that names no location
// runs in its environment's, which it reports in status.location once the
// function rendered it; until then its dependents compose nothing that
// needs it (engine.Call.Wait), rather than an empty region.
func (c *Reported) AwaitLocation() string {
	if c.Location != "" {
		return ""
	}
	return fmt.Sprintf("Cluster %q names no location in spec.parameters.location and has not reported the one its environment gives it in status.location yet (the Cluster's own conditions say whether it renders)", c.Ref)
}

// LocationRequired is the error of an XR that needs the Cluster's location
// where it is unknown (see AwaitLocation): it names clusterRef and the
// Cluster's fields that would give it.
func (c *Reported) LocationRequired() *field.Error {
	return field.Invalid(xr.ParametersPath("clusterRef", "name"), c.Ref, fmt.Sprintf("Cluster %q has no location: it names none in spec.parameters.location and reports none in status.location; set the Cluster's spec.parameters.location or its environment's location", c.Ref))
}

// Check refuses a Cluster on another cloud or in another project, account
// or subscription than x, whose kind is what (say, "Database") and which
// needs the Cluster's own: why is completed by "of its own cloud", as in
// "a database joins a network".
func (c *Reported) Check(x *xr.Composite, what, why string) field.ErrorList {
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

// Match selects the Cluster's composed resources that carry the supplied
// labels too, such as its private subnets.
func (c *Reported) Match(labels map[string]string) map[string]any {
	ml := make(map[string]any, len(c.Labels)+len(labels))
	for k, v := range c.Labels {
		ml[k] = v
	}
	for k, v := range labels {
		ml[k] = v
	}
	return map[string]any{"matchLabels": ml}
}
