// Package secret finds credentials written in plaintext into desired state.
// Credentials reach composed resources only as references to Secrets; a
// value that looks like a credential is refused wherever it comes from.
package secret

import (
	"slices"
	"strconv"
	"strings"
)

// Field names that hold a credential are recognised by their words. A name
// is split into words at camelCase boundaries (adminPassword, APIKey) and
// at every byte that is not a letter or a digit ('_', '-', '.'), so
// AWS_SECRET_ACCESS_KEY, secretAccessKey and secret-access-key are the same
// three words, compared without regard to case. The last word decides,
// with the one before it (and "existing", see term), which keeps the names
// that locate or tune a credential apart from the credential: secretName,
// secretKeyRef, passwordSecretName, tokenTTL and sslPassthrough end in
// another word.
var (
	// terms are the last words that make a field a credential.
	terms = []term{
		{word: "password", generic: true, glued: true},
		{word: "passwd", generic: true, glued: true},
		{word: "pass", generic: true},
		{word: "pwd", generic: true, glued: true},
		{word: "passphrase", generic: true, glued: true},
		{word: "secret", generic: true, glued: true, after: []string{"client"}},
		{word: "token", generic: true, glued: true, after: []string{"access", "auth"}},
		{word: "credential", generic: true, glued: true},
		{word: "credentials", generic: true, glued: true},
		{word: "key", glued: true, after: []string{"api", "secret", "access", "private"}},
		{word: "string", glued: true, after: []string{"connection"}},
	}

	// byLast indexes the terms by their last byte, so that most field
	// names are rejected by one lookup: this runs over every key of the
	// desired state on every reconcile.
	byLast = func() (a [256][]term) {
		for _, t := range terms {
			a[t.word[len(t.word)-1]] = append(a[t.word[len(t.word)-1]], t)
		}
		return a
	}()
)

// A term is a last word that makes a field a credential.
type term struct {
	word string
	// generic: the field holds a credential whatever the word before,
	// unless "existing" starts the name's last dotted segment or is the
	// word before: existingSecret, existingAdminPassword and
	// apiKeyExistingSecret name a Secret, they do not hold one.
	generic bool
	// after: the field holds a credential, "existing" or not, when the
	// word before ends in one of these: apiKey, SECRET_KEY,
	// secret-access-key, private_key, clientSecret, accessToken,
	// connectionString. A key or a string after any other word is not one.
	after []string
	// glued: the word is also recognised at the end of a longer one,
	// written together with the word before it: adminpassword, apikey,
	// SECRETKEY, clientsecret, connectionstring. pass is not (bypass,
	// compass).
	glued bool
}

// Key reports whether a field name holds a credential: adminPassword,
// DB_PASS, clientSecret, api-key, x-api-key, AWS_SECRET_ACCESS_KEY,
// private_key, apiToken, connectionString; but not passwordKey, secretName,
// secretKeyRef or tokenTTL, which locate or tune one, nor existingSecret or
// apiKeyExistingSecret, which name a Secret. The name may be a Helm set
// path such as auth.password or auth.existingSecret.
func Key(name string) bool {
	end := len(name)
	for end > 0 && !alnum(name[end-1]) {
		end--
	}
	if end == 0 {
		return false
	}
	c := name[end-1]
	if upper(c) {
		c += 'a' - 'A'
	}
	candidates := byLast[c]
	if len(candidates) == 0 {
		return false
	}
	name = name[:end]
	for _, t := range candidates {
		if !endsWithAny(name, t.word) {
			continue
		}
		word, rest := lastWord(name)
		if len(word) < len(t.word) {
			continue
		}
		before := word[:len(word)-len(t.word)]
		switch {
		case before == "":
			before, _ = lastWord(rest)
		case !t.glued:
			continue
		}
		if endsWithAny(before, t.after...) {
			return true
		}
		seg := name[strings.LastIndexByte(name, '.')+1:]
		return t.generic && !startsWithFold(seg, "existing") && !endsWithAny(before, "existing")
	}
	return false
}

// lastWord splits the last word off name: the word, and everything before
// it. A word is a run of letters and digits that ends before a separator,
// before an upper-case letter that follows a lower-case letter or a digit
// (adminPassword), or before the last upper-case letter of a run that a
// lower-case letter follows (APIKey, DBPassword).
func lastWord(name string) (word, rest string) {
	end := len(name)
	for end > 0 && !alnum(name[end-1]) {
		end--
	}
	start := end
	for start > 0 && alnum(name[start-1]) {
		start--
		if start == 0 || !upper(name[start]) {
			continue
		}
		p := name[start-1]
		if lower(p) || digit(p) || upper(p) && start+1 < end && lower(name[start+1]) {
			break
		}
	}
	return name[start:end], name[:start]
}

// endsWithAny reports whether w ends with one of the suffixes, whatever
// their case.
func endsWithAny(w string, suffixes ...string) bool {
	for _, s := range suffixes {
		if len(w) >= len(s) && strings.EqualFold(w[len(w)-len(s):], s) {
			return true
		}
	}
	return false
}

// startsWithFold reports whether s starts with prefix, whatever its case.
func startsWithFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func alnum(c byte) bool { return lower(c) || upper(c) || digit(c) }
func lower(c byte) bool { return 'a' <= c && c <= 'z' }
func upper(c byte) bool { return 'A' <= c && c <= 'Z' }
func digit(c byte) bool { return '0' <= c && c <= '9' }

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
