package main

import (
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The synthetic provider the source tests read: this test's own code, in
// the shapes the Terraform providers declare their resources (not any
// provider's code).
var synthetic = map[string]string{
	"go.mod": "module example.com/provider\n",
	"names/names.go": `package names

const (
	AttrName   = "name"
	AttrRegion = "region"
)
`,
	"internal/service/thing/thing.go": `package thing

import (
	"context"

	"github.com/hashicorp/terraform-plugin-sdk/v2/helper/customdiff"
	"github.com/hashicorp/terraform-plugin-sdk/v2/helper/schema"
	"example.com/provider/names"
)

// @SDKResource("example_thing", name="Thing")
func resourceThing() *schema.Resource {
	return &schema.Resource{
		CustomizeDiff: customdiff.Sequence(
			customdiff.ForceNewIfChange("size", func(_ context.Context, old, new, meta any) bool {
				return new.(int) < old.(int)
			}),
			customdiff.ForceNewIf("mode", func(_ context.Context, d *schema.ResourceDiff, meta any) bool {
				return true
			}),
			thingCustomizeDiff,
		),
		Schema: map[string]*schema.Schema{
			names.AttrName: {
				Type:     schema.TypeString,
				Required: true,
				ForceNew: true,
			},
			"size": {
				Type:     schema.TypeInt,
				Optional: true,
			},
			"block": {
				Type:     schema.TypeList,
				Optional: true,
				Elem: &schema.Resource{
					Schema: map[string]*schema.Schema{
						"inner": {
							Type:     schema.TypeString,
							Optional: true,
							ForceNew: true,
						},
					},
				},
			},
		},
	}
}

func thingCustomizeDiff(_ context.Context, diff *schema.ResourceDiff, _ any) error {
	key := "block.0.other"
	if diff.HasChange(key) {
		return diff.ForceNew(key)
	}
	return nil
}
`,
	"internal/service/thing/widget.go": `package thing

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"example.com/provider/names"
)

// @FrameworkResource("example_widget", name="Widget")
func newWidgetResource(_ context.Context) (resource.ResourceWithConfigure, error) {
	r := &widgetResource{}
	return r, nil
}

type widgetResource struct{}

func (r *widgetResource) Schema(ctx context.Context, request resource.SchemaRequest, response *resource.SchemaResponse) {
	response.Schema = schema.Schema{
		Attributes: map[string]schema.Attribute{
			names.AttrName: schema.StringAttribute{
				Required: true,
				PlanModifiers: []planmodifier.String{
					stringplanmodifier.RequiresReplace(),
				},
			},
			"label": schema.StringAttribute{
				Optional: true,
			},
		},
	}
}
`,
	"internal/provider/region.go": `package provider

import (
	"context"

	"example.com/provider/names"
)

func forceNewIfRegionChanges() func(context.Context, diff) error {
	return func(ctx context.Context, d diff) error {
		if d.HasChange(names.AttrRegion) {
			return d.ForceNew(names.AttrRegion)
		}
		return nil
	}
}
`,
}

// syntheticRepo writes the synthetic provider into a git directory and
// returns a repo reading its HEAD.
func syntheticRepo(t *testing.T) *repo {
	t.Helper()
	dir := t.TempDir()
	for name, body := range synthetic {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "synthetic"},
	} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...) //nolint:gosec // the test's own temporary repository and fixed arguments
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cannot run git %v: %v: %s", args, err, out)
		}
	}
	return &repo{gitDir: filepath.Join(dir, ".git"), rev: "HEAD", module: "example.com/provider", fset: token.NewFileSet(), pkgs: map[string]*pkg{}}
}

// TestReadResource reads the synthetic provider's resources: their ForceNew
// attributes, keyed by constants of another package, and the rules of their
// custom diffs.
func TestReadResource(t *testing.T) {
	type want struct {
		forceNew []string
		rules    []rule
	}
	cases := map[string]struct {
		reason   string
		resource string
		want     want
	}{
		"SDKResource": {
			reason:   "An annotated SDKv2 resource gives its ForceNew attributes (a key that is a constant of names included) and its custom diff's rules: a ForceNewIfChange on a decrease, a ForceNewIf, and a ForceNew of a local key in a function of the package.",
			resource: "example_thing",
			want: want{
				forceNew: []string{"block.inner", "name"},
				rules: []rule{
					{attribute: "size", kind: ruleIfChange, where: "internal/service/thing/thing.go:15", decrease: true},
					{attribute: "mode", kind: ruleIf, where: "internal/service/thing/thing.go:18"},
					{attribute: "block.other", kind: ruleForceNew, where: "internal/service/thing/thing.go:53"},
				},
			},
		},
		"FrameworkResource": {
			reason:   "An annotated Framework resource forces a new resource where a plan modifier is RequiresReplace.",
			resource: "example_widget",
			want:     want{forceNew: []string{"name"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := syntheticRepo(t)
			src, err := r.readResource(tc.resource)
			if err != nil {
				t.Fatal(err)
			}
			var flat []row
			flatten(src.attrs, "", &flat, func(string) string { return "HEAD" })
			got := want{rules: src.rules}
			for _, f := range flat {
				got.forceNew = append(got.forceNew, f.attribute)
			}
			slices.Sort(got.forceNew)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}, rule{})); diff != "" {
				t.Errorf("%s\nreadResource(%q): -want, +got:\n%s", tc.reason, tc.resource, diff)
			}
		})
	}
}

// TestInterceptorRules reads a provider-wide custom diff (AWS's region).
func TestInterceptorRules(t *testing.T) {
	r := syntheticRepo(t)
	got, err := r.interceptorRules(interceptor{dir: "internal/provider", fn: "forceNewIfRegionChanges"})
	if err != nil {
		t.Fatal(err)
	}
	want := []rule{{attribute: "region", kind: ruleForceNew, where: "internal/provider/region.go:12"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(rule{})); diff != "" {
		t.Errorf("interceptorRules: -want, +got:\n%s", diff)
	}
}
