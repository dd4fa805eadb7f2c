package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/names"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// TenancyOf is the environment's tenancy of names (key tenancy), decoded
// once per Env.
func TenancyOf(env *envcfg.Env) *names.Tenancy { return &env.Shared().Tenancy }

// cloudName is the name an XR's cloud names derive from. An XR of a
// tenant's namespace derives them from its namespace and name
// (names.Tenant), unless the platform team gave the namespace bare names,
// the XR's owner chose one (a Cluster's clusterName label, checked as a
// chosen name), or the XR already runs with another: what runs keeps the
// name it runs with, so that no new rule renames, and so re-creates, a
// bucket, a zone or a cluster. The composed resources of a derived name
// carry it (registry.LabelCloudName); those composed before names had
// tenants carry none, and keep the bare name.
func cloudName(x *xr.Composite, t *names.Tenancy, cloud *registry.Cloud, observed map[string]*structpb.Struct) string {
	ns := x.Tenant()
	if ns == "" || x.Chosen || !validBare(x.BareName) {
		return x.BareName
	}
	derived := names.Tenant(ns, x.BareName, names.MaxBase)
	for _, name := range slices.Sorted(maps.Keys(observed)) {
		o := observed[name]
		if object.Label(o, registry.LabelCloud) == "" || !managed(cloud, o) {
			// Not composed by this function, or not a cloud resource.
			continue
		}
		switch object.Label(o, registry.LabelCloudName) {
		case derived:
			return derived
		case "":
			// Composed before names had tenants, for this XR: Crossplane
			// labels what it composes with the XR's name, which a tenant
			// cannot set on a managed resource. A resource of another
			// XR (one orphaned by a deleted XR, named in a hand-written
			// resourceRef) is no evidence.
			if object.Label(o, labelComposite) == x.Name {
				return x.BareName
			}
		}
	}
	if t.Of(ns).BareNames {
		return x.BareName
	}
	return derived
}

// labelComposite is the label Crossplane puts on every resource it
// composes: the name of the XR that composes it.
const labelComposite = "crossplane.io/composite"

// checkBareName refuses, in a namespace of bare names, a name that has the
// form of another namespace's derived one: its cloud names would be that
// tenant's.
func (c *Call) checkBareName() {
	x := c.XR
	if x.CloudName != x.BareName || x.Chosen || x.Tenant() == "" || !names.LooksDerived(x.BareName) {
		return
	}
	if c := x.Labels[labelComposite]; c != "" && c != x.Name {
		// A nested XR, named by Crossplane (<name>-<five random
		// characters>), not by anyone who could choose it.
		return
	}
	p := field.NewPath("metadata", "name")
	if x.Labels[xr.LabelClaimName] != "" {
		p = xr.LabelPath(xr.LabelClaimName)
	}
	for _, o := range c.Observed {
		if object.Label(o, labelComposite) == x.Name {
			// What runs keeps its name.
			return
		}
	}
	c.Errs = append(c.Errs, field.Invalid(p, x.BareName, fmt.Sprintf("ends like the cloud names other namespaces' XRs derive (<name>-<digit and four letters or digits>), and the XRs of namespace %q keep their bare names: choose another name", x.Tenant())))
}

// validBare reports whether a bare name is one a tenant name derives from;
// the module's validation names the field of one that is not.
func validBare(n string) bool {
	return len(n) > 0 && n[0] >= 'a' && n[0] <= 'z' && !strings.HasSuffix(n, "-")
}

// managed reports whether an observed composed resource is of a managed
// kind the cloud composes.
func managed(cloud *registry.Cloud, o *structpb.Struct) bool {
	k, ok := cloud.KindOf(object.String(o, "apiVersion"), object.String(o, "kind"))
	return ok && k.Managed()
}

// Tenancy is the environment's tenancy of names.
func (c *Call) Tenancy() *names.Tenancy { return TenancyOf(c.Env) }

// CheckHost refuses a host (a DNS name the XR publishes or serves: an
// Ingress's or a front end's host, a Cluster's domain) that the platform
// team did not assign to the XR's namespace, naming path, unless one of
// the XR's own composed resources already runs with it. A cluster-scoped
// XR of no claim is the platform team's own and may use any.
func (c *Call) CheckHost(path *field.Path, host string) *field.Error {
	if len(validation.IsDNS1123Subdomain(strings.TrimSuffix(host, "."))) > 0 {
		// Not a host: the module's validation names the field.
		return nil
	}
	return c.check(path, "host", host, "hosts", c.Tenancy().Host)
}

// CheckName refuses a cloud name the XR's owner chose (a bucket's name, an
// existing resource to import, a Cluster's clusterName label) that is
// neither derived from the XR's own cloud name nor assigned to its
// namespace, as CheckHost does for hosts. what names the kind of name
// ("bucket").
func (c *Call) CheckName(path *field.Path, what, name string) *field.Error {
	x := c.XR
	if x.CloudName != x.BareName && (name == x.CloudName || strings.HasPrefix(name, x.CloudName+"-")) {
		// A name begun with the XR's derived name: its own. (A bare
		// name's prefix is no one's in particular.)
		return nil
	}
	return c.check(path, what, name, "names", c.Tenancy().Name)
}

// check is CheckHost and CheckName.
func (c *Call) check(path *field.Path, what, v, key string, rule func(ns, v string) names.Refusal) *field.Error {
	ns := c.XR.Tenant()
	if ns == "" || v == "" {
		return nil
	}
	r := rule(ns, v)
	if r == names.Assigned || c.runs(v, key == "hosts") {
		return nil
	}
	return field.Forbidden(path, r.Why(fmt.Sprintf("%s %q", what, v), ns, key))
}

// runs reports whether one of the XR's composed resources already runs
// with a name or a host as its external name, or with a host in a field
// that serves or publishes one (those its kind guards as hosts or
// records). The XR's author can set neither, nor any value there but the
// hosts and names they were checked for (an import's names are chosen
// names), so what ran before names had tenants keeps running, and nothing
// else does.
func (c *Call) runs(v string, host bool) bool {
	for _, name := range slices.Sorted(maps.Keys(c.Observed)) {
		o := c.Observed[name]
		if object.Label(o, registry.LabelCloud) == "" {
			continue
		}
		if object.Annotation(o, registry.AnnotationExternalName) == v {
			// An Azure zone's name is its external name.
			return true
		}
		if !host {
			continue
		}
		k, ok := c.Cloud.KindOf(object.String(o, "apiVersion"), object.String(o, "kind"))
		if !ok {
			continue
		}
		for _, g := range k.Guarded {
			if (g.Why == registry.WhyHost || g.Why == registry.WhyRecord) && holds(object.Get(o, strings.Split(g.Path, ".")...), v) {
				return true
			}
		}
	}
	return false
}

// holds reports whether a value is, or holds anywhere within it, the
// string v, or v as a fully qualified DNS name.
func holds(val *structpb.Value, v string) bool {
	switch k := val.GetKind().(type) {
	case *structpb.Value_StringValue:
		return k.StringValue == v || k.StringValue == v+"."
	case *structpb.Value_ListValue:
		for _, e := range k.ListValue.GetValues() {
			if holds(e, v) {
				return true
			}
		}
	case *structpb.Value_StructValue:
		for _, e := range k.StructValue.GetFields() {
			if holds(e, v) {
				return true
			}
		}
	}
	return false
}
