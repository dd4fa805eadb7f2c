package envcfg

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/names"
)

// sectionKey identifies a decoded section: its type and its path.
type sectionKey struct {
	t    reflect.Type
	path string
}

// Section returns the environment's data at path decoded into a T, a struct
// whose fields carry json tags (see Decode). It decodes once per Env, which
// is once per call: every later Section of the same type and path returns
// the same *T. Callers must not modify it.
//
// Every module and cloud reads its keys this way, each through one typed
// struct of its own: Shared for the keys every module reads, a module's
// Settings for its keys, a cloud's settings for the keys under its name.
func Section[T any](e *Env, path ...string) *T {
	k := sectionKey{t: reflect.TypeFor[T](), path: strings.Join(path, ".")}
	if v, ok := e.sections[k]; ok {
		return v.(*T)
	}
	v := new(T)
	e.Decode(v, path...)
	if e.sections == nil {
		e.sections = map[sectionKey]any{}
	}
	e.sections[k] = v
	return v
}

// Shared are the environment keys every module and cloud reads.
type Shared struct {
	// ConnectionSecretNamespace is where cluster-scoped XRs write their
	// connection secrets.
	ConnectionSecretNamespace string `json:"connectionSecretNamespace"`
	// ProviderConfigs are the provider configs managed resources use, by
	// provider family.
	ProviderConfigs map[string]ProviderConfig `json:"providerConfigs"`
	// Overrides are the platform team's overlays, by composition-resource
	// name.
	Overrides map[string]map[string]any `json:"overrides"`
	// Tenancy assigns hosts and chosen cloud names to namespaces, and says
	// which namespaces keep bare cloud names (docs/safety.md).
	Tenancy names.Tenancy `json:"tenancy"`
	// Prices are the prices every estimate shares.
	Prices struct {
		// HoursPerMonth is the hours a monthly estimate counts.
		HoursPerMonth *float64 `json:"hoursPerMonth"`
	} `json:"prices"`
}

// A ProviderConfig is the provider config of one provider family.
type ProviderConfig struct {
	// Name is the provider config's name. Default: default.
	Name string `json:"name"`
	// Kind is its kind, for namespaced XRs: ProviderConfig or
	// ClusterProviderConfig. Default: ClusterProviderConfig.
	Kind string `json:"kind"`
}

// DefaultHoursPerMonth is the hours in the average month.
const DefaultHoursPerMonth = 730

// Shared returns the environment's shared keys, decoded once per Env.
func (e *Env) Shared() *Shared { return Section[Shared](e) }

// HoursPerMonth is prices.hoursPerMonth, by default DefaultHoursPerMonth.
func (s *Shared) HoursPerMonth() float64 {
	return Or(s.Prices.HoursPerMonth, DefaultHoursPerMonth)
}

// Or is the value of an optional key, or def when the key is absent.
func Or[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// A Known is a settings struct and the path of the object it decodes.
type Known struct {
	Path []string
	// Type is a value of the struct.
	Type any
}

// Unknown returns the keys of data that none of the known settings reads,
// as environment field paths, sorted: typos, keys of another version, keys
// of no module. A key is known when a struct at its path has a field with
// its json name; every key of a map field is known, and an object decoded
// as any is not looked into.
func Unknown(data map[string]any, known ...Known) []string {
	root := &keyNode{}
	for _, k := range known {
		n := root
		for _, p := range k.Path {
			n = n.child(p)
		}
		n.types = append(n.types, reflect.TypeOf(k.Type))
	}
	var out []string
	root.walk(data, field.NewPath("environment"), &out)
	return out
}

// keyNode is what the environment may hold at one path: the types decoded
// there and the sections below it.
type keyNode struct {
	types    []reflect.Type
	children map[string]*keyNode
}

func (n *keyNode) child(key string) *keyNode {
	if n.children == nil {
		n.children = map[string]*keyNode{}
	}
	c, ok := n.children[key]
	if !ok {
		c = &keyNode{}
		n.children[key] = c
	}
	return c
}

func (n *keyNode) walk(v any, p *field.Path, out *[]string) {
	types := make([]reflect.Type, 0, len(n.types))
	for _, t := range n.types {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Interface || t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Interface {
			return // decoded as it is
		}
		types = append(types, t)
	}
	switch val := v.(type) {
	case []any:
		elems := &keyNode{}
		for _, t := range types {
			if t.Kind() == reflect.Slice {
				elems.types = append(elems.types, t.Elem())
			}
		}
		for i, e := range val {
			elems.walk(e, p.Index(i), out)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(val)) {
			sub := &keyNode{}
			known := false
			if c := n.children[k]; c != nil {
				sub.types, sub.children, known = slices.Clone(c.types), c.children, true
			}
			for _, t := range types {
				switch t.Kind() {
				case reflect.Struct:
					if f, ok := fieldByTag(t, k); ok {
						sub.types, known = append(sub.types, f.Type), true
					}
				case reflect.Map:
					sub.types, known = append(sub.types, t.Elem()), true
				}
			}
			if !known {
				*out = append(*out, p.Child(k).String())
				continue
			}
			sub.walk(val[k], p.Child(k), out)
		}
	}
}

// fieldByTag is the field of a struct whose json name is key.
func fieldByTag(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			// An embedded struct's keys are the outer object's.
			if sf, ok := fieldByTag(f.Type, key); ok {
				return sf, true
			}
			continue
		}
		if name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
