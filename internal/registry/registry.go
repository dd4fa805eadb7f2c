// Package registry is the three-layer resource registry.
//
// Layer 1, the agnostic layer, is the models (internal/model/<kind>):
// Components such as "a node pool of 3..10 medium nodes", under the
// contract of package component. Layer 2 is a cloud: a package under
// internal/clouds that registers, under its cloud label, one implementation
// per Component kind, each turning a Component into concrete composed
// Resources. The registry knows the contract only, never a model: what a
// cloud needs of a model, the component carries. Layer 3 is the overlays: partial manifests from the environment
// and the XR deep-merged on top, keyed by composition-resource name.
//
// The registry owns everything around the cloud implementations: the exact
// apiVersion per XR scope, labels and annotations, external names, provider
// config references, import management policies, the overlays, and a
// Usage for each dependency edge whose deletion order matters (UsageRules).
package registry

import (
	"fmt"
	"sort"
	"sync"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// An Implementation turns one Component into concrete composed Resources.
type Implementation func(ctx *Context, c component.Component) ([]*Resource, error)

// A Cloud is one cloud layer: implementations of every Component kind,
// registered under the cloud label.
type Cloud struct {
	// Name is the cloud label, e.g. "gcp".
	Name string
	// Settings is a value of the struct the cloud's environment keys,
	// under data.<Name>, decode into (with envcfg.Section): the keys it
	// reads, which TestEnvironmentKeys checks the example environment
	// against.
	Settings any
	// Kinds are every kind the cloud composes, listed in one place:
	// TestReplacements fails for a rendered kind that is not listed, or
	// whose table of replacement-only fields was never declared.
	Kinds []*ResourceKind
	// Versions are how the cloud's cluster and pool resources ask for and
	// report Kubernetes versions.
	Versions Versions
	// EgressInUse says, from the observed composed resources, what still
	// reaches the internet through the egress (NAT) of a private cluster
	// that is being made public: "" when nothing does. Until nothing does,
	// the cluster module keeps composing the egress, so that nodes that
	// still run private never lose it. Nil for a cloud that refuses the
	// change instead.
	EgressInUse func(observed map[string]*structpb.Struct) string

	impls  map[component.Kind]Implementation
	checks map[component.Kind]func(ctx *Context, c component.Component) field.ErrorList
}

// Implement registers fn as the cloud's implementation of the Component kind
// T. Registering a kind twice panics: it is a programming error.
func Implement[T component.Component](c *Cloud, fn func(ctx *Context, comp T) ([]*Resource, error)) {
	var zero T
	k := zero.Kind()
	if c.impls == nil {
		c.impls = map[component.Kind]Implementation{}
	}
	if _, dup := c.impls[k]; dup {
		panic(fmt.Sprintf("cloud %q implements %s twice", c.Name, k))
	}
	c.impls[k] = func(ctx *Context, comp component.Component) ([]*Resource, error) {
		t, ok := comp.(T)
		if !ok {
			return nil, fmt.Errorf("component %s is a %T, not a %T", comp.ID(), comp, zero)
		}
		return fn(ctx, t)
	}
}

// Check registers fn as the cloud's rules for the Component kind T: before
// anything is rendered, every component of that kind is checked, and every
// error is reported at once, each naming its field path. Registering a kind
// twice panics.
func Check[T component.Component](c *Cloud, fn func(ctx *Context, comp T) field.ErrorList) {
	var zero T
	k := zero.Kind()
	if c.checks == nil {
		c.checks = map[component.Kind]func(ctx *Context, c component.Component) field.ErrorList{}
	}
	if _, dup := c.checks[k]; dup {
		panic(fmt.Sprintf("cloud %q checks %s twice", c.Name, k))
	}
	c.checks[k] = func(ctx *Context, comp component.Component) field.ErrorList {
		t, ok := comp.(T)
		if !ok {
			return field.ErrorList{field.InternalError(nil, fmt.Errorf("component %s is a %T, not a %T", comp.ID(), comp, zero))}
		}
		return fn(ctx, t)
	}
}

// CheckAll runs the cloud's rules (see Check) for every component, and
// returns every error at once, each naming its field path.
func (c *Cloud) CheckAll(ctx *Context, comps []component.Component) field.ErrorList {
	var errs field.ErrorList
	for _, comp := range comps {
		if check, ok := c.checks[comp.Kind()]; ok {
			errs = append(errs, check(ctx, comp)...)
		}
	}
	return errs
}

// KindOf returns the listed kind the cloud composes at the apiVersion and
// kind of a rendered object, either scope.
func (c *Cloud) KindOf(apiVersion, kind string) (*ResourceKind, bool) {
	for _, k := range c.Kinds {
		if (apiVersion == k.Namespaced && kind == k.Kind) || (apiVersion == k.Cluster && kind == k.Name(xr.ClusterScoped)) {
			return k, true
		}
	}
	return nil, false
}

// Implements reports whether the cloud implements the Component kind.
func (c *Cloud) Implements(k component.Kind) bool {
	_, ok := c.impls[k]
	return ok
}

var (
	mu     sync.RWMutex
	clouds = map[string]*Cloud{}
)

// Register adds a cloud to the registry. Cloud packages call it from init.
// Registering a cloud twice panics.
func Register(c *Cloud) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := clouds[c.Name]; dup {
		panic(fmt.Sprintf("cloud %q registered twice", c.Name))
	}
	clouds[c.Name] = c
}

// Lookup returns the cloud registered under the supplied label.
func Lookup(name string) (*Cloud, bool) {
	mu.RLock()
	defer mu.RUnlock()
	c, ok := clouds[name]
	return c, ok
}

// Clouds returns the registered cloud labels, sorted.
func Clouds() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(clouds))
	for n := range clouds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
