package secret

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestFind(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     any
		want   []string
	}{
		"References": {
			reason: "Secret references and key names are not credentials.",
			in: map[string]any{
				"grafana":                      map[string]any{"admin": map[string]any{"existingSecret": "grafana-admin", "passwordKey": "admin-password", "userKey": "admin-user"}},
				"credentials":                  map[string]any{"source": "Secret", "secretRef": map[string]any{"name": "gcp-creds", "key": "credentials"}},
				"automountServiceAccountToken": false,
				"tokenTTL":                     "1h",
			},
		},
		"Strings": {
			reason: "A non-empty string under a credential name is a finding, whatever the case.",
			in:     map[string]any{"adminPassword": "hunter2", "oauth": map[string]any{"ClientSecret": "x", "clientSecret": ""}, "apiToken": "t"},
			want:   []string{"adminPassword", "apiToken", "oauth.ClientSecret"},
		},
		"Numbers": {
			reason: "A number is as plaintext as a string.",
			in:     map[string]any{"auth": map[string]any{"password": 123456.0}},
			want:   []string{"auth.password"},
		},
		"NameValueLists": {
			reason: "Container env and Helm set entries carry the credential's name beside its value.",
			in: map[string]any{"env": []any{
				map[string]any{"name": "DB_PASSWORD", "value": "s3cret"},
				map[string]any{"name": "DB_PASSWORD", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "db"}}},
				map[string]any{"name": "LOG_LEVEL", "value": "debug"},
			}},
			want: []string{"env[0].value"},
		},
		"SecretManifests": {
			reason: "A Kubernetes Secret with data is plaintext desired state.",
			in:     map[string]any{"manifest": map[string]any{"kind": "Secret", "stringData": map[string]any{"x": "y"}}},
			want:   []string{"manifest.stringData"},
		},
		"Always": {
			reason: "Some names are credentials even with a prefix such as existing.",
			in:     map[string]any{"existingSecretKey": "AKIA...", "existingSecret": "ok"},
			want:   []string{"existingSecretKey"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Find(tc.in), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nFind(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func BenchmarkKey(b *testing.B) {
	keys := []string{"region", "location", "project", "enabled", "adminPassword", "existingSecret", "type", "name"}
	for b.Loop() {
		for _, k := range keys {
			Key(k)
		}
	}
}
