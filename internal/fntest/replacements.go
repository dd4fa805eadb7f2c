package fntest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
)

// ReplacementOnly are the fields a provider can change only by replacing
// the cloud resource, by kind and dotted spec.forProvider path, with the
// Terraform attribute and its source: the oracle tests hold the function
// against, written down apart from its own tables.
type ReplacementOnly map[string]map[string]string

// LoadReplacementOnly reads <dir>/<cloud>.tsv: the wrapped Terraform
// provider's schema, read for this project (ForceNew attributes, and on
// Azure the attributes azurerm changes only by cycling a node pool). A row
// whose behaviour is None lists a kind with no such field; a row of a
// whole block counts only when the block comes or goes, which a render
// never does, and an attribute upjet keeps out of spec (the external name)
// is not a path: both are left out.
func LoadReplacementOnly(dir, cloud string) (ReplacementOnly, error) {
	f, err := os.Open(filepath.Join(dir, cloud+".tsv")) //nolint:gosec // a test's own testdata
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read only
	out := ReplacementOnly{}
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		cols := strings.Split(s.Text(), "\t")
		if len(cols) < 6 || cols[0] == "crd_kind" {
			continue
		}
		kind, path, attr, behaviour, source := cols[0], cols[2], cols[3], cols[4], cols[5]
		if out[kind] == nil {
			out[kind] = map[string]string{}
		}
		if behaviour != "ForceNew" && !strings.HasPrefix(behaviour, "Cycles") {
			continue
		}
		if strings.ContainsAny(path, " ()[]/") || strings.HasSuffix(attr, ".#") || (len(cols) > 6 && strings.HasPrefix(cols[6], "block")) {
			continue
		}
		out[kind][path] = attr + " (" + source + ")"
	}
	return out, s.Err()
}

// Leaves calls add for each leaf of a rendered forProvider (items of a
// list of objects share their list's path) with its dotted path and the
// paths of the Terraform attribute it sets: a reference or selector sets
// the field it resolves (subnetIdSelector sets subnetId or subnetIds).
func Leaves(prefix string, v any, add func(path string, attrs []string)) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			if base, ok := strings.CutSuffix(p, "Selector"); ok {
				add(p, []string{base, base + "s"})
				continue
			}
			Leaves(p, c, add)
		}
	case []any:
		objects := false
		for _, item := range t {
			if m, ok := item.(map[string]any); ok {
				objects = true
				Leaves(prefix, m, add)
			}
		}
		if !objects {
			add(prefix, []string{prefix})
		}
	default:
		add(prefix, []string{prefix})
	}
}

// Find returns the attribute of the first of attrs, or an ancestor of one,
// that the kind can change only by replacement.
func (r ReplacementOnly) Find(kind string, attrs []string) (string, bool) {
	known := r[kind]
	for _, a := range attrs {
		for p := a; p != ""; {
			if attr, ok := known[p]; ok {
				return attr, true
			}
			i := strings.LastIndex(p, ".")
			if i < 0 {
				break
			}
			p = p[:i]
		}
	}
	return "", false
}

// InPlaceReplacements lists the replacement-only fields a desired resource
// would change in place on the observed one: rendered leaves whose value
// differs from what the observed resource's spec asks for.
func (r ReplacementOnly) InPlaceReplacements(desired, observed Object) []string {
	kind, _ := desired["kind"].(string)
	fp := lookup(desired, "spec", "forProvider")
	var out []string
	Leaves("", fp, func(path string, attrs []string) {
		attr, ok := r.Find(kind, attrs)
		if !ok {
			return
		}
		old, ok := lookupPath(lookup(observed, "spec", "forProvider"), path)
		if !ok {
			return
		}
		now, _ := lookupPath(fp, path)
		if !sameLeaves(old, now) {
			out = append(out, fmt.Sprintf("%s %v -> %v (%s)", path, old, now, attr))
		}
	})
	slices.Sort(out)
	return out
}

// sameLeaves reports whether a rendered value leaves an observed one as it
// is: only what is rendered counts (providers fill in the rest).
func sameLeaves(observed, rendered any) bool {
	switch r := rendered.(type) {
	case map[string]any:
		o, ok := observed.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range r {
			if ov, ok := o[k]; ok && !sameLeaves(ov, v) {
				return false
			}
		}
		return true
	case []any:
		o, ok := observed.([]any)
		if !ok || len(o) != len(r) {
			return false
		}
		for i := range r {
			if !sameLeaves(o[i], r[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(observed, rendered) || fmt.Sprint(observed) == fmt.Sprint(rendered)
}

func lookup(o any, path ...string) any {
	cur := o
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// lookupPath looks a dotted path up; inside a list of objects, in its
// first item.
func lookupPath(o any, path string) (any, bool) {
	cur := o
	for _, p := range strings.Split(path, ".") {
		if l, ok := cur.([]any); ok && len(l) > 0 {
			cur = l[0]
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}
