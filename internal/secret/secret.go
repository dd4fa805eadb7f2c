// Package secret finds credentials written in plaintext into desired state.
// Credentials reach composed resources only as references to Secrets; a
// value that looks like a credential is refused wherever it comes from.
package secret

import (
	"slices"
	"strconv"
	"strings"
)

// Field names that hold a credential, by their lower-case suffix. always
// holds one whatever precedes it; generic unless the name starts with
// "existing" (existingSecret names a Secret). The suffixes are indexed by
// their last byte, so that most field names are rejected by one lookup:
// this runs over every key of the desired state on every reconcile.
var (
	always  = []string{"secretkey", "secretaccesskey", "clientsecret", "privatekey", "private_key", "apikey", "api_key", "accesstoken", "authtoken", "auth_token"}
	generic = []string{"password", "passwd", "pwd", "passphrase", "token", "secret", "credential", "credentials"}

	byLast = func() map[byte][]suffix {
		m := map[byte][]suffix{}
		for _, l := range []struct {
			words  []string
			always bool
		}{{always, true}, {generic, false}} {
			for _, w := range l.words {
				m[w[len(w)-1]] = append(m[w[len(w)-1]], suffix{w, l.always})
			}
		}
		return m
	}()
)

type suffix struct {
	word   string
	always bool
}

// Key reports whether a field name holds a credential: adminPassword,
// clientSecret, apiToken, but not passwordKey or existingSecret, which
// locate one.
func Key(name string) bool {
	if name == "" {
		return false
	}
	last := name[len(name)-1]
	if 'A' <= last && last <= 'Z' {
		last += 'a' - 'A'
	}
	for _, s := range byLast[last] {
		if len(name) < len(s.word) || !strings.EqualFold(name[len(name)-len(s.word):], s.word) {
			continue
		}
		if s.always || len(name) < len("existing") || !strings.EqualFold(name[:len("existing")], "existing") {
			return true
		}
	}
	return false
}

// Find returns the paths (dotted, with [i] for list items) of every
// plaintext credential in v, a JSON-compatible value, sorted:
//   - a non-empty string or a number under a credential field name;
//   - the value of a name/value pair whose name is a credential
//     (container env, Helm set entries);
//   - the data or stringData of a Kubernetes Secret.
func Find(v any) []string {
	var out []string
	find(v, nil, &out)
	slices.Sort(out)
	return out
}

func find(v any, path []string, out *[]string) {
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
		for k, x := range t {
			if Key(k) && plaintext(x) {
				*out = append(*out, join(path, k))
				continue
			}
			switch x.(type) {
			case map[string]any, []any:
				find(x, append(path, k), out)
			}
		}
	case []any:
		for i, x := range t {
			switch x.(type) {
			case map[string]any, []any:
				find(x, append(path, "["+strconv.Itoa(i)+"]"), out)
			}
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

// join builds the path of a finding: dotted keys, [i] for list items.
func join(path []string, k string) string {
	var b strings.Builder
	for _, p := range append(path, k) {
		if b.Len() > 0 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}
