package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/portal"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// portalConfig is where the portal run.sh started is, and what its
// scenario needs besides.
type portalConfig struct {
	// url is the portal's address, e.g. http://127.0.0.1:18100.
	url string
	// tokens is the API server's token file (token,user,uid,groups), where
	// the tenants' tokens are.
	tokens string
	// screenshot is where the page's screenshot is saved; empty: nowhere.
	screenshot string
}

// portalCfg is set from the flags.
var portalCfg = portalConfig{}

// The portal scenario's namespaces and users, as run.sh set them up: alice
// of group tenant-a may edit AppEnvironments in tenant-a, bob of group
// tenant-b only in tenant-b.
const (
	portalTenant    = "tenant-a"
	portalOther     = "tenant-b"
	portalPolicyNS  = "crossplane-system"
	portalPolicyPre = "portal-policy-"
	portalSA        = "ci"
)

// xrAPIVersion is our XRs' (AppEnvironment, Cluster).
const xrAPIVersion = "platform.example.org/v1alpha1"

// portal drives the portal run.sh started, as the tenants would: RBAC,
// validation, an environment created, followed, resumed and deleted
// through the API, and one through the page in a real browser.
func (s *scenarios) portal(cfg portalConfig) error {
	if cfg.tokens == "" {
		return errors.New("the portal scenario needs -tokens, the API server's token file")
	}
	tokens, err := readTokens(cfg.tokens)
	if err != nil {
		return err
	}
	alice, bob := tokens["alice"], tokens["bob"]
	if alice == "" || bob == "" {
		return fmt.Errorf("%s has no token for alice or bob", cfg.tokens)
	}
	p := &portalClient{base: strings.TrimSuffix(cfg.url, "/"), http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{}}}
	if _, err := s.waitFor("the portal's /healthz", func() (bool, error) {
		a, err := p.call(http.MethodGet, "/healthz", "", nil)
		return err == nil && a.code == http.StatusOK, err
	}); err != nil {
		return err
	}

	// The tenant's policy, as run.sh applied it from the example, and the
	// Cluster it names, a copy of the example Cluster of its cloud.
	cm, err := s.k.get("v1", "ConfigMap", portalPolicyNS, portalPolicyPre+portalTenant)
	if err != nil {
		return fmt.Errorf("the policy of %s: %w", portalTenant, err)
	}
	policy, err := portal.ParsePolicy(str(cm, "data", portal.PolicyKey))
	if err != nil {
		return err
	}
	size := ""
	for _, n := range policy.SizeNames() {
		if sz := policy.Sizes[n]; sz.Database != "" && (size == "" || sz.Replicas < policy.Sizes[size].Replicas) {
			size = n
		}
	}
	if size == "" {
		return fmt.Errorf("the policy of %s offers no size with a database", portalTenant)
	}
	example := policy.Cloud + "/cluster.yaml"
	cluster := fntest.MustLoad(filepath.Join(s.examples, example))[0]
	meta := cluster["metadata"].(map[string]any)
	meta["name"], meta["namespace"] = policy.Cluster, portalTenant
	// The tenant's Cluster has the domain its policy gives the tenant's
	// environments, one the environment assigns the namespace: the
	// example Cluster's is the platform namespace's.
	if policy.Domain != "" {
		cluster["spec"].(map[string]any)["parameters"].(map[string]any)["domain"] = policy.Domain
	}
	if err := s.k.apply(cluster); err != nil {
		return fmt.Errorf("cannot create the Cluster %s/%s: %w", portalTenant, policy.Cluster, err)
	}
	clusterIn, err := s.waitFor("Cluster "+portalTenant+"/"+policy.Cluster+" Ready", func() (bool, error) {
		live, err := s.k.get(xrAPIVersion, "Cluster", portalTenant, policy.Cluster)
		if err != nil {
			return false, err
		}
		st, reason, msg := condition(live, "Ready")
		return st == "True", fmt.Errorf("condition Ready is %q (%s): %s", st, reason, msg)
	})
	if err != nil {
		return err
	}
	fmt.Printf("  portal: Cluster %s/%s (a copy of %s, as the policy names it) created -> Ready in %.1f s\n", portalTenant, policy.Cluster, example, clusterIn.Seconds())

	if err := s.portalRefusals(p, alice, bob, size); err != nil {
		return err
	}
	if err := s.portalRedteam(p, alice, tokens["admin"]); err != nil {
		return fmt.Errorf("the red team: %w", err)
	}
	if err := s.portalServiceAccount(p); err != nil {
		return err
	}
	line, err := s.portalEnvironment(p, alice, bob, policy, size)
	if err != nil {
		return err
	}
	page, err := s.portalPage(p, cfg.screenshot, alice, size)
	if err != nil {
		return fmt.Errorf("the page: %w", err)
	}

	live, err := s.k.get(xrAPIVersion, "Cluster", portalTenant, policy.Cluster)
	if err != nil {
		return err
	}
	refs := resourceRefs(live)
	if err := s.k.delete(xrAPIVersion, "Cluster", portalTenant, policy.Cluster); err != nil {
		return err
	}
	took, err := s.gone("Cluster", portalTenant, policy.Cluster, refs)
	if err != nil {
		return err
	}
	fmt.Printf("  portal: Cluster %s/%s deleted, all %d composed resources gone, in %.1f s\n", portalTenant, policy.Cluster, len(refs), took.Seconds())
	s.results = append(s.results, line)
	if page != "" {
		s.results = append(s.results, page)
	}
	return nil
}

// envsPath is the API path of a namespace's environments, or of one.
func envsPath(ns, name string) string {
	p := "/api/v1/namespaces/" + ns + "/environments"
	if name != "" {
		p += "/" + name
	}
	return p
}

// noEnvironments fails when namespace ns has an AppEnvironment.
func (s *scenarios) noEnvironments(ns, after string) error {
	l, err := s.k.list(xrAPIVersion, "AppEnvironment", ns, "")
	if err != nil {
		return err
	}
	if len(l) > 0 {
		return fmt.Errorf("after %s, namespace %s has %d AppEnvironments (%s first)", after, ns, len(l), str(l[0], "metadata", "name"))
	}
	return nil
}

// portalRefusals checks what the portal must refuse before it creates
// anything: no token or a bad one (401), invalid requests (400, naming
// each field; 413), and bob in alice's namespace (403).
func (s *scenarios) portalRefusals(p *portalClient, alice, bob, size string) error {
	list := envsPath(portalTenant, "")
	for _, token := range []string{"", "not-a-token"} {
		a, err := p.expect(http.StatusUnauthorized, "a caller without a valid token", http.MethodGet, list, token, nil)
		if err != nil {
			return err
		}
		if a.problem().Error == "" || a.header.Get("WWW-Authenticate") == "" {
			return fmt.Errorf("401 without an error message or WWW-Authenticate: %s", a)
		}
	}
	if _, err := p.expect(http.StatusUnauthorized, "a create without a token", http.MethodPost, list, "", []byte(`{"name":"x","size":"`+size+`"}`)); err != nil {
		return err
	}

	bad := []struct {
		body   string
		code   int
		fields []string
	}{
		{body: `{"name":"Bad_Name","size":"huge","database":true}`, code: http.StatusBadRequest, fields: []string{"name", "size"}},
		{body: `{"name":"fine","size":"` + size + `","colour":"red"}`, code: http.StatusBadRequest, fields: []string{"colour"}},
		{body: `{"name":"fine","size":"` + size + `","image":"docker.io/evil/app:1"}`, code: http.StatusBadRequest, fields: []string{"image"}},
		{body: `{"name":"` + strings.Repeat("x", 70<<10) + `","size":"` + size + `"}`, code: http.StatusRequestEntityTooLarge},
	}
	var named []string
	for _, b := range bad {
		a, err := p.expect(b.code, "alice", http.MethodPost, list, alice, []byte(b.body))
		if err != nil {
			return err
		}
		if got := a.problem().fields(); !slices.Equal(got, b.fields) {
			return fmt.Errorf("%s: the 400 names the fields %v, want %v: %s", b.body[:min(len(b.body), 60)], got, b.fields, a)
		}
		named = append(named, b.fields...)
	}
	if err := s.noEnvironments(portalTenant, "the invalid requests"); err != nil {
		return err
	}
	fmt.Printf("  portal: 401 without a token or with a bad one; 400 naming %s, 413 for a body over 64 KiB; nothing created\n", strings.Join(named, ", "))

	body := []byte(`{"name":"bobs-env","size":"` + size + `"}`)
	for _, c := range []struct {
		method, path string
		body         []byte
	}{
		{http.MethodPost, list, body},
		{http.MethodGet, list, nil},
		{http.MethodGet, "/api/v1/namespaces/" + portalTenant + "/policy", nil},
	} {
		if _, err := p.expect(http.StatusForbidden, "bob in "+portalTenant, c.method, c.path, bob, c.body); err != nil {
			return err
		}
	}
	if _, err := p.expect(http.StatusForbidden, "alice in "+portalOther, http.MethodGet, envsPath(portalOther, ""), alice, nil); err != nil {
		return err
	}
	if err := s.noEnvironments(portalTenant, "bob's create"); err != nil {
		return err
	}
	a, err := p.expect(http.StatusOK, "alice", http.MethodGet, "/api/v1/namespaces/"+portalTenant+"/policy", alice, nil)
	if err != nil {
		return err
	}
	var view struct {
		Cloud    string   `json:"cloud"`
		Cluster  string   `json:"cluster"`
		Sizes    []string `json:"sizes"`
		Database bool     `json:"database"`
	}
	if err := json.Unmarshal(a.body, &view); err != nil {
		return fmt.Errorf("alice's view of the policy: %w: %s", err, a)
	}
	if !slices.Contains(view.Sizes, size) || !view.Database {
		return fmt.Errorf("alice's view of the policy offers no size %s with a database: %s", size, a)
	}
	fmt.Printf("  portal: bob in %s: create, list and the policy refused (403), nothing created; alice in %s refused (403); alice sees the policy (%s on %s, sizes %s)\n",
		portalTenant, portalOther, view.Cloud, view.Cluster, strings.Join(view.Sizes, ", "))
	return nil
}

// portalServiceAccount checks that a service account's token, whose user
// has extra fields, works: the portal impersonates them too.
func (s *scenarios) portalServiceAccount(p *portalClient) error {
	if err := s.k.apply(object{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": portalSA, "namespace": portalTenant}}); err != nil {
		return err
	}
	rb := object{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
		"metadata": map[string]any{"name": "appenvironment-editor-" + portalSA, "namespace": portalTenant},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "appenvironment-editor"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": portalSA, "namespace": portalTenant}},
	}
	if err := s.k.apply(rb); err != nil {
		return err
	}
	defer func() {
		_ = s.k.delete("rbac.authorization.k8s.io/v1", "RoleBinding", portalTenant, "appenvironment-editor-"+portalSA)
		_ = s.k.delete("v1", "ServiceAccount", portalTenant, portalSA)
	}()
	tr, err := s.k.post("v1", "ServiceAccount", portalTenant, portalSA, "token",
		object{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{"expirationSeconds": 600}})
	if err != nil {
		return fmt.Errorf("cannot get a token of ServiceAccount %s/%s: %w", portalTenant, portalSA, err)
	}
	token := str(tr, "status", "token")
	// The roles may take a moment to reach the authorizer's cache.
	var last answer
	if _, err := s.waitFor("the ServiceAccount's list through the portal", func() (bool, error) {
		last, err = p.call(http.MethodGet, envsPath(portalTenant, ""), token, nil)
		if err != nil {
			return false, err
		}
		return last.code == http.StatusOK, fmt.Errorf("%s", last)
	}); err != nil {
		return err
	}
	fmt.Printf("  portal: ServiceAccount %s/%s (a bound token, whose user has extra fields) lists environments through the portal's impersonation\n", portalTenant, portalSA)
	return nil
}

// portalEnvironment creates an environment as alice through the API,
// follows it to Ready on its stream, dropping the stream and resuming it
// on the way, compares what the stream ends with to the API server, and
// deletes it. It returns the summary line.
func (s *scenarios) portalEnvironment(p *portalClient, alice, bob string, policy *portal.Policy, size string) (string, error) {
	const name = "review-app"
	ns := portalTenant
	body, _ := json.Marshal(map[string]any{"name": name, "size": size, "database": true})
	start := time.Now()
	a, err := p.expect(http.StatusAccepted, "alice", http.MethodPost, envsPath(ns, ""), alice, body)
	if err != nil {
		return "", err
	}
	var created struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		URL       string `json:"url"`
		Events    string `json:"events"`
	}
	if err := json.Unmarshal(a.body, &created); err != nil {
		return "", fmt.Errorf("the 202: %w: %s", err, a)
	}
	if loc := a.header.Get("Location"); loc != envsPath(ns, name) || created.URL != loc || created.Events != loc+"/events" || created.Name != name || created.Namespace != ns {
		return "", fmt.Errorf("the 202's Location %q and body %s, want %s", loc, a.body, envsPath(ns, name))
	}
	live, err := s.k.get(xrAPIVersion, "AppEnvironment", ns, name)
	if err != nil {
		return "", fmt.Errorf("the AppEnvironment alice created: %w", err)
	}
	wantLabels := map[string]string{xr.LabelCloud: policy.Cloud, xr.LabelPlaneID: policy.PlaneID}
	if policy.PlaneType != "" {
		wantLabels[xr.LabelPlaneType] = policy.PlaneType
	}
	for k, v := range wantLabels {
		if got := str(live, "metadata", "labels", k); got != v {
			return "", fmt.Errorf("the AppEnvironment's label %s is %q, the policy says %q", k, got, v)
		}
	}
	if by := str(live, "metadata", "annotations", portal.AnnotationRequestedBy); by != "alice" {
		return "", fmt.Errorf("the AppEnvironment's %s is %q, not alice", portal.AnnotationRequestedBy, by)
	}
	if ref := str(live, "spec", "parameters", "clusterRef", "name"); ref != policy.Cluster {
		return "", fmt.Errorf("the AppEnvironment's clusterRef is %q, the policy's cluster %q", ref, policy.Cluster)
	}
	fmt.Printf("  portal: alice created %s/%s (202, Location %s): labels %s, %s=alice, size %s with a database\n",
		ns, name, a.header.Get("Location"), labelString(wantLabels), portal.AnnotationRequestedBy, size)

	// bob may neither read, follow nor delete it.
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, envsPath(ns, name)}, {http.MethodDelete, envsPath(ns, name)},
	} {
		if _, err := p.expect(http.StatusForbidden, "bob in "+ns, c.method, c.path, bob, nil); err != nil {
			return "", err
		}
	}
	if _, err := p.stream(created.Events, bob, ""); err == nil {
		return "", fmt.Errorf("bob's stream of %s/%s was opened", ns, name)
	} else if se := (*streamError)(nil); !errors.As(err, &se) || se.a.code != http.StatusForbidden {
		return "", fmt.Errorf("bob's stream of %s/%s: want 403, got %w", ns, name, err)
	}
	if _, err := s.k.get(xrAPIVersion, "AppEnvironment", ns, name); err != nil {
		return "", fmt.Errorf("after bob's delete: %w", err)
	}
	fmt.Printf("  portal: bob in %s: get, stream and delete of %s refused (403); it is still there\n", ns, name)

	// Follow it: a snapshot first, then a few events; drop the stream,
	// let events happen, resume with Last-Event-ID.
	v := &envView{rows: map[string]streamRow{}, turned: map[string]bool{}}
	st, err := p.stream(created.Events, alice, "")
	if err != nil {
		return "", err
	}
	for i := 0; i < 4; i++ {
		ev, ok, err := st.next(s.timeout)
		if err != nil {
			st.close()
			return "", fmt.Errorf("the first events of %s (got %d): %w", name, i, err)
		}
		if !ok {
			st.close()
			return "", fmt.Errorf("timed out after %s waiting for the first events of %s (got %d)", s.timeout, name, i)
		}
		if err := v.apply(ev, i == 0, true); err != nil {
			st.close()
			return "", err
		}
	}
	st.close()
	dropped := fmt.Sprintf("%s-%d", v.epoch, v.last)
	time.Sleep(time.Second)
	if st, err = p.stream(created.Events, alice, dropped); err != nil {
		return "", err
	}
	defer st.close()
	resumedAt := uint64(0)
	for first := true; !v.ready(); first = false {
		ev, ok, err := st.next(time.Until(start.Add(s.timeout)))
		if err != nil {
			return "", err
		}
		if !ok {
			return "", fmt.Errorf("timed out after %s waiting for %s Ready on its stream: Ready %s (%s), %d of %d rows Ready", s.timeout, name, v.env.Ready, v.env.Message, v.readyCount(), len(v.rows))
		}
		if err := v.apply(ev, first, false); err != nil {
			return "", err
		}
		if first {
			resumedAt = ev.seq
		}
	}
	readyIn := time.Since(start)
	fmt.Printf("  portal: %s created -> Ready in %.1f s on alice's stream: a snapshot, then %d events (%d rows turned Ready=True, and the environment); dropped after event %s, resumed with Last-Event-ID at %s-%d: no gap, no repeat\n",
		name, readyIn.Seconds(), v.events-v.snapshots, len(v.turned), dropped, v.epoch, resumedAt)
	if len(v.turned) == 0 {
		return "", fmt.Errorf("no resource event turned a row Ready=True")
	}

	// What the stream ends with is what the API server has, once quiet.
	var mismatch error
	for i := 0; i < 30; i++ {
		for {
			ev, ok, err := st.next(time.Second)
			if err != nil {
				return "", err
			}
			if !ok {
				break
			}
			if err := v.apply(ev, false, false); err != nil {
				return "", err
			}
		}
		if mismatch = s.matches(v, ns, name); mismatch == nil {
			break
		}
	}
	if mismatch != nil {
		return "", fmt.Errorf("after 30 s the stream still differs from the API server: %w", mismatch)
	}
	rows := len(v.rows)
	fmt.Printf("  portal: the stream's state matches the API server's: %s Ready and Synced, %d resources with the same readiness\n", name, rows)

	// alice deletes it; the stream says so.
	live, err = s.k.get(xrAPIVersion, "AppEnvironment", ns, name)
	if err != nil {
		return "", err
	}
	refs := resourceRefs(live)
	start = time.Now()
	a, err = p.expect(http.StatusAccepted, "alice", http.MethodDelete, envsPath(ns, name), alice, nil)
	if err != nil {
		return "", err
	}
	for !v.deleted {
		ev, ok, err := st.next(time.Until(start.Add(s.timeout)))
		if err != nil {
			return "", err
		}
		if !ok {
			return "", fmt.Errorf("timed out after %s waiting for the stream of %s to say deleted", s.timeout, name)
		}
		if err := v.apply(ev, false, false); err != nil {
			return "", err
		}
	}
	took, err := s.gone("AppEnvironment", ns, name, refs)
	if err != nil {
		return "", err
	}
	if _, err := p.expect(http.StatusNotFound, "alice", http.MethodGet, envsPath(ns, name), alice, nil); err != nil {
		return "", err
	}
	fmt.Printf("  portal: alice deleted %s (202: %s); the stream said deleted; gone with its %d composed resources in %.1f s; %d events in all\n",
		name, bytes.TrimSpace(a.body), len(refs), took.Seconds(), v.events)
	return fmt.Sprintf("%-30s Ready in %5.1f s, %3d composed resources, %d events on its stream, resumed without a gap", "portal "+ns+"/"+name, readyIn.Seconds(), rows, v.events), nil
}

// gone waits until an XR of ours and what it composed are gone.
func (s *scenarios) gone(kind, ns, name string, refs []composedRef) (time.Duration, error) {
	return s.waitFor(kind+" "+ns+"/"+name+" deleted with its composed resources", func() (bool, error) {
		if err := s.absent(xrAPIVersion, kind, ns, name); err != nil {
			return false, err
		}
		for _, r := range refs {
			if err := s.absent(r.apiVersion, r.kind, ns, r.name); err != nil {
				return false, err
			}
		}
		return true, nil
	})
}

// absent fails unless an object is gone.
func (s *scenarios) absent(apiVersion, kind, ns, name string) error {
	_, err := s.k.get(apiVersion, kind, ns, name)
	switch {
	case errors.Is(err, errNotFound):
		return nil
	case err == nil:
		return fmt.Errorf("%s %s still exists", kind, name)
	}
	return err
}

func labelString(m map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return strings.Join(out, ",")
}
