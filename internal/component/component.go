// Package component is the contract between a model and the clouds: what
// one XR kind's model (internal/model/...) asks for, as Components, and
// what the registry and the engine need to know of them to render, rotate
// and remove them. It holds no model of its own: each XR kind's Components
// live in that kind's model package, and a cloud (internal/clouds/...)
// registers one implementation per Kind.
package component

import "fmt"

// Kind names a kind of Component. Each cloud registers one implementation
// per Kind.
type Kind string

// A Component is one thing an XR wants, such as "a network with these
// CIDRs" or "a node pool of 3..10 medium nodes".
type Component interface {
	// Kind selects the cloud implementation.
	Kind() Kind
	// ID identifies the component within the XR, e.g. "pool/default". It
	// is recorded on every composed resource the component produces.
	ID() string
	// Condition is the XR condition the component reports into.
	Condition() string
}

// A Rotatable component is replaced, not edited, when a field its provider
// can change only by replacing the cloud resource changes: the registry
// renders a new generation beside the old one, and removes the old one
// once the new one is ready (a node pool).
type Rotatable interface {
	Component
	// Gen is the component's generation: empty for the first.
	Gen() string
	// Rotated is the component as generation gen, holding at least keep
	// nodes while an older generation still runs.
	Rotated(gen string, keep int64) Component
	// AtOnce is how many components of the XR may rotate at a time.
	AtOnce() int
}

// Removal is what a model says of a composed resource that exists but is
// no longer rendered.
type Removal struct {
	// BySpec is set when the XR's own spec removed it: only then may it be
	// deleted.
	BySpec bool
	// Why says what removed it, or, when the spec did not, what no longer
	// renders it.
	Why string
	// Confirm says how the XR's owner removes it through the spec, when
	// there is a way besides spec.parameters.confirmRemovals.
	Confirm string
	// InUse is set when the spec removed it, but a Usage of another XR
	// still protects it (or what it goes with): it is held until nothing
	// does, since its deletion would only be refused meanwhile.
	InUse bool
}

// A Remover is a model's plan of one XR, which says why a component no
// longer renders a resource and whether the XR's spec removed it.
type Remover interface {
	Removal(componentID string) Removal
}

// ByCloud holds a fact about each cloud that a model needs, such as the
// Cluster's traits of a cloud or how a cloud's database servers upgrade,
// by cloud label. A cloud registers its own from init.
type ByCloud[T any] map[string]T

// Register registers a cloud's fact. Registering one twice panics: it is a
// programming error.
func (b ByCloud[T]) Register(cloud string, v T) {
	if _, dup := b[cloud]; dup {
		panic(fmt.Sprintf("cloud %q registers its %T twice", cloud, v))
	}
	b[cloud] = v
}
