package portal

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// reLabel is a DNS label, written here rather than taken from the code
// under test.
var reLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// FuzzRequest sends any body through the request decoding and the policy,
// and checks what tenancy rests on, independently of how Build works: an
// accepted request makes an AppEnvironment in the caller's namespace, on
// the policy's cloud, plane and Cluster, with the policy's image rules,
// and nothing a request did not choose.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		`{"name":"x","size":"small"}`,
		`{"name":"feature-x","size":"small","database":true,"frontend":true,"image":"ghcr.io/acme/a:1"}`,
		`{"name":"x","size":"tiny","namespace":"team-b"}`,
		`{"name":"x","size":"small","image":"ghcr.io/acme/../../evil"}`,
		`{"name":"a.b","size":"small"}`,
		`{"name":"x","size":"small"}{"name":"y"}`,
		`{"name":"x\u0000","size":"small"}`,
	} {
		f.Add(s)
	}
	p := testPolicy()
	params := []string{"backend", "clusterRef", "database", "frontend", "ingress"}
	f.Fuzz(func(t *testing.T, body string) {
		req, errs := DecodeRequest([]byte(body))
		if len(errs) > 0 {
			return
		}
		u, errs := p.Build("team-a", req, "alice", []string{"aws", "azure", "gcp"})
		if len(errs) > 0 {
			for _, e := range errs {
				if e.Field == "" || e.Message == "" {
					t.Fatalf("an error without field or message: %+v", errs)
				}
			}
			return
		}
		if u.GetNamespace() != "team-a" || u.GetName() != req.Name || !reLabel.MatchString(u.GetName()) || len(u.GetName()) > 40 {
			t.Fatalf("accepted %q as %s/%s", body, u.GetNamespace(), u.GetName())
		}
		if diff := cmp.Diff(map[string]string{"cloud": "gcp", "planeId": "acme-prod", "planeType": "production"}, u.GetLabels()); diff != "" {
			t.Fatalf("%q: the labels are the policy's alone: -want, +got:\n%s", body, diff)
		}
		if diff := cmp.Diff(map[string]string{AnnotationRequestedBy: "alice"}, u.GetAnnotations()); diff != "" {
			t.Fatalf("%q: annotations: -want, +got:\n%s", body, diff)
		}
		got, _, _ := unstructured.NestedMap(u.Object, "spec", "parameters")
		for k := range got {
			if !slices.Contains(params, k) {
				t.Fatalf("%q: parameter %s is not one a request may lead to", body, k)
			}
		}
		if c, _, _ := unstructured.NestedString(u.Object, "spec", "parameters", "clusterRef", "name"); c != "shared" {
			t.Fatalf("%q: Cluster %q, not the policy's", body, c)
		}
		img, _, _ := unstructured.NestedString(u.Object, "spec", "parameters", "backend", "image")
		if img != p.DefaultImage && !strings.HasPrefix(img, "ghcr.io/acme/") {
			t.Fatalf("%q: image %q is outside the policy", body, img)
		}
		for _, h := range [][]string{{"ingress", "host"}, {"frontend", "host"}} {
			if v, ok, _ := unstructured.NestedString(u.Object, append([]string{"spec", "parameters"}, h...)...); ok && !strings.HasSuffix(v, ".apps.example.com") {
				t.Fatalf("%q: %s %q is outside the policy's domain", body, strings.Join(h, "."), v)
			}
		}
	})
}
