package portal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"
)

// DefaultMaxBody bounds a request body.
const DefaultMaxBody = 64 << 10

// ErrNoPolicy is a namespace the platform team has not opened to the
// portal.
var ErrNoPolicy = errors.New("no portal policy for this namespace")

// Policies gives a namespace's policy, or ErrNoPolicy.
type Policies interface {
	Policy(ctx context.Context, ns string) (*Policy, error)
}

// ConfigMapPolicies reads each namespace's policy from the ConfigMap
// Prefix+namespace in the portal's own namespace, read with the portal's
// identity.
type ConfigMapPolicies struct {
	Client    dynamic.Interface
	Namespace string
	Prefix    string
}

// Policy reads namespace ns's policy.
func (c ConfigMapPolicies) Policy(ctx context.Context, ns string) (*Policy, error) {
	cm, err := c.Client.Resource(configMaps).Namespace(c.Namespace).Get(ctx, c.Prefix+ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, ErrNoPolicy
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the portal policy of namespace %s: %w", ns, err)
	}
	data, _, _ := unstructured.NestedString(cm.Object, "data", PolicyKey)
	p, err := ParsePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("the portal policy of namespace %s (ConfigMap %s/%s): %w", ns, c.Namespace, c.Prefix+ns, err)
	}
	return p, nil
}

// Server is the portal: its JSON API under /api/v1, the event streams
// and the page.
type Server struct {
	Authn    Authenticator
	Authz    Authorizer
	As       Impersonator
	Policies Policies
	Hub      *Hub
	// Fleet is what the fleet view reads: the Clusters and the baseline
	// EnvironmentConfigs.
	Fleet *Fleet
	// Own is the portal's own client, which counts a namespace's
	// environments against its policy's quota; nil: the caller's.
	Own dynamic.Interface
	// Clouds are the cloud labels the function serves.
	Clouds  []string
	MaxBody int64
	// Ping is how often an idle stream gets a comment line.
	Ping   time.Duration
	Limits Limits
	Log    *slog.Logger

	once     sync.Once
	reviews  *AddressLimiter
	mu       sync.Mutex
	open     map[string]int
	creating map[string]*sync.Mutex
}

// Limits bound what one client can hold of the portal. A zero field is its
// default.
type Limits struct {
	// HeaderTimeout is how long a request's headers may take to arrive
	// (the http.Server's ReadHeaderTimeout). Default 10 s.
	HeaderTimeout time.Duration
	// BodyTimeout is how long, from its start, a request with a body may
	// take to arrive whole, the body included; past it the connection is
	// closed. Default 10 s.
	BodyTimeout time.Duration
	// WriteTimeout is how long an answer may take to be written, from its
	// request's start, and each write of an event stream. Default 1 min.
	WriteTimeout time.Duration
	// IdleTimeout closes a kept-alive connection without a request.
	// Default 2 min.
	IdleTimeout time.Duration
	// StreamsPerUser is how many event streams one user may have open at
	// once; negative: no bound. Default 20.
	StreamsPerUser int
	// ReviewsPerAddress and ReviewBurstPerAddress are the TokenReviews a
	// client address may cause: a token bucket of ReviewBurstPerAddress,
	// refilled at ReviewsPerAddress a second. A request whose token's
	// answer is cached costs none. Defaults 5 a second, 20.
	ReviewsPerAddress     float64
	ReviewBurstPerAddress int
	// Addresses is how many client addresses the review limit tracks.
	// Default 10,000.
	Addresses int
}

// The default Limits.
const (
	DefaultHeaderTimeout         = 10 * time.Second
	DefaultBodyTimeout           = 10 * time.Second
	DefaultWriteTimeout          = time.Minute
	DefaultIdleTimeout           = 2 * time.Minute
	DefaultStreamsPerUser        = 20
	DefaultReviewsPerAddress     = 5
	DefaultReviewBurstPerAddress = 20
	DefaultAddresses             = 10000
)

// withDefaults fills in the zero fields.
func (l Limits) withDefaults() Limits {
	set := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&l.HeaderTimeout, DefaultHeaderTimeout)
	set(&l.BodyTimeout, DefaultBodyTimeout)
	set(&l.WriteTimeout, DefaultWriteTimeout)
	set(&l.IdleTimeout, DefaultIdleTimeout)
	if l.StreamsPerUser == 0 {
		l.StreamsPerUser = DefaultStreamsPerUser
	}
	if l.ReviewsPerAddress <= 0 {
		l.ReviewsPerAddress = DefaultReviewsPerAddress
	}
	if l.ReviewBurstPerAddress <= 0 {
		l.ReviewBurstPerAddress = DefaultReviewBurstPerAddress
	}
	if l.Addresses <= 0 {
		l.Addresses = DefaultAddresses
	}
	return l
}

// HTTPServer is the http.Server that serves the portal on address, with
// its header and idle timeouts. It has no WriteTimeout, which would end
// every event stream: each request gets its own deadlines instead.
func (s *Server) HTTPServer(address string) *http.Server {
	l := s.Limits.withDefaults()
	return &http.Server{
		Addr: address, Handler: s.Handler(),
		ReadHeaderTimeout: l.HeaderTimeout, IdleTimeout: l.IdleTimeout, MaxHeaderBytes: MaxHeaderBytes,
	}
}

// MaxHeaderBytes bounds a request's headers.
const MaxHeaderBytes = 64 << 10

// Handler routes the portal's requests.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	api := "/api/v1/namespaces/{ns}/"
	mux.Handle("GET "+api+"policy", s.auth(s.policy))
	mux.Handle("GET "+api+"environments", s.auth(s.list))
	mux.Handle("POST "+api+"environments", s.auth(s.create))
	mux.Handle("GET "+api+"environments/{name}", s.auth(s.get))
	mux.Handle("DELETE "+api+"environments/{name}", s.auth(s.remove))
	mux.Handle("GET "+api+"environments/{name}/events", s.auth(s.events))
	mux.Handle("GET /api/v1/fleet", s.auth(s.fleet))
	mux.Handle("GET /api/v1/fleet/events", s.auth(s.fleetEvents))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	static, _ := fs.Sub(webFS, "web")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.ServeFileFS(w, r, static, "index.html") })
	mux.HandleFunc("GET /fleet", func(w http.ResponseWriter, r *http.Request) { http.ServeFileFS(w, r, static, "fleet.html") })
	return s.headers(mux)
}

// headers sets what every answer carries and the request's deadlines, and
// logs the request: its method, path, status and user, never a
// credential. A request with a body must arrive whole within BodyTimeout,
// whether or not a handler reads it: the server reads what a handler left
// before it reuses the connection.
func (s *Server) headers(next http.Handler) http.Handler {
	l := s.Limits.withDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rc := http.NewResponseController(w)
		if hasBody(r) {
			_ = rc.SetReadDeadline(start.Add(l.BodyTimeout))
			r.Body = http.MaxBytesReader(w, r.Body, s.maxBody())
		}
		_ = rc.SetWriteDeadline(start.Add(l.WriteTimeout))
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		s.Log.Info("request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "user", rec.user, "duration", time.Since(start).Round(time.Millisecond).String())
	})
}

// recorder remembers an answer's status and user for the log.
type recorder struct {
	http.ResponseWriter
	status int
	user   string
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (Flush).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// maxBody is MaxBody, DefaultMaxBody when it is not set.
func (s *Server) maxBody() int64 {
	if s.MaxBody <= 0 {
		return DefaultMaxBody
	}
	return s.MaxBody
}

// hasBody says whether a request comes with a body.
func hasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && (r.ContentLength != 0 || len(r.TransferEncoding) > 0)
}

// reviewLimit is the limit of TokenReviews per client address.
func (s *Server) reviewLimit() *AddressLimiter {
	s.once.Do(func() {
		l := s.Limits.withDefaults()
		s.reviews = &AddressLimiter{Rate: rate.Limit(l.ReviewsPerAddress), Burst: l.ReviewBurstPerAddress, Max: l.Addresses, Now: time.Now}
	})
	return s.reviews
}

type authed func(w http.ResponseWriter, r *http.Request, u *User)

// auth authenticates the bearer token and checks the namespace and name
// in the path before the handler runs. A request whose token needs a
// TokenReview takes one from its address's bucket first.
func (s *Server) auth(next authed) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		values := r.Header.Values("Authorization")
		if len(values) == 0 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="portal"`)
			writeError(w, http.StatusUnauthorized, "a bearer token is required (Authorization: Bearer <token>)", nil)
			return
		}
		token, ok := "", len(values) == 1
		if ok {
			token, ok = Bearer(values[0])
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="portal", error="invalid_request"`)
			writeError(w, http.StatusUnauthorized, "a malformed Authorization header: want one, exactly Bearer <token>, the token without spaces or control characters", nil)
			return
		}
		if k, ok := s.Authn.(knower); !ok || !k.Known(token) {
			if ok, wait := s.reviewLimit().Take(r.RemoteAddr); !ok {
				w.Header().Set("Retry-After", retryAfter(wait))
				writeError(w, http.StatusTooManyRequests, "too many new tokens from this address: try again later", nil)
				return
			}
		}
		u, err := s.Authn.Authenticate(r.Context(), token)
		switch {
		case errors.Is(err, errBusy):
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusTooManyRequests, "too many tokens are being checked: try again later", nil)
			return
		case err != nil:
			if !errors.Is(err, errUnauthenticated) {
				s.Log.Error("cannot review a token", "error", err)
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="portal", error="invalid_token"`)
			writeError(w, http.StatusUnauthorized, errUnauthenticated.Error(), nil)
			return
		}
		if rec, ok := w.(*recorder); ok {
			rec.user = u.Name
		}
		if ns := r.PathValue("ns"); ns != "" {
			if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("namespace %q: %s", ns, strings.Join(msgs, "; ")), nil)
				return
			}
		}
		if name := r.PathValue("name"); name != "" {
			if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("name %q: %s", name, strings.Join(msgs, "; ")), nil)
				return
			}
		}
		next(w, r, u)
	})
}

// client is the user's impersonating client for AppEnvironments in ns.
func (s *Server) client(w http.ResponseWriter, u *User, ns string) (dynamic.ResourceInterface, bool) {
	dyn, err := s.As(u)
	if err != nil {
		s.Log.Error("cannot impersonate", "user", u.Name, "error", err)
		writeError(w, http.StatusInternalServerError, "cannot act for the user", nil)
		return nil, false
	}
	return dyn.Resource(envGVR).Namespace(ns), true
}

// allowed checks one verb on AppEnvironments with a SubjectAccessReview,
// answering 403 when refused.
func (s *Server) allowed(w http.ResponseWriter, r *http.Request, u *User, verb, name string) bool {
	ns := r.PathValue("ns")
	ok, err := s.Authz.Allowed(r.Context(), u, Access{Namespace: ns, Verb: verb, Group: envGroup, Resource: envResource, Name: name})
	if err != nil {
		s.Log.Error("cannot review access", "user", u.Name, "error", err)
		writeError(w, http.StatusBadGateway, "cannot check access with the API server", nil)
		return false
	}
	if !ok {
		writeError(w, http.StatusForbidden, fmt.Sprintf("%s may not %s appenvironments in namespace %s", u.Name, verb, ns), nil)
	}
	return ok
}

func (s *Server) policy(w http.ResponseWriter, r *http.Request, u *User) {
	ns := r.PathValue("ns")
	if !s.allowed(w, r, u, "create", "") {
		return
	}
	p, ok := s.readPolicy(w, r, ns)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, PolicyView{
		Namespace: ns, Cloud: p.Cloud, Cluster: p.Cluster, Sizes: p.SizeNames(), DefaultImage: p.DefaultImage,
		ChooseImage: len(p.ImagePrefixes) > 0,
		Database:    slices.ContainsFunc(p.SizeNames(), func(n string) bool { return p.Sizes[n].Database != "" }),
		Frontend:    p.Domain != "", Domain: p.Domain,
	})
}

// PolicyView is what a requester sees of a namespace's policy: the
// choices a request has.
type PolicyView struct {
	Namespace    string   `json:"namespace"`
	Cloud        string   `json:"cloud"`
	Cluster      string   `json:"cluster"`
	Sizes        []string `json:"sizes"`
	DefaultImage string   `json:"defaultImage"`
	ChooseImage  bool     `json:"chooseImage"`
	Database     bool     `json:"database"`
	Frontend     bool     `json:"frontend"`
	Domain       string   `json:"domain,omitempty"`
}

func (s *Server) readPolicy(w http.ResponseWriter, r *http.Request, ns string) (*Policy, bool) {
	p, err := s.Policies.Policy(r.Context(), ns)
	switch {
	case errors.Is(err, ErrNoPolicy):
		writeError(w, http.StatusNotFound, fmt.Sprintf("namespace %s is not open to self-service: the platform team has given it no portal policy", ns), nil)
		return nil, false
	case err != nil:
		s.Log.Error("cannot read a policy", "namespace", ns, "error", err)
		writeError(w, http.StatusInternalServerError, err.Error(), nil)
		return nil, false
	}
	return p, true
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, u *User) {
	c, ok := s.client(w, u, r.PathValue("ns"))
	if !ok {
		return
	}
	l, err := c.List(r.Context(), metav1.ListOptions{})
	if err != nil {
		s.apiError(w, err)
		return
	}
	items := make([]Summary, 0, len(l.Items))
	for i := range l.Items {
		items = append(items, summaryOf(&l.Items[i]))
	}
	slices.SortFunc(items, func(a, b Summary) int { return strings.Compare(a.Name, b.Name) })
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, u *User) {
	c, ok := s.client(w, u, r.PathValue("ns"))
	if !ok {
		return
	}
	o, err := c.Get(r.Context(), r.PathValue("name"), metav1.GetOptions{})
	if err != nil {
		s.apiError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, summaryOf(o))
}

// Created is the answer to a create.
type Created struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	URL       string `json:"url"`
	Events    string `json:"events"`
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, u *User) {
	ns := r.PathValue("ns")
	// Before the body or the policy is read: a user who may not create
	// here learns nothing of the namespace's policy, not even whether it
	// has one.
	if !s.allowed(w, r, u, "create", "") {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody()))
	if err != nil {
		var mb *http.MaxBytesError
		switch {
		case errors.As(err, &mb):
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", mb.Limit), nil)
		case errors.Is(err, os.ErrDeadlineExceeded):
			writeError(w, http.StatusRequestTimeout, fmt.Sprintf("the body did not arrive within %s", s.Limits.withDefaults().BodyTimeout), nil)
		default:
			writeError(w, http.StatusBadRequest, "cannot read the body", nil)
		}
		return
	}
	// The whole request is read: what follows is the API server's time.
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	req, ferrs := DecodeRequest(body)
	if len(ferrs) > 0 {
		writeError(w, http.StatusBadRequest, "invalid request", ferrs)
		return
	}
	p, ok := s.readPolicy(w, r, ns)
	if !ok {
		return
	}
	env, ferrs := p.Build(ns, req, u.Name, s.Clouds)
	if len(ferrs) > 0 {
		writeError(w, http.StatusBadRequest, "invalid request", ferrs)
		return
	}
	c, ok := s.client(w, u, ns)
	if !ok {
		return
	}
	if p.MaxEnvironments > 0 {
		// One create at a time per namespace, so that two at once cannot
		// both pass the count.
		unlock := s.creatingIn(ns)
		defer unlock()
		if !s.underQuota(w, r, c, ns, p.MaxEnvironments) {
			return
		}
	}
	if _, err := c.Create(r.Context(), env, metav1.CreateOptions{FieldManager: "portal"}); err != nil {
		s.apiError(w, err)
		return
	}
	url := "/api/v1/namespaces/" + ns + "/environments/" + req.Name
	w.Header().Set("Location", url)
	writeJSON(w, http.StatusAccepted, Created{Name: req.Name, Namespace: ns, URL: url, Events: url + "/events"})
}

// creatingIn takes namespace ns's create lock, returning its release.
func (s *Server) creatingIn(ns string) func() {
	s.mu.Lock()
	if s.creating == nil {
		s.creating = map[string]*sync.Mutex{}
	}
	m, ok := s.creating[ns]
	if !ok {
		m = &sync.Mutex{}
		s.creating[ns] = m
	}
	s.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// underQuota counts namespace ns's environments with the portal's own
// client, answering 403 when there are already quota of them.
func (s *Server) underQuota(w http.ResponseWriter, r *http.Request, c dynamic.ResourceInterface, ns string, quota int) bool {
	if s.Own != nil {
		c = s.Own.Resource(envGVR).Namespace(ns)
	}
	l, err := c.List(r.Context(), metav1.ListOptions{})
	if err != nil {
		s.Log.Error("cannot count the environments of a namespace", "namespace", ns, "error", err)
		writeError(w, http.StatusBadGateway, "cannot count the namespace's environments", nil)
		return false
	}
	if n := len(l.Items); n >= quota {
		writeError(w, http.StatusForbidden, fmt.Sprintf("namespace %s has %d environments, as many as its policy allows (maxEnvironments %d): delete one before creating another", ns, n, quota), nil)
		return false
	}
	return true
}

func (s *Server) remove(w http.ResponseWriter, r *http.Request, u *User) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	c, ok := s.client(w, u, ns)
	if !ok {
		return
	}
	if err := c.Delete(r.Context(), name, metav1.DeleteOptions{}); err != nil {
		s.apiError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"name": name, "namespace": ns})
}

// events streams an environment's events as Server-Sent Events. The
// stream is read from the shared watches with the portal's identity, so
// the user's right to watch the environment is checked first.
func (s *Server) events(w http.ResponseWriter, r *http.Request, u *User) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if !s.allowed(w, r, u, "watch", name) {
		return
	}
	rc, release, ok := s.openStream(w, u)
	if !ok {
		return
	}
	defer release()
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	sub, err := s.Hub.Subscribe(ctx, ns, name)
	cancel()
	switch {
	case errors.Is(err, ErrNoNamespace):
		writeError(w, http.StatusNotFound, err.Error(), nil)
		return
	case err != nil:
		s.Log.Error("cannot follow an environment", "namespace", ns, "name", name, "error", err)
		writeError(w, http.StatusServiceUnavailable, err.Error(), nil)
		return
	}
	defer sub.Close()
	frames, more := sub.Start(r.Header.Get("Last-Event-ID"))
	s.pump(w, r, rc, frames, more, sub.Next)
}

// Summary is an environment in a list: its EnvState, when it was created
// and whether it is being deleted.
type Summary struct {
	EnvState
	Created  string `json:"created,omitempty"`
	Deleting bool   `json:"deleting"`
}

func summaryOf(o *unstructured.Unstructured) Summary {
	s := Summary{EnvState: envOf(o).EnvState, Deleting: o.GetDeletionTimestamp() != nil}
	if t := o.GetCreationTimestamp(); !t.IsZero() {
		s.Created = t.UTC().Format(time.RFC3339)
	}
	return s
}

// apiError answers with what the API server said, as the user's request.
func (s *Server) apiError(w http.ResponseWriter, err error) {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		s.Log.Error("cannot reach the API server", "error", err)
		writeError(w, http.StatusBadGateway, "cannot reach the API server", nil)
		return
	}
	status := st.Status()
	if status.Reason == metav1.StatusReasonForbidden && status.Details != nil && impersonation[status.Details.Kind] {
		// The portal's own RBAC, not the user's: say so in the log, not
		// to the user.
		s.Log.Error("the portal may not impersonate: check its ClusterRole", "error", err)
		writeError(w, http.StatusInternalServerError, "cannot act for the user", nil)
		return
	}
	code := int(status.Code)
	if code < 400 || code > 599 {
		code = http.StatusBadGateway
	}
	var fields []FieldError
	if status.Details != nil {
		for _, c := range status.Details.Causes {
			fields = append(fields, FieldError{Field: c.Field, Message: c.Message})
		}
	}
	writeError(w, code, status.Message, fields)
}

// impersonation are the resources a Forbidden names when the portal itself
// may not impersonate.
var impersonation = map[string]bool{"users": true, "groups": true, "uids": true, "serviceaccounts": true, "userextras": true}

// Problem is the body of every error answer.
type Problem struct {
	Error  string       `json:"error"`
	Fields []FieldError `json:"fields,omitempty"`
}

func writeError(w http.ResponseWriter, code int, msg string, fields []FieldError) {
	writeJSON(w, code, Problem{Error: msg, Fields: fields})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	e := json.NewEncoder(w)
	e.SetEscapeHTML(false)
	_ = e.Encode(v)
}
