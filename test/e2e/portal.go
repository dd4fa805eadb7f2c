package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
	"sigs.k8s.io/yaml"

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

// portalRBAC returns the ClusterRoles and Roles of the portal's install
// manifest as they are, and its bindings bound to user instead of the
// ServiceAccount, for an API server where the portal runs as that user:
// the shipped rules, nothing added.
func portalRBAC(path, user string) ([]byte, error) {
	objs, err := fntest.Load(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	var out bytes.Buffer
	for _, o := range objs {
		switch o["kind"] {
		case "ClusterRole", "Role":
		case "ClusterRoleBinding", "RoleBinding":
			subjects, _ := o["subjects"].([]any)
			if len(subjects) != 1 || str(subjects[0].(map[string]any), "kind") != "ServiceAccount" {
				return nil, fmt.Errorf("%s %s: want one ServiceAccount subject, got %v", o["kind"], str(o, "metadata", "name"), subjects)
			}
			o["subjects"] = []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}}
		default:
			continue
		}
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("cannot write %s %s: %w", o["kind"], str(o, "metadata", "name"), err)
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	if out.Len() == 0 {
		return nil, fmt.Errorf("%s has no roles", path)
	}
	return out.Bytes(), nil
}

// readTokens reads the API server's token file: each user's token.
func readTokens(path string) (map[string]string, error) {
	f, err := os.Open(path) //nolint:gosec // the token file run.sh wrote
	if err != nil {
		return nil, fmt.Errorf("cannot read the token file: %w", err)
	}
	defer f.Close() //nolint:errcheck // read only
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("cannot parse the token file %s: %w", path, err)
	}
	out := map[string]string{}
	for _, row := range rows {
		if len(row) >= 2 {
			out[row[1]] = row[0]
		}
	}
	return out, nil
}

// portalClient calls the portal's API.
type portalClient struct {
	base string
	http *http.Client
}

// problem is the body of the portal's error answers.
type problem struct {
	Error  string `json:"error"`
	Fields []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"fields"`
}

// fields are the fields a problem names, sorted.
func (p problem) fields() []string {
	var out []string
	for _, f := range p.Fields {
		out = append(out, f.Field)
	}
	slices.Sort(out)
	return out
}

// answer is one answer of the portal.
type answer struct {
	code   int
	header http.Header
	body   []byte
}

// problem decodes an error answer's body.
func (a answer) problem() problem {
	p := problem{}
	_ = json.Unmarshal(a.body, &p)
	return p
}

func (a answer) String() string {
	return fmt.Sprintf("%d %s", a.code, bytes.TrimSpace(a.body))
}

// call makes one request with a bearer token ("" for none).
func (p *portalClient) call(method, path, token string, body []byte) (answer, error) {
	req, err := http.NewRequest(method, p.base+path, bytes.NewReader(body)) //nolint:noctx // bounded by the client's timeout
	if err != nil {
		return answer{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rsp, err := p.http.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer rsp.Body.Close() //nolint:errcheck // read to the end below
	b, err := io.ReadAll(rsp.Body)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return answer{code: rsp.StatusCode, header: rsp.Header, body: b}, nil
}

// expect makes a request and fails unless it is answered with code.
func (p *portalClient) expect(code int, who, method, path, token string, body []byte) (answer, error) {
	a, err := p.call(method, path, token, body)
	if err != nil {
		return a, err
	}
	if a.code != code {
		return a, fmt.Errorf("%s: %s %s: want %d, got %s", who, method, path, code, a)
	}
	return a, nil
}

// sseEvent is one event of a stream.
type sseEvent struct {
	id, typ string
	data    []byte
	epoch   string
	seq     uint64
}

// sseStream is an open event stream.
type sseStream struct {
	events chan sseEvent
	err    error // why the stream ended, once events is closed
	cancel context.CancelFunc
}

// streamError is a stream the portal refused.
type streamError struct{ a answer }

func (e *streamError) Error() string { return "the stream was refused: " + e.a.String() }

// stream opens an environment's event stream, resuming after lastID when
// it is set.
func (p *portalClient) stream(path, token, lastID string) (*sseStream, error) {
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	// No client timeout: the stream is open until cancel.
	rsp, err := (&http.Client{Transport: p.http.Transport}).Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("cannot open %s: %w", path, err)
	}
	if rsp.StatusCode != http.StatusOK {
		defer rsp.Body.Close() //nolint:errcheck // read to the end
		b, _ := io.ReadAll(rsp.Body)
		cancel()
		return nil, &streamError{answer{code: rsp.StatusCode, header: rsp.Header, body: b}}
	}
	if ct := rsp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		_ = rsp.Body.Close()
		cancel()
		return nil, fmt.Errorf("%s: Content-Type %q, not text/event-stream", path, ct)
	}
	st := &sseStream{events: make(chan sseEvent, 4096), cancel: cancel}
	go func() {
		defer rsp.Body.Close() //nolint:errcheck // a stream, read until it ends
		st.err = readSSE(rsp.Body, st.events)
		close(st.events)
	}()
	return st, nil
}

// close ends the stream and waits until its reader stopped.
func (st *sseStream) close() {
	st.cancel()
	for range st.events {
		// drain until the reader closes it
	}
}

// next returns the next event, false when none came within wait.
func (st *sseStream) next(wait time.Duration) (sseEvent, bool, error) {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case ev, ok := <-st.events:
		if !ok {
			return sseEvent{}, false, fmt.Errorf("the stream ended: %w", st.err)
		}
		return ev, true, nil
	case <-t.C:
		return sseEvent{}, false, nil
	}
}

// readSSE reads Server-Sent Events until the body ends.
func readSSE(body io.Reader, out chan<- sseEvent) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	ev := sseEvent{}
	var data [][]byte
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			if ev.typ != "" || data != nil {
				ev.data = bytes.Join(data, []byte("\n"))
				i := strings.LastIndexByte(ev.id, '-')
				if i > 0 {
					ev.epoch = ev.id[:i]
					ev.seq, _ = strconv.ParseUint(ev.id[i+1:], 10, 64)
				}
				out <- ev
			}
			ev, data = sseEvent{}, nil
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.id = value
		case "event":
			ev.typ = value
		case "data":
			data = append(data, []byte(value))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.EOF
}

// The contract's shapes of an environment and a resource row.
type (
	streamCondition struct {
		Type   string `json:"type"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	}
	streamEnv struct {
		Name       string            `json:"name"`
		Namespace  string            `json:"namespace"`
		Ready      string            `json:"ready"`
		Synced     string            `json:"synced"`
		Message    string            `json:"message"`
		Conditions []streamCondition `json:"conditions"`
	}
	streamRow struct {
		ID         string `json:"id"`
		Resource   string `json:"resource"`
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Name       string `json:"name"`
		Ready      string `json:"ready"`
		Synced     string `json:"synced"`
		Message    string `json:"message"`
	}
)

// envView is what a viewer of a stream knows of the environment: the
// events applied in order, as the page does. It checks each event's ID
// follows the one before.
type envView struct {
	env     streamEnv
	rows    map[string]streamRow
	deleted bool
	// epoch and last are the last event's ID.
	epoch string
	last  uint64
	// events counts every event applied, snapshots included; turned the
	// rows that turned Ready=True.
	events, snapshots int
	turned            map[string]bool
}

// apply applies an event. first is set for a connection's first event:
// a snapshot when fresh is set, else the event after the last one.
func (v *envView) apply(ev sseEvent, first, fresh bool) error {
	if ev.epoch == "" {
		return fmt.Errorf("event %s %q has no <epoch>-<seq> id", ev.typ, ev.id)
	}
	switch {
	case first && fresh:
		if ev.typ != "snapshot" {
			return fmt.Errorf("a new stream began with %s %s, not a snapshot", ev.typ, ev.id)
		}
	case first && ev.typ == "snapshot":
		return fmt.Errorf("resumed after %s-%d with a snapshot %s, not with the events after it", v.epoch, v.last, ev.id)
	case ev.epoch != v.epoch || ev.seq != v.last+1:
		return fmt.Errorf("event %s %s follows %s-%d: a gap or a repeat", ev.typ, ev.id, v.epoch, v.last)
	}
	v.epoch, v.last = ev.epoch, ev.seq
	v.events++
	switch ev.typ {
	case "snapshot":
		var s struct {
			Environment streamEnv   `json:"environment"`
			Resources   []streamRow `json:"resources"`
		}
		if err := json.Unmarshal(ev.data, &s); err != nil {
			return fmt.Errorf("snapshot %s: %w", ev.id, err)
		}
		v.snapshots++
		v.env, v.rows = s.Environment, map[string]streamRow{}
		for _, r := range s.Resources {
			v.rows[r.ID] = r
		}
	case "environment":
		if err := json.Unmarshal(ev.data, &v.env); err != nil {
			return fmt.Errorf("environment %s: %w", ev.id, err)
		}
	case "resource":
		r := streamRow{}
		if err := json.Unmarshal(ev.data, &r); err != nil {
			return fmt.Errorf("resource %s: %w", ev.id, err)
		}
		if r.Ready == "True" && v.rows[r.ID].Ready != "True" {
			v.turned[r.ID] = true
		}
		v.rows[r.ID] = r
	case "removed":
		var r struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(ev.data, &r); err != nil {
			return fmt.Errorf("removed %s: %w", ev.id, err)
		}
		delete(v.rows, r.ID)
	case "deleted":
		v.deleted = true
	default:
		return fmt.Errorf("event %s has the unknown type %q", ev.id, ev.typ)
	}
	return nil
}

// ready reports whether the environment and every row are Ready.
func (v *envView) ready() bool {
	if v.env.Ready != "True" || len(v.rows) == 0 {
		return false
	}
	for _, r := range v.rows {
		if r.Ready != "True" {
			return false
		}
	}
	return true
}

// readyCount is how many rows are Ready.
func (v *envView) readyCount() int {
	n := 0
	for _, r := range v.rows {
		if r.Ready == "True" {
			n++
		}
	}
	return n
}

// statusOf is a condition's status as the portal shows it: Unknown when
// the object has no such condition.
func statusOf(o object, typ string) string {
	if s, _, _ := condition(o, typ); s != "" {
		return s
	}
	return "Unknown"
}

// matches compares the view with the API server's: the environment's
// Ready and Synced, its resource references, and each one's Ready and
// Synced.
func (s *scenarios) matches(v *envView, ns, name string) error {
	live, err := s.k.get(xrAPIVersion, "AppEnvironment", ns, name)
	if err != nil {
		return err
	}
	if got, want := v.env.Ready+"/"+v.env.Synced, statusOf(live, "Ready")+"/"+statusOf(live, "Synced"); got != want {
		return fmt.Errorf("the stream says Ready/Synced %s, the API server %s", got, want)
	}
	want := map[string]string{}
	for _, r := range resourceRefs(live) {
		group, _, _ := strings.Cut(r.apiVersion, "/")
		if !strings.Contains(r.apiVersion, "/") {
			group = ""
		}
		o, err := s.k.get(r.apiVersion, r.kind, ns, r.name)
		if err != nil {
			return fmt.Errorf("composed %s %s: %w", r.kind, r.name, err)
		}
		want[group+"/"+r.kind+"/"+r.name] = statusOf(o, "Ready") + "/" + statusOf(o, "Synced")
	}
	got := map[string]string{}
	for id, r := range v.rows {
		got[id] = r.Ready + "/" + r.Synced
	}
	if !maps.Equal(got, want) {
		missing, extra := diff(want, got)
		return fmt.Errorf("the stream has %d rows, the API server %d resources; the API server's not in the stream: %v, the stream's not in the API server: %v", len(got), len(want), missing, extra)
	}
	return nil
}

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

// browser finds Chromium or Chrome, "" when there is none.
func browser() string {
	for _, b := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	return ""
}

// pageState is what the page shows of the open environment.
type pageState struct {
	Rows    int    `json:"rows"`
	Ready   int    `json:"ready"`
	Env     string `json:"env"`
	Stream  string `json:"stream"`
	Message string `json:"message"`
}

// pageStateJS reads pageState from the page.
const pageStateJS = `(() => {
  const rows = [...document.querySelectorAll('#resources tbody tr')];
  const env = document.getElementById('env-ready');
  const stream = document.getElementById('stream-status');
  const msg = document.getElementById('message');
  return {
    rows: rows.length,
    ready: rows.filter((r) => r.dataset.ready === 'True').length,
    env: env ? (env.dataset.ready || '') : '',
    stream: stream ? (stream.dataset.state || '') : '',
    message: msg ? msg.textContent : '',
  };
})()`

// portalPage creates an environment as alice through the page in a
// headless Chromium and waits until the page shows every row and the
// environment Ready, failing on any console error or uncaught exception;
// then deletes it through the API. It returns the summary line, "" when
// it was skipped for want of a browser.
func (s *scenarios) portalPage(p *portalClient, screenshot, alice, size string) (string, error) {
	const name = "browser-app"
	ns := portalTenant
	path := browser()
	if path == "" {
		if os.Getenv("PORTAL_BROWSER") == "required" {
			return "", errors.New("no Chromium or Chrome found, and PORTAL_BROWSER=required (apt-get install chromium)")
		}
		fmt.Println("  portal page: SKIP: no Chromium or Chrome found (apt-get install chromium; PORTAL_BROWSER=required makes this an error)")
		return "", nil
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1280, 1400))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses root with its sandbox.
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		return "", fmt.Errorf("cannot start %s: %w", path, err)
	}

	// Every console error and uncaught exception fails the page.
	var mu sync.Mutex
	var problems []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s %s:%d: %s", m.Type, m.URL, m.Line+1, m.Text))
				mu.Unlock()
			}
		}
	}()
	consoleErrors := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(problems)
	}

	tctx, tcancel := context.WithTimeout(ctx, s.timeout)
	defer tcancel()
	start := time.Now()
	poll := []chromedp.PollOption{chromedp.WithPollingInterval(100 * time.Millisecond), chromedp.WithPollingTimeout(time.Minute)}
	if err := chromedp.Do(tctx,
		chromedp.Navigate(p.base+"/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), alice),
		chromedp.SendKeys(chromedp.ID("namespace"), ns),
		chromedp.Click(chromedp.ID("connect")),
		// The policy filled the form: its sizes, its database option.
		chromedp.Poll[chromedp.Void](`!document.getElementById('workspace').hidden && document.querySelectorAll('#size option').length > 0 && !document.getElementById('create-fieldset').disabled`, poll...),
		chromedp.SendKeys(chromedp.ID("name"), name),
		chromedp.SetValue(chromedp.ID("size"), size),
		chromedp.Evaluate[chromedp.Void](`(() => { const d = document.getElementById('database'); if (!d.checked) d.click(); })()`),
		chromedp.Click(chromedp.ID("create")),
		chromedp.WaitVisible(chromedp.ID("env-detail")),
	); err != nil {
		return "", fmt.Errorf("cannot create %s through the page: %w (console: %v)", name, err, consoleErrors())
	}
	created := time.Now()
	var last pageState
	for {
		var err error
		last, err = chromedp.Run(tctx, chromedp.Evaluate[pageState](pageStateJS))
		if err != nil {
			return "", fmt.Errorf("cannot read the page: %w (last %+v)", err, last)
		}
		if last.Rows > 0 && last.Ready == last.Rows && last.Env == "True" {
			break
		}
		if errs := consoleErrors(); len(errs) > 0 {
			return "", fmt.Errorf("the page logged errors: %s", strings.Join(errs, "; "))
		}
		if time.Since(created) > s.timeout {
			return "", fmt.Errorf("timed out after %s waiting for the page to show %s Ready: %+v", s.timeout, name, last)
		}
		time.Sleep(250 * time.Millisecond)
	}
	readyIn := time.Since(created)
	if _, err := s.k.get(xrAPIVersion, "AppEnvironment", ns, name); err != nil {
		return "", fmt.Errorf("the AppEnvironment the page created: %w", err)
	}
	if screenshot != "" {
		time.Sleep(2 * time.Second) // the rows' change highlight fades
		png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
		if err != nil {
			return "", fmt.Errorf("cannot take a screenshot: %w", err)
		}
		if err := os.WriteFile(screenshot, png, 0o600); err != nil {
			return "", fmt.Errorf("cannot save the screenshot: %w", err)
		}
	}
	// A moment more for late errors, then none may have been logged.
	time.Sleep(500 * time.Millisecond)
	if errs := consoleErrors(); len(errs) > 0 {
		return "", fmt.Errorf("the page logged errors: %s", strings.Join(errs, "; "))
	}
	shot := ""
	if screenshot != "" {
		shot = "; screenshot " + screenshot
	}
	fmt.Printf("  portal page: %s created in %s through the page (sign-in and form in %.1f s) -> the page shows it and all %d rows Ready in %.1f s; stream %s; no console error or exception%s\n",
		name, filepath.Base(path), created.Sub(start).Seconds(), last.Rows, readyIn.Seconds(), last.Stream, shot)

	live, err := s.k.get(xrAPIVersion, "AppEnvironment", ns, name)
	if err != nil {
		return "", err
	}
	if _, err := p.expect(http.StatusAccepted, "alice", http.MethodDelete, envsPath(ns, name), alice, nil); err != nil {
		return "", err
	}
	took, err := s.gone("AppEnvironment", ns, name, resourceRefs(live))
	if err != nil {
		return "", err
	}
	fmt.Printf("  portal page: %s deleted through the API, gone with its %d composed resources in %.1f s\n", name, len(resourceRefs(live)), took.Seconds())
	return fmt.Sprintf("%-30s Ready in %5.1f s, %3d rows Ready on the page, no console error", "portal page "+ns+"/"+name, readyIn.Seconds(), last.Rows), nil
}
