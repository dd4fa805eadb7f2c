package main

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/secret"
	"github.com/seed-6471616d/function-cluster-platform/internal/simulate"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// maxRounds bounds a convergence through the CLI.
const maxRounds = 20

// converge takes every XR file of the folders through the crossplane CLI
// until it is Ready: each round renders the XR with what the previous
// rounds composed as observed and ready (the providers, as the simulator
// reports them), and checks that no observed composed resource is ever
// withdrawn and that no render holds a plaintext credential. The last
// render is validated against the provider CRDs and every XRD. These XRs
// are not the examples: they show that XRs nobody tuned converge too.
func converge(crossplane, out, crds, cache, image string, folders []string) error {
	comps, xrds, err := apis()
	if err != nil {
		return err
	}
	var files []string
	for _, d := range folders {
		f, err := filepath.Glob(filepath.Join(d, "*.yaml"))
		if err != nil {
			return err
		}
		files = append(files, f...)
	}
	sort.Strings(files)
	if len(files) == 0 {
		return fmt.Errorf("no XR in %v", folders)
	}
	schemas := append(dirs(crds), slices.Compact(slices.Sorted(maps.Values(xrds)))...)
	for _, f := range files {
		xr, err := readFirst(f)
		if err != nil {
			return err
		}
		comp, ok := comps[typeRef{str(xr, "apiVersion"), str(xr, "kind")}]
		if !ok {
			return fmt.Errorf("%s: no Composition for %s %s", f, str(xr, "apiVersion"), str(xr, "kind"))
		}
		labels, _ := xr["metadata"].(map[string]any)["labels"].(map[string]any)
		cloud := str(labels, "cloud")
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		dir := filepath.Join(out, name)
		required := filepath.Join(dir, "required")
		if err := gather(required, "examples/envconfigs", "examples/spend", filepath.Join("examples", cloud, "required")); err != nil {
			return err
		}
		if err := grantTeams(filepath.Join(required, "envconfigs-baseline.yaml")); err != nil {
			return err
		}
		rounds, last, composed, err := convergeOne(crossplane, f, comp, required, dir)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if !validateOne(crossplane, schemas, last, cache, image, fmt.Sprintf("%-34s converged", name)) {
			return fmt.Errorf("%s: the converged render fails validation", f)
		}
		if err := dayOne(last); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		fmt.Printf("converged %-34s Ready in %d rounds through the CLI, %d composed resources, nothing withdrawn, no credential\n", name, rounds, composed)
	}
	fmt.Printf("converged %d XRs through the crossplane CLI\n", len(files))
	return nil
}

// convergeOne renders an XR round after round. It returns the rounds it
// took, the last render's file and how many resources it composes.
func convergeOne(crossplane, xr, comp, required, dir string) (int, string, int, error) {
	observed := map[string]xpsim.Object{}
	obsFile := filepath.Join(dir, "observed.yaml")
	for round := 1; round <= maxRounds; round++ {
		args := []string{"render", xr, comp, functionsFile, "--required-resources=" + required, "--include-full-xr"}
		if len(observed) > 0 {
			b, err := xpsim.YAML(observed)
			if err != nil {
				return 0, "", 0, err
			}
			if err := os.WriteFile(obsFile, b, 0o600); err != nil {
				return 0, "", 0, err
			}
			args = append(args, "--observed-resources="+obsFile)
		}
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(crossplane, args...) //nolint:gosec // our own CLI and files
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return 0, "", 0, fmt.Errorf("round %d: %w\n%s", round, err, stderr.String())
		}
		render := filepath.Join(dir, fmt.Sprintf("round-%02d.yaml", round))
		if err := os.WriteFile(render, stdout.Bytes(), 0o600); err != nil {
			return 0, "", 0, err
		}
		docs, err := xpsim.Parse(stdout.Bytes())
		if err != nil {
			return 0, "", 0, err
		}
		composed := map[string]xpsim.Object{}
		ready := false
		for _, o := range docs {
			if n := xpsim.CompositionResourceName(o); n != "" {
				composed[n] = o
				if leaks := secret.Find(o); len(leaks) > 0 {
					return 0, "", 0, fmt.Errorf("round %d: %s holds a plaintext credential at %v", round, n, leaks)
				}
				continue
			}
			if cond := conditionStatus(o, "Ready"); cond != "" {
				ready = cond == "True"
			}
		}
		for n := range observed {
			if _, ok := composed[n]; !ok {
				return 0, "", 0, fmt.Errorf("round %d: WITHDRAWN: observed composed resource %q is not rendered", round, n)
			}
		}
		if ready && len(composed) == len(observed) {
			return round, render, len(composed), nil
		}
		next := make(map[string]xpsim.Object, len(composed))
		for n, o := range composed {
			next[n] = simulate.Observe(o, n)
		}
		observed = next
	}
	return 0, "", 0, fmt.Errorf("not Ready after %d rounds", maxRounds)
}

// conditionStatus is the status of a condition of an object, or "".
func conditionStatus(o xpsim.Object, typ string) string {
	st, _ := o["status"].(map[string]any)
	conds, _ := st["conditions"].([]any)
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			return cmp.Or(str(m, "status"), "Unknown")
		}
	}
	return ""
}

// dayOne checks what a team needs of a converged Cluster with a domain on
// day one: status names where its kubeconfig is (in the XR's namespace, or
// the claim's), and external-dns and cert-manager run bound to a cloud
// identity with an issuer and a certificate for the domain.
func dayOne(render string) error {
	b, err := os.ReadFile(render) //nolint:gosec // our own render
	if err != nil {
		return err
	}
	docs, err := xpsim.Parse(b)
	if err != nil {
		return err
	}
	composed := map[string]xpsim.Object{}
	var xr xpsim.Object
	for _, o := range docs {
		if n := xpsim.CompositionResourceName(o); n != "" {
			composed[n] = o
		} else if xr == nil {
			xr = o
		}
	}
	if k := str(xr, "kind"); k != "Cluster" && k != "XCluster" {
		return nil
	}
	meta, _ := xr["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	st, _ := xr["status"].(map[string]any)
	ks, _ := st["kubeconfigSecret"].(map[string]any)
	wantNS := cmp.Or(str(meta, "namespace"), str(labels, "crossplane.io/claim-namespace"))
	if str(ks, "namespace") != wantNS || str(ks, "key") != "kubeconfig" {
		return fmt.Errorf("status.kubeconfigSecret = %v, want the kubeconfig in namespace %q", ks, wantNS)
	}
	for _, n := range []string{"dns-identity", "release-external-dns", "release-cert-manager", "cluster-issuer", "domain-certificate"} {
		if composed[n] == nil {
			return fmt.Errorf("day one: %s is not composed", n)
		}
	}
	bound := 0
	for n := range composed {
		for _, binding := range []string{"dns-workload-user-", "dns-pod-identity-", "dns-federation-"} {
			if strings.HasPrefix(n, binding) && !strings.Contains(n, "-uses-") {
				bound++
			}
		}
	}
	if bound < 2 {
		return fmt.Errorf("day one: %d workload identity bindings for external-dns and cert-manager, want 2", bound)
	}
	fmt.Printf("day one   kubeconfig in %s/%s, external-dns and cert-manager bound to the cloud identity dns-identity (%d bindings)\n", wantNS, cmp.Or(str(ks, "name"), "(the claim's Secret)"), bound)
	return nil
}

// teamGrants are the platform team's grants for the teams whose XRs
// converge renders, by namespace (testdata/tenancy.yaml).
const teamGrants = "cmd/examples/testdata/tenancy.yaml"

// grantTeams lays teamGrants over the tenancy of names of the baseline
// EnvironmentConfig at path.
func grantTeams(path string) error {
	b, err := os.ReadFile(teamGrants)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", teamGrants, err)
	}
	var grants map[string]any
	if err := yaml.Unmarshal(b, &grants); err != nil {
		return fmt.Errorf("cannot parse %s: %w", teamGrants, err)
	}
	base, err := readFirst(path)
	if err != nil {
		return err
	}
	for ns, g := range grants {
		fntest.Set("data.tenancy.namespaces."+ns, g)(base)
	}
	return writeYAML(path, base)
}
