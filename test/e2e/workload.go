package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/simulate"
)

// The local API server plays every workload cluster: provider-kubernetes
// runs for real and applies what we compose through it here. What the
// cloud providers, provider-helm and the kubelet would do for it, the
// simulator does, and nothing more:
//   - a cluster's connection secret holds a kubeconfig for this API server
//     (a GKE one without a token, as GKE's: the ProviderConfig's Google
//     identity supplies it, from a credentials Secret holding the token);
//   - a database's password Secret exists, as the provider that generates
//     or reads it would have it;
//   - a Helm release creates its namespace and its chart's CRDs (schemaless
//     stand-ins), as provider-helm would by installing the chart;
//   - pods are bound to a node and reported running and ready, and deleted once terminating.

// gcpCredentials is the Secret the example environment names as
// gcp.credentialsSecret; here it holds an access token for the API server,
// which provider-kubernetes's Google identity uses as is.
const (
	gcpCredentialsName = "gcp-creds" //nolint:gosec // the name of a Secret
	gcpCredentialsKey  = "credentials"
	nodeName           = "e2e-node"
)

// chartCRDs are the kinds each chart installs that we compose Objects of.
var chartCRDs = map[string][][3]string{ // group, kind, plural
	"cert-manager": {{"cert-manager.io", "Certificate", "certificates"}, {"cert-manager.io", "ClusterIssuer", "clusterissuers"}, {"cert-manager.io", "Issuer", "issuers"}},
}

// ownedBy is the owner reference providers put on the Secrets they write,
// so that the Secret goes with the managed resource.
func ownedBy(o object) []any {
	return []any{map[string]any{
		"apiVersion": o["apiVersion"], "kind": o["kind"], "name": str(o, "metadata", "name"), "uid": str(o, "metadata", "uid"),
	}}
}

// kubeconfig is a kubeconfig for the local API server.
func (c *cloud) kubeconfig(withToken bool) string {
	user := "{}"
	if withToken {
		user = "{token: " + c.k.token + "}"
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: workload
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: workload
  user: %s
contexts:
- name: workload
  context: {cluster: workload, user: workload}
current-context: workload
`, c.k.server, base64.StdEncoding.EncodeToString(c.k.ca), user)
}

// secret applies a Secret unless one exists (a provider never rewrites a
// password it generated).
func (c *cloud) secret(namespace, name string, data map[string]string, owners []any, overwrite bool) error {
	if !overwrite {
		if _, err := c.k.get("v1", "Secret", namespace, name); err == nil {
			return nil
		}
	}
	meta := map[string]any{"name": name, "namespace": namespace}
	if owners != nil {
		meta["ownerReferences"] = owners
	}
	sd := map[string]any{}
	for k, v := range data {
		sd[k] = v
	}
	return c.k.apply(object{"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque", "stringData": sd})
}

// connect writes a managed resource's connection secret as its provider
// would once it is ready: for a cluster, a kubeconfig of the local API
// server.
func (c *cloud) connect(o object) error {
	cd := simulate.ConnectionDetails(o)
	if cd == nil {
		cd = c.endpointDetails(o)
	}
	if cd == nil {
		return nil
	}
	ref, _ := o["spec"].(map[string]any)["writeConnectionSecretToRef"].(map[string]any)
	name, _ := ref["name"].(string)
	ns, _ := ref["namespace"].(string)
	if ns == "" {
		ns = str(o, "metadata", "namespace")
	}
	gke := strings.HasPrefix(o["apiVersion"].(string), "container.gcp")
	data := map[string]string{}
	for k, v := range cd {
		data[k] = string(v)
	}
	if _, ok := data["kubeconfig"]; ok {
		data["kubeconfig"] = c.kubeconfig(!gke)
	}
	if gke {
		if err := c.secret(ns, gcpCredentialsName, map[string]string{gcpCredentialsKey: c.k.token}, nil, false); err != nil {
			return err
		}
	}
	return c.secret(ns, name, data, ownedBy(o), true)
}

// endpointDetails are the connection details a provider publishes of a
// database server (or anything else that writes a connection Secret and
// reports an address): its address, endpoint and port, the user name and
// its password. provider-sql connects with them, and cannot delete its
// databases without them.
func (c *cloud) endpointDetails(o object) map[string][]byte {
	if at(o, "spec", "writeConnectionSecretToRef") == nil {
		return nil
	}
	ap, _ := simulate.Status(o)["atProvider"].(map[string]any)
	out := map[string][]byte{}
	for _, k := range []string{"address", "endpoint", "fqdn", "host", "port", "connectionName", "privateIpAddress"} {
		if v, ok := ap[k]; ok && v != nil {
			out[k] = []byte(fmt.Sprint(v))
		}
	}
	if len(out) == 0 {
		return nil
	}
	fp, _ := at(o, "spec", "forProvider").(map[string]any)
	for _, k := range []string{"username", "administratorLogin"} {
		if u, ok := fp[k].(string); ok {
			out["username"] = []byte(u)
		}
	}
	for k, v := range fp {
		ref, ok := v.(map[string]any)
		if !ok || !strings.HasSuffix(strings.ToLower(k), "passwordsecretref") {
			continue
		}
		ns, _ := ref["namespace"].(string)
		if ns == "" {
			ns = str(o, "metadata", "namespace")
		}
		name, _ := ref["name"].(string)
		key, _ := ref["key"].(string)
		if sec, err := c.k.get("v1", "Secret", ns, name); err == nil {
			if b, err := base64.StdEncoding.DecodeString(str(sec, "data", key)); err == nil {
				out["password"] = b
			}
		}
	}
	return out
}

// passwords creates the password Secrets a managed resource reads or has
// its provider generate (forProvider.*PasswordSecretRef), where missing.
func (c *cloud) passwords(o object) error {
	fp, _ := o["spec"].(map[string]any)["forProvider"].(map[string]any)
	for k, v := range fp {
		ref, ok := v.(map[string]any)
		if !ok || !strings.HasSuffix(strings.ToLower(k), "passwordsecretref") {
			continue
		}
		name, _ := ref["name"].(string)
		key, _ := ref["key"].(string)
		ns, _ := ref["namespace"].(string)
		if ns == "" {
			ns = str(o, "metadata", "namespace")
		}
		b := make([]byte, 12)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		if err := c.secret(ns, name, map[string]string{key: hex.EncodeToString(b)}, nil, false); err != nil {
			return err
		}
	}
	return nil
}

// install does what installing a Helm release does that we rely on: its
// namespace, and the CRDs of its chart.
func (c *cloud) install(o object) error {
	if !strings.HasPrefix(o["apiVersion"].(string), "helm.") {
		return nil
	}
	if ns := str(o, "spec", "forProvider", "namespace"); ns != "" {
		if err := c.k.apply(object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}); err != nil {
			return err
		}
	}
	for _, crd := range chartCRDs[str(o, "spec", "forProvider", "chart", "name")] {
		scope := "Namespaced"
		if strings.HasPrefix(crd[1], "Cluster") {
			scope = "Cluster"
		}
		err := c.k.apply(object{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": crd[2] + "." + crd[0]},
			"spec": map[string]any{
				"group": crd[0], "scope": scope,
				"names": map[string]any{"kind": crd[1], "plural": crd[2], "singular": strings.ToLower(crd[1])},
				"versions": []any{map[string]any{
					"name": "v1", "served": true, "storage": true,
					"subresources": map[string]any{"status": map[string]any{}},
					"schema":       map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
				}},
			},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// kubelet binds a pending pod to the one node and reports a bound pod
// running and ready, so that Deployments become available and ReplicaSets
// count their pods; a terminating pod it deletes for good.
func (c *cloud) kubelet(p object) error {
	now := time.Now().UTC().Format(time.RFC3339)
	ns, name := str(p, "metadata", "namespace"), str(p, "metadata", "name")
	if str(p, "metadata", "deletionTimestamp") != "" {
		// The containers stopped: the kubelet deletes the pod for good.
		grace := int64(0)
		err := c.k.deleteWith("v1", "Pod", ns, name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
		if err != nil && !errors.Is(err, errNotFound) {
			return fmt.Errorf("cannot delete pod %s/%s: %w", ns, name, err)
		}
		return nil
	}
	if str(p, "spec", "nodeName") == "" {
		_, err := c.k.post("v1", "Pod", ns, name, "binding", object{
			"apiVersion": "v1", "kind": "Binding", "metadata": map[string]any{"name": name, "namespace": ns},
			"target": map[string]any{"apiVersion": "v1", "kind": "Node", "name": nodeName},
		})
		if err != nil && !errors.Is(err, errNotFound) {
			return fmt.Errorf("cannot bind pod %s/%s: %w", ns, name, err)
		}
		return nil
	}
	if s, _, _ := condition(p, "Ready"); s == "True" {
		return nil
	}
	var statuses []any
	for _, ct := range p["spec"].(map[string]any)["containers"].([]any) {
		m := ct.(map[string]any)
		statuses = append(statuses, map[string]any{
			"name": m["name"], "image": m["image"], "imageID": "", "ready": true, "started": true, "restartCount": 0,
			"state": map[string]any{"running": map[string]any{"startedAt": now}},
		})
	}
	cond := func(t string) any {
		return map[string]any{"type": t, "status": "True", "lastTransitionTime": now}
	}
	err := c.k.patchStatus("v1", "Pod", ns, name, map[string]any{
		"phase": "Running", "startTime": now, "hostIP": "127.0.0.1", "podIP": "127.0.0.1",
		"conditions":        []any{cond("PodScheduled"), cond("Initialized"), cond("ContainersReady"), cond("Ready")},
		"containerStatuses": statuses,
	})
	if err != nil && !errors.Is(err, errNotFound) {
		return fmt.Errorf("cannot report pod %s/%s running: %w", ns, name, err)
	}
	return nil
}
