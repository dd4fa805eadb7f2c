package registry

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Rotation is a node pool's blue/green replacement: a new generation beside
// the old ones, which are removed once it is ready.
type Rotation struct {
	// From are the older generations' resources, which still run.
	From []string
	// Changes are the fields that can change only by replacement.
	Changes []lifecycle.Change
	// Waiting says what the rotation waits for.
	Waiting string
	// Held is set when the rotation has not started: the pool waits for
	// its turn, and its resource is kept as it is.
	Held bool
}

// genLen is the length of a generation's suffix.
const genLen = 4

// rotate carries out, for each rotatable component (a node pool), a change
// its provider can make only by replacing the cloud resource: a Cluster
// API-style rotation. The pool's rendered resource is compared with every
// observed generation of the pool (the resources its component composed,
// by kind). A generation the render changes in place stays the current one;
// when none can, a new generation is rendered beside them, named
// <name>-<hash of the replacement-only values>, holding at least the nodes
// the old ones run. The old generations are kept exactly as they are until
// the current one is observed ready, then retired: the cloud drains their
// nodes as it deletes them. At most lifecycle.parallelPools pools rotate at
// a time; a pool waiting for its turn is kept as it is. An imported pool is
// never replaced: its change is refused.
func (c *Cloud) rotate(ctx *Context, comps []component.Component, out []*Rendered, byName map[string]*Rendered) ([]*Rendered, error) {
	type pool struct {
		comp component.Rotatable
		rd   *Rendered
		gens []string
	}
	var pools []pool
	busy := 0
	for _, comp := range comps {
		rc, ok := comp.(component.Rotatable)
		if !ok {
			continue
		}
		var rd *Rendered
		for _, r := range out {
			if r.Component == comp.ID() && r.Object != nil && r.Kind.Rotates() {
				rd = r
				break
			}
		}
		if rd == nil {
			continue
		}
		gens := Generations(ctx.observed, comp.ID())
		if len(gens) == 0 {
			continue
		}
		if len(gens) > 1 {
			busy++
		}
		pools = append(pools, pool{comp: rc, rd: rd, gens: gens})
	}
	if len(pools) == 0 {
		return out, nil
	}
	parallel := pools[0].comp.AtOnce()

	rename := map[string]string{}
	for _, p := range pools {
		kind := p.rd.Kind
		verdicts := make(map[string]lifecycle.Verdict, len(p.gens))
		current := ""
		for _, g := range p.gens {
			verdicts[g] = lifecycle.CompareOverlaid(kind.Replacements, p.rd.Object, ctx.Observed(g), p.rd.overlaid)
		}
		// The generation the render keeps: one it changes in place, one
		// whose provider carried out what it asks first (an older pool an
		// earlier render edited in place, stuck ever since, is never
		// preferred to its replacement, whatever its refusal says this
		// time), the render's own name first.
		for _, carried := range []bool{true, false} {
			for _, g := range append([]string{p.rd.Name}, p.gens...) {
				v, ok := verdicts[g]
				if current == "" && ok && v.Action() != lifecycle.Rotate && lifecycle.Carried(kind.Replacements, ctx.Observed(g)) == carried {
					current = g
				}
			}
		}
		latest := p.gens[len(p.gens)-1]
		if _, ok := verdicts[p.rd.Name]; ok {
			latest = p.rd.Name
		}
		changes := verdicts[latest].Of(lifecycle.Rotate)

		next := p.rd
		switch {
		case current == p.rd.Name:
		case current != "":
			// Another observed generation takes the render in place.
			rs, err := c.rerender(ctx, p.comp.Rotated(object.Annotation(ctx.Observed(current), AnnotationGeneration), keep(ctx, kind, without(p.gens, current))), p.rd, &out, byName, rename)
			if err != nil {
				return nil, err
			}
			next = rs
		case ctx.importedPool(p.rd, p.gens):
			return nil, fmt.Errorf("node pool %s is imported (spec.parameters.import), and an imported pool is never replaced, but %s: its provider can change that only by replacing the pool; restore the value, or release the import (import.release) to let the function rotate it", strings.TrimPrefix(p.comp.ID(), "pool/"), describe(changes))
		case len(p.gens) == 1 && busy >= max(parallel, 1):
			// Not yet: the pool is kept as it is until it is its turn.
			held := &Rendered{
				Name: p.gens[0], Base: p.rd.Key(), Component: p.rd.Component, Condition: p.rd.Condition, Kind: kind, DependsOn: p.rd.DependsOn,
				Pending: fmt.Sprintf("waits to rotate (%s): %d node pool(s) rotate at a time (environment key lifecycle.parallelPools)", describe(changes), max(parallel, 1)),
			}
			held.Rotation = &Rotation{Changes: changes, Held: true, Waiting: held.Pending}
			replace(&out, byName, p.rd, []*Rendered{held}, rename)
			continue
		default:
			gen := newGeneration(ctx, p.rd, kind, p.gens)
			rs, err := c.rerender(ctx, p.comp.Rotated(gen, keep(ctx, kind, p.gens)), p.rd, &out, byName, rename)
			if err != nil {
				return nil, err
			}
			next = rs
			current = rs.Name
			if len(p.gens) == 1 {
				busy++
			}
		}

		old := without(p.gens, current)
		if len(old) == 0 {
			continue
		}
		ready := object.IsConditionTrue(ctx.Observed(current), "Ready")
		waiting := fmt.Sprintf("%s to be Ready; then %s go(es)", current, strings.Join(old, ", "))
		if ready {
			waiting = fmt.Sprintf("%s to be deleted (%s is Ready); the cloud drains it as it deletes it", strings.Join(old, ", "), current)
		}
		next.Rotation = &Rotation{From: old, Changes: changes, Waiting: waiting}
		for _, g := range old {
			rd := &Rendered{Name: g, Base: p.rd.Key(), Component: p.rd.Component, Condition: p.rd.Condition, Kind: kind}
			if ready {
				rd.Retire = fmt.Sprintf("node pool %s rotated to %s, which is Ready", strings.TrimPrefix(p.comp.ID(), "pool/"), current)
			} else {
				rd.Pending = fmt.Sprintf("rotating: replaced by %s once it is Ready", current)
				rd.DependsOn = slices.Clone(next.DependsOn)
			}
			out = slices.Insert(out, slices.Index(out, next)+1, rd)
			byName[g] = rd
		}
	}
	for _, rd := range out {
		for i, d := range rd.DependsOn {
			if n, ok := rename[d]; ok {
				rd.DependsOn[i] = n
			}
		}
	}
	return out, nil
}

// currentGenerations returns the components with each rotatable one as the
// generation it runs as: the one its only observed resource records. A
// rotated pool is then rendered under its name from the start, and so is
// every name that depends on it (see Current). Rotations in flight, with
// two generations observed, are decided by rotate.
func (c *Context) currentGenerations(comps []component.Component) []component.Component {
	var out []component.Component
	for i, comp := range comps {
		rc, ok := comp.(component.Rotatable)
		if !ok {
			continue
		}
		gens := Generations(c.observed, comp.ID())
		if len(gens) != 1 {
			continue
		}
		gen := object.Annotation(c.observed[gens[0]], AnnotationGeneration)
		if gen == rc.Gen() {
			continue
		}
		if out == nil {
			out = slices.Clone(comps)
		}
		out[i] = rc.Rotated(gen, 0)
		if c.current == nil {
			c.current = map[string]component.Component{}
		}
		c.current[comp.ID()] = out[i]
	}
	if out == nil {
		return comps
	}
	return out
}

// rerender renders a component again, as another generation, in place of
// its first render (prev), with its overlays; it records the new names of
// the component's resources and returns the one that takes prev's place.
func (c *Cloud) rerender(ctx *Context, comp component.Component, prev *Rendered, out *[]*Rendered, byName map[string]*Rendered, rename map[string]string) (*Rendered, error) {
	rs, err := c.renderComponent(ctx, comp)
	if err != nil {
		return nil, err
	}
	if errs := applyOverlays(ctx, rs, false); len(errs) > 0 {
		return nil, &InvalidError{Errs: errs}
	}
	var first []*Rendered
	for _, rd := range *out {
		if rd.Component == comp.ID() {
			first = append(first, rd)
		}
	}
	for _, rd := range first {
		delete(byName, rd.Name)
	}
	var next *Rendered
	for _, rd := range rs {
		if _, clash := byName[rd.Name]; clash {
			return nil, fmt.Errorf("generated names clash: composed resource %q of %s's new generation is already rendered", rd.Name, comp.ID())
		}
		for _, f := range first {
			if f.Key() == rd.Key() && f.Name != rd.Name {
				rename[f.Name] = rd.Name
			}
		}
		if rd.Key() == prev.Key() {
			next = rd
		}
	}
	replace(out, byName, first[0], rs, nil)
	for _, f := range first[1:] {
		*out = slices.DeleteFunc(*out, func(rd *Rendered) bool { return rd == f })
	}
	if next == nil {
		return nil, fmt.Errorf("cannot render %s's new generation: it has no resource for %q", comp.ID(), prev.Key())
	}
	return next, nil
}

// replace puts rs in place of the rendered resource prev, recording renames.
func replace(out *[]*Rendered, byName map[string]*Rendered, prev *Rendered, rs []*Rendered, rename map[string]string) {
	i := slices.Index(*out, prev)
	*out = slices.Replace(*out, i, i+1, rs...)
	delete(byName, prev.Name)
	for _, rd := range rs {
		byName[rd.Name] = rd
		if rename != nil && rd.Key() == prev.Key() && rd.Name != prev.Name {
			rename[prev.Name] = rd.Name
		}
	}
}

// Generations are the observed composed resources of a component that are
// not Usages, in name order: a node pool's generations.
func Generations(observed map[string]*structpb.Struct, component string) []string {
	var out []string
	for name, obs := range observed {
		if object.Annotation(obs, AnnotationComponent) != component || IsUsage(obs) {
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// IsUsage reports whether an observed composed resource is a Usage.
func IsUsage(obs *structpb.Struct) bool {
	k := object.String(obs, "kind")
	return (k == usageKind.Kind || k == clusterUsageKind.Kind) && strings.HasPrefix(object.String(obs, "apiVersion"), "protection.crossplane.io/")
}

// UsageEnds names the two composed resources an observed Usage joins, by
// their composition-resource names: by uses of. Usages are rendered by
// withUsages, which selects each end by LabelResource.
func UsageEnds(obs *structpb.Struct) (by, of string) {
	end := func(e string) string {
		return object.String(obs, "spec", e, "resourceSelector", "matchLabels", LabelResource)
	}
	return end("by"), end("of")
}

// importedPool reports whether a node pool is imported, or was: its key is
// in spec.parameters.import.resources, or a generation is marked imported
// and the import was not released.
func (c *Context) importedPool(rd *Rendered, gens []string) bool {
	imp := c.XR.Import
	if _, ok := imp.Resources[rd.Key()]; ok && imp.Enabled {
		return true
	}
	for _, g := range gens {
		if !imp.Release && object.Annotation(c.Observed(g), AnnotationImportMode) != "" {
			return true
		}
	}
	return false
}

// keep is the node count the older generations run, which a new one holds
// at least while they do.
func keep(ctx *Context, k *ResourceKind, gens []string) int64 {
	if k.NodeCount == "" {
		return 0
	}
	var n int64
	for _, g := range gens {
		if v := object.Get(ctx.Observed(g), strings.Split(k.NodeCount, ".")...); v != nil {
			if f, ok := v.GetKind().(*structpb.Value_NumberValue); ok && f.NumberValue > 0 {
				n += int64(f.NumberValue)
			}
		}
	}
	return min(n, xr.MaxNodes)
}

// newGeneration names a new generation after the pool, the generations it
// replaces and the values of the fields that made it: the same change of
// the same pool always gets the same name, two pools never the same, and a
// pool rotated back and forth never the name of a generation it just
// left. No observed resource has it, nor any other generation's cloud
// name.
func newGeneration(ctx *Context, rd *Rendered, k *ResourceKind, gens []string) string {
	vals := []any{rd.Key(), gens}
	for _, f := range k.Replacements {
		if f.Action != lifecycle.Rotate {
			continue
		}
		v, ok := object.Lookup(rd.Object, f.Path)
		if !ok && f.Generated {
			// A generated entry counts only when rendered, so that
			// generations named before the tables were generated keep
			// their names.
			continue
		}
		vals = append(vals, f.Path, v)
	}
	b, _ := json.Marshal(vals) //nolint:errchkjson // values of a decoded object always marshal
	for salt := 0; ; salt++ {
		h := fnv.New32a()
		_, _ = h.Write(b)
		_, _ = fmt.Fprint(h, salt)
		gen := suffix(h.Sum32())
		if !ctx.taken(k, rd.Key()+"-"+gen, gen) {
			return gen
		}
	}
}

// taken reports whether a composition-resource name is observed, or an
// observed resource of the kind carries the generation (in its name or
// its annotation): its cloud name could be another pool's.
func (c *Context) taken(k *ResourceKind, name, gen string) bool {
	if _, ok := c.observed[name]; ok {
		return true
	}
	for n, obs := range c.observed {
		if object.String(obs, "kind") == k.Name(c.XR.Scope) && (object.Annotation(obs, AnnotationGeneration) == gen || strings.HasSuffix(n, "-"+gen)) {
			return true
		}
	}
	return false
}

// suffix spells a hash in genLen lower-case letters and digits, starting
// with a letter (AKS pool names must).
func suffix(v uint32) string {
	const letters, alphabet = "bcdfghjklmnpqrstvwxz", "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, genLen)
	b[0] = letters[v%uint32(len(letters))]
	v /= uint32(len(letters))
	for i := 1; i < genLen; i++ {
		b[i] = alphabet[v%uint32(len(alphabet))]
		v /= uint32(len(alphabet))
	}
	return string(b)
}

// without is gens but one.
func without(gens []string, one string) []string {
	return slices.DeleteFunc(slices.Clone(gens), func(g string) bool { return g == one })
}

// describe says which fields change, for messages.
func describe(changes []lifecycle.Change) string {
	if len(changes) == 0 {
		return "back to a generation it had"
	}
	return strings.Join(lifecycle.Describe(changes), ", ")
}
