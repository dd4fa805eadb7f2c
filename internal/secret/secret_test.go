package secret

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestKey(t *testing.T) {
	type args struct {
		name string
	}
	type want struct {
		key bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		// Credentials in every case style: these must be caught.
		"AWSSecretAccessKeyEnv": {
			reason: "AWS_SECRET_ACCESS_KEY ends in secret access key.",
			args:   args{name: "AWS_SECRET_ACCESS_KEY"},
			want:   want{key: true},
		},
		"SecretAccessKeyCamel": {
			reason: "secretAccessKey is the same three words in camelCase.",
			args:   args{name: "secretAccessKey"},
			want:   want{key: true},
		},
		"SecretAccessKeyAcronym": {
			reason: "An acronym before the words ends where the next word starts.",
			args:   args{name: "AWSSecretAccessKey"},
			want:   want{key: true},
		},
		"SecretKeyEnv": {
			reason: "SECRET_KEY is a secret key.",
			args:   args{name: "SECRET_KEY"},
			want:   want{key: true},
		},
		"SecretKeySnake": {
			reason: "secret_key is a secret key.",
			args:   args{name: "secret_key"},
			want:   want{key: true},
		},
		"SecretKeyCamel": {
			reason: "secretKey is a secret key.",
			args:   args{name: "secretKey"},
			want:   want{key: true},
		},
		"ExistingSecretKey": {
			reason: "A secret key is a credential even after existing.",
			args:   args{name: "existingSecretKey"},
			want:   want{key: true},
		},
		"APIKeyKebab": {
			reason: "api-key is an API key.",
			args:   args{name: "api-key"},
			want:   want{key: true},
		},
		"XAPIKey": {
			reason: "x-api-key, the HTTP header's name, is an API key.",
			args:   args{name: "x-api-key"},
			want:   want{key: true},
		},
		"APIKeyEnv": {
			reason: "STRIPE_API_KEY is an API key.",
			args:   args{name: "STRIPE_API_KEY"},
			want:   want{key: true},
		},
		"APIKeyCamel": {
			reason: "apiKey is an API key.",
			args:   args{name: "apiKey"},
			want:   want{key: true},
		},
		"APIKeyAcronym": {
			reason: "APIKey is an API key.",
			args:   args{name: "APIKey"},
			want:   want{key: true},
		},
		"APIKeyGlued": {
			reason: "apikey is an API key written as one word.",
			args:   args{name: "apikey"},
			want:   want{key: true},
		},
		"APIKeyGluedUpper": {
			reason: "XAPIKEY is an API key written as one word.",
			args:   args{name: "XAPIKEY"},
			want:   want{key: true},
		},
		"AccessKey": {
			reason: "accessKey is an access key.",
			args:   args{name: "accessKey"},
			want:   want{key: true},
		},
		"AccessKeyEnv": {
			reason: "MINIO_ACCESS_KEY is an access key.",
			args:   args{name: "MINIO_ACCESS_KEY"},
			want:   want{key: true},
		},
		"PrivateKeyKebab": {
			reason: "private-key is a private key.",
			args:   args{name: "private-key"},
			want:   want{key: true},
		},
		"PrivateKeySnake": {
			reason: "private_key is a private key.",
			args:   args{name: "private_key"},
			want:   want{key: true},
		},
		"PrivateKeyCamel": {
			reason: "sshPrivateKey is a private key.",
			args:   args{name: "sshPrivateKey"},
			want:   want{key: true},
		},
		"DBPass": {
			reason: "DB_PASS ends in pass.",
			args:   args{name: "DB_PASS"},
			want:   want{key: true},
		},
		"AdminPass": {
			reason: "adminPass ends in pass.",
			args:   args{name: "adminPass"},
			want:   want{key: true},
		},
		"Password": {
			reason: "password is a password.",
			args:   args{name: "password"},
			want:   want{key: true},
		},
		"AdminPassword": {
			reason: "adminPassword ends in password.",
			args:   args{name: "adminPassword"},
			want:   want{key: true},
		},
		"PasswordGlued": {
			reason: "adminpassword is a password written as one word.",
			args:   args{name: "adminpassword"},
			want:   want{key: true},
		},
		"PasswordGluedUpper": {
			reason: "DBPASSWORD is a password written as one word.",
			args:   args{name: "DBPASSWORD"},
			want:   want{key: true},
		},
		"PasswordAcronym": {
			reason: "DBPassword ends in password.",
			args:   args{name: "DBPassword"},
			want:   want{key: true},
		},
		"Passwd": {
			reason: "root_passwd ends in passwd.",
			args:   args{name: "root_passwd"},
			want:   want{key: true},
		},
		"Pwd": {
			reason: "DB_PWD ends in pwd.",
			args:   args{name: "DB_PWD"},
			want:   want{key: true},
		},
		"Passphrase": {
			reason: "keyPassphrase ends in passphrase.",
			args:   args{name: "keyPassphrase"},
			want:   want{key: true},
		},
		"Secret": {
			reason: "secret alone is a secret.",
			args:   args{name: "secret"},
			want:   want{key: true},
		},
		"ClientSecret": {
			reason: "clientSecret is a client secret.",
			args:   args{name: "clientSecret"},
			want:   want{key: true},
		},
		"ClientSecretEnv": {
			reason: "OAUTH_CLIENT_SECRET is a client secret.",
			args:   args{name: "OAUTH_CLIENT_SECRET"},
			want:   want{key: true},
		},
		"ClientSecretGlued": {
			reason: "clientsecret is a client secret written as one word.",
			args:   args{name: "clientsecret"},
			want:   want{key: true},
		},
		"CookieSecret": {
			reason: "cookie-secret ends in secret.",
			args:   args{name: "cookie-secret"},
			want:   want{key: true},
		},
		"Token": {
			reason: "token alone is a token.",
			args:   args{name: "token"},
			want:   want{key: true},
		},
		"APIToken": {
			reason: "apiToken is an API token.",
			args:   args{name: "apiToken"},
			want:   want{key: true},
		},
		"AuthToken": {
			reason: "auth_token is an auth token.",
			args:   args{name: "auth_token"},
			want:   want{key: true},
		},
		"BearerToken": {
			reason: "BEARER_TOKEN is a bearer token.",
			args:   args{name: "BEARER_TOKEN"},
			want:   want{key: true},
		},
		"AccessToken": {
			reason: "accessToken is an access token.",
			args:   args{name: "accessToken"},
			want:   want{key: true},
		},
		"RefreshToken": {
			reason: "refresh-token is a refresh token.",
			args:   args{name: "refresh-token"},
			want:   want{key: true},
		},
		"Credential": {
			reason: "credential is a credential.",
			args:   args{name: "credential"},
			want:   want{key: true},
		},
		"Credentials": {
			reason: "GOOGLE_CREDENTIALS ends in credentials.",
			args:   args{name: "GOOGLE_CREDENTIALS"},
			want:   want{key: true},
		},
		"ConnectionString": {
			reason: "connectionString is a connection string.",
			args:   args{name: "connectionString"},
			want:   want{key: true},
		},
		"ConnectionStringEnv": {
			reason: "DB_CONNECTION_STRING is a connection string.",
			args:   args{name: "DB_CONNECTION_STRING"},
			want:   want{key: true},
		},
		"ConnectionStringGlued": {
			reason: "connectionstring is a connection string written as one word.",
			args:   args{name: "connectionstring"},
			want:   want{key: true},
		},
		"HelmSetPath": {
			reason: "A Helm set name is read by its last words.",
			args:   args{name: "auth.password"},
			want:   want{key: true},
		},
		"HelmSetPathAPIKey": {
			reason: "A Helm set name's last two segments may be the two words.",
			args:   args{name: "api.key"},
			want:   want{key: true},
		},

		// Names that locate, tune or switch a credential: these must pass.
		"Passthrough": {
			reason: "passthrough is one word, not pass.",
			args:   args{name: "passthrough"},
		},
		"SSLPassthrough": {
			reason: "sslPassthrough ends in passthrough.",
			args:   args{name: "sslPassthrough"},
		},
		"SSLPassthroughKebab": {
			reason: "enable-ssl-passthrough ends in passthrough.",
			args:   args{name: "enable-ssl-passthrough"},
		},
		"Bypass": {
			reason: "bypass is one word, not pass.",
			args:   args{name: "bypass"},
		},
		"Compass": {
			reason: "compass is one word, not pass.",
			args:   args{name: "compass"},
		},
		"SecretName": {
			reason: "secretName names a Secret.",
			args:   args{name: "secretName"},
		},
		"ExistingSecret": {
			reason: "existingSecret names a Secret.",
			args:   args{name: "existingSecret"},
		},
		"ExistingSecretGlued": {
			reason: "existingsecret names a Secret, however it is written.",
			args:   args{name: "existingsecret"},
		},
		"ExistingSecretHelmSetPath": {
			reason: "auth.existingSecret names a Secret: existing starts its last segment.",
			args:   args{name: "auth.existingSecret"},
		},
		"ExistingAdminPassword": {
			reason: "existingAdminPassword names a Secret.",
			args:   args{name: "existingAdminPassword"},
		},
		"APIKeyExistingSecret": {
			reason: "apiKeyExistingSecret names a Secret: existing comes just before secret.",
			args:   args{name: "apiKeyExistingSecret"},
		},
		"SecretRef": {
			reason: "secretRef refers to a Secret.",
			args:   args{name: "secretRef"},
		},
		"SecretKeyRef": {
			reason: "secretKeyRef refers to a key of a Secret.",
			args:   args{name: "secretKeyRef"},
		},
		"PrivateKeySecretRef": {
			reason: "privateKeySecretRef refers to a Secret.",
			args:   args{name: "privateKeySecretRef"},
		},
		"TokenTTL": {
			reason: "tokenTTL is how long a token lives.",
			args:   args{name: "tokenTTL"},
		},
		"TokenExpiry": {
			reason: "tokenExpiry is when a token expires.",
			args:   args{name: "tokenExpiry"},
		},
		"TokenExpirySnake": {
			reason: "token_expiry is when a token expires.",
			args:   args{name: "token_expiry"},
		},
		"PasswordSecretName": {
			reason: "passwordSecretName names the Secret that holds a password.",
			args:   args{name: "passwordSecretName"},
		},
		"KeySecretName": {
			reason: "keySecretName names the Secret that holds a key.",
			args:   args{name: "keySecretName"},
		},
		"KeySecretRef": {
			reason: "keySecretRef refers to the Secret that holds a key.",
			args:   args{name: "keySecretRef"},
		},
		"PasswordKey": {
			reason: "passwordKey names the key of a Secret that holds a password.",
			args:   args{name: "passwordKey"},
		},
		"ExistingSecretPasswordKey": {
			reason: "existingSecretPasswordKey names a key of a Secret.",
			args:   args{name: "existingSecretPasswordKey"},
		},
		"PasswordFile": {
			reason: "passwordFile is where a password is read from.",
			args:   args{name: "passwordFile"},
		},
		"AccessKeyID": {
			reason: "AWS_ACCESS_KEY_ID ends in id.",
			args:   args{name: "AWS_ACCESS_KEY_ID"},
		},
		"KeyAlone": {
			reason: "A key alone is a map's or a Secret's key.",
			args:   args{name: "key"},
		},
		"UserKey": {
			reason: "userKey is not an API, secret, access or private key.",
			args:   args{name: "userKey"},
		},
		"GluedKey": {
			reason: "A word that ends in key is not a key unless what precedes is api, secret, access or private.",
			args:   args{name: "monkey"},
		},
		"Substring": {
			reason: "A string is a connection string only after connection.",
			args:   args{name: "substring"},
		},
		"MaxTokens": {
			reason: "maxTokens ends in tokens, a count.",
			args:   args{name: "maxTokens"},
		},
		"Empty": {
			reason: "An empty name is no credential.",
			args:   args{name: ""},
		},
		"Separators": {
			reason: "A name of separators only is no credential.",
			args:   args{name: "_-."},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := want{key: Key(tc.args.name)}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nKey(%q): -want, +got:\n%s", tc.reason, tc.args.name, diff)
			}
		})
	}
}

func TestFind(t *testing.T) {
	type args struct {
		v any
	}
	type want struct {
		paths []string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"References": {
			reason: "Secret references and key names are not credentials.",
			args: args{v: map[string]any{
				"grafana":                      map[string]any{"admin": map[string]any{"existingSecret": "grafana-admin", "passwordKey": "admin-password", "userKey": "admin-user"}},
				"credentials":                  map[string]any{"source": "Secret", "secretRef": map[string]any{"name": "gcp-creds", "key": "credentials"}},
				"automountServiceAccountToken": false,
				"tokenTTL":                     "1h",
			}},
		},
		"Strings": {
			reason: "A non-empty string under a credential name is a finding, whatever the case.",
			args:   args{v: map[string]any{"adminPassword": "hunter2", "oauth": map[string]any{"ClientSecret": "x", "clientSecret": ""}, "apiToken": "t"}},
			want:   want{paths: []string{"adminPassword", "apiToken", "oauth.ClientSecret"}},
		},
		"Numbers": {
			reason: "A number is as plaintext as a string.",
			args:   args{v: map[string]any{"auth": map[string]any{"password": 123456.0}}},
			want:   want{paths: []string{"auth.password"}},
		},
		"NameValueLists": {
			reason: "Container env and Helm set entries carry the credential's name beside its value.",
			args: args{v: map[string]any{"env": []any{
				map[string]any{"name": "DB_PASSWORD", "value": "s3cret"},
				map[string]any{"name": "DB_PASSWORD", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "db"}}},
				map[string]any{"name": "LOG_LEVEL", "value": "debug"},
			}}},
			want: want{paths: []string{"env[0].value"}},
		},
		"SecretManifests": {
			reason: "A Kubernetes Secret with data is plaintext desired state.",
			args:   args{v: map[string]any{"manifest": map[string]any{"kind": "Secret", "stringData": map[string]any{"x": "y"}}}},
			want:   want{paths: []string{"manifest.stringData"}},
		},
		"Always": {
			reason: "Some names are credentials even with a prefix such as existing.",
			args:   args{v: map[string]any{"existingSecretKey": "AKIA...", "existingSecret": "ok"}},
			want:   want{paths: []string{"existingSecretKey"}},
		},
		"ExtraEnvs": {
			reason: "ingress-nginx's controller.extraEnvs with an AWS secret access key written out is a finding; the same name from a secretKeyRef is not.",
			args: args{v: map[string]any{"controller": map[string]any{"extraEnvs": []any{
				map[string]any{"name": "AWS_SECRET_ACCESS_KEY", "value": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
				map[string]any{"name": "AWS_SECRET_ACCESS_KEY", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "aws", "key": "secret_key"}}},
				map[string]any{"name": "AWS_ACCESS_KEY_ID", "value": "AKIAIOSFODNN7EXAMPLE"}, //nolint:gosec // AWS's documented example key, the finding under test
				map[string]any{"name": "x-api-key", "value": "k"},
				map[string]any{"name": "DB_PASS", "value": "p"},
			}}}},
			want: want{paths: []string{"controller.extraEnvs[0].value", "controller.extraEnvs[3].value", "controller.extraEnvs[4].value"}},
		},
		"ConfigKeys": {
			reason: "Keys in snake_case and kebab-case are split into words like camelCase ones.",
			args: args{v: map[string]any{"config": map[string]any{
				"secret_key":  "k",
				"api-key":     "k",
				"private-key": "-----BEGIN PRIVATE KEY-----",
				"SECRET_KEY":  "k",
				"adminPass":   "p",
				"log-level":   "info",
			}}},
			want: want{paths: []string{"config.SECRET_KEY", "config.adminPass", "config.api-key", "config.private-key", "config.secret_key"}},
		},
		"EnvMaps": {
			reason: "Environment variables written as a map are keys like any other.",
			args:   args{v: map[string]any{"extraEnv": map[string]any{"AWS_SECRET_ACCESS_KEY": "wJalr", "AWS_REGION": "eu-west-1"}}},
			want:   want{paths: []string{"extraEnv.AWS_SECRET_ACCESS_KEY"}},
		},
		"HelmSet": {
			reason: "A Helm set entry is read by its name's words: auth.password is a credential, auth.existingSecret names one.",
			args: args{v: map[string]any{"set": []any{
				map[string]any{"name": "auth.password", "value": "p"},
				map[string]any{"name": "auth.existingSecret", "value": "db-auth"},
			}}},
			want: want{paths: []string{"set[0].value"}},
		},
		"NotCredentials": {
			reason: "Settings whose names contain a credential word but end in another are not findings.",
			args: args{v: map[string]any{
				"controller": map[string]any{
					"extraArgs": map[string]any{"enable-ssl-passthrough": "true"},
					"config":    map[string]any{"ssl-passthrough": "true", "sslPassthrough": "true", "passthrough": "true", "bypass": "all"},
				},
				"tls":          []any{map[string]any{"secretName": "web-tls", "hosts": []any{"example.com"}}},
				"tokenExpiry":  "24h",
				"tokenTTL":     "1h",
				"secretRef":    "creds",
				"secretKeyRef": map[string]any{"name": "db", "key": "password"},
				"auth": map[string]any{
					"existingSecret":     "db-auth",
					"passwordSecretName": "db-auth",
					"keySecretName":      "signing",
					"passwordKey":        "password",
				},
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := want{paths: Find(tc.args.v)}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
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
