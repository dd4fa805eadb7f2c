package portal

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fakeAPI is an API server over HTTP with what the portal asks of one:
// TokenReviews, SubjectAccessReviews, namespaces, policy ConfigMaps,
// discovery, and AppEnvironments and Buckets to list, watch and create.
// It counts what it is asked.
type fakeAPI struct {
	namespaces map[string]bool
	users      map[string]User
	rbac       map[string][]string
	policies   map[string]string
	review     time.Duration

	reviews atomic.Int64
	mu      sync.Mutex
	envs    map[string]map[string]map[string]any
	// fleet are the Clusters of every namespace, the XClusters, the
	// EnvironmentConfigs, the XRs of a release's other kinds and the
	// Composition revisions (fleetResources), by resource; a resource it
	// has no entry for is not served (404), as XClusters without the
	// legacy XRD.
	fleet map[string][]any
	// forbidden are the resources of fleet the portal may not list, each
	// with the API server's reason.
	forbidden map[string]string
	watches   map[string]int
	seen      map[string]int
	rv        int
}

func (f *fakeAPI) activeWatches() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, w := range f.watches {
		n += w
	}
	return n
}

// count is how many requests' keys ("<verb> <path>") contained s.
func (f *fakeAPI) count(s string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for k, v := range f.seen {
		if strings.Contains(k, s) {
			n += v
		}
	}
	return n
}

func (f *fakeAPI) impersonated(user string) int { return f.count("as " + user + " ") }

func (f *fakeAPI) created() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, envs := range f.envs {
		for name := range envs {
			if name != "hostile" {
				n++
			}
		}
	}
	return n
}

func (f *fakeAPI) put(ns string, o map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rv++
	md := o["metadata"].(map[string]any) //nolint:forcetypeassert // the test's own objects.
	md["resourceVersion"] = strconv.Itoa(f.rv)
	if f.envs[ns] == nil {
		f.envs[ns] = map[string]map[string]any{}
	}
	f.envs[ns][md["name"].(string)] = o //nolint:forcetypeassert // the test's own objects.
}

func (f *fakeAPI) remove(ns, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.envs[ns], name)
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	as := r.Header.Get("Impersonate-User")
	watching := r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1"
	verb := strings.ToLower(r.Method)
	if watching {
		verb = "watch"
	} else if r.Method == http.MethodGet && (strings.HasSuffix(r.URL.Path, "s") && !strings.Contains(r.URL.Path, "/namespaces/") || strings.Count(r.URL.Path, "/")%2 == 0) {
		verb = "list"
	}
	f.mu.Lock()
	f.seen[verb+" "+r.URL.Path+" as "+as+" "]++
	f.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	p := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.URL.Path == "/apis/authentication.k8s.io/v1/tokenreviews":
		f.tokenReview(w, body)
	case r.URL.Path == "/apis/authorization.k8s.io/v1/subjectaccessreviews":
		f.accessReview(w, body)
	case len(p) == 4 && p[0] == "api" && p[2] == "namespaces":
		if !f.namespaces[p[3]] {
			status(w, http.StatusNotFound, "NotFound", "namespaces \""+p[3]+"\" not found")
			return
		}
		writeObject(w, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": p[3]}})
	case len(p) == 6 && p[0] == "api" && p[3] == "crossplane-system" && p[4] == "configmaps":
		ns := strings.TrimPrefix(p[5], "portal-policy-")
		pol, ok := f.policies[ns]
		if !ok {
			status(w, http.StatusNotFound, "NotFound", "configmaps \""+p[5]+"\" not found")
			return
		}
		writeObject(w, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": p[5], "namespace": "crossplane-system"}, "data": map[string]any{PolicyKey: pol}})
	case len(p) == 4 && p[0] == "apis" && slices.ContainsFunc(fleetResources(), func(r schema.GroupVersionResource) bool { return r.Group == p[1] && r.Resource == p[3] }):
		f.clusterWide(w, r, as, p[1]+"/"+p[2], p[3], watching)
	case len(p) == 3 && p[0] == "apis":
		f.discovery(w, p[1], p[2])
	case len(p) >= 6 && p[0] == "apis" && p[3] == "namespaces":
		f.resource(w, r, as, p[1]+"/"+p[2], p[4], p[5], p[6:], body, watching)
	default:
		status(w, http.StatusNotFound, "NotFound", "the fake API server serves no "+r.URL.Path)
	}
}

func (f *fakeAPI) tokenReview(w http.ResponseWriter, body []byte) {
	f.reviews.Add(1)
	time.Sleep(f.review)
	var tr struct {
		Spec struct {
			Token string `json:"token"`
		} `json:"spec"`
	}
	_ = json.Unmarshal(body, &tr)
	st := map[string]any{"authenticated": false}
	u, ok := f.users[tr.Spec.Token]
	if strings.HasPrefix(tr.Spec.Token, " ") {
		u, ok = f.users[rtAnon], true
	}
	if ok {
		st = map[string]any{"authenticated": true, "user": map[string]any{"username": u.Name, "groups": toAny(u.Groups)}}
	}
	writeObject(w, map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "status": st})
}

func (f *fakeAPI) accessReview(w http.ResponseWriter, body []byte) {
	var sar struct {
		Spec struct {
			User       string `json:"user"`
			Attributes struct {
				Namespace string `json:"namespace"`
			} `json:"resourceAttributes"`
		} `json:"spec"`
	}
	_ = json.Unmarshal(body, &sar)
	ok := f.allowed(sar.Spec.User, sar.Spec.Attributes.Namespace)
	writeObject(w, map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "status": map[string]any{"allowed": ok}})
}

func (f *fakeAPI) allowed(user, ns string) bool {
	return slices.Contains(f.rbac[user], ns) || slices.Contains(f.rbac[user], "*")
}

func (f *fakeAPI) discovery(w http.ResponseWriter, group, version string) {
	resources := map[string][]any{
		envGroup + "/" + envVersion:        {map[string]any{"name": envResource, "kind": envKind, "namespaced": true, "verbs": []any{"get", "list", "watch"}}},
		"storage.gcp.m.upbound.io/v1beta1": {map[string]any{"name": "buckets", "kind": "Bucket", "namespaced": true, "verbs": []any{"get", "list", "watch"}}},
	}[group+"/"+version]
	if resources == nil {
		status(w, http.StatusNotFound, "NotFound", "no group version "+group+"/"+version)
		return
	}
	writeObject(w, map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group + "/" + version, "resources": resources})
}

// resource serves a namespaced resource: AppEnvironments are kept,
// Buckets are none.
func (f *fakeAPI) resource(w http.ResponseWriter, r *http.Request, as, gv, ns, resource string, rest []string, body []byte, watching bool) {
	if as != "" && !f.allowed(as, ns) {
		status(w, http.StatusForbidden, "Forbidden", resource+" is forbidden: User \""+as+"\" cannot do that in namespace "+ns)
		return
	}
	switch {
	case watching && r.URL.Query().Get("sendInitialEvents") == "true":
		status(w, http.StatusBadRequest, "BadRequest", "the fake API server has no watch lists")
	case watching:
		f.hold(w, r, ns+"/"+resource)
	case r.Method == http.MethodGet && len(rest) == 0:
		f.mu.Lock()
		items := []any{}
		if resource == envResource {
			for _, o := range f.envs[ns] {
				items = append(items, o)
			}
		}
		rv := strconv.Itoa(f.rv)
		f.mu.Unlock()
		writeObject(w, map[string]any{"apiVersion": gv, "kind": "List", "metadata": map[string]any{"resourceVersion": rv}, "items": items})
	case r.Method == http.MethodGet && resource == envResource:
		f.mu.Lock()
		o, ok := f.envs[ns][rest[0]]
		f.mu.Unlock()
		if !ok {
			status(w, http.StatusNotFound, "NotFound", "not found")
			return
		}
		writeObject(w, o)
	case r.Method == http.MethodPost && resource == envResource:
		o := map[string]any{}
		if err := json.Unmarshal(body, &o); err != nil {
			status(w, http.StatusBadRequest, "BadRequest", err.Error())
			return
		}
		f.put(ns, o)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(o)
	default:
		status(w, http.StatusMethodNotAllowed, "MethodNotAllowed", r.Method)
	}
}

// hold serves a watch that sends nothing until the client leaves,
// counting it under key.
func (f *fakeAPI) hold(w http.ResponseWriter, r *http.Request, key string) {
	f.mu.Lock()
	f.watches[key]++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.watches[key]--
		f.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	http.NewResponseController(w).Flush() //nolint:errcheck,gosec // a failed flush ends the watch below.
	<-r.Context().Done()
}

// clusterWide serves the lists and watches of what the fleet view reads
// (fleetResources), which only the portal's own identity makes.
func (f *fakeAPI) clusterWide(w http.ResponseWriter, r *http.Request, as, gv, resource string, watching bool) {
	f.mu.Lock()
	_, served := f.fleet[resource]
	f.mu.Unlock()
	switch {
	case f.forbidden[resource] != "":
		status(w, http.StatusForbidden, "Forbidden", resource+"."+strings.Split(gv, "/")[0]+" is forbidden: "+f.forbidden[resource])
	case !served:
		status(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
	case as != "":
		status(w, http.StatusForbidden, "Forbidden", resource+" is forbidden: User \""+as+"\" cannot list them in every namespace")
	case watching && r.URL.Query().Get("sendInitialEvents") == "true":
		status(w, http.StatusBadRequest, "BadRequest", "the fake API server has no watch lists")
	case watching:
		f.hold(w, r, "*/"+resource)
	case r.Method == http.MethodGet:
		f.mu.Lock()
		items := slices.Clone(f.fleet[resource])
		rv := strconv.Itoa(f.rv)
		f.mu.Unlock()
		writeObject(w, map[string]any{"apiVersion": gv, "kind": "List", "metadata": map[string]any{"resourceVersion": rv}, "items": items})
	default:
		status(w, http.StatusMethodNotAllowed, "MethodNotAllowed", r.Method)
	}
}

func writeObject(w http.ResponseWriter, o map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(o)
}

func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := json.Marshal(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": msg, "reason": reason, "code": code})
	_, _ = io.Copy(w, bytes.NewReader(b))
}
