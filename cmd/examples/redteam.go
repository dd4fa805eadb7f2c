package main

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/fleet"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// An attack is one red-team case replayed through the crossplane CLI
// against a converged example XR: its observed-resource file is what the
// providers report, and the attack changes the XR or the EnvironmentConfigs.
// The function must either refuse it with a Fatal naming the path, or render
// while withdrawing nothing and holding what the environment alone would
// remove.
type attack struct {
	name string
	// example is the XR file under examples/, e.g. gcp/cluster.yaml.
	example string
	// xr changes the XR.
	xr func(xpsim.Object)
	// env changes the EnvironmentConfigs, keyed by file name.
	env func(map[string]xpsim.Object)
	// fatal is part of the Fatal the render must fail with; empty when the
	// render must succeed.
	fatal string
	// held must still be rendered and named in the RemovalsSettled
	// condition.
	held []string
	// absent are strings no rendered output may contain.
	absent []string
	// observedEdit, when set, changes what the providers report before
	// the render.
	observedEdit func(map[string]xpsim.Object)
	// required are more required resources Crossplane would deliver.
	required []xpsim.Object
	// fleet, when set, are the other Clusters of a rollout as the API
	// server holds them: the replay stands in for the fleet controller
	// (package fleet), as a control plane running it would. It renders
	// the XR once with no ruling (the gate holds), reads the target the
	// render reports (status.rollout), rules on the fleet and the XR with
	// the controller's code (fleet.Rule, at rulingTime), and renders again
	// with the XR's ruling among the required resources.
	fleet []xpsim.Object
	// tenant, when set, is another namespace the example is copied into,
	// with the Cluster it runs on: a new XR there, rendered without
	// observed resources, that tries to take the example's names.
	tenant string
}

func set(path string, v any) func(xpsim.Object) { return fntest.Set(path, v) }

// rulingTime is the fleet controller's clock when a replay rules.
var rulingTime = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// rule rules on the fleet and the XR of a render (its first object, as
// --include-full-xr prints it, with the status.rollout it reports), as the
// fleet controller does, and writes the XR's ruling, if there is one, to
// file.
func rule(render []byte, env map[string]xpsim.Object, others []xpsim.Object, file string) error {
	objs, err := xpsim.Parse(render)
	if err != nil {
		return fmt.Errorf("cannot read the XR of the first render: %w", err)
	}
	if len(objs) == 0 {
		return errors.New("cannot read the XR of the first render: it printed nothing")
	}
	self := objs[0]
	configs := make([]map[string]any, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		configs = append(configs, env[k])
	}
	b := fleet.BaselineOf(configs)
	rulings, err := fleet.Rule(b, append(slices.Clone(others), self), rulingTime)
	if err != nil {
		return err
	}
	for _, r := range rulings {
		if r.Cluster == rollout.RefOf(self) {
			return writeYAML(file, r.Object(b.Settings.RulingNamespace()))
		}
	}
	return nil
}

func overrides(name string, ov map[string]any) func(xpsim.Object) {
	return set("spec.parameters.overrides", map[string]any{name: ov})
}

func envSet(file, path string, v any) func(map[string]xpsim.Object) {
	return func(e map[string]xpsim.Object) { fntest.Set("data."+path, v)(e[file]) }
}

func envDelete(file string) func(map[string]xpsim.Object) {
	return func(e map[string]xpsim.Object) { delete(e, file) }
}

func both(fs ...func(xpsim.Object)) func(xpsim.Object) {
	return func(o xpsim.Object) {
		for _, f := range fs {
			f(o)
		}
	}
}

// attacks are the red-team cases: environment edits and removals,
// forbidden overrides on imported and ordinary resources, plaintext values
// through overrides, name collisions, immutable fields, on Clusters and
// Databases.
var attacks = []attack{
	// On AKS, whose outbound type changes in place (GKE keeps its private
	// nodes: day two's gcp-private-to-public): the private zone is held,
	// the NAT gateway kept while the nodes' traffic still goes through it.
	{name: "env-private-false", example: "azure/cluster.yaml", xr: set("spec.parameters.privateCluster", nil),
		env: envSet("baseline.yaml", "privateCluster", false), held: []string{"private-dns-zone", "private-dns-zone-link"}},
	{name: "env-pools-replaced", example: "gcp/cluster.yaml", xr: set("spec.parameters.pools", nil),
		env: envSet("baseline.yaml", "pools", map[string]any{"general": map[string]any{"size": "small"}}), held: []string{"nodepool-default", "nodepool-batch"}},
	{name: "env-chart-disabled", example: "aws/cluster.yaml",
		env: envSet("baseline.yaml", "charts.ingress-nginx.disabled", true), held: []string{"release-ingress-nginx"}},
	{name: "env-monitoring-off", example: "azure/cluster.yaml",
		env: envSet("baseline.yaml", "monitoring.enabled", false), held: []string{"release-kube-prometheus-stack"}},
	{name: "env-node-roles-shrink", example: "gcp/legacy.yaml",
		env: envSet("cloud-gcp.yaml", "gcp.nodeServiceAccountRoles", []any{"roles/container.defaultNodeServiceAccount"}), held: []string{"node-iam-artifactregistry-reader"}},
	{name: "env-cloud-layer-removed", example: "gcp/cluster.yaml", env: envDelete("cloud-gcp.yaml"), fatal: "no EnvironmentConfig labelled platform.example.org/environment=cluster-platform and cloud=gcp"},
	{name: "env-baseline-removed", example: "aws/legacy.yaml", env: envDelete("baseline.yaml"), fatal: "baseline=default"},
	{name: "env-cidr-changed", example: "gcp/cluster.yaml", env: envSet("baseline.yaml", "network.cidr", "10.8.0.0/16"), fatal: `spec.forProvider.ipCidrRange "10.0.0.0/16", which its provider can change only by replacing the cloud resource`},
	{name: "env-aws-zones-reordered", example: "aws/cluster.yaml", env: envSet("cloud-aws.yaml", "aws.zones.eu-west-1", []any{"eu-west-1c", "eu-west-1b", "eu-west-1a"}), fatal: "spec.forProvider.cidrBlock"},
	{name: "env-weakens-import", example: "gcp/cluster.yaml",
		xr:    set("spec.parameters.import", map[string]any{"enabled": true, "mode": "observe", "resources": map[string]any{"cluster": "prod-cluster"}}),
		env:   envSet("baseline.yaml", "overrides", map[string]any{"cluster": map[string]any{"spec": map[string]any{"managementPolicies": []any{"*"}}}}),
		fatal: "environment.overrides.cluster.spec.managementPolicies: Forbidden"},
	{name: "env-plaintext-value", example: "azure/legacy.yaml",
		env:   envSet("baseline.yaml", "overrides", map[string]any{"release-ingress-nginx": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"values": map[string]any{"auth": map[string]any{"password": "hunter2"}}}}}}),
		fatal: "would hold a plaintext credential at spec.forProvider.values.auth.password"},
	{name: "xr-policies-on-imported", example: "gcp/cluster.yaml",
		xr: both(set("spec.parameters.import", map[string]any{"enabled": true, "mode": "observe", "resources": map[string]any{"cluster": "prod-cluster"}}),
			overrides("cluster", map[string]any{"spec": map[string]any{"managementPolicies": []any{"*"}}, "metadata": map[string]any{"annotations": map[string]any{"platform.example.org/import-mode": nil}}})),
		fatal: "spec.parameters.overrides.cluster.metadata.annotations[platform.example.org/import-mode]: Forbidden"},
	{name: "xr-provider-config", example: "aws/cluster.yaml", xr: overrides("network", map[string]any{"spec": map[string]any{"providerConfigRef": map[string]any{"name": "other-account"}}}),
		fatal: "spec.parameters.overrides.network.spec.providerConfigRef.name: Forbidden"},
	{name: "xr-nodegroup-into-other-cluster", example: "aws/cluster.yaml", xr: overrides("nodepool-default", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"clusterName": "team-b-cluster", "nodeRoleArn": "arn:aws:iam::111122223333:role/OrganizationAdmin"}}}),
		fatal: "spec.parameters.overrides.nodepool-default.spec.forProvider.clusterName: Forbidden"},
	{name: "xr-cluster-into-other-vpc", example: "gcp/cluster.yaml", xr: overrides("cluster", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"network": "projects/team-b/global/networks/team-b-vpc"}}}),
		fatal: "spec.parameters.overrides.cluster.spec.forProvider.network: Forbidden"},
	{name: "xr-kubeconfig-redirected", example: "gcp/legacy.yaml", xr: overrides("cluster", map[string]any{"spec": map[string]any{"writeConnectionSecretToRef": map[string]any{"namespace": "team-b"}}}),
		fatal: "spec.parameters.overrides.cluster.spec.writeConnectionSecretToRef.namespace: Forbidden"},
	{name: "xr-providerconfig-secret", example: "azure/cluster.yaml", xr: overrides("kubernetes-provider-config", map[string]any{"spec": map[string]any{"credentials": map[string]any{"secretRef": map[string]any{"namespace": "team-b"}}}}),
		fatal: "spec.parameters.overrides.kubernetes-provider-config.spec.credentials.secretRef.namespace: Forbidden"},
	{name: "xr-delegation-hijack", example: "aws/cluster.yaml", xr: overrides("dns-delegation", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"name": "payments.example.com"}}}),
		fatal: "spec.parameters.overrides.dns-delegation.spec.forProvider.name: Forbidden"},
	{name: "xr-dns-grant-widened", example: "gcp/cluster.yaml", xr: overrides("dns-zone-admin", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"managedZone": "example-com"}}}),
		fatal: "spec.parameters.overrides.dns-zone-admin.spec.forProvider.managedZone: Forbidden"},
	{name: "xr-dns-role-scope", example: "azure/cluster.yaml", xr: overrides("dns-zone-contributor", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"scope": "/subscriptions/00000000-0000-0000-0000-000000000000"}}}),
		fatal: "spec.parameters.overrides.dns-zone-contributor.spec.forProvider.scope: Forbidden"},
	{name: "xr-chart-repository", example: "gcp/cluster.yaml", xr: overrides("release-cert-manager", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"chart": map[string]any{"repository": "https://charts.evil.example.com"}}}}),
		fatal: "spec.parameters.overrides.release-cert-manager.spec.forProvider.chart.repository: Forbidden"},
	{name: "xr-adopt-by-external-name", example: "aws/cluster.yaml", xr: overrides("network", map[string]any{"metadata": map[string]any{"annotations": map[string]any{"crossplane.io/external-name": "vpc-0123456789abcdef0"}}}),
		fatal: "spec.parameters.overrides.network.metadata.annotations[crossplane.io/external-name]: Forbidden"},
	{name: "xr-plaintext-override", example: "gcp/cluster.yaml", xr: overrides("release-kube-prometheus-stack", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"values": map[string]any{"grafana": map[string]any{"adminPassword": 123456}}}}}),
		fatal: "spec.forProvider.values.grafana.adminPassword"},
	{name: "xr-import-key-typo", example: "gcp/cluster.yaml", xr: set("spec.parameters.import", map[string]any{"enabled": true, "resources": map[string]any{"clustr": "prod-cluster"}}),
		fatal: "spec.parameters.import.resources[clustr]"},
	{name: "xr-pool-named-like-usage", example: "gcp/cluster.yaml", xr: set("spec.parameters.pools.default-uses-cluster", map[string]any{"size": "small"}),
		fatal: `spec.parameters.pools[default-uses-cluster]`},
	{name: "db-env-tiers-removed", example: "aws/database.yaml", env: envSet("cloud-aws.yaml", "database.tiers", nil),
		fatal: "the environment maps no size classes to server tiers (key database.tiers)"},
	{name: "db-env-location-moved", example: "gcp/database-legacy.yaml", env: envSet("cloud-gcp.yaml", "database.location", "europe-west4"),
		fatal: `has spec.forProvider.region "us-central1", which its provider can change only by replacing the cloud resource`},
	{name: "db-env-wrongly-typed", example: "azure/database.yaml", env: envSet("baseline.yaml", "database.storageGb", "plenty"),
		fatal: `environment.database.storageGb: Invalid value: "plenty": must be an integer`},
	{name: "db-xr-made-public", example: "azure/database-legacy.yaml", xr: overrides("instance", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"publicNetworkAccessEnabled": true}}}),
		fatal: "spec.parameters.overrides.instance.spec.forProvider.publicNetworkAccessEnabled: Forbidden"},
	{name: "db-xr-password-elsewhere", example: "aws/database.yaml", xr: overrides("instance", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"passwordSecretRef": map[string]any{"name": "team-b-db"}}}}),
		fatal: "spec.parameters.overrides.instance.spec.forProvider.passwordSecretRef.name: Forbidden"},
	{name: "db-env-ha-off", example: "gcp/database.yaml", env: envSet("planetype-production.yaml", "database.highAvailability", false)},
	{name: "app-xr-namespace-takeover", example: "gcp/appenvironment.yaml", xr: set("spec.parameters.namespace", "kube-system"),
		fatal: `spec.parameters.namespace: Forbidden: namespace "kube-system" belongs to the system`},
	{name: "app-xr-object-moved", example: "azure/appenvironment.yaml", xr: overrides("deployment", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"manifest": map[string]any{"metadata": map[string]any{"namespace": "team-b"}}}}}),
		fatal: "spec.parameters.overrides.deployment.spec.forProvider.manifest.metadata.namespace: Forbidden"},
	{name: "app-xr-role-widened", example: "aws/appenvironment.yaml", xr: overrides("bucket-access", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"policy": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`}}}),
		fatal: "spec.parameters.overrides.bucket-access.spec.forProvider.policy: Forbidden: who may act as an identity"},
	{name: "app-xr-trust-redirected", example: "gcp/appenvironment.yaml", xr: overrides("identity-workload-user", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"member": "serviceAccount:my-project-123.svc.id.goog[team-b/default]"}}}),
		fatal: "spec.parameters.overrides.identity-workload-user.spec.forProvider.member: Forbidden"},
	{name: "app-xr-credential-in-env", example: "aws/appenvironment-legacy.yaml", xr: set("spec.parameters.backend.env", map[string]any{"STRIPE_API_KEY": "sk_live_123"}),
		fatal: "spec.parameters.backend.env[STRIPE_API_KEY]: Forbidden: holds a plaintext credential"},
	{name: "app-xr-plaintext-secret", example: "gcp/appenvironment.yaml", xr: overrides("database-connection", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"manifest": map[string]any{"stringData": map[string]any{"DB_PASSWORD": "hunter2"}}}}}),
		fatal: "plaintext credential"},
	{name: "app-xr-foreign-host", example: "azure/appenvironment.yaml", xr: set("spec.parameters.ingress.host", "login.example-bank.com"),
		fatal: `spec.parameters.ingress.host: Invalid value: "login.example-bank.com"`},
	{name: "app-env-ingress-class", example: "aws/appenvironment.yaml", env: envSet("baseline.yaml", "appEnvironment.ingressClass", "internal")},
	{name: "app-xr-frontend-foreign-host", example: "gcp/appenvironment.yaml", xr: set("spec.parameters.frontend.host", "login.example-bank.com"),
		fatal: `spec.parameters.frontend.host: Invalid value: "login.example-bank.com"`},
	{name: "app-xr-frontend-bucket-opened", example: "aws/appenvironment.yaml", xr: overrides("frontend-bucket-policy", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"policy": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::billing-frontend/*"}]}`}}}),
		fatal: "spec.parameters.overrides.frontend-bucket-policy.spec.forProvider.policy: Forbidden"},
	{name: "app-xr-frontend-alias-taken", example: "aws/appenvironment.yaml", xr: overrides("frontend-cdn", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"aliases": []any{"billing.prod.example.com"}}}}),
		fatal: "spec.parameters.overrides.frontend-cdn.spec.forProvider.aliases: Forbidden"},
	{name: "app-xr-frontend-record-moved", example: "azure/appenvironment.yaml", xr: overrides("frontend-dns-validation", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"zoneName": "example-bank.com"}}}),
		fatal: "spec.parameters.overrides.frontend-dns-validation.spec.forProvider.zoneName: Forbidden"},
	{name: "xr-azure-pools-collide", example: "azure/cluster.yaml", xr: set("spec.parameters.pools", map[string]any{"batch-1": map[string]any{"size": "small"}, "batch1": map[string]any{"size": "small"}}),
		fatal: "would both be AKS node pool"},
	// Tenancy of names: a hostile tenant's namespace (tenant-x, which the
	// example environment gives only its own subdomain of
	// apps.example.com) copies the platform's examples to take their
	// hosts and cloud names.
	{name: "xn-gcp-app-copied", example: "gcp/appenvironment.yaml", tenant: "tenant-x",
		fatal: `spec.parameters.ingress.host: Forbidden: host "shop.prod.example.com" is not assigned to namespace "tenant-x"`},
	{name: "xn-aws-frontend-host", example: "aws/appenvironment.yaml", tenant: "tenant-x", xr: both(set("spec.parameters.ingress", nil), set("spec.parameters.frontend.apiPath", nil)),
		fatal: `spec.parameters.frontend.host: Forbidden: host "billing-app.prod.example.com" is not assigned to namespace "tenant-x"`},
	{name: "xn-azure-app-copied", example: "azure/appenvironment.yaml", tenant: "tenant-x",
		fatal: `is not assigned to namespace "tenant-x"`},
	{name: "xn-gcp-bucket-named", example: "gcp/appenvironment.yaml", tenant: "tenant-x",
		xr:    both(set("spec.parameters.ingress.host", "shop.tenant-x.apps.example.com"), set("spec.parameters.frontend", nil), set("spec.parameters.bucket", map[string]any{"name": "shop-frontend"})),
		fatal: `spec.parameters.bucket.name: Forbidden: bucket "shop-frontend" is not assigned to namespace "tenant-x"`},
	{name: "xn-gcp-cluster-domain", example: "gcp/cluster.yaml", tenant: "tenant-x",
		fatal: `spec.parameters.domain: Forbidden: host "prod.example.com" is not assigned to namespace "tenant-x"`},
	{name: "xn-aws-cluster-name", example: "aws/cluster.yaml", tenant: "tenant-x",
		xr:    both(set("spec.parameters.domain", "tenant-x.apps.example.com"), set("metadata.labels.clusterName", "prod-cluster")),
		fatal: `metadata.labels[clusterName]: Forbidden: cluster name "prod-cluster" is not assigned to namespace "tenant-x"`},
	{name: "xn-azure-cluster-import", example: "azure/cluster.yaml", tenant: "tenant-x",
		xr: both(set("spec.parameters.domain", "tenant-x.apps.example.com"),
			set("spec.parameters.import", map[string]any{"enabled": true, "mode": "manage", "resources": map[string]any{"cluster": "prod-cluster"}})),
		fatal: `spec.parameters.import.resources[cluster]: Forbidden: existing resource "prod-cluster" is not assigned to namespace "tenant-x"`},
	{name: "xn-aws-ingress-rewritten", example: "aws/appenvironment.yaml", tenant: "tenant-x",
		xr: both(set("spec.parameters.ingress.host", "billing.tenant-x.apps.example.com"), set("spec.parameters.frontend", nil), set("spec.parameters.bucket.name", nil),
			overrides("ingress", map[string]any{"spec": map[string]any{"forProvider": map[string]any{"manifest": map[string]any{"spec": map[string]any{"rules": []any{map[string]any{"host": "billing.prod.example.com"}}}}}}})),
		fatal: `spec.parameters.overrides.ingress.spec.forProvider.manifest.spec.rules: Forbidden: hosts are global`},
	{name: "xn-gcp-db-same-name", example: "gcp/database.yaml", tenant: "tenant-x",
		absent: []string{"crossplane.io/external-name: orders-db\n"}},
	{name: "xn-azure-db-same-name", example: "azure/database.yaml", tenant: "tenant-x",
		absent: []string{"crossplane.io/external-name: orders-db\n"}},
}

// redteam replays every attack and reports how each was met. It fails on
// the first attack that withdraws a resource, renders a forbidden value, or
// is met otherwise than expected.
func redteam(crossplane, out string) error {
	comps, _, err := apis()
	if err != nil {
		return err
	}
	envs, err := exampleEnvs()
	if err != nil {
		return err
	}
	refused, held := 0, 0
	for _, a := range attacks {
		dir := filepath.Join(out, a.name)
		msg, err := a.replay(crossplane, comps, envs, dir)
		if err != nil {
			return fmt.Errorf("attack %s: %w", a.name, err)
		}
		if a.fatal != "" {
			refused++
		} else {
			held++
		}
		fmt.Printf("redteam   %-28s %-14s %s\n", a.name, a.example, msg)
	}
	fmt.Printf("redteam   %d attacks through the crossplane CLI: %d refused with a Fatal naming the path, %d rendered with nothing withdrawn (removals held) or named apart\n", len(attacks), refused, held)
	return nil
}

func (a attack) replay(crossplane string, comps map[typeRef]string, envs map[string]xpsim.Object, dir string) (string, error) {
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	req := filepath.Join(dir, "required")
	if err := gather(req, "examples/spend", filepath.Join("examples", filepath.Dir(a.example), "required")); err != nil {
		return "", err
	}
	env := map[string]xpsim.Object{}
	for k, v := range envs {
		env[k] = overlay.DeepCopy(v)
	}
	if a.env != nil {
		a.env(env)
	}
	for k, v := range env {
		if err := writeYAML(filepath.Join(req, "envconfigs-"+k), v); err != nil {
			return "", err
		}
	}
	for i, o := range a.required {
		if err := writeYAML(filepath.Join(req, fmt.Sprintf("required-%d.yaml", i)), o); err != nil {
			return "", err
		}
	}
	xr := fntest.MustLoad(filepath.Join("examples", a.example))[0]
	if a.tenant != "" {
		fntest.Set("metadata.namespace", a.tenant)(xr)
		if err := moveRequired(req, a.tenant); err != nil {
			return "", err
		}
	}
	if a.xr != nil {
		a.xr(xr)
	}
	xrFile := filepath.Join(dir, "xr.yaml")
	if err := writeYAML(xrFile, xr); err != nil {
		return "", err
	}
	comp, ok := comps[typeRef{str(xr, "apiVersion"), str(xr, "kind")}]
	if !ok {
		return "", fmt.Errorf("no Composition for %s", a.example)
	}
	observed := filepath.Join("examples", filepath.Dir(a.example), "observed", filepath.Base(a.example))
	if a.observedEdit != nil {
		objs := fntest.ObservedFile(observed)
		a.observedEdit(objs)
		b, err := xpsim.YAML(objs)
		if err != nil {
			return "", err
		}
		observed = filepath.Join(dir, "observed.yaml")
		if err := os.WriteFile(observed, b, 0o600); err != nil {
			return "", err
		}
	}
	args := []string{"render", xrFile, comp, functionsFile, "--required-resources=" + req, "--include-full-xr"}
	if a.tenant == "" {
		args = append(args, "--observed-resources="+observed)
	} else {
		// A new XR: nothing observed, nothing to withdraw.
		observed = ""
	}
	render := func() (bytes.Buffer, bytes.Buffer, error) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(crossplane, args...) //nolint:gosec // our own CLI and files
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		return stdout, stderr, cmd.Run()
	}
	if a.fleet != nil {
		stdout, stderr, err := render()
		if err != nil {
			return "", fmt.Errorf("cannot render before the fleet controller rules: %s", stderr.String())
		}
		if err := rule(stdout.Bytes(), env, a.fleet, filepath.Join(req, "ruling.yaml")); err != nil {
			return "", err
		}
	}
	stdout, stderr, runErr := render()
	if err := os.WriteFile(filepath.Join(dir, "render.yaml"), stdout.Bytes(), 0o600); err != nil {
		return "", err
	}

	if a.fatal != "" {
		if runErr == nil {
			return "", fmt.Errorf("rendered, want a Fatal containing %q", a.fatal)
		}
		if !strings.Contains(stderr.String(), a.fatal) {
			return "", fmt.Errorf("want a Fatal containing %q, got: %s", a.fatal, stderr.String())
		}
		_, rest, _ := strings.Cut(stderr.String(), a.fatal)
		return "refused: " + brief(a.fatal+rest), nil
	}
	if runErr != nil {
		return "", fmt.Errorf("unexpected failure: %s", stderr.String())
	}
	rendered, err := xpsim.Parse(stdout.Bytes())
	if err != nil {
		return "", err
	}
	names := map[string]bool{}
	var settled string
	for _, o := range rendered {
		names[xpsim.CompositionResourceName(o)] = true
		if str(o, "kind") == str(xr, "kind") && str(o, "apiVersion") == str(xr, "apiVersion") {
			settled = conditionMessage(o, "RemovalsSettled")
		}
	}
	var was []xpsim.Object
	if observed != "" {
		was = fntest.MustLoad(observed)
	}
	for _, o := range was {
		if n := xpsim.CompositionResourceName(o); !names[n] {
			return "", fmt.Errorf("WITHDRAWN: observed composed resource %q is not rendered", n)
		}
	}
	for _, h := range a.held {
		if !names[h] || !strings.Contains(settled, h) {
			return "", fmt.Errorf("%q is not held: rendered %t, RemovalsSettled: %s", h, names[h], settled)
		}
	}
	for _, s := range a.absent {
		if bytes.Contains(stdout.Bytes(), []byte(s)) {
			return "", fmt.Errorf("FORBIDDEN: the render holds %q", s)
		}
	}
	if a.tenant != "" {
		return fmt.Sprintf("a new XR named apart: none of its %d resources has the original's names", len(rendered)-1), nil
	}
	if len(a.held) == 0 {
		return fmt.Sprintf("updated in place; nothing withdrawn (%d resources)", len(rendered)-1), nil
	}
	return fmt.Sprintf("held: %s; nothing withdrawn (%d resources)", strings.Join(a.held, ", "), len(rendered)-1), nil
}

// moveRequired moves the namespaced required objects gathered in dir (the
// Cluster an XR runs on) into namespace ns, with a domain of ns's own, as a
// tenant's Cluster would be.
func moveRequired(dir, ns string) error {
	files, err := filepath.Glob(filepath.Join(dir, "required-*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range files {
		objs, err := xpsim.Load(f)
		if err != nil {
			return err
		}
		var out []byte
		for _, o := range objs {
			if o["metadata"].(map[string]any)["namespace"] != nil {
				fntest.Set("metadata.namespace", ns)(o)
			}
			if str(o, "kind") == "Cluster" {
				fntest.Set("spec.parameters.domain", ns+".apps.example.com")(o)
			}
			b, err := yaml.Marshal(o)
			if err != nil {
				return err
			}
			out = append(append(out, "---\n"...), b...)
		}
		if err := os.WriteFile(f, out, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func conditionMessage(o xpsim.Object, typ string) string {
	st, _ := o["status"].(map[string]any)
	conds, _ := st["conditions"].([]any)
	for _, c := range conds {
		if m, _ := c.(map[string]any); str(m, "type") == typ {
			return str(m, "message")
		}
	}
	return ""
}

func writeYAML(path string, o xpsim.Object) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	b, err := yaml.Marshal(o)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

func brief(s string) string {
	s = strings.TrimSpace(strings.SplitN(s, "\n", 2)[0])
	if i := strings.Index(s, "; "); i > 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 90 {
		return string(r[:90]) + "..."
	}
	return s
}
