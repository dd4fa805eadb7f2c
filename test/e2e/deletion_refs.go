package main

import (
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// ref is a reference in a managed resource's spec.forProvider: by a
// selector's labels (and controller) or by name.
type ref struct {
	field      string
	labels     map[string]string
	controller bool
	name       string
}

// refsOf lists the references of a managed resource's spec.forProvider,
// but those to Secrets.
func refsOf(o object) []ref {
	var out []ref
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, v := range t {
				m, isMap := v.(map[string]any)
				switch {
				case strings.Contains(strings.ToLower(k), "secret"):
				case strings.HasSuffix(k, "Selector") && isMap:
					r := ref{field: k, labels: map[string]string{}}
					ml, _ := m["matchLabels"].(map[string]any)
					for lk, lv := range ml {
						r.labels[lk], _ = lv.(string)
					}
					r.controller, _ = m["matchControllerRef"].(bool)
					if len(r.labels) > 0 {
						out = append(out, r)
					}
				case strings.HasSuffix(k, "Ref") && isMap:
					if n, _ := m["name"].(string); n != "" {
						out = append(out, ref{field: k, name: n})
					}
				case strings.HasSuffix(k, "Refs"):
					l, _ := v.([]any)
					for _, e := range l {
						em, _ := e.(map[string]any)
						if n, _ := em["name"].(string); n != "" {
							out = append(out, ref{field: k, name: n})
						}
					}
				default:
					walk(v)
				}
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(at(o, "spec", "forProvider"))
	return out
}

// controllerOf is the UID of an object's controller.
func controllerOf(o object) string {
	refs, _ := at(o, "metadata", "ownerReferences").([]any)
	for _, r := range refs {
		m, _ := r.(map[string]any)
		if m["controller"] == true {
			s, _ := m["uid"].(string)
			return s
		}
	}
	return ""
}

// resolves reports whether a reference of from selects to, as the
// provider's reference resolution would: by name, or by labels in the same
// namespace (matchControllerRef: of the same controller). A selector that
// names neither a controller nor a composite, of a cluster-scoped resource,
// selects among its own composite's.
func resolves(r ref, from, to object) bool {
	if str(from, "metadata", "namespace") != str(to, "metadata", "namespace") {
		return false
	}
	if r.name != "" {
		return str(to, "metadata", "name") == r.name
	}
	labels, _ := at(to, "metadata", "labels").(map[string]any)
	for k, v := range r.labels {
		if labels[k] != v {
			return false
		}
	}
	if r.controller {
		c := controllerOf(from)
		return c != "" && c == controllerOf(to)
	}
	if _, named := r.labels[xr.LabelComposite]; !named && str(from, "metadata", "namespace") == "" {
		return str(from, "metadata", "labels", xr.LabelComposite) == str(to, "metadata", "labels", xr.LabelComposite)
	}
	return true
}

// references reports whether from references any of to.
func references(from object, to []object) bool {
	for _, r := range refsOf(from) {
		for _, t := range to {
			if resolves(r, from, t) {
				return true
			}
		}
	}
	return false
}

// referenced are those of to that from references.
func referenced(from object, to []object) []object {
	var out []object
	for _, t := range to {
		if references(from, []object{t}) {
			out = append(out, t)
		}
	}
	return out
}
