package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"text/template"

	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// ValuesData is what a chart's values template sees.
type ValuesData struct {
	Cluster    ValuesCluster
	Cloud      ValuesCloud
	Ingress    ValuesIngress
	Monitoring ValuesMonitoring
	DNS        ValuesDNS
}

// ValuesDNS describes DNS and TLS to a values template.
type ValuesDNS struct {
	// CertificateSecret is "<namespace>/<name>" of the domain's wildcard
	// certificate, empty when the platform issues none.
	CertificateSecret string
}

// ValuesCluster describes the cluster to a values template.
type ValuesCluster struct {
	Name      string
	Cloud     string
	Location  string
	Domain    string
	Namespace string
	Private   bool
}

// ValuesCloud describes the cloud to a values template.
type ValuesCloud struct {
	Name                            string
	InternalLoadBalancerAnnotations map[string]string
}

// ValuesIngress is environment key ingress, resolved.
type ValuesIngress struct {
	Replicas int64
	Internal bool
	// ServiceAnnotations are the cloud's internal load-balancer
	// annotations when Internal, else empty.
	ServiceAnnotations map[string]string
}

// ValuesMonitoring is environment key monitoring, resolved.
type ValuesMonitoring struct {
	Enabled            bool
	Retention          string
	GrafanaAdminSecret SecretKeys
}

// SecretKeys names a Secret and the keys of a user name and password in it.
type SecretKeys struct {
	Name        string
	UserKey     string
	PasswordKey string
}

// funcs are the template functions of values templates, a small subset of
// Helm's: the few a values file needs.
var funcs = template.FuncMap{
	"toJson": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"toYaml": func(v any) (string, error) {
		b, err := yaml.Marshal(v)
		return strings.TrimSuffix(string(b), "\n"), err
	},
	"quote": func(v any) string { return fmt.Sprintf("%q", fmt.Sprint(v)) },
	"default": func(def, v any) any {
		if v == nil || v == "" || v == false || v == 0 {
			return def
		}
		return v
	},
	"indent": func(n int, s string) string {
		pad := strings.Repeat(" ", n)
		return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
	},
	"nindent": func(n int, s string) string {
		pad := strings.Repeat(" ", n)
		return "\n" + pad + strings.ReplaceAll(s, "\n", "\n"+pad)
	},
}

// valuesCache holds parsed templates and their rendered values. Templates
// come from a handful of EnvironmentConfigs and the data from a handful of
// fields, so a reconcile loop over many XRs hits the cache; it is cleared
// whenever it grows past maxCached entries.
var valuesCache = struct {
	sync.Mutex
	templates map[string]*template.Template
	values    map[string]map[string]any
}{templates: map[string]*template.Template{}, values: map[string]map[string]any{}}

const maxCached = 512

// RenderValues executes a values template and parses the YAML it renders.
// The result is the caller's to modify.
func RenderValues(name, text string, data ValuesData) (map[string]any, error) {
	if strings.TrimSpace(text) == "" {
		return map[string]any{}, nil
	}
	key, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	ck := text + "\x00" + string(key)

	valuesCache.Lock()
	if v, ok := valuesCache.values[ck]; ok {
		valuesCache.Unlock()
		return overlay.DeepCopy(v), nil
	}
	t, ok := valuesCache.templates[text]
	valuesCache.Unlock()

	if !ok {
		t, err = template.New(name).Funcs(funcs).Option("missingkey=error").Parse(text)
		if err != nil {
			return nil, fmt.Errorf("cannot parse values template: %w", err)
		}
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("cannot execute values template: %w", err)
	}
	v := map[string]any{}
	if err := yaml.Unmarshal(buf.Bytes(), &v); err != nil {
		return nil, fmt.Errorf("values template does not render a YAML object: %w", err)
	}
	if v == nil {
		v = map[string]any{}
	}

	valuesCache.Lock()
	if len(valuesCache.values) >= maxCached {
		clear(valuesCache.values)
	}
	if len(valuesCache.templates) >= maxCached {
		clear(valuesCache.templates)
	}
	valuesCache.templates[text] = t
	valuesCache.values[ck] = v
	valuesCache.Unlock()
	return overlay.DeepCopy(v), nil
}
