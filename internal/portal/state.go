package portal

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Condition is one of a resource's status conditions.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// EnvState is what the page and the list say of an environment: its name,
// its Ready and Synced conditions (with why, while not ready) and the URLs
// in its status.
type EnvState struct {
	Name        string `json:"name"`
	Namespace   string `json:"namespace"`
	Ready       string `json:"ready"`
	Synced      string `json:"synced"`
	Message     string `json:"message,omitempty"`
	URL         string `json:"url,omitempty"`
	FrontendURL string `json:"frontendUrl,omitempty"`
}

// Env is an environment's own state on its stream: its EnvState and all
// of the XR's conditions.
type Env struct {
	EnvState
	Conditions []Condition `json:"conditions"`
}

func (e *Env) equal(o *Env) bool {
	return e.EnvState == o.EnvState && slices.Equal(e.Conditions, o.Conditions)
}

// Resource is one composed resource of an environment: a row of its page.
type Resource struct {
	ID         string `json:"id"`
	Resource   string `json:"resource,omitempty"`
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Name       string `json:"name"`
	Ready      string `json:"ready"`
	Synced     string `json:"synced"`
	Message    string `json:"message,omitempty"`
}

// Snapshot is an environment's whole state.
type Snapshot struct {
	Environment Env        `json:"environment"`
	Resources   []Resource `json:"resources"`
}

// ref is a resource reference of an XR.
type ref struct {
	gvk  schema.GroupVersionKind
	name string
}

func resourceRefs(u *unstructured.Unstructured) []ref {
	refs, ok, _ := unstructured.NestedSlice(u.Object, "spec", "crossplane", "resourceRefs")
	if !ok {
		refs, _, _ = unstructured.NestedSlice(u.Object, "spec", "resourceRefs")
	}
	out := make([]ref, 0, len(refs))
	for _, r := range refs {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		av, _ := m["apiVersion"].(string)
		k, _ := m["kind"].(string)
		n, _ := m["name"].(string)
		gv, err := schema.ParseGroupVersion(av)
		if err != nil || k == "" || n == "" {
			continue
		}
		out = append(out, ref{gvk: gv.WithKind(k), name: n})
	}
	return out
}

func envOf(u *unstructured.Unstructured) Env {
	conds := conditions(u)
	ready, synced := find(conds, "Ready"), find(conds, "Synced")
	e := Env{EnvState: EnvState{Name: u.GetName(), Namespace: u.GetNamespace(), Ready: ready.Status, Synced: synced.Status}, Conditions: conds}
	if ready.Status != "True" {
		e.Message = joinReason(ready)
	}
	e.URL, _, _ = unstructured.NestedString(u.Object, "status", "url")
	e.FrontendURL, _, _ = unstructured.NestedString(u.Object, "status", "frontendUrl")
	return e
}

func conditions(u *unstructured.Unstructured) []Condition {
	l, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	out := make([]Condition, 0, len(l))
	for _, c := range l {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		s := func(k string) string { v, _ := m[k].(string); return v }
		out = append(out, Condition{Type: s("type"), Status: s("status"), Reason: s("reason"), Message: s("message")})
	}
	return out
}

// find returns the condition of a type, Unknown when absent.
func find(conds []Condition, typ string) Condition {
	for _, c := range conds {
		if c.Type == typ {
			return c
		}
	}
	return Condition{Type: typ, Status: "Unknown"}
}

func joinReason(c Condition) string {
	switch {
	case c.Reason != "" && c.Message != "":
		return c.Reason + ": " + c.Message
	case c.Reason != "":
		return c.Reason
	}
	return c.Message
}
