package portal

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

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

// errUnauthenticated is a token the API server does not know.
var errUnauthenticated = errors.New("the bearer token is not valid")

// maxCached bounds the token and access caches: past it they are emptied.
const maxCached = 10000

// TokenReviewer authenticates bearer tokens with the API server's
// TokenReview, remembering an answer for a while under the token's hash
// (never the token).
type TokenReviewer struct {
	Client    dynamic.Interface
	TTL       time.Duration
	Audiences []string
	Now       func() time.Time

	mu    sync.Mutex
	cache map[[sha256.Size]byte]cachedUser
}

type cachedUser struct {
	user    *User
	expires time.Time
}

// Authenticate asks the API server who token belongs to.
func (t *TokenReviewer) Authenticate(ctx context.Context, token string) (*User, error) {
	key := sha256.Sum256([]byte(token))
	now := t.Now()
	t.mu.Lock()
	c, ok := t.cache[key]
	t.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.user, nil
	}
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
	extra, _, _ := unstructured.NestedMap(tr.Object, "status", "user", "extra")
	for k := range extra {
		v, _, _ := unstructured.NestedStringSlice(extra, k)
		if u.Extra == nil {
			u.Extra = map[string][]string{}
		}
		u.Extra[k] = v
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cache == nil || len(t.cache) >= maxCached {
		t.cache = map[[sha256.Size]byte]cachedUser{}
	}
	t.cache[key] = cachedUser{user: u, expires: now.Add(t.TTL)}
	return u, nil
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
