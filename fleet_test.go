package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/fleet"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// fleetEnv is a baseline asking for Kubernetes 1.34 in two waves, the
// canaries soaking an hour.
const fleetEnv = `apiVersion: apiextensions.crossplane.io/v1beta1
kind: EnvironmentConfig
metadata:
  name: cluster-platform-baseline
  labels:
    platform.example.org/environment: cluster-platform
    baseline: default
data:
  version: "1.34"
  rollout:
    waves:
    - name: canary
      namespaces: [team-a]
      soak: 1h
    - name: production
`

// fleetCluster is a Cluster of wave in ns, running runs Ready since
// 2026-11-28T12:00:00Z, gated on 1.34.
func fleetCluster(ns, name, wave, runs string) string {
	return `apiVersion: platform.example.org/v1alpha1
kind: Cluster
metadata:
  name: ` + name + `
  namespace: ` + ns + `
  generation: 1
  labels:
    cloud: gcp
    platform.example.org/wave: ` + wave + `
spec:
  parameters: {location: europe-west1}
status:
  upgrade: {controlPlane: "` + runs + `", target: "` + runs + `"}
  rollout: {wave: ` + wave + `, target: "1.34", verdict: Hold}
  conditions:
  - {type: Ready, status: "True", reason: Available, observedGeneration: 1, lastTransitionTime: "2026-11-28T12:00:00Z"}
  - {type: Synced, status: "True", reason: ReconcileSuccess, observedGeneration: 1, lastTransitionTime: "2026-11-28T12:00:00Z"}
`
}

// TestFleetRule runs fleet rule as the binary parses it, on a canary that
// runs 1.34 and a production Cluster that runs 1.33, the ConfigMaps
// printed or written to a folder.
func TestFleetRule(t *testing.T) {
	dir := t.TempDir()
	env, fleet := filepath.Join(dir, "env"), filepath.Join(dir, "fleet")
	for path, body := range map[string]string{
		filepath.Join(env, "baseline.yaml"):     fleetEnv,
		filepath.Join(fleet, "canary.yaml"):     fleetCluster("team-a", "c1", "canary", "1.34"),
		filepath.Join(fleet, "production.yaml"): fleetCluster("team-b", "p1", "production", "1.33") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: team-b}\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	type ruling struct {
		Name, Namespace, Verdict, Until string
	}
	type want struct {
		rulings []ruling
		err     bool
	}
	cases := map[string]struct {
		reason string
		args   []string
		// dir is where the ConfigMaps are written (-o), "" for stdout.
		dir  string
		want want
	}{
		"Soaking": {
			reason: "Ten minutes into the canaries' soak production holds until it ends; the canary keeps 1.34; the ConfigMap among the fleet is ignored.",
			args:   []string{"fleet", "rule", "--env", env, "--fleet", fleet, "--now", "2026-11-28T12:10:00Z"},
			want: want{rulings: []ruling{
				{"cluster.team-a.c1", "crossplane-system", "Keep", ""},
				{"cluster.team-b.p1", "crossplane-system", "Hold", "2026-11-28T13:00:00Z"},
			}},
		},
		"Soaked": {
			reason: "Once the soak has ended production adopts 1.34, one ConfigMap per file in the folder.",
			args:   []string{"fleet", "rule", "--env", env, "--fleet", fleet, "--now", "2026-11-28T13:00:00Z", "-o", filepath.Join(dir, "out")},
			dir:    filepath.Join(dir, "out"),
			want: want{rulings: []ruling{
				{"cluster.team-a.c1", "crossplane-system", "Keep", ""},
				{"cluster.team-b.p1", "crossplane-system", "Adopt", ""},
			}},
		},
		"BadNow": {
			reason: "A time that is not RFC 3339 is refused.",
			args:   []string{"fleet", "rule", "--env", env, "--fleet", fleet, "--now", "tomorrow"},
			want:   want{err: true},
		},
		"NoFleet": {
			reason: "--fleet is required.",
			args:   []string{"fleet", "rule", "--env", env},
			want:   want{err: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cli := &CLI{}
			var out bytes.Buffer
			cli.Fleet.Rule.out = &out
			p, err := kong.New(cli, kong.Exit(func(int) { t.Fatal("kong exited") }))
			if err != nil {
				t.Fatal(err)
			}
			kctx, err := p.Parse(tc.args)
			if err == nil {
				err = kctx.Run()
			}
			var docs []xpsim.Object
			if tc.dir == "" {
				docs, _ = xpsim.Parse(out.Bytes())
			} else {
				for _, r := range tc.want.rulings {
					objs, lerr := xpsim.Load(filepath.Join(tc.dir, r.Name+".yaml"))
					if lerr != nil {
						t.Errorf("%s\ncannot read the file of %s: %v", tc.reason, r.Name, lerr)
					}
					docs = append(docs, objs...)
				}
			}
			got := want{err: err != nil}
			for _, d := range docs {
				r, rerr := rollout.ReadRuling(d)
				if rerr != nil {
					t.Errorf("%s\ncannot read a ruling back: %v", tc.reason, rerr)
				}
				meta := d["metadata"].(map[string]any)
				until := ""
				if !r.Until.IsZero() {
					until = r.Until.Format(time.RFC3339)
				}
				got.rulings = append(got.rulings, ruling{meta["name"].(string), meta["namespace"].(string), string(r.Verdict), until})
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n%q: -want, +got:\n%s\nerror: %v\n%s", tc.reason, tc.args, diff, err, out.String())
			}
		})
	}
}

// TestFleetRunFlags parses fleet run's flags as the binary does.
func TestFleetRunFlags(t *testing.T) {
	type want struct {
		Namespace, LeaseName string
		LeaderElect          bool
		Interval             time.Duration
	}
	cases := map[string]struct {
		reason string
		args   []string
		want   want
	}{
		"Defaults": {
			reason: "Leader election on, the Lease function-cluster-platform-fleet in crossplane-system, a pass a second at most.",
			args:   []string{"fleet", "run"},
			want:   want{Namespace: "crossplane-system", LeaseName: "function-cluster-platform-fleet", LeaderElect: true, Interval: time.Second},
		},
		"NoLeaderElection": {
			reason: "--leader-elect=false turns leader election off, for tests and the e2e.",
			args:   []string{"fleet", "run", "--leader-elect=false", "--namespace=platform", "--lease-name=fleet", "--interval=5s"},
			want:   want{Namespace: "platform", LeaseName: "fleet", Interval: 5 * time.Second},
		},
		"Negated": {
			reason: "--no-leader-elect does the same.",
			args:   []string{"fleet", "run", "--no-leader-elect"},
			want:   want{Namespace: "crossplane-system", LeaseName: "function-cluster-platform-fleet", Interval: time.Second},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("POD_NAMESPACE", "") // restored after the test
			if err := os.Unsetenv("POD_NAMESPACE"); err != nil {
				t.Fatal(err)
			}
			cli := &CLI{}
			p, err := kong.New(cli, kong.Exit(func(int) { t.Fatal("kong exited") }))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Parse(tc.args); err != nil {
				t.Fatalf("%s\nParse(%q): %v", tc.reason, tc.args, err)
			}
			r := cli.Fleet.Run
			got := want{Namespace: r.Namespace, LeaseName: r.LeaseName, LeaderElect: r.LeaderElect, Interval: r.Interval}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nParse(%q): -want, +got:\n%s", tc.reason, tc.args, diff)
			}
		})
	}
}

// TestFleetInstall checks examples/install/fleet/fleet.yaml: the
// Deployment's arguments are a fleet run the binary accepts, the
// controller reads the fleet (every kind it watches, fleet.ReleaseKinds
// and fleet.ClaimKinds) and writes nothing else than an XR's or a claim's
// release selection (patch), ConfigMaps and its Lease.
func TestFleetInstall(t *testing.T) {
	objs, err := xpsim.Load("examples/install/fleet/fleet.yaml")
	if err != nil {
		t.Fatalf("cannot read the install manifest: %v", err)
	}
	rules := func(o xpsim.Object) []rule {
		var out []rule
		for _, r := range o["rules"].([]any) {
			m := r.(map[string]any)
			join := func(k string) string { return fmt.Sprint(m[k]) }
			out = append(out, rule{join("apiGroups"), join("resources"), join("verbs")})
		}
		return out
	}
	got := map[string]any{}
	for _, o := range objs {
		switch o["kind"] {
		case "Deployment":
			c := o["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			var args []string
			for _, a := range c["args"].([]any) {
				args = append(args, a.(string))
			}
			p, err := kong.New(&CLI{}, kong.Exit(func(int) { t.Fatal("kong exited") }))
			if err != nil {
				t.Fatal(err)
			}
			kctx, err := p.Parse(args)
			if err != nil {
				t.Errorf("the Deployment's args %q: %v", args, err)
				continue
			}
			got["Deployment"] = kctx.Command()
		case "ClusterRole", "Role":
			got[o["kind"].(string)] = rules(o)
		}
	}
	want := map[string]any{
		"Deployment":  "fleet run",
		"ClusterRole": append(xrRules(), rule{"[apiextensions.crossplane.io]", "[environmentconfigs compositionrevisions]", "[get list watch]"}),
		"Role": []rule{
			{"[]", "[configmaps]", "[get list watch create update delete]"},
			{"[coordination.k8s.io]", "[leases]", "[get create update]"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("examples/install/fleet/fleet.yaml: -want, +got:\n%s", diff)
	}
}

// A rule is an RBAC rule's groups, resources and verbs, each printed.
type rule struct {
	Groups, Resources, Verbs string
}

// xrRules are the rules of the XR kinds and the claim kinds the controller
// watches, one per API group in the order fleet.ReleaseKinds and then
// fleet.ClaimKinds list them: read and patch.
func xrRules() []rule {
	var groups []string
	byGroup := map[string][]string{}
	for _, k := range slices.Concat(fleet.ReleaseKinds, fleet.ClaimKinds) {
		g := k.Resource.Group
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], k.Resource.Resource)
	}
	slices.SortStableFunc(groups, func(a, b string) int { return len(a) - len(b) })
	out := make([]rule, 0, len(groups))
	for _, g := range groups {
		out = append(out, rule{fmt.Sprint([]string{g}), fmt.Sprint(byGroup[g]), "[get list watch patch]"})
	}
	return out
}
