// Package overlay implements the third layer of the resource registry: partial
// manifests deep-merged on top of a rendered resource.
//
// The rules are those of a Kubernetes strategic merge without patch
// directives: objects merge key by key, lists and scalars replace, and an
// explicit null removes the key.
package overlay

// Merge deep-merges src into dst and returns dst. Objects merge recursively,
// every other value (lists included) replaces what dst holds, and a nil value
// in src deletes the key from dst. Values taken from src are deep-copied, so
// src is never aliased by dst.
func Merge(dst, src map[string]any) map[string]any {
	if dst == nil {
		dst = make(map[string]any, len(src))
	}
	for k, sv := range src {
		if sv == nil {
			delete(dst, k)
			continue
		}
		sm, ok := sv.(map[string]any)
		if !ok {
			dst[k] = DeepCopyValue(sv)
			continue
		}
		dm, ok := dst[k].(map[string]any)
		if !ok {
			dm = nil
		}
		dst[k] = Merge(dm, sm)
	}
	return dst
}

// DeepCopy returns a deep copy of the supplied JSON-compatible object.
func DeepCopy(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = DeepCopyValue(v)
	}
	return out
}

// DeepCopyValue returns a deep copy of the supplied JSON-compatible value.
func DeepCopyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return DeepCopy(t)
	case []any:
		out := make([]any, len(t))
		for i := range t {
			out[i] = DeepCopyValue(t[i])
		}
		return out
	case []string:
		out := make([]any, len(t))
		for i := range t {
			out[i] = t[i]
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(t))
		for k, s := range t {
			out[k] = s
		}
		return out
	default:
		return v
	}
}
