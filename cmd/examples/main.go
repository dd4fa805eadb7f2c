// Command examples renders every example XR with the crossplane CLI and,
// with -validate, validates each render against the provider CRDs, our XRDs
// and Crossplane's own schemas. Instead, -redteam replays attacks on the
// trust boundary against the converged examples (redteam.go), -daytwo
// renders day-2 changes of the converged example Clusters (daytwo.go), and
// -converge converges XRs that are not the examples (converge.go). It
// expects the function to be serving at -address with --insecure (the
// Makefile starts it on the first free port from 9443).
//
// Each XR under examples/<cloud>/ is rendered with the Composition whose
// compositeTypeRef matches it, found anywhere under apis/; twice when it has
// an observed-resource file under examples/<cloud>/observed/ (first render
// and converged). With -function, the converged render's observed
// resources come from the function's preview -o observed, and preview -o
// yaml must print the converged render's objects (preview.SameAsRender).
package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/preview"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

func main() {
	var (
		crossplane = flag.String("crossplane", "bin/crossplane", "the crossplane CLI")
		out        = flag.String("out", "_output/render", "where renders are written")
		crds       = flag.String("crds", "../shared/crds", "provider and Crossplane CRDs")
		cache      = flag.String("cache-dir", "_output/validate-cache", "crossplane beta validate cache, holding Crossplane's own schemas")
		image      = flag.String("crossplane-image", "", "the Crossplane image whose schemas the cache holds, e.g. xpkg.crossplane.io/crossplane/crossplane:v2.2.1")
		validate   = flag.Bool("validate", false, "validate every render")
		static     = flag.String("static", "examples/install,examples/install/portal", "comma-separated folders of manifests validated as they are")
		red        = flag.Bool("redteam", false, "instead of rendering the examples, replay the red-team attacks on the trust boundary against the converged examples")
		day2       = flag.Bool("daytwo", false, "instead of rendering the examples, render day-2 changes of the converged example Clusters (upgrades, skips, downgrades, rotations, maintenance) and validate them")
		conv       = flag.String("converge", "", "instead of rendering the examples, converge the XRs of these comma-separated folders through the CLI and validate them")
		address    = flag.String("address", "127.0.0.1:9443", "where the function serves, for crossplane render")
		function   = flag.String("function", "", "the function's binary: when set, the converged renders take their observed resources from its preview command rather than from the examples' observed files")
	)
	flag.Parse()
	if err := functionsFor(*address, filepath.Dir(*out)); err != nil {
		fmt.Fprintln(os.Stderr, "examples:", err)
		os.Exit(1)
	}
	previewer = *function
	if *conv != "" {
		if err := converge(*crossplane, filepath.Join(filepath.Dir(*out), "converge"), *crds, *cache, *image, strings.Split(*conv, ",")); err != nil {
			fmt.Fprintln(os.Stderr, "converge:", err)
			os.Exit(1)
		}
		return
	}
	if *day2 {
		if err := dayTwoRun(*crossplane, filepath.Join(filepath.Dir(*out), "daytwo"), *crds, *cache, *image); err != nil {
			fmt.Fprintln(os.Stderr, "day-two:", err)
			os.Exit(1)
		}
		return
	}
	if *red {
		if err := redteam(*crossplane, filepath.Join(filepath.Dir(*out), "redteam")); err != nil {
			fmt.Fprintln(os.Stderr, "redteam:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*crossplane, *out, *crds, *cache, *image, *validate); err != nil {
		fmt.Fprintln(os.Stderr, "examples:", err)
		os.Exit(1)
	}
	if !*validate {
		return
	}
	if err := validateStatic(*crossplane, *crds, *cache, *image, strings.Split(*static, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "examples:", err)
		os.Exit(1)
	}
}

type typeRef struct{ apiVersion, kind string }

// functionsFile is the Functions file crossplane render reads: the
// examples', or a copy that points crossplane render at another address.
var functionsFile = "examples/functions.yaml"

// previewer is the function's binary whose preview command converges the
// examples for their converged renders; empty to use the examples'
// observed files.
var previewer string

// functionsFor writes a copy of the examples' Functions file that points
// crossplane render at address, unless that is the default.
func functionsFor(address, dir string) error {
	if address == "127.0.0.1:9443" || address == "localhost:9443" {
		return nil
	}
	b, err := os.ReadFile(functionsFile)
	if err != nil {
		return err
	}
	o := map[string]any{}
	if err := yaml.Unmarshal(b, &o); err != nil {
		return err
	}
	meta := o["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	ann["render.crossplane.io/runtime-development-target"] = address
	if b, err = yaml.Marshal(o); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	functionsFile = filepath.Join(dir, "functions.yaml")
	return os.WriteFile(functionsFile, b, 0o600)
}

// previewTo converges an example with the function's preview command and
// writes its output in the supplied format (-o): observed, what the
// providers would report once it converged; yaml, the converged stack as
// crossplane render prints it.
func previewTo(output, xr, required, dst string, env ...string) error {
	var stdout, stderr bytes.Buffer
	args := append([]string{"preview", "-o", output, "--required", required}, env...)
	cmd := exec.Command(previewer, append(args, xr)...) //nolint:gosec // our own binary and examples
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("preview %s: %w\n%s", xr, err, stderr.String())
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
		return err
	}
	return os.WriteFile(dst, stdout.Bytes(), 0o600)
}

func run(crossplane, out, crds, cache, image string, validate bool) error {
	comps, xrds, err := apis()
	if err != nil {
		return err
	}
	xrs, err := filepath.Glob("examples/*/*.yaml")
	if err != nil {
		return err
	}
	sort.Strings(xrs)
	if err := os.MkdirAll(out, 0o750); err != nil {
		return err
	}
	// crossplane render takes one folder of required resources: the
	// EnvironmentConfigs and the spend objects, and for the examples of a
	// cloud what they read of other XRs there (examples/<cloud>/required:
	// the Cluster a Database joins).
	requiredOf := map[string]string{}
	// The original platform's claims (examples/compat) get their original
	// EnvironmentConfigs through the context, as the compat Composition's
	// function-environment-configs step gives them; nothing else.
	compatDir := filepath.Join(filepath.Dir(out), "required", "compat")
	if err := gather(compatDir, "examples/spend"); err != nil {
		return err
	}
	compatEnvs, err := xpsim.Load("examples/compat/envconfigs")
	if err != nil {
		return err
	}
	for _, cloud := range []string{"", "gcp", "aws", "azure"} {
		dir := filepath.Join(filepath.Dir(out), "required", cmp.Or(cloud, "common"))
		srcs := []string{"examples/envconfigs", "examples/spend"}
		if cloud != "" {
			srcs = append(srcs, filepath.Join("examples", cloud, "required"))
		}
		if err := gather(dir, srcs...); err != nil {
			return err
		}
		requiredOf[cloud] = dir
	}
	failed := 0
	rendered := 0
	for _, xr := range xrs {
		if strings.HasPrefix(xr, "examples/envconfigs/") || strings.HasPrefix(xr, "examples/spend/") {
			continue
		}
		o, err := readFirst(xr)
		if err != nil {
			return err
		}
		folder := filepath.Base(filepath.Dir(xr))
		name := folder + "-" + strings.TrimSuffix(filepath.Base(xr), ".yaml")
		observed := filepath.Join(filepath.Dir(xr), "observed", filepath.Base(xr))
		input, context := xr, ""
		if ctx := filepath.Join(filepath.Dir(xr), "context", filepath.Base(xr)); exists(ctx) {
			b, err := os.ReadFile(ctx) //nolint:gosec // path under examples
			if err != nil {
				return err
			}
			context = strings.TrimSpace(string(b))
		}
		if folder == "compat" {
			// A claim of the original platform: render the XR Crossplane
			// creates for it, with the original EnvironmentConfigs in the
			// context, as the compat Composition's first step gives them.
			o = xpsim.ClaimComposite(o)
			labels, _ := o["metadata"].(map[string]any)["labels"].(map[string]any)
			b, err := json.Marshal(xpsim.MergeEnvironment(compatEnvs, str(labels, "cloud"), str(labels, "planeType"), nil)[envcfg.ContextKey])
			if err != nil {
				return err
			}
			context = string(b)
			if b, err = yaml.Marshal(o); err != nil {
				return err
			}
			input = filepath.Join(out, name+".xr.yaml")
			if err := os.WriteFile(input, b, 0o600); err != nil {
				return err
			}
		}
		ref := typeRef{str(o, "apiVersion"), str(o, "kind")}
		comp, ok := comps[ref]
		if !ok {
			continue // not an XR, e.g. a supporting object
		}
		// The cloud of an example under examples/<cloud>, or of one
		// elsewhere (examples/seeds) by its label.
		labels, _ := o["metadata"].(map[string]any)["labels"].(map[string]any)
		cloud := cmp.Or(str(labels, "cloud"), folder)
		stages := map[string]string{"first-render": ""}
		previewed := ""
		if _, err := os.Stat(observed); err == nil {
			stages["converged"] = observed
			if previewer != "" {
				// The converged stack as preview shows it, which is the
				// function's own convergence (TestPreviewExamples).
				required, ok := requiredOf[cloud]
				if !ok {
					required = requiredOf[""]
				}
				env := []string{"--env", "examples/envconfigs"}
				if folder == "compat" {
					required, env = compatDir, []string{"--env", "examples/compat/envconfigs", "--env-context"}
				}
				dst := filepath.Join(out, "observed", name+".yaml")
				if err := previewTo("observed", xr, required, dst, env...); err != nil {
					return err
				}
				stages["converged"] = dst
				// And as preview -o yaml shows it, which must be the
				// converged render byte for byte.
				previewed = filepath.Join(out, "preview", name+".yaml")
				if err := previewTo("yaml", xr, required, previewed, env...); err != nil {
					return err
				}
			}
		}
		for _, stage := range []string{"first-render", "converged"} {
			obs, ok := stages[stage]
			if !ok {
				continue
			}
			required, ok := requiredOf[cloud]
			if !ok {
				required = requiredOf[""]
			}
			if folder == "compat" {
				required = compatDir
			}
			args := []string{"render", input, comp, functionsFile,
				"--required-resources=" + required, "--include-full-xr"}
			if obs != "" {
				args = append(args, "--observed-resources="+obs)
			}
			if context != "" {
				args = append(args, "--context-values=apiextensions.crossplane.io/environment="+context)
			}
			dst := filepath.Join(out, name+"."+stage+".yaml")
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(crossplane, args...) //nolint:gosec // our own CLI and examples
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("render %s (%s): %w\n%s", xr, stage, err, stderr.String())
			}
			if err := os.WriteFile(dst, stdout.Bytes(), 0o644); err != nil { //nolint:gosec // rendered output is meant to be read
				return err
			}
			rendered++
			fmt.Printf("rendered  %-28s %-13s -> %s (%d resources)\n", name, stage, dst, bytes.Count(stdout.Bytes(), []byte("\n---\n"))+1)
			if stage == "converged" && previewed != "" {
				if err := sameRender(name, previewed, dst); err != nil {
					return fmt.Errorf("preview -o yaml of %s is not its converged render: %w", xr, err)
				}
			}
			if !validate {
				continue
			}
			// Every XRD: an XR of one module may compose another's (an
			// AppEnvironment its Database and WorkloadBudget).
			if !validateOne(crossplane, append(dirs(crds), slices.Compact(slices.Sorted(maps.Values(xrds)))...), dst, cache, image, fmt.Sprintf("%-28s %-13s", name, stage)) {
				failed++
			}
		}
	}
	if rendered == 0 {
		return fmt.Errorf("no example rendered")
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d renders failed validation", failed, rendered)
	}
	return nil
}

// sameRender checks that preview -o yaml printed what crossplane render
// did for the converged stack of an example (preview.SameAsRender), and
// says which XR status fields only preview has.
func sameRender(name, previewed, rendered string) error {
	p, err := xpsim.Load(previewed)
	if err != nil {
		return err
	}
	r, err := xpsim.Load(rendered)
	if err != nil {
		return err
	}
	extra, err := preview.SameAsRender(p, r)
	if err != nil {
		return err
	}
	note := "the converged render's objects"
	if len(extra) > 0 {
		note += ", and the XR's " + strings.Join(extra, ", ") + " (from connection details, which crossplane render does not pass)"
	}
	fmt.Printf("previewed %-28s converged     -> %s (%s)\n", name, previewed, note)
	return nil
}

// validateStatic validates manifests that are not rendered, such as the
// install manifests, against the same schemas. Objects of Kubernetes's own
// kinds (a Deployment, a ClusterRole), for which crossplane beta validate
// has no schema, are left to the API server: make e2e applies
// examples/install/portal/portal.yaml with --dry-run=server, and
// internal/portal/install_test.go checks its RBAC.
func validateStatic(crossplane, crds, cache, image string, folders []string) error {
	for _, d := range folders {
		tmp, err := os.MkdirTemp("", "validate-static-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp) //nolint:errcheck // a temporary folder
		kept, builtin, err := withoutBuiltins(d, tmp)
		if err != nil {
			return err
		}
		label := fmt.Sprintf("%-42s", d)
		if builtin > 0 {
			label = fmt.Sprintf("%-42s", fmt.Sprintf("%s (%d Kubernetes objects left to the API server)", d, builtin))
		}
		if kept == 0 {
			fmt.Printf("%s nothing for crossplane beta validate: make e2e has the API server check them (--dry-run=server)\n", label)
			continue
		}
		if !validateOne(crossplane, append(dirs(crds), "apis"), tmp, cache, image, label) {
			return fmt.Errorf("%s failed validation", d)
		}
	}
	return nil
}

// builtinGroup reports whether an API group is one of Kubernetes's own,
// served without a CRD.
func builtinGroup(group string) bool {
	return group == "" || !strings.Contains(group, ".") || strings.HasSuffix(group, ".k8s.io")
}

// withoutBuiltins copies the YAML documents of a folder's files into dst,
// leaving out those of Kubernetes's own kinds; it returns how many it
// copied and left out.
func withoutBuiltins(folder, dst string) (int, int, error) {
	files, err := filepath.Glob(filepath.Join(folder, "*.yaml"))
	if err != nil {
		return 0, 0, err
	}
	kept, builtin := 0, 0
	for _, f := range files {
		objs, err := xpsim.Load(f)
		if err != nil {
			return 0, 0, err
		}
		var out bytes.Buffer
		for _, o := range objs {
			av, _ := o["apiVersion"].(string)
			group, _, ok := strings.Cut(av, "/")
			if !ok {
				group = ""
			}
			if builtinGroup(group) {
				builtin++
				continue
			}
			b, err := yaml.Marshal(o)
			if err != nil {
				return 0, 0, err
			}
			out.WriteString("---\n")
			out.Write(b)
			kept++
		}
		if out.Len() > 0 {
			if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), out.Bytes(), 0o600); err != nil {
				return 0, 0, err
			}
		}
	}
	return kept, builtin, nil
}

// validateOne runs crossplane beta validate of resources (a file or a
// folder) against the extensions, prints its summary after label, and
// reports whether it found no failure and no missing schema; otherwise it
// prints the whole report.
func validateOne(crossplane string, extensions []string, resources, cache, image, label string) bool {
	args := []string{"beta", "validate", strings.Join(extensions, ","), resources, "--cache-dir=" + cache, "--skip-success-results"}
	if image != "" {
		args = append(args, "--crossplane-image="+image)
	}
	var out bytes.Buffer
	v := exec.Command(crossplane, args...) //nolint:gosec // our own CLI
	v.Stdout, v.Stderr = &out, &out
	err := v.Run()
	summary := lastLine(out.String())
	fmt.Printf("validated %s %s\n", label, summary)
	if err != nil || !strings.Contains(summary, " 0 missing schemas") || !strings.Contains(summary, " 0 failure cases") {
		fmt.Print(out.String())
		return false
	}
	return true
}

// functions lists the functions of a functions file.
func functions(path string) (map[string]bool, error) {
	b, err := os.ReadFile(path) //nolint:gosec // the examples' functions file
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, doc := range bytes.Split(b, []byte("\n---")) {
		o := map[string]any{}
		if err := yaml.Unmarshal(doc, &o); err != nil {
			return nil, err
		}
		if md, ok := o["metadata"].(map[string]any); ok {
			out[str(md, "name")] = true
		}
	}
	return out, nil
}

// apisDir is where the XRDs and Compositions are.
const apisDir = "apis"

// apis finds every Composition (by compositeTypeRef) whose functions are all
// in functionsFile, and every XRD (by the types it defines), under apisDir.
func apis() (map[typeRef]string, map[typeRef]string, error) {
	available, err := functions(functionsFile)
	if err != nil {
		return nil, nil, err
	}
	comps := map[typeRef]string{}
	xrds := map[typeRef]string{}
	err = filepath.WalkDir(apisDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		o, err := readFirst(path)
		if err != nil {
			return err
		}
		spec, _ := o["spec"].(map[string]any)
		switch str(o, "kind") {
		case "Composition":
			for _, st := range spec["pipeline"].([]any) {
				fr, _ := st.(map[string]any)["functionRef"].(map[string]any)
				if !available[str(fr, "name")] {
					return nil // needs a function crossplane render cannot run here
				}
			}
			ref, _ := spec["compositeTypeRef"].(map[string]any)
			t := typeRef{str(ref, "apiVersion"), str(ref, "kind")}
			if _, dup := comps[t]; !dup {
				comps[t] = path
			}
		case "CompositeResourceDefinition":
			names, _ := spec["names"].(map[string]any)
			for _, v := range spec["versions"].([]any) {
				xrds[typeRef{str(spec, "group") + "/" + str(v.(map[string]any), "name"), str(names, "kind")}] = path
			}
		}
		return nil
	})
	return comps, xrds, err
}

// exampleEnvs are the example EnvironmentConfigs, by file name.
func exampleEnvs() (map[string]xpsim.Object, error) {
	files, err := filepath.Glob("examples/envconfigs/*.yaml")
	if err != nil {
		return nil, err
	}
	envs := map[string]xpsim.Object{}
	for _, f := range files {
		objs, err := xpsim.Load(f)
		if err != nil {
			return nil, fmt.Errorf("cannot load EnvironmentConfig %s: %w", f, err)
		}
		if len(objs) == 0 {
			return nil, fmt.Errorf("cannot load EnvironmentConfig %s: the file holds none", f)
		}
		envs[filepath.Base(f)] = objs[0]
	}
	return envs, nil
}

// gather copies the YAML files of the supplied folders into dst.
func gather(dst string, dirs ...string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o750); err != nil {
		return err
	}
	for _, d := range dirs {
		files, err := filepath.Glob(filepath.Join(d, "*.yaml"))
		if err != nil {
			return err
		}
		for _, f := range files {
			b, err := os.ReadFile(f) //nolint:gosec // paths under examples
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dst, filepath.Base(d)+"-"+filepath.Base(f)), b, 0o600); err != nil { //nolint:gosec // dst is the output directory given; the name is two base names under examples
				return err
			}
		}
	}
	return nil
}

func dirs(root string) []string {
	var out []string
	for _, d := range []string{"gcp", "aws", "azure", "helm", "kubernetes", "sql"} {
		if exists(filepath.Join(root, d)) {
			out = append(out, filepath.Join(root, d))
		}
	}
	return out
}

func readFirst(path string) (map[string]any, error) {
	b, err := os.ReadFile(path) //nolint:gosec // paths under the repository
	if err != nil {
		return nil, err
	}
	doc := b
	if parts := bytes.Split(b, []byte("\n---")); len(parts) > 0 {
		doc = parts[0]
	}
	o := map[string]any{}
	if err := yaml.Unmarshal(doc, &o); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return o, nil
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
