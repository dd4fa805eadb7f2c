package kube

import (
	"maps"
	"slices"
	"strconv"

	"github.com/seed-6471616d/function-cluster-platform/internal/kubekinds"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/appenvironment"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// LabelEnvironment marks what an application environment applies to the
// workload cluster with the environment's name.
const LabelEnvironment = "platform.example.org/environment"

// availableQuery makes a Deployment's Object ready once the Deployment is
// available.
const availableQuery = `has(object.status) && has(object.status.conditions) && object.status.conditions.exists(c, c.type == "Available" && c.status == "True")`

// Kinds an application environment composes on every cloud: other
// modules' XRs.
var (
	DatabaseXRKind = (&registry.ResourceKind{
		Kind:        xr.DatabaseKind,
		ClusterKind: xr.LegacyDatabaseKind,
		Namespaced:  xr.DatabaseAPIVersion,
		Cluster:     xr.LegacyDatabaseAPIVersion,
		Required:    []string{"spec.parameters.clusterRef"},
	}).WithoutTable("a nested XR of this function, no provider's: the Database module checks its own resources")
	WorkloadBudgetKind = (&registry.ResourceKind{
		Kind:       xr.WorkloadBudgetKind,
		Namespaced: xr.WorkloadBudgetAPIVersion,
		Required:   []string{"spec.targets"},
	}).WithoutTable("a nested XR of this function, no provider's: it composes only Objects")
)

// ImplementApp registers on a cloud the implementations of an application
// environment's Components that are the same on every cloud: what runs on
// the workload cluster and the nested Database and WorkloadBudget. The
// cloud implements the identity and the bucket itself.
func ImplementApp(c *registry.Cloud) {
	registry.Implement(c, namespace)
	registry.Implement(c, database)
	registry.Implement(c, connection)
	registry.Implement(c, backend)
	registry.Implement(c, ingress)
	registry.Implement(c, budget)
}

// AppObject renders a provider-kubernetes Object that applies manifest to
// the workload cluster of an application environment, through the
// Cluster's Kubernetes ProviderConfig, once the namespace is there.
func AppObject(ctx *registry.Context, name string, app *appenvironment.App, manifest map[string]any, deps ...string) *registry.Resource {
	if name != appenvironment.ResourceNamespace {
		deps = append([]string{appenvironment.ResourceNamespace}, deps...)
	}
	return &registry.Resource{
		Name: name,
		Kind: kubekinds.Object,
		Body: object.Object{"spec": map[string]any{
			"providerConfigRef": ctx.LocalProviderConfigRef(app.ProviderConfig),
			"forProvider":       map[string]any{"manifest": manifest},
		}},
		DependsOn: deps,
	}
}

// ServiceAccount renders the backend's ServiceAccount with the cloud's
// workload identity annotations.
func ServiceAccount(ctx *registry.Context, app *appenvironment.App, annotations map[string]any, deps ...string) *registry.Resource {
	meta := map[string]any{"name": appenvironment.ServiceAccount, "namespace": app.Namespace, "labels": appLabels(app)}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	return AppObject(ctx, appenvironment.ResourceServiceAccount, app, map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta}, deps...)
}

func appLabels(app *appenvironment.App) map[string]any {
	return map[string]any{LabelEnvironment: app.Name, "app.kubernetes.io/managed-by": "crossplane"}
}

// namespace renders the environment's namespace.
func namespace(ctx *registry.Context, n appenvironment.Namespace) ([]*registry.Resource, error) {
	return []*registry.Resource{AppObject(ctx, appenvironment.ResourceNamespace, n.App, map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata":   map[string]any{"name": n.Namespace, "labels": appLabels(n.App)},
	})}, nil
}

// database renders the nested Database XR on the same Cluster, with the
// AppEnvironment's cloud, plane and plane type.
func database(ctx *registry.Context, d appenvironment.Database) ([]*registry.Resource, error) {
	par := map[string]any{
		"clusterRef":         map[string]any{"name": d.Cluster.Ref},
		"size":               d.Size,
		"databases":          []any{d.Schema},
		"deletionProtection": d.DeletionProtection,
	}
	if d.Engine != "" {
		par["engine"] = d.Engine
	}
	if d.Version != "" {
		par["version"] = d.Version
	}
	if d.StorageGB != nil {
		par["storageGb"] = *d.StorageGB
	}
	labels := make(map[string]any, len(d.Labels))
	for k, v := range d.Labels {
		labels[k] = v
	}
	return []*registry.Resource{{
		Name: appenvironment.ResourceDatabase,
		Kind: DatabaseXRKind,
		Body: object.Object{
			"metadata": map[string]any{"labels": labels},
			"spec":     map[string]any{"parameters": par},
		},
	}}, nil
}

// connection renders the Secret db-connection-details in the environment's
// namespace. Its values are references, not values: provider-kubernetes
// copies the host, login and database name from the Database XR's status
// and spec, and the password from the Secret the database's provider wrote,
// all on the control plane. The function never reads the password, and
// the desired state holds none. It waits until the Database has said where
// its password is.
func connection(ctx *registry.Context, c appenvironment.Connection) ([]*registry.Resource, error) {
	obs := ctx.Observed(appenvironment.ResourceDatabase)
	dbName := object.String(obs, "metadata", "name")
	pw := object.Get(obs, "status", "passwordSecret").GetStructValue()
	pwName, pwKey := object.String(pw, "name"), object.String(pw, "key")
	if dbName == "" || pwName == "" || pwKey == "" {
		return []*registry.Resource{{Name: appenvironment.ResourceConnection, Kind: kubekinds.Object, Pending: "the Database has not reported where its password is yet (status.passwordSecret)"}}, nil
	}
	db := map[string]any{"apiVersion": DatabaseXRKind.APIVersion(ctx.XR.Scope), "kind": DatabaseXRKind.Name(ctx.XR.Scope), "name": dbName}
	secret := map[string]any{"apiVersion": "v1", "kind": "Secret", "name": pwName}
	if ns := object.String(pw, "namespace"); ns != "" {
		secret["namespace"] = ns
	}
	if ctx.Namespaced() {
		db["namespace"] = ctx.XR.Namespace
		secret["namespace"] = ctx.XR.Namespace
	}
	from := func(src map[string]any, fieldPath string, to ...string) []any {
		out := make([]any, 0, len(to))
		for _, t := range to {
			pf := maps.Clone(src)
			pf["fieldPath"] = fieldPath
			out = append(out, map[string]any{"patchesFrom": pf, "toFieldPath": t})
		}
		return out
	}
	var refs []any
	refs = append(refs, from(db, "status.host", "stringData.host", "stringData.DB_HOST")...)
	refs = append(refs, from(db, "status.username", "stringData.username", "stringData.DB_USER")...)
	refs = append(refs, from(db, "spec.parameters.databases[0]", "stringData.database", "stringData.DB_NAME")...)
	refs = append(refs, from(secret, "data."+pwKey, "data.password", "data.DB_PASSWORD")...)
	r := AppObject(ctx, appenvironment.ResourceConnection, c.App, map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"type":       "Opaque",
		"metadata":   map[string]any{"name": appenvironment.ConnectionSecret, "namespace": c.Namespace, "labels": appLabels(c.App)},
	}, appenvironment.ResourceDatabase)
	r.Body["spec"].(map[string]any)["references"] = refs
	return []*registry.Resource{r}, nil
}

// backend renders the backend's Deployment and Service. The Deployment
// runs as the environment's ServiceAccount, reads db-connection-details
// through envFrom, and is ready once it is available.
func backend(ctx *registry.Context, b appenvironment.Backend) ([]*registry.Resource, error) {
	selector := map[string]any{"app.kubernetes.io/name": appenvironment.BackendName, LabelEnvironment: b.Name}
	podLabels := maps.Clone(selector)
	for k, v := range cluster.CloudTraits[ctx.Cloud.Name].WorkloadIdentityPodLabels {
		podLabels[k] = v
	}
	env := []any{map[string]any{"name": "PORT", "value": strconv.FormatInt(b.Port, 10)}}
	for _, k := range slices.Sorted(maps.Keys(b.Env)) {
		env = append(env, map[string]any{"name": k, "value": b.Env[k]})
	}
	container := map[string]any{
		"name":            appenvironment.BackendName,
		"image":           b.Image,
		"ports":           []any{map[string]any{"name": "http", "containerPort": b.Port}},
		"env":             env,
		"resources":       map[string]any{"requests": stringMap(b.Resources.Requests), "limits": stringMap(b.Resources.Limits)},
		"readinessProbe":  map[string]any{"tcpSocket": map[string]any{"port": "http"}, "periodSeconds": 10},
		"securityContext": map[string]any{"allowPrivilegeEscalation": false, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
	}
	deps := []string{appenvironment.ResourceServiceAccount}
	if b.Database {
		container["envFrom"] = []any{map[string]any{"secretRef": map[string]any{"name": appenvironment.ConnectionSecret}}}
		deps = append(deps, appenvironment.ResourceConnection)
	}
	spec := map[string]any{
		"selector": map[string]any{"matchLabels": selector},
		"template": map[string]any{
			"metadata": map[string]any{"labels": podLabels},
			"spec": map[string]any{
				"serviceAccountName": appenvironment.ServiceAccount,
				"containers":         []any{container},
			},
		},
	}
	if b.Replicas != nil {
		spec["replicas"] = *b.Replicas
	}
	deploy := AppObject(ctx, appenvironment.ResourceDeployment, b.App, map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": appenvironment.BackendName, "namespace": b.Namespace, "labels": appLabels(b.App)},
		"spec":       spec,
	}, deps...)
	deploy.Body["spec"].(map[string]any)["readiness"] = map[string]any{"policy": "DeriveFromCelQuery", "celQuery": availableQuery}
	svc := AppObject(ctx, appenvironment.ResourceService, b.App, map[string]any{
		"apiVersion": "v1",
		"kind":       "Service",
		"metadata":   map[string]any{"name": appenvironment.BackendName, "namespace": b.Namespace, "labels": appLabels(b.App)},
		"spec": map[string]any{
			"selector": selector,
			"ports":    []any{map[string]any{"name": "http", "port": 80, "targetPort": "http"}},
		},
	})
	return []*registry.Resource{deploy, svc}, nil
}

// ingress renders the backend's Ingress through the Cluster's ingress
// controller, with a certificate from cert-manager when TLS is asked for.
func ingress(ctx *registry.Context, i appenvironment.Ingress) ([]*registry.Resource, error) {
	meta := map[string]any{"name": appenvironment.BackendName, "namespace": i.Namespace, "labels": appLabels(i.App)}
	spec := map[string]any{
		"ingressClassName": i.Class,
		"rules": []any{map[string]any{
			"host": i.Host,
			"http": map[string]any{"paths": []any{map[string]any{
				"path":     "/",
				"pathType": "Prefix",
				"backend":  map[string]any{"service": map[string]any{"name": appenvironment.BackendName, "port": map[string]any{"name": "http"}}},
			}}},
		}},
	}
	if i.TLS {
		meta["annotations"] = map[string]any{"cert-manager.io/cluster-issuer": i.Issuer}
		spec["tls"] = []any{map[string]any{"hosts": []any{i.Host}, "secretName": appenvironment.BackendName + "-tls"}}
	}
	return []*registry.Resource{AppObject(ctx, appenvironment.ResourceIngress, i.App, map[string]any{
		"apiVersion": "networking.k8s.io/v1",
		"kind":       "Ingress",
		"metadata":   meta,
		"spec":       spec,
	}, appenvironment.ResourceService)}, nil
}

// budget renders the nested WorkloadBudget, which owns the backend's
// replica count: it scales the Deployment to zero once the budget is spent
// (with enforcement enabled), through the Cluster's provider config.
func budget(ctx *registry.Context, b appenvironment.Budget) ([]*registry.Resource, error) {
	spec := map[string]any{
		"limitUsd":          b.Budget.LimitUSD,
		"targetNamespace":   b.Namespace,
		"targets":           []any{map[string]any{"name": appenvironment.BackendName, "replicas": b.Replicas}},
		"providerConfigRef": ctx.LocalProviderConfigRef(b.ProviderConfig),
	}
	if b.Budget.Enforcement != "" {
		spec["enforcement"] = b.Budget.Enforcement
	}
	if len(b.Budget.Thresholds) > 0 {
		t := make([]any, 0, len(b.Budget.Thresholds))
		for _, v := range b.Budget.Thresholds {
			t = append(t, v)
		}
		spec["thresholds"] = t
	}
	if r := b.Budget.SpendRef; r != nil {
		ref := map[string]any{"apiVersion": r.APIVersion, "kind": r.Kind, "name": r.Name, "fieldPath": r.FieldPath}
		if r.Namespace != "" {
			ref["namespace"] = r.Namespace
		}
		spec["spendRef"] = ref
	}
	return []*registry.Resource{{
		Name:      appenvironment.ResourceBudget,
		Kind:      WorkloadBudgetKind,
		Body:      object.Object{"spec": spec},
		DependsOn: []string{appenvironment.ResourceDeployment},
	}}, nil
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
