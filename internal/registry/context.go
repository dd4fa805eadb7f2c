package registry

import (
	"cmp"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/names"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Labels and annotations the registry puts on composed resources.
const (
	// LabelResource carries the composition-resource name, so that
	// selectors (matchControllerRef + this label) find a sibling resource
	// without knowing its generated Kubernetes name.
	LabelResource = "platform.example.org/resource"
	// LabelCloud records the cloud that composed the resource; the cloud
	// of an XR cannot change once it has composed resources.
	LabelCloud = "platform.example.org/cloud"
	// LabelCloudName records the name a tenant's XR derived its cloud
	// names from (names.Tenant), so that the XR keeps it whatever the
	// tenancy of names says later; absent where the XR's names are bare
	// (its name alone), as on everything composed before names had
	// tenants.
	LabelCloudName = "platform.example.org/cloud-name"
	// AnnotationComponent records the agnostic component that produced the
	// resource, which decides whether a spec change removed it.
	AnnotationComponent = "platform.example.org/component"
	// AnnotationImportMode records that the resource was imported, and how.
	AnnotationImportMode = "platform.example.org/import-mode"
	// AnnotationExternalName is Crossplane's external name annotation.
	AnnotationExternalName = "crossplane.io/external-name"
	// AnnotationGeneration records the generation of a rotated
	// component's resource (see component.Rotatable); absent on a first
	// generation.
	AnnotationGeneration = "platform.example.org/generation"
)

// DefaultConnectionSecretNamespace is where cluster-scoped XRs write
// connection secrets unless the environment says otherwise.
const DefaultConnectionSecretNamespace = "crossplane-system" //nolint:gosec // a namespace, not a credential

// Context is what a cloud implementation may read while rendering.
type Context struct {
	XR    *xr.Composite
	Env   *envcfg.Env
	Cloud *Cloud

	observed map[string]*structpb.Struct
	warnings []string
	// current are the rotatable components that run as another generation
	// than they were planned as, by ID (see Current).
	current map[string]component.Component
}

// NewContext returns a render context. observed maps composition-resource
// names to observed composed resources.
func NewContext(x *xr.Composite, env *envcfg.Env, c *Cloud, observed map[string]*structpb.Struct) *Context {
	return &Context{XR: x, Env: env, Cloud: c, observed: observed}
}

// Current is comp as it is rendered: a rotatable component (a node pool)
// as the generation it runs as, which names its resources, for the
// resources of other components that depend on them.
func Current[T component.Component](ctx *Context, comp T) T {
	if c, ok := ctx.current[comp.ID()].(T); ok {
		return c
	}
	return comp
}

// Join joins name parts derived from the XR's cloud name with '-' and
// shortens the result to max, as names.JoinFor does for the XR's kind of
// cloud name (a tenant's derived one, or a bare one).
func (c *Context) Join(max int, parts ...string) string {
	return names.JoinFor(c.XR.CloudName != c.XR.BareName, max, parts...)
}

// Namespaced reports whether the XR is namespaced (Crossplane v2 style).
func (c *Context) Namespaced() bool { return c.XR.Scope == xr.Namespaced }

// Observed returns the observed composed resource of the supplied name, or
// nil.
func (c *Context) Observed(name string) *structpb.Struct { return c.observed[name] }

// Generations are the names of the observed composed resources of a
// component, sorted: a node pool's generations, or what a Database's
// instance component composed (see Generations).
func (c *Context) Generations(component string) []string { return Generations(c.observed, component) }

// Warn records a warning for the XR.
func (c *Context) Warn(format string, a ...any) {
	c.warnings = append(c.warnings, fmt.Sprintf(format, a...))
}

// Warnings returns the warnings recorded so far.
func (c *Context) Warnings() []string { return c.warnings }

// Selector selects the sibling composed resource of the supplied
// composition-resource name: one controlled by the same XR and labelled with
// that name.
func (c *Context) Selector(name string) object.Object {
	return object.Object{
		"matchControllerRef": true,
		"matchLabels":        map[string]any{LabelResource: name},
	}
}

// SecretNamespace is the namespace connection secrets are written to: the
// XR's own for namespaced XRs; environment key connectionSecretNamespace
// (default crossplane-system) for cluster-scoped ones.
func (c *Context) SecretNamespace() string { return SecretNamespace(c.XR, c.Env) }

// SecretNamespace is the namespace an XR's connection secrets are written
// to: its own for a namespaced XR; environment key
// connectionSecretNamespace (default crossplane-system) for a
// cluster-scoped one.
func SecretNamespace(x *xr.Composite, env *envcfg.Env) string {
	if x.Scope == xr.Namespaced {
		return x.Namespace
	}
	return cmp.Or(env.Shared().ConnectionSecretNamespace, DefaultConnectionSecretNamespace)
}

// KubeconfigKey is the key of the kubeconfig in the connection secret of a
// Cluster's managed cluster, and in the connection details of a legacy
// Cluster XR.
const KubeconfigKey = "kubeconfig"

// KubeconfigSecretName is the name of the connection secret that holds the
// kubeconfig of a Cluster XR's managed cluster, in the XR's secret
// namespace (SecretNamespace).
func KubeconfigSecretName(x *xr.Composite) string { return x.Name + "-kubeconfig" }

// ConnectionSecretRef is a writeConnectionSecretToRef for the scope: a name
// for namespaced managed resources, a name and namespace for legacy ones.
func (c *Context) ConnectionSecretRef(name string) object.Object {
	if c.Namespaced() {
		return object.Object{"name": name}
	}
	return object.Object{"name": name, "namespace": c.SecretNamespace()}
}

// ProviderConfigRef is the reference to the provider config of a provider
// family, from environment key providerConfigs.<family>.{name,kind}. Names
// default to "default"; namespaced managed resources reference a
// ClusterProviderConfig unless kind says otherwise.
func (c *Context) ProviderConfigRef(family string) object.Object {
	pc := c.Env.Shared().ProviderConfigs[family]
	name := cmp.Or(pc.Name, "default")
	if !c.Namespaced() {
		return object.Object{"name": name}
	}
	return object.Object{"name": name, "kind": cmp.Or(pc.Kind, "ClusterProviderConfig")}
}

// LocalProviderConfigRef references a provider config the XR composes
// itself, which lives beside the resource.
func (c *Context) LocalProviderConfigRef(name string) object.Object {
	if !c.Namespaced() {
		return object.Object{"name": name}
	}
	return object.Object{"name": name, "kind": "ProviderConfig"}
}

// A Resource is one concrete composed resource rendered by a cloud
// implementation.
type Resource struct {
	// Name is the composition-resource name: stable, documented API.
	Name string
	// Kind is the resource's kind and apiVersions.
	Kind *ResourceKind
	// Body holds everything but apiVersion and kind, usually just spec,
	// sometimes metadata labels or annotations.
	Body object.Object
	// ExternalName, when set, becomes crossplane.io/external-name: the
	// name of the resource in the cloud.
	ExternalName string
	// DependsOn names the resources this one needs. A resource is composed
	// only once its dependencies are observed ready; an edge whose
	// deletion order matters (UsageRules) also gets a Usage, so that the
	// dependent is deleted first.
	DependsOn []string
	// Uses are resources of other XRs this one needs, such as the private
	// services connection of the Cluster a Database joins: like
	// DependsOn, but across XRs (see Use).
	Uses []Use
	// Pending, when set, says why the resource cannot be rendered yet (it
	// needs a value only an observed resource will have). Body is ignored.
	Pending string
	// OnOtherXR marks a Pending that waits for a resource of another XR
	// (the Cluster a Database joins) to report the value. Crossplane v2.3
	// does not re-run this XR when that resource changes (v2.4 does: the
	// resource is a requirement, which it watches), so until it does the
	// XR answers with the converging TTL. Clouds set it with Pending
	// through clusterref's Cluster.Await.
	OnOtherXR bool
	// Outputs, when set, reads XR status fields from the observed resource
	// and its connection details.
	Outputs OutputsFunc
	// Retire, when set, removes the observed resource of this name, for
	// the reason it says: what a walk left behind once the cloud moved
	// past it (an old parameter group after a major upgrade). Nothing
	// else of the Resource is read but its Name and Kind.
	Retire string
	// Orphan leaves the cloud resource when the composed resource is
	// deleted: the management policies without Delete for namespaced
	// managed resources (Crossplane v2 has no deletionPolicy there), the
	// Orphan deletion policy for cluster-scoped ones.
	Orphan bool
}

// A Use is a resource of another XR that a composed resource needs, such
// as the private services connection of the Cluster a Database joins. The
// resource is composed only once what it uses is observed ready; when
// their order of deletion matters (UsageRules), a Usage selects what it
// uses by its labels (a Usage's of may name any resource, where a
// selector with matchControllerRef would find only the XR's own), so that
// the other XR's deletion of it waits until this resource is gone; should
// that XR's spec remove it meanwhile, its engine holds it (LabelInUse).
type Use struct {
	// Name names it among this XR's resources, in messages and in the
	// Usage's name (UsageName): it must not be one of theirs.
	Name string
	Kind *ResourceKind
	// Selector selects it by its labels alone, in the XR's namespace (or
	// cluster-wide for a cluster-scoped XR).
	Selector map[string]any
	// Observed is the resource as last delivered to the function (a
	// required resource); nil until it is.
	Observed *structpb.Struct
}

// OutputsFunc reads XR status fields from an observed composed resource and
// its connection details.
type OutputsFunc func(observed *structpb.Struct, conn map[string][]byte, o *Outputs)

// Outputs are the XR status fields read from observed composed resources,
// for every module.
type Outputs struct {
	// A Cluster's.
	ClusterEndpoint string
	ClusterCA       string
	OIDCIssuer      string
	DNSNameServers  []string
	// Kubeconfig is the cluster's kubeconfig, read from the connection
	// details of the resource that writes it. It is only ever returned as
	// the XR's connection details, never as status.
	Kubeconfig []byte

	// A Database's: where clients connect, and the engine version the
	// cloud runs.
	Host          string
	Port          int64
	EngineVersion string

	// An AppEnvironment's: where its bucket is, and the CDN's own host
	// name in front of its front end.
	BucketURL   string
	CDNEndpoint string
}
