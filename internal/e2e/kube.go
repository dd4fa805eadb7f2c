package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"
)

// errNotFound is a 404 from the API server.
var errNotFound = errors.New("not found")

// errConflict is a 409 from the API server: the object changed since it
// was read.
var errConflict = errors.New("conflict")

// kube is the little of a Kubernetes client the end-to-end driver needs:
// discovery, get, list, server-side apply, status patches and delete, over
// the API server's REST interface with the kubeconfig's bearer token.
type kube struct {
	server string
	token  string
	// ca is the API server's CA certificate (PEM), which the kubeconfigs
	// the simulator writes for the workload clusters carry.
	ca   []byte
	http *http.Client

	mu        sync.Mutex
	resources map[string]resourceInfo // by apiVersion + "/" + kind
}

// resourceInfo is where a kind is served.
type resourceInfo struct {
	plural     string
	namespaced bool
}

// newKube reads a kubeconfig with one cluster (server, certificate-authority
// file) and one token user, as the end-to-end scripts write it.
func newKube(path string) (*kube, error) {
	b, err := os.ReadFile(path) //nolint:gosec // the kubeconfig the scripts wrote
	if err != nil {
		return nil, err
	}
	var kc struct {
		Clusters []struct {
			Cluster struct {
				Server string `json:"server"`
				CA     string `json:"certificate-authority"`
			} `json:"cluster"`
		} `json:"clusters"`
		Users []struct {
			User struct {
				Token string `json:"token"`
			} `json:"user"`
		} `json:"users"`
	}
	if err := yaml.Unmarshal(b, &kc); err != nil {
		return nil, err
	}
	if len(kc.Clusters) == 0 || len(kc.Users) == 0 {
		return nil, fmt.Errorf("%s: want one cluster and one user", path)
	}
	ca, err := os.ReadFile(kc.Clusters[0].Cluster.CA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("invalid CA certificate")
	}
	return &kube{
		server: kc.Clusters[0].Cluster.Server,
		token:  kc.Users[0].User.Token,
		ca:     ca,
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			// One HTTP/2 connection carries every request and watch, as
			// client-go's does; over HTTP/1.1 each would hold a connection.
			ForceAttemptHTTP2: true,
			TLSClientConfig:   &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		}},
		resources: map[string]resourceInfo{},
	}, nil
}

func (k *kube) do(method, path, contentType string, body []byte) ([]byte, error) {
	return k.doContext(context.Background(), method, path, contentType, body)
}

// doContext is do bound to a context.
func (k *kube) doContext(ctx context.Context, method, path, contentType string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, k.server+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+k.token)
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rsp, err := k.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer rsp.Body.Close() //nolint:errcheck // read to the end below
	b, err := io.ReadAll(rsp.Body)
	if err != nil {
		return nil, err
	}
	switch {
	case rsp.StatusCode == http.StatusNotFound:
		return nil, errNotFound
	case rsp.StatusCode == http.StatusConflict:
		return nil, fmt.Errorf("%w: %s %s: %s", errConflict, method, path, bytes.TrimSpace(b))
	case rsp.StatusCode >= 300:
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, rsp.Status, bytes.TrimSpace(b))
	}
	return b, nil
}

// resource discovers where a kind is served. Kinds defined after the last
// discovery (a new CRD) are found by discovering again.
func (k *kube) resource(apiVersion, kind string) (resourceInfo, error) {
	key := apiVersion + "/" + kind
	k.mu.Lock()
	ri, ok := k.resources[key]
	k.mu.Unlock()
	if ok {
		return ri, nil
	}
	path := "/apis/" + apiVersion
	if !strings.Contains(apiVersion, "/") {
		path = "/api/" + apiVersion
	}
	b, err := k.do(http.MethodGet, path, "", nil)
	if err != nil {
		return resourceInfo{}, fmt.Errorf("cannot discover %s: %w", apiVersion, err)
	}
	var list struct {
		Resources []struct {
			Name       string `json:"name"`
			Kind       string `json:"kind"`
			Namespaced bool   `json:"namespaced"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return resourceInfo{}, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, r := range list.Resources {
		if !strings.Contains(r.Name, "/") {
			k.resources[apiVersion+"/"+r.Kind] = resourceInfo{plural: r.Name, namespaced: r.Namespaced}
		}
	}
	if ri, ok = k.resources[key]; !ok {
		return resourceInfo{}, fmt.Errorf("%s %s is not served", apiVersion, kind)
	}
	return ri, nil
}

// path is the REST path of a kind, in a namespace, of a name, of a
// subresource; empty parts are left out.
func (k *kube) path(apiVersion, kind, namespace, name, sub string) (string, error) {
	ri, err := k.resource(apiVersion, kind)
	if err != nil {
		return "", err
	}
	p := "/apis/" + apiVersion
	if !strings.Contains(apiVersion, "/") {
		p = "/api/" + apiVersion
	}
	if ri.namespaced && namespace != "" {
		p += "/namespaces/" + namespace
	}
	p += "/" + ri.plural
	if name != "" {
		p += "/" + name
	}
	if sub != "" {
		p += "/" + sub
	}
	return p, nil
}

func (k *kube) get(apiVersion, kind, namespace, name string) (object, error) {
	p, err := k.path(apiVersion, kind, namespace, name, "")
	if err != nil {
		return nil, err
	}
	b, err := k.do(http.MethodGet, p, "", nil)
	if err != nil {
		return nil, err
	}
	o := object{}
	return o, json.Unmarshal(b, &o)
}

// list lists a kind across namespaces (or in one), with a label selector.
func (k *kube) list(apiVersion, kind, namespace, selector string) ([]object, error) {
	p, err := k.path(apiVersion, kind, namespace, "", "")
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if selector != "" {
		q.Set("labelSelector", selector)
	}
	var out []object
	_, err = k.listEach(context.Background(), p, q, func(o object) { out = append(out, o) })
	return out, err
}

// apply server-side applies an object as the e2e field manager.
func (k *kube) apply(o object) error { return k.applyAs("e2e", o) }

// applyAs server-side applies an object as a field manager: a partial
// object applied as the manager that applied the whole one would remove
// every field it leaves out.
func (k *kube) applyAs(manager string, o object) error {
	meta, _ := o["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	p, err := k.path(o["apiVersion"].(string), o["kind"].(string), ns, name, "")
	if err != nil {
		return err
	}
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	_, err = k.do(http.MethodPatch, p+"?fieldManager="+manager+"&force=true", "application/apply-patch+yaml", b)
	return err
}

// patchStatus merge-patches the status subresource.
func (k *kube) patchStatus(apiVersion, kind, namespace, name string, status map[string]any) error {
	p, err := k.path(apiVersion, kind, namespace, name, "status")
	if err != nil {
		return err
	}
	b, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	_, err = k.do(http.MethodPatch, p, "application/merge-patch+json", b)
	return err
}

// patch merge-patches an object (its metadata, say). A
// metadata.resourceVersion in the patch makes it conditional: the API
// server refuses it with a conflict (errConflict) when the object changed.
func (k *kube) patch(apiVersion, kind, namespace, name string, body object) error {
	p, err := k.path(apiVersion, kind, namespace, name, "")
	if err != nil {
		return err
	}
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	_, err = k.do(http.MethodPatch, p, "application/merge-patch+json", b)
	return err
}

// post creates an object, or a subresource of one (a pod's binding).
func (k *kube) post(apiVersion, kind, namespace, name, sub string, o object) error {
	p, err := k.path(apiVersion, kind, namespace, name, sub)
	if err != nil {
		return err
	}
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	_, err = k.do(http.MethodPost, p, "application/json", b)
	return err
}

func (k *kube) delete(apiVersion, kind, namespace, name string) error {
	return k.deleteWith(apiVersion, kind, namespace, name, nil)
}

// deleteWith deletes with delete options (a grace period, a propagation
// policy).
func (k *kube) deleteWith(apiVersion, kind, namespace, name string, opts map[string]any) error {
	p, err := k.path(apiVersion, kind, namespace, name, "")
	if err != nil {
		return err
	}
	var body []byte
	ct := ""
	if opts != nil {
		if body, err = json.Marshal(opts); err != nil {
			return err
		}
		ct = "application/json"
	}
	_, err = k.do(http.MethodDelete, p, ct, body)
	if errors.Is(err, errNotFound) {
		return nil
	}
	return err
}

// resync is how long a watch runs before the kind is listed again: what a
// handler failed on is retried then at the latest.
const resync = time.Minute

// watch calls fn with every object of a kind (across namespaces, with a
// label selector) that is listed, added or modified, until ctx ends, as an
// informer would: a list, then a watch from the list's resource version,
// then a list again whenever the watch ends (after resync, or when the API
// server ends it). It returns ctx's error.
func (k *kube) watch(ctx context.Context, apiVersion, kind, selector string, fn func(object)) error {
	return k.watchEvents(ctx, apiVersion, kind, selector, func(typ string, o object) {
		if typ != "DELETED" {
			fn(o)
		}
	})
}

// watchEvents is watch, with every event's type: LISTED for what a list
// brings, ADDED, MODIFIED and DELETED for what the watch brings.
func (k *kube) watchEvents(ctx context.Context, apiVersion, kind, selector string, fn func(typ string, o object)) error {
	p, err := k.path(apiVersion, kind, "", "", "")
	if err != nil {
		return err
	}
	q := url.Values{}
	if selector != "" {
		q.Set("labelSelector", selector)
	}
	// The list is served from the API server's watch cache, as an
	// informer's: what changed since, the watch brings.
	l0 := url.Values{"resourceVersion": {"0"}}
	maps.Copy(l0, q)
	for ctx.Err() == nil {
		rv, err := k.listEach(ctx, p, l0, func(o object) { fn("LISTED", o) })
		if err == nil {
			err = k.follow(ctx, p, q, rv, fn)
		}
		if err != nil && ctx.Err() == nil {
			fmt.Printf("watch %s: %v\n", kind, err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
	return ctx.Err()
}

// listEach lists a path and calls fn with each item; it returns the list's
// resource version.
func (k *kube) listEach(ctx context.Context, p string, q url.Values, fn func(object)) (string, error) {
	b, err := k.doContext(ctx, http.MethodGet, p+"?"+q.Encode(), "", nil)
	if err != nil {
		return "", err
	}
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []object `json:"items"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return "", err
	}
	for _, o := range l.Items {
		fn(o)
	}
	return l.Metadata.ResourceVersion, nil
}

// follow watches a path from a resource version for at most resync and
// calls fn with each event and its object.
func (k *kube) follow(ctx context.Context, p string, q url.Values, rv string, fn func(string, object)) error {
	w := url.Values{"watch": {"1"}, "resourceVersion": {rv}, "allowWatchBookmarks": {"true"},
		"timeoutSeconds": {strconv.Itoa(int(resync.Seconds()))}}
	maps.Copy(w, q)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.server+p+"?"+w.Encode(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+k.token)
	req.Header.Set("Accept", "application/json")
	// The client's timeout would end every watch at 30 s; the watch's own
	// timeoutSeconds and ctx bound this one.
	rsp, err := (&http.Client{Transport: k.http.Transport}).Do(req)
	if err != nil {
		return err
	}
	defer rsp.Body.Close() //nolint:errcheck // a stream, read until it ends
	if rsp.StatusCode >= 300 {
		b, _ := io.ReadAll(rsp.Body)
		return fmt.Errorf("watch %s: %s: %s", p, rsp.Status, bytes.TrimSpace(b))
	}
	dec := json.NewDecoder(rsp.Body)
	for {
		var ev struct {
			Type   string `json:"type"`
			Object object `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
		switch ev.Type {
		case "ADDED", "MODIFIED", "DELETED":
			fn(ev.Type, ev.Object)
		case "ERROR":
			// Most often 410 Gone: the resource version is too old. List again.
			return nil
		}
	}
}
