// Package secret finds credentials written in plaintext into desired state.
// Credentials reach composed resources only as references to Secrets; a
// value that looks like a credential is refused wherever it comes from.
package secret

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
)

var (
	// reAlways are field names that always hold a credential.
	reAlways = regexp.MustCompile(`(?i)(secretkey|secretaccesskey|clientsecret|privatekey|private_key|apikey|api_key|accesstoken|authtoken|auth_token)$`)
	// reGeneric are field names that hold a credential unless they name an
	// existing Secret (existingSecret).
	reGeneric = regexp.MustCompile(`(?i)(password|passwd|pwd|passphrase|token|secret|credential|credentials)$`)
	reRef     = regexp.MustCompile(`(?i)^existing`)
)

// Key reports whether a field name holds a credential: adminPassword,
// clientSecret, apiToken, but not passwordKey or existingSecret, which
// locate one.
func Key(name string) bool {
	return reAlways.MatchString(name) || (reGeneric.MatchString(name) && !reRef.MatchString(name))
}

// Find returns the paths (dotted, with [i] for list items) of every
// plaintext credential in v, a JSON-compatible value, sorted:
//   - a non-empty string or a number under a credential field name;
//   - the value of a name/value pair whose name is a credential
//     (container env, Helm set entries);
//   - the data or stringData of a Kubernetes Secret.
func Find(v any) []string {
	var out []string
	find(v, "", &out)
	return out
}

func find(v any, path string, out *[]string) {
	switch t := v.(type) {
	case map[string]any:
		if name, ok := t["name"].(string); ok && Key(name) && plaintext(t["value"]) {
			*out = append(*out, join(path, "value"))
		}
		if t["kind"] == "Secret" {
			for _, k := range []string{"data", "stringData"} {
				if d, ok := t[k].(map[string]any); ok && len(d) > 0 {
					*out = append(*out, join(path, k))
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			p := join(path, k)
			if Key(k) && plaintext(t[k]) {
				*out = append(*out, p)
				continue
			}
			find(t[k], p, out)
		}
	case []any:
		for i, x := range t {
			find(x, fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}

// plaintext reports whether a value is a credential written out: a
// non-empty string or any number. Booleans (automountServiceAccountToken)
// and objects (a secretRef) are not.
func plaintext(v any) bool {
	switch t := v.(type) {
	case string:
		return t != ""
	case float64, int, int64, int32:
		return true
	}
	return false
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
