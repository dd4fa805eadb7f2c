// Command e2e is the end-to-end driver of make e2e and make fleet: against
// a real kube-apiserver and Crossplane core (started by run.sh), reaching
// the function over mTLS, it stands in for the cloud providers (see cloud)
// and takes the example XRs (a Cluster of every cloud and a legacy
// cluster-scoped one, and the modules that run on them) through their life,
// asserting against the API server at each step; with -fleet it applies
// many XRs at once, measures them and injects faults.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "the control plane's kubeconfig")
	examples := flag.String("examples", "examples", "the examples folder")
	clouds := flag.String("clouds", "gcp,aws,azure", "the clouds whose examples to run")
	only := flag.String("only", "", "run only these scenarios, comma-separated ("+strings.Join(scenarioNames, ", ")+"; a cloud's name runs its example's scenario); empty runs all")
	timeout := flag.Duration("timeout", 5*time.Minute, "how long each step may take")
	prepare := flag.String("prepare-crds", "", "copy the provider CRDs of this folder for installing without providers into -out, and exit")
	out := flag.String("out", "", "where -prepare-crds writes")
	faults := flag.Bool("faults", true, "with -fleet, inject the faults once the fleet is Ready")
	idle := flag.Duration("idle", 0, "with -fleet, once all are Ready, measure the fleet at rest for this long (0: not at all)")
	restXPArgs := flag.String("rest-xp-args", "", "with -idle, restart Crossplane core with these flags after run.sh's before measuring at rest (e.g. its default circuit breaker)")
	fleet := flag.Int("fleet", 0, "instead of the scenarios, apply this many mixed XRs at once, measure, and inject faults (make fleet)")
	work := flag.String("work", "", "run.sh's work folder (pid files, start scripts): for -fleet, and for the rollout scenario, which stops and starts the fleet controller")
	metrics := flag.String("metrics", "http://127.0.0.1:18090/metrics", "the function's metrics, for -fleet and the rollout scenario's count of RunFunction calls")
	rolloutOn := flag.Bool("rollout", true, "with -fleet, once the fleet is Ready, raise the environment's minor and follow it across the fleet's rollout waves (before the faults)")
	rolloutTimeout := flag.Duration("rollout-timeout", 20*time.Minute, "with -fleet, how long the rollout across the waves may take")
	flag.StringVar(&crossplaneMetrics, "crossplane-metrics", crossplaneMetrics, "Crossplane core's metrics, which -fleet keeps in -work")
	providers := flag.String("providers", "gcp,aws,azure,helm,kubernetes,sql", "the folders of -prepare-crds")
	flag.DurationVar(&cpDelay, "cp-delay", cpDelay, "how long the simulated control plane takes to report a new version")
	flag.StringVar(&portalCfg.url, "portal", "http://127.0.0.1:18100", "the portal run.sh started, for the portal scenario")
	flag.StringVar(&portalCfg.tokens, "tokens", "", "the API server's token file, with the tenants' tokens of the portal scenario")
	flag.StringVar(&portalCfg.screenshot, "portal-screenshot", "", "where the portal scenario saves a screenshot of the page")
	rbac := flag.String("portal-rbac", "", "print the ClusterRoles and Roles of this install manifest, with its bindings bound to -portal-user, and exit")
	rbacUser := flag.String("portal-user", "portal", "the user -portal-rbac binds the portal's roles to")
	flag.Parse()
	if *rbac != "" {
		b, err := portalRBAC(*rbac, *rbacUser)
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			os.Exit(1)
		}
		_, _ = os.Stdout.Write(b)
		return
	}
	if *prepare != "" {
		n, err := prepareCRDs(*prepare, *out, strings.Split(*providers, ","))
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			os.Exit(1)
		}
		fmt.Printf("prepared %d provider CRDs in %s\n", n, *out)
		return
	}
	if *fleet > 0 {
		opts := fleetOpts{work: *work, metrics: *metrics, idle: *idle, restXPArgs: *restXPArgs, faults: *faults, rollout: *rolloutOn, rolloutTimeout: *rolloutTimeout}
		if err := runFleet(*kubeconfig, *examples, *fleet, *timeout, opts); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: FLEET FAILED:", err)
			os.Exit(1)
		}
		return
	}
	want, err := selected(*only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(2)
	}
	if err := run(*kubeconfig, *examples, strings.Split(*clouds, ","), *timeout, want, *work, *metrics); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: FAILED:", err)
		os.Exit(1)
	}
}

// removeBucket removes an AppEnvironment's bucket from its spec, which
// removes the bucket's resources (those whose names start with bucket).
func removeBucket(xr object) []string {
	delete(xr["spec"].(map[string]any)["parameters"].(map[string]any), "bucket")
	return []string{"bucket", "bucket-access", "bucket-public-access-block", "bucket-encryption", "bucket-ownership", "bucket-container", "bucket-public-read"}
}

// paths of the minimum node count of a node pool, per cloud.
var minPath = map[string][]string{
	"gcp":   {"spec", "forProvider", "autoscaling", "minNodeCount"},
	"aws":   {"spec", "forProvider", "scalingConfig", "minSize"},
	"azure": {"spec", "forProvider", "minCount"},
}

// paths of the maximum node count of a node pool, per cloud.
var maxPath = map[string][]string{
	"gcp":   {"spec", "forProvider", "autoscaling", "maxNodeCount"},
	"aws":   {"spec", "forProvider", "scalingConfig", "maxSize"},
	"azure": {"spec", "forProvider", "maxCount"},
}

// runFleet starts the simulator and runs the fleet of n XRs as opts say.
func runFleet(kubeconfig, examples string, n int, timeout time.Duration, opts fleetOpts) error {
	k, c, stop, err := simulator(kubeconfig)
	if err != nil {
		return err
	}
	defer stop()
	s := &scenarios{k: k, c: c, examples: examples, timeout: timeout, refused: map[string]int{}, work: opts.work, metrics: opts.metrics}
	return s.fleet(c, n, opts)
}

// simulator connects to the API server and starts the cloud simulator,
// which watches until stop is called.
func simulator(kubeconfig string) (*kube, *cloud, context.CancelFunc, error) {
	k, err := newKube(kubeconfig)
	if err != nil {
		return nil, nil, nil, err
	}
	c := &cloud{k: k, cpDelay: cpDelay}
	if err := c.discover(); err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.run(ctx); err != nil {
		cancel()
		return nil, nil, nil, err
	}
	return k, c, cancel, nil
}

// scenarioNames are the scenarios -only selects, in the order run runs
// them: the cloud examples' (one per cloud of -clouds) under their
// cloud's name.
var scenarioNames = []string{"budget", "gcp", "aws", "azure", "legacy", "portal", "rollout", "release"}

// selected returns whether -only selects a scenario: every one when only is
// empty.
func selected(only string) (func(string) bool, error) {
	if only == "" {
		return func(string) bool { return true }, nil
	}
	set := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(scenarioNames, n) {
			return nil, fmt.Errorf("cannot select scenario %q with -only: the scenarios are %s", n, strings.Join(scenarioNames, ", "))
		}
		set[n] = true
	}
	return func(n string) bool { return set[n] }, nil
}

// run runs the scenarios want selects, in order, and prints the summary.
// work is run.sh's work folder and metrics the function's metrics, which
// the rollout scenario reads.
func run(kubeconfig, examples string, clouds []string, timeout time.Duration, want func(string) bool, work, metrics string) error {
	k, c, stop, err := simulator(kubeconfig)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Printf("cloud simulator: standing in for the providers of %d managed resource kinds\n", len(c.kinds))

	s := &scenarios{k: k, c: c, examples: examples, timeout: timeout, refused: map[string]int{}, work: work, metrics: metrics}
	start := time.Now()
	count := 0
	// scenario announces one, with the time since the first began, so that
	// a failure's log places it.
	scenario := func(format string, a ...any) {
		fmt.Printf("scenario [%.0f s]: %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, a...))
	}
	if want("budget") {
		scenario("WorkloadBudget on real Deployments (within budget, over, back under, deleted while paused, monitor-only)")
		if err := s.budget(); err != nil {
			return fmt.Errorf("budget: %w", err)
		}
		count++
	}
	var ran []string
	for _, cl := range clouds {
		if !want(cl) {
			continue
		}
		ran = append(ran, cl)
		day2 := ""
		if _, ok := dayTwoPools[cl+"/cluster.yaml"]; ok {
			day2 = fmt.Sprintf(", upgrade one minor with the control plane reporting it %s late, rotate a pool", cpDelay)
		}
		scenario("%s namespaced XR (create, Ready, a Database and an AppEnvironment on it, the Database's PostgreSQL upgraded a major version, the AppEnvironment's namespace rename refused, resize a pool%s, remove a pool, delete)", cl, day2)
		during := func() error {
			if err := s.onCluster(cl+"/database.yaml", cl, runDatabase, clusterref.ForDatabase, []string{"host", "connectionSecret"}, s.engineUpgrade(cl+"/database.yaml"), nil); err != nil {
				return err
			}
			rename := s.namespaceRename(cl + "/appenvironment.yaml")
			return s.onCluster(cl+"/appenvironment.yaml", cl, runEnvironment, clusterref.ForAppEnvironment,
				[]string{"namespace", "url", "databaseHost", "bucketName", "bucketUrl", "frontendUrl", "frontendBucketName", "cdnEndpoint"},
				func(live object) error {
					if err := s.appWorkload(live); err != nil {
						return err
					}
					return rename(live)
				}, removeBucket)
		}
		if err := s.lifecycle(cl+"/cluster.yaml", "default", "batch", minPath[cl], during); err != nil {
			return fmt.Errorf("%s: %w", cl, err)
		}
		count += 5 // with the engine upgrade and the refused rename
		if day2 != "" {
			count += 2 // the upgrade and the rotation
		}
	}
	if want("legacy") {
		scenario("gcp legacy Database on a network of its own (create, Ready, delete)")
		if err := s.onCluster("gcp/database-legacy.yaml", "", runDatabase, clusterref.ForDatabase, []string{"host", "connectionSecret"}, nil, nil); err != nil {
			return fmt.Errorf("gcp legacy database: %w", err)
		}
		count++
		scenario("gcp legacy cluster-scoped XR (create, Ready, resize a pool, delete)")
		if err := s.lifecycle("gcp/legacy.yaml", "default", "", minPath["gcp"], nil); err != nil {
			return fmt.Errorf("gcp legacy: %w", err)
		}
		count++
	}
	if want("portal") {
		scenario("the self-service portal as two tenants (RBAC, validation; an AppEnvironment created, streamed, resumed and deleted through the API; one through the page in Chromium)")
		if err := s.portal(portalCfg); err != nil {
			return fmt.Errorf("portal: %w", err)
		}
		count++
	}
	if want("rollout") {
		scenario("rollout waves: %d Clusters on gcp, aws and azure in waves canary, staging, production (approval required), ruled by the fleet controller; the environment's version raised twice: with the controller stopped, then started; production waiting for its approval (its RunFunction calls counted); with staging's namespaces misspelt, then fixed, and a staging upgrade failed and healed", len(rolloutFleet))
		if err := s.rollout(); err != nil {
			return fmt.Errorf("rollout: %w", err)
		}
		count++
	}
	if want("release") {
		scenario("platform releases in waves: %d Clusters (one a legacy claim's XCluster) on gcp, aws and azure in waves canary (with a soak), staging, production (approval required) on a Composition of their own move from release r1 to r2 (a second Function) as the fleet controller writes their revision selectors; r3, which refuses the canary's GCP Cluster, halts in the canary and is rolled back", len(releaseFleet))
		if err := s.release(); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		count++
	}
	// The simulated clouds refuse deletes while what is deleted is in
	// use: that they did on each cloud shows that the deletes completed
	// against that strictness, not around it.
	for _, cl := range ran {
		if s.refused[cl] == 0 {
			return fmt.Errorf("%s: the simulated cloud refused no delete: its deletion rules were not exercised", cl)
		}
	}
	fmt.Printf("\nE2E PASSED: %d scenarios in %.0f s; the simulator marked %d managed resources ready\n", count, time.Since(start).Seconds(), c.patched.Load())
	for _, r := range s.results {
		fmt.Println("  " + r)
	}
	if len(ran) > 0 {
		fmt.Printf("  the simulated clouds refused %s deletes in all; the XR deletes completed within %s each\n", counts(s.refused), deleteBound)
	}
	return nil
}
