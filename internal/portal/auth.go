package portal

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// The review kinds, used through the dynamic client so that the binary
// does not carry client-go's typed clients for every Kubernetes API.
var (
	tokenReviews  = schema.GroupVersionResource{Group: "authentication.k8s.io", Version: "v1", Resource: "tokenreviews"}
	accessReviews = schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "subjectaccessreviews"}
	configMaps    = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces    = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// User is a caller as the API server authenticated its bearer token.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// An Authenticator turns a bearer token into the User it belongs to.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (*User, error)
}

// knower is an Authenticator that can tell, without asking the API
// server, that it already has a token's answer: such a request costs no
// TokenReview, so it is not counted against its address's review rate.
type knower interface {
	Known(token string) bool
}

// An Authorizer says whether a User may do something to a resource.
type Authorizer interface {
	Allowed(ctx context.Context, u *User, a Access) (bool, error)
}

// Access is what a user asks to do: a verb on a resource in a namespace.
type Access struct {
	Namespace string
	Verb      string
	Group     string
	Resource  string
	Name      string
}

// Impersonator gives the client every read and write on a user's behalf
// goes through: requests made as that user, so that Kubernetes RBAC, not
// the portal, decides what they may touch.
type Impersonator func(u *User) (dynamic.Interface, error)

// errUnauthenticated is a token the API server does not know, or knows as
// nobody (anonymous).
var errUnauthenticated = errors.New("the bearer token is not valid")

// errBusy is a TokenReview not made because too many are in flight.
var errBusy = errors.New("too many token reviews in flight")

// maxCached bounds the token and access caches: past it they are emptied.
const maxCached = 10000

// MaxTokenLength bounds a bearer token: a longer one is refused without a
// TokenReview. Service account tokens and OIDC ID tokens are a few KiB.
const MaxTokenLength = 16 << 10

// The users the API server gives a request it could not authenticate.
const (
	userAnonymous        = "system:anonymous"
	groupUnauthenticated = "system:unauthenticated"
)

// Bearer returns the token of an Authorization header value that is
// exactly "Bearer <token>": one space, then a token of printable ASCII
// without spaces, at most MaxTokenLength long. Anything else is no token:
// the API server may read a malformed one as the anonymous user.
func Bearer(header string) (string, bool) {
	token, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || token == "" || len(token) > MaxTokenLength {
		return "", false
	}
	for i := range len(token) {
		if c := token[i]; c <= ' ' || c >= 0x7f {
			return "", false
		}
	}
	return token, true
}

// TokenReviewer authenticates bearer tokens with the API server's
// TokenReview, remembering an answer for a while under the token's hash
// (never the token): a user for TTL, a refusal for NegativeTTL. The two
// caches are apart, so that a flood of bad tokens cannot push the good
// ones out. At most InFlight reviews are made at once (0: no bound);
// past that a token is refused with errBusy, not queued.
type TokenReviewer struct {
	Client      dynamic.Interface
	TTL         time.Duration
	NegativeTTL time.Duration
	InFlight    int
	Audiences   []string
	Now         func() time.Time

	mu      sync.Mutex
	cache   map[[sha256.Size]byte]cachedUser
	refused map[[sha256.Size]byte]time.Time
	gate    chan struct{}
}

type cachedUser struct {
	user    *User
	expires time.Time
}

// Known says whether the answer for token is cached.
func (t *TokenReviewer) Known(token string) bool {
	key := sha256.Sum256([]byte(token))
	now := t.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.cache[key]; ok && now.Before(c.expires) {
		return true
	}
	exp, ok := t.refused[key]
	return ok && now.Before(exp)
}

// Authenticate asks the API server who token belongs to. A token it does
// not authenticate, or authenticates as the anonymous user, is
// errUnauthenticated.
func (t *TokenReviewer) Authenticate(ctx context.Context, token string) (*User, error) {
	key := sha256.Sum256([]byte(token))
	now := t.Now()
	t.mu.Lock()
	c, ok := t.cache[key]
	exp, refused := t.refused[key]
	if t.gate == nil && t.InFlight > 0 {
		t.gate = make(chan struct{}, t.InFlight)
	}
	gate := t.gate
	t.mu.Unlock()
	switch {
	case ok && now.Before(c.expires):
		return c.user, nil
	case refused && now.Before(exp):
		return nil, errUnauthenticated
	}
	if gate != nil {
		select {
		case gate <- struct{}{}:
			defer func() { <-gate }()
		default:
			return nil, errBusy
		}
	}
	u, err := t.review(ctx, token)
	if err != nil {
		if errors.Is(err, errUnauthenticated) {
			t.remember(key, nil, now)
		}
		return nil, err
	}
	t.remember(key, u, now)
	return u, nil
}

// review makes one TokenReview.
func (t *TokenReviewer) review(ctx context.Context, token string) (*User, error) {
	spec := map[string]any{"token": token}
	if len(t.Audiences) > 0 {
		spec["audiences"] = toAny(t.Audiences)
	}
	tr, err := t.Client.Resource(tokenReviews).Create(ctx, review("authentication.k8s.io/v1", "TokenReview", spec), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot review a token: %w", err)
	}
	if ok, _, _ := unstructured.NestedBool(tr.Object, "status", "authenticated"); !ok {
		return nil, errUnauthenticated
	}
	u := &User{}
	u.Name, _, _ = unstructured.NestedString(tr.Object, "status", "user", "username")
	u.UID, _, _ = unstructured.NestedString(tr.Object, "status", "user", "uid")
	u.Groups, _, _ = unstructured.NestedStringSlice(tr.Object, "status", "user", "groups")
	if u.Name == "" || u.Name == userAnonymous || slices.Contains(u.Groups, groupUnauthenticated) {
		// Authenticated as nobody: the anonymous authenticator answered.
		// The portal would act as that user; it acts for nobody.
		return nil, errUnauthenticated
	}
	extra, _, _ := unstructured.NestedMap(tr.Object, "status", "user", "extra")
	for k := range extra {
		v, _, _ := unstructured.NestedStringSlice(extra, k)
		if u.Extra == nil {
			u.Extra = map[string][]string{}
		}
		u.Extra[k] = v
	}
	return u, nil
}

// remember caches a review's answer: a user, or nil for a refusal.
func (t *TokenReviewer) remember(key [sha256.Size]byte, u *User, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if u == nil {
		if t.NegativeTTL <= 0 {
			return
		}
		if t.refused == nil || len(t.refused) >= maxCached {
			t.refused = map[[sha256.Size]byte]time.Time{}
		}
		t.refused[key] = now.Add(t.NegativeTTL)
		return
	}
	if t.cache == nil || len(t.cache) >= maxCached {
		t.cache = map[[sha256.Size]byte]cachedUser{}
	}
	t.cache[key] = cachedUser{user: u, expires: now.Add(t.TTL)}
}

// AddressLimiter is a token bucket per client address: Rate tokens a
// second, Burst at most. It keeps at most Max addresses; past that, idle
// ones are forgotten, and while it is still full every new address shares
// one bucket. IPv6 addresses count by their /64, which one client
// usually holds whole.
type AddressLimiter struct {
	Rate  rate.Limit
	Burst int
	Max   int
	Now   func() time.Time

	mu       sync.Mutex
	buckets  map[netip.Addr]*rate.Limiter
	overflow *rate.Limiter
}

// Take takes a token for the client at remote (an http.Request's
// RemoteAddr), or says how long until one is there.
func (l *AddressLimiter) Take(remote string) (bool, time.Duration) {
	now := l.Now()
	b := l.bucket(addressKey(remote), now)
	r := b.ReserveN(now, 1)
	if !r.OK() {
		return false, time.Second
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// Addresses is how many addresses the limiter holds a bucket for.
func (l *AddressLimiter) Addresses() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

func (l *AddressLimiter) bucket(a netip.Addr, now time.Time) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets[a]; ok {
		return b
	}
	if l.buckets == nil {
		l.buckets = map[netip.Addr]*rate.Limiter{}
	}
	if len(l.buckets) >= l.Max {
		// A full bucket is as good as a new one: forget those.
		for k, b := range l.buckets {
			if b.TokensAt(now) >= float64(l.Burst) {
				delete(l.buckets, k)
			}
		}
	}
	if len(l.buckets) >= l.Max {
		if l.overflow == nil {
			l.overflow = rate.NewLimiter(l.Rate, l.Burst)
		}
		return l.overflow
	}
	b := rate.NewLimiter(l.Rate, l.Burst)
	l.buckets[a] = b
	return b
}

// addressKey is the address a limiter counts remote under: the IP, an
// IPv6 one's /64.
func addressKey(remote string) netip.Addr {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		a, err := netip.ParseAddr(remote)
		if err != nil {
			return netip.Addr{}
		}
		ap = netip.AddrPortFrom(a, 0)
	}
	a := ap.Addr().Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

// retryAfter is a Retry-After header's whole seconds for a wait, at least 1.
func retryAfter(d time.Duration) string {
	return fmt.Sprint(max(1, int(math.Ceil(d.Seconds()))))
}

// AccessReviewer authorizes with the API server's SubjectAccessReview.
type AccessReviewer struct {
	Client dynamic.Interface
}

// Allowed asks the API server whether u may do a.
func (r *AccessReviewer) Allowed(ctx context.Context, u *User, a Access) (bool, error) {
	spec := map[string]any{
		"user": u.Name, "uid": u.UID, "groups": toAny(u.Groups),
		"resourceAttributes": map[string]any{"namespace": a.Namespace, "verb": a.Verb, "group": a.Group, "resource": a.Resource, "name": a.Name},
	}
	if len(u.Extra) > 0 {
		extra := map[string]any{}
		for k, v := range u.Extra {
			extra[k] = toAny(v)
		}
		spec["extra"] = extra
	}
	sar, err := r.Client.Resource(accessReviews).Create(ctx, review("authorization.k8s.io/v1", "SubjectAccessReview", spec), metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("cannot review access: %w", err)
	}
	ok, _, _ := unstructured.NestedBool(sar.Object, "status", "allowed")
	return ok, nil
}

func review(apiVersion, kind string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "spec": spec}}
}

func toAny(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// ImpersonateWith returns an Impersonator that makes each user's requests
// with base's transport and the user's identity in the impersonation
// headers.
func ImpersonateWith(base *rest.Config) Impersonator {
	return func(u *User) (dynamic.Interface, error) {
		cfg := rest.CopyConfig(base)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
		return dynamic.NewForConfig(cfg)
	}
}
