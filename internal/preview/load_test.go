package preview

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const hint = "Crossplane v2 serves EnvironmentConfigs only as apiextensions.crossplane.io/v1beta1, so configs written as apiextensions.crossplane.io/v1alpha1 are not found (crossplane render --required-resources and --extra-resources skip them too): set their apiVersion to apiextensions.crossplane.io/v1beta1, data and labels unchanged"
	beta := write("beta/baseline.yaml", "apiVersion: apiextensions.crossplane.io/v1beta1\nkind: EnvironmentConfig\nmetadata:\n  name: baseline\ndata: {a: 1}\n")
	alpha := write("alpha/cloud-gcp.yaml", "apiVersion: apiextensions.crossplane.io/v1alpha1\nkind: EnvironmentConfig\nmetadata:\n  name: cloud-gcp\ndata: {b: 2}\n"+
		"---\napiVersion: apiextensions.crossplane.io/v1alpha1\nkind: EnvironmentConfig\nmetadata:\n  name: cloud-aws\ndata: {c: 3}\n")
	spend := write("spend/spend.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: spend\ndata: {spentUsd: \"1\"}\n")
	// Another kind of the old group version is none of preview's business.
	other := write("other/usage.yaml", "apiVersion: apiextensions.crossplane.io/v1alpha1\nkind: Usage\nmetadata:\n  name: u\n")

	type args struct {
		env, objects []string
		inContext    bool
	}
	type want struct {
		environment, objects int
		warnings             []string
		err                  string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Current": {
			reason: "v1beta1 EnvironmentConfigs and other objects are read as they are.",
			args:   args{env: []string{filepath.Join(dir, "beta")}, objects: []string{spend, other}},
			want:   want{environment: 1, objects: 2},
		},
		"OldVersionRefused": {
			reason: "A v1alpha1 EnvironmentConfig would never be delivered through a requirement (crossplane render matches the API version exactly): refused, naming each file and object and the fix.",
			args:   args{env: []string{beta, filepath.Join(dir, "alpha")}},
			want: want{err: "cannot use the EnvironmentConfigs: " +
				alpha + `: EnvironmentConfig "cloud-gcp" is apiextensions.crossplane.io/v1alpha1; ` +
				alpha + `: EnvironmentConfig "cloud-aws" is apiextensions.crossplane.io/v1alpha1. ` + hint},
		},
		"OldVersionAmongObjectsRefused": {
			reason: "Objects answer requirements too, by exact API version: a v1alpha1 EnvironmentConfig there is refused whether or not the environment goes into the context.",
			args:   args{env: []string{beta}, objects: []string{spend, alpha}, inContext: true},
			want: want{err: "cannot use the required objects: " +
				alpha + `: EnvironmentConfig "cloud-gcp" is apiextensions.crossplane.io/v1alpha1; ` +
				alpha + `: EnvironmentConfig "cloud-aws" is apiextensions.crossplane.io/v1alpha1. ` + hint},
		},
		"OldVersionInContextWarns": {
			reason: "Merged into the context, as make render passes the original platform's configs, a v1alpha1 EnvironmentConfig is accepted with one warning that says how to fix them.",
			args:   args{env: []string{beta, alpha}, inContext: true},
			want: want{environment: 3, warnings: []string{
				alpha + `: EnvironmentConfig "cloud-gcp" is apiextensions.crossplane.io/v1alpha1; ` +
					alpha + `: EnvironmentConfig "cloud-aws" is apiextensions.crossplane.io/v1alpha1. ` + hint + " (--env-context merges them into the pipeline context all the same)",
			}},
		},
		"Unreadable": {
			reason: "A file that cannot be read is an error naming what was being read.",
			args:   args{env: []string{filepath.Join(dir, "missing.yaml")}},
			want:   want{err: "cannot read the EnvironmentConfigs: open " + filepath.Join(dir, "missing.yaml") + ": no such file or directory"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w, warnings, err := Load(tc.args.env, tc.args.objects, tc.args.inContext)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want.err, got); diff != "" {
				t.Errorf("%s\nLoad(...): error: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.warnings, warnings, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nLoad(...): warnings: -want, +got:\n%s", tc.reason, diff)
			}
			if len(w.Environment) != tc.want.environment || len(w.Objects) != tc.want.objects || w.InContext != (tc.want.err == "" && tc.args.inContext) {
				t.Errorf("%s\nLoad(...): %d EnvironmentConfigs, %d objects, in context %t; want %d, %d", tc.reason, len(w.Environment), len(w.Objects), w.InContext, tc.want.environment, tc.want.objects)
			}
		})
	}
}
