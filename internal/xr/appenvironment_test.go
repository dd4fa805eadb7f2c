package xr

import (
	"cmp"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func appWith(name string, params map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": AppEnvironmentAPIVersion,
		"kind":       AppEnvironmentKind,
		"metadata": map[string]any{
			"name": name, "namespace": "platform",
			"labels": map[string]any{"cloud": "aws", "planeId": "123456789012"},
		},
		"spec": map[string]any{"parameters": params},
	}
}

func TestDecodeAppEnvironment(t *testing.T) {
	type want struct {
		params    AppParameters
		namespace string
		errs      []string
	}
	cases := map[string]struct {
		reason string
		params map[string]any
		want   want
	}{
		"Everything": {
			reason: "Every parameter decodes into its field; the namespace on the workload cluster is spec.parameters.namespace.",
			params: map[string]any{
				"clusterRef": map[string]any{"name": "prod"}, "namespace": "shop-prod",
				"backend": map[string]any{"image": "ghcr.io/acme/shop:1.0", "port": 8080.0, "replicas": 3.0, "env": map[string]any{"LOG_LEVEL": "debug"},
					"resources": map[string]any{"requests": map[string]any{"cpu": "100m"}, "limits": map[string]any{"memory": "1Gi"}}},
				"database":       map[string]any{"size": "large", "engine": "postgres", "version": "16", "storageGb": 100.0},
				"bucket":         map[string]any{"name": "acme-shop", "public": true, "website": true},
				"ingress":        map[string]any{"host": "shop.example.com", "tls": true},
				"frontend":       map[string]any{"host": "www.example.com", "spa": false, "apiPath": "/api", "defaultTtlSeconds": 60.0, "maxTtlSeconds": 600.0, "bucketName": "acme-site"},
				"budget":         map[string]any{"limitUsd": 100.0, "enforcement": "enabled", "thresholds": []any{50.0, 90.0}},
				"deletionPolicy": "Orphan",
			},
			want: want{namespace: "shop-prod", params: AppParameters{
				ClusterRef: ClusterRef{Name: "prod"}, Namespace: "shop-prod",
				Backend: Backend{Image: "ghcr.io/acme/shop:1.0", Port: new(int64(8080)), Replicas: new(int64(3)), Env: map[string]string{"LOG_LEVEL": "debug"},
					Resources: Resources{Requests: map[string]string{"cpu": "100m"}, Limits: map[string]string{"memory": "1Gi"}}},
				Database:       &AppDatabase{Size: "large", Engine: "postgres", Version: "16", StorageGB: new(int64(100))},
				Bucket:         &AppBucket{Name: "acme-shop", Public: true, Website: true},
				Ingress:        &AppIngress{Host: "shop.example.com", TLS: true},
				Frontend:       &AppFrontend{Host: "www.example.com", SPA: new(false), APIPath: "/api", DefaultTTLSeconds: new(int64(60)), MaxTTLSeconds: new(int64(600)), BucketName: "acme-site"},
				Budget:         &Budget{LimitUSD: 100, Enforcement: "enabled", Thresholds: []float64{50, 90}},
				DeletionPolicy: "Orphan",
			}},
		},
		"Minimal": {
			reason: "A cluster and an image are enough; the namespace defaults to the XR's name; the optional parts are absent, not empty.",
			params: map[string]any{"clusterRef": map[string]any{"name": "prod"}, "backend": map[string]any{"image": "nginx:1.27"}},
			want: want{namespace: "shop", params: AppParameters{
				ClusterRef: ClusterRef{Name: "prod"}, Backend: Backend{Image: "nginx:1.27"},
			}},
		},
		"UnknownAndWronglyTyped": {
			reason: "Unknown fields and wrong types are named with their paths, all at once.",
			params: map[string]any{
				"clusterRef": map[string]any{"name": "prod"}, "backend": map[string]any{"image": "nginx", "port": "eighty", "command": []any{"sh"}},
				"bucket": "yes", "cdn": map[string]any{}, "frontend": map[string]any{"host": 1.0, "cache": true},
			},
			want: want{namespace: "shop", params: AppParameters{ClusterRef: ClusterRef{Name: "prod"}, Backend: Backend{Image: "nginx"}, Bucket: &AppBucket{}, Frontend: &AppFrontend{}}, errs: []string{
				`spec.parameters.cdn: Forbidden: unknown field; known fields are: clusterRef, namespace, backend, database, bucket, ingress, frontend, budget, deletionPolicy, import, overrides, confirmRemovals`,
				`spec.parameters.frontend.cache: Forbidden: unknown field; known fields are: host, spa, apiPath, defaultTtlSeconds, maxTtlSeconds, bucketName`,
				`spec.parameters.frontend.host: Invalid value: "1": must be a string`,
				`spec.parameters.backend.command: Forbidden: unknown field; known fields are: image, port, replicas, env, resources`,
				`spec.parameters.backend.port: Invalid value: "\"eighty\"": must be an integer`,
				`spec.parameters.bucket: Invalid value: "\"yes\"": must be an object`,
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			x, errs := DecodeAppEnvironment(mustStruct(appWith("shop", tc.params)))
			got := want{params: x.Parameters, namespace: x.AppNamespace(), errs: errStrings(errs)}
			if diff := gocmp.Diff(tc.want, got, gocmp.AllowUnexported(want{}), cmpopts.EquateEmpty(), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("%s\nDecodeAppEnvironment(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestValidateAppEnvironment(t *testing.T) {
	ok := map[string]any{"clusterRef": map[string]any{"name": "prod"}, "backend": map[string]any{"image": "ghcr.io/acme/shop:1.0"}}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range ok {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	cases := map[string]struct {
		reason string
		name   string
		params map[string]any
		want   []string
	}{
		"Valid": {reason: "A cluster and an image are valid.", params: ok},
		"NoCluster": {
			reason: "clusterRef is required.",
			params: map[string]any{"backend": map[string]any{"image": "nginx"}},
			want:   []string{`spec.parameters.clusterRef.name: Required value: the Cluster (in this namespace) the environment runs on`},
		},
		"NamespaceFromName": {
			reason: "An XR name that is no DNS label cannot be the default namespace; the error names metadata.name.",
			name:   "Shop.Prod",
			params: ok,
			want: []string{
				`metadata.name: Invalid value: "Shop.Prod": AppEnvironment names start with a lower-case letter, contain only lower-case letters, digits and '-', do not end with '-', do not start with 'xn--' (a look-alike host's punycode), and have at most 40 characters (its cloud resources' names derive from it); choose another name`,
				`metadata.name: Invalid value: "Shop.Prod": the namespace on the workload cluster: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
			},
		},
		"PortalNames": {
			reason: "Names the clouds refuse, and punycode look-alikes, are refused here, where the portal validates a request too.",
			name:   "9t-x",
			params: ok,
			want: []string{
				`metadata.name: Invalid value: "9t-x": AppEnvironment names start with a lower-case letter, contain only lower-case letters, digits and '-', do not end with '-', do not start with 'xn--' (a look-alike host's punycode), and have at most 40 characters (its cloud resources' names derive from it); choose another name`,
			},
		},
		"Punycode": {
			reason: "A punycode name would give a look-alike host (<name>.<domain>).",
			name:   "xn--pple-43d",
			params: ok,
			want: []string{
				`metadata.name: Invalid value: "xn--pple-43d": AppEnvironment names start with a lower-case letter, contain only lower-case letters, digits and '-', do not end with '-', do not start with 'xn--' (a look-alike host's punycode), and have at most 40 characters (its cloud resources' names derive from it); choose another name`,
			},
		},
		"Backend": {
			reason: "Image, port, replicas, env names and credentials, and quantities are checked, every one at once.",
			params: with("backend", map[string]any{"image": "Bad Image", "port": 70000.0, "replicas": -1.0,
				"env":       map[string]any{"1BAD": "x", "DB_PASSWORD": "hunter2", "SECRET_KEY": "", "DB_NAME": "x"}, // an empty credential is no credential
				"resources": map[string]any{"limits": map[string]any{"memory": "a lot"}}}),
			want: []string{
				`spec.parameters.backend.image: Invalid value: "Bad Image": must be a container image reference such as ghcr.io/acme/api:1.4.2, without spaces or upper-case letters in its name`,
				`spec.parameters.backend.port: Invalid value: 70000: must be a port, 1 to 65535`,
				`spec.parameters.backend.replicas: Invalid value: -1: must be between 0 and 100`,
				`spec.parameters.backend.env[1BAD]: Invalid value: "1BAD": an environment variable's name has letters, digits and '_', and does not start with a digit`,
				`spec.parameters.backend.env[DB_NAME]: Forbidden: DB_ variables are the database's, from db-connection-details`,
				`spec.parameters.backend.env[DB_PASSWORD]: Forbidden: holds a plaintext credential; the database's reach the backend through the Secret db-connection-details, others belong in a Secret of their own, never in the XR`,
				`spec.parameters.backend.resources.limits[memory]: Invalid value: "a lot": must be a quantity such as 250m or 512Mi`,
			},
		},
		"DatabaseIngressBudgetPolicy": {
			reason: "The database's engine, version and storage, the ingress host, the budget and the deletion policy are checked.",
			params: func() map[string]any {
				m := with("database", map[string]any{"engine": "mysql", "version": "sixteen", "storageGb": 5.0})
				m["ingress"] = map[string]any{"host": "Not A Host"}
				m["budget"] = map[string]any{"limitUsd": 0.0}
				m["deletionPolicy"] = "Keep"
				return m
			}(),
			want: []string{
				`spec.parameters.database.engine: Unsupported value: "mysql": supported values: "postgres"`,
				`spec.parameters.database.version: Invalid value: "sixteen": must be a major version such as "16"`,
				`spec.parameters.database.storageGb: Invalid value: 5: must be between 10 and 65536`,
				`spec.parameters.ingress.host: Invalid value: "Not A Host": must be a lower-case DNS name such as prod.example.com: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
				`spec.parameters.budget.limitUsd: Invalid value: 0: must be greater than zero`,
				`spec.parameters.deletionPolicy: Unsupported value: "Keep": supported values: "Delete", "Orphan"`,
			},
		},
		"FrontendValid": {
			reason: "A front end with a host, an API path routed to the Ingress and TTLs within bounds is valid.",
			params: func() map[string]any {
				m := with("frontend", map[string]any{"host": "www.example.com", "apiPath": "/api/v1", "defaultTtlSeconds": 0.0, "maxTtlSeconds": 0.0})
				m["ingress"] = map[string]any{"host": "api.example.com", "tls": true}
				return m
			}(),
		},
		"FrontendBadPathAndTTLs": {
			reason: "A path that is no prefix, a TTL beyond a year and a default above the maximum are each named.",
			params: func() map[string]any {
				m := with("frontend", map[string]any{"host": "www.example.com", "apiPath": "/api/", "defaultTtlSeconds": 7200.0, "maxTtlSeconds": 3600.0})
				m["ingress"] = map[string]any{"host": "api.example.com", "tls": true}
				return m
			}(),
			want: []string{
				`spec.parameters.frontend.apiPath: Invalid value: "/api/": must be a path prefix such as /api: lower-case letters, digits and . _ ~ - in segments after '/', no trailing '/'`,
				`spec.parameters.frontend.defaultTtlSeconds: Invalid value: 7200: must not exceed maxTtlSeconds (3600)`,
			},
		},
		"FrontendTTLBeyondAYear": {
			reason: "TTLs are bounded by a year, as every CDN here bounds them.",
			params: with("frontend", map[string]any{"host": "www.example.com", "maxTtlSeconds": 40000000.0}),
			want:   []string{`spec.parameters.frontend.maxTtlSeconds: Invalid value: 40000000: must be between 0 and 31536000 seconds (a year)`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			x, errs := DecodeAppEnvironment(mustStruct(appWith(cmp.Or(tc.name, "shop"), tc.params)))
			if len(errs) > 0 {
				t.Fatalf("DecodeAppEnvironment(...): %v", errs)
			}
			got := errStrings(ValidateAppEnvironment(x, []string{"aws", "azure", "gcp"}))
			if diff := gocmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nValidateAppEnvironment(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
