package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// The budget scenarios run the example WorkloadBudget for real: its
// Objects are applied by provider-kubernetes to Deployments on the API
// server, the ReplicaSet controller and the simulated kubelet run their
// pods, and the spend is the example's spend ConfigMap, rewritten.

const (
	budgetNamespace = "team-a"
	spendConfigMap  = "spend-team-a"
	overLimit       = "450" // of the example's 300 USD
	underLimit      = "120"
)

// replicaCounts is what the API server says about a Deployment.
type replicaCounts struct {
	deployment, replicaSet, pods int64
}

func (r replicaCounts) String() string {
	return fmt.Sprintf("Deployment spec.replicas %d, ReplicaSet spec.replicas %d, %d ready pods", r.deployment, r.replicaSet, r.pods)
}

// num reads an integer at a path of an object (0 when missing).
func num(o object, path ...string) int64 {
	f, _ := at(o, path...).(float64)
	return int64(f)
}

// counts reads a Deployment's replicas, its ReplicaSets' and its ready pods.
func (s *scenarios) counts(ns, name string) (replicaCounts, error) {
	d, err := s.k.get("apps/v1", "Deployment", ns, name)
	if err != nil {
		return replicaCounts{}, err
	}
	r := replicaCounts{deployment: num(d, "spec", "replicas")}
	rss, err := s.k.list("apps/v1", "ReplicaSet", ns, "app="+name)
	if err != nil {
		return r, err
	}
	for _, rs := range rss {
		r.replicaSet += num(rs, "spec", "replicas")
	}
	pods, err := s.k.list("v1", "Pod", ns, "app="+name)
	if err != nil {
		return r, err
	}
	for _, p := range pods {
		if st, _, _ := condition(p, "Ready"); st == "True" && str(p, "metadata", "deletionTimestamp") == "" {
			r.pods++
		}
	}
	return r, nil
}

// waitCounts waits until a Deployment, its ReplicaSet and its ready pods
// all stand at n.
func (s *scenarios) waitCounts(ns, name string, n int64) (replicaCounts, error) {
	var last replicaCounts
	_, err := s.waitFor(fmt.Sprintf("%s at %d replicas", name, n), func() (bool, error) {
		var err error
		last, err = s.counts(ns, name)
		if err != nil {
			return false, err
		}
		return last == replicaCounts{n, n, n}, errors.New(last.String())
	})
	return last, err
}

// deployment applies a workload's Deployment as its team would.
func (s *scenarios) deployment(ns, name string, replicas int64) error {
	labels := map[string]any{"app": name}
	return s.k.apply(object{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": labels},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "main", "image": "registry.example.org/" + name + ":1"}}},
			},
		},
	})
}

// spend writes the month-to-date spend the WorkloadBudget reads.
func (s *scenarios) spend(usd string) error {
	return s.k.apply(object{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": spendConfigMap, "namespace": budgetNamespace, "labels": map[string]any{"platform.example.org/spend": "true"}},
		"data":     map[string]any{"spentUsd": usd},
	})
}

// budget takes the example WorkloadBudget (enforcement enabled, 300 USD,
// batch-worker at 4 replicas and report-generator at 1) through spend
// over and under its limit, then deletes it while paused; and a
// monitor-only one past its limit, which never scales.
func (s *scenarios) budget() error {
	wb := fntest.MustLoad(filepath.Join(s.examples, "budget", "workloads.yaml"))[0]
	name := str(wb, "metadata", "name")
	apiVersion, kind := wb["apiVersion"].(string), wb["kind"].(string)
	targets := map[string]int64{"batch-worker": 4, "report-generator": 1}
	for t, n := range targets {
		if err := s.deployment(budgetNamespace, t, n); err != nil {
			return err
		}
		if _, err := s.waitCounts(budgetNamespace, t, n); err != nil {
			return err
		}
	}
	fmt.Printf("  workloads: batch-worker and report-generator running at 4 and 1 replicas\n")

	step := func(what, usd string, want map[string]int64) error {
		if err := s.spend(usd); err != nil {
			return err
		}
		start := time.Now()
		var got []string
		for _, t := range []string{"batch-worker", "report-generator"} {
			c, err := s.waitCounts(budgetNamespace, t, want[t])
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			got = append(got, t+": "+c.String())
		}
		fmt.Printf("  %s (spend %s of 300 USD), in %.1f s: %s\n", what, usd, time.Since(start).Seconds(), strings.Join(got, "; "))
		s.results = append(s.results, fmt.Sprintf("budget: %-28s %s", what, strings.Join(got, "; ")))
		return nil
	}
	zero := map[string]int64{"batch-worker": 0, "report-generator": 0}

	if err := s.spend(underLimit); err != nil {
		return err
	}
	if err := s.k.apply(overlay.DeepCopy(wb)); err != nil {
		return err
	}
	if _, err := s.waitFor(name+" Ready", func() (bool, error) {
		live, err := s.k.get(apiVersion, kind, budgetNamespace, name)
		if err != nil {
			return false, err
		}
		st, r, m := condition(live, "Ready")
		return st == "True", fmt.Errorf("condition Ready %s (%s): %s", st, r, m)
	}); err != nil {
		return err
	}
	if err := step("within budget, running", underLimit, targets); err != nil {
		return err
	}
	if err := step("over the limit, paused", overLimit, zero); err != nil {
		return err
	}
	if err := step("back under, restored", underLimit, targets); err != nil {
		return err
	}
	if err := step("over the limit again, paused", overLimit, zero); err != nil {
		return err
	}

	// Delete it while paused: the deletion hold refuses the deletion,
	// the function restores the replicas, and Crossplane replays it.
	if _, err := s.waitFor(name+" held by its Usage", func() (bool, error) {
		live, err := s.k.get(apiVersion, kind, budgetNamespace, name)
		if err != nil {
			return false, err
		}
		return str(live, "metadata", "labels", "crossplane.io/in-use") == "true", errors.New("not in use yet")
	}); err != nil {
		return err
	}
	start := time.Now()
	err := s.k.delete(apiVersion, kind, budgetNamespace, name)
	if err == nil || !strings.Contains(err.Error(), "in-use") {
		return fmt.Errorf("deleting the paused %s: want a refusal naming its Usage, got %w", name, err)
	}
	fmt.Printf("  deleting the paused WorkloadBudget: refused for now (%s)\n", firstLine(err.Error()))
	var got []string
	for _, t := range []string{"batch-worker", "report-generator"} {
		c, err := s.waitCounts(budgetNamespace, t, targets[t])
		if err != nil {
			return fmt.Errorf("after deleting the paused budget: %w", err)
		}
		got = append(got, t+": "+c.String())
	}
	if _, err := s.waitFor(name+" deleted on replay", func() (bool, error) {
		_, err := s.k.get(apiVersion, kind, budgetNamespace, name)
		return errors.Is(err, errNotFound), fmt.Errorf("still there: %w", err)
	}); err != nil {
		return err
	}
	fmt.Printf("  deleted while paused, in %.1f s: replicas restored first (%s), then the deletion replayed\n", time.Since(start).Seconds(), strings.Join(got, "; "))
	// Deleted, it must stay that way: nothing scales them down again.
	time.Sleep(5 * time.Second)
	for t, n := range targets {
		c, err := s.counts(budgetNamespace, t)
		if err != nil {
			return err
		}
		if c != (replicaCounts{n, n, n}) {
			return fmt.Errorf("after the deletion %s is at %s", t, c)
		}
	}
	s.results = append(s.results, fmt.Sprintf("budget: %-28s %s", "deleted while paused", strings.Join(got, "; ")))

	// Monitor-only past the limit: reports, never scales.
	mon := overlay.DeepCopy(wb)
	mon["metadata"] = map[string]any{"name": "team-a-monitor", "namespace": budgetNamespace}
	mon["spec"].(map[string]any)["enforcement"] = "monitor-only"
	mon["spec"].(map[string]any)["targets"] = []any{map[string]any{"name": "batch-worker", "replicas": 4}}
	if err := s.k.apply(mon); err != nil {
		return err
	}
	var live object
	if _, err := s.waitFor("the monitor-only budget reports the overspend", func() (bool, error) {
		live, err = s.k.get(apiVersion, kind, budgetNamespace, "team-a-monitor")
		if err != nil {
			return false, err
		}
		st, r, _ := condition(live, "BudgetOK")
		return st == "False" && r == "BudgetExhausted", fmt.Errorf("BudgetOK %s (%s)", st, r)
	}); err != nil {
		return err
	}
	gen := func() (int64, error) {
		d, err := s.k.get("apps/v1", "Deployment", budgetNamespace, "batch-worker")
		return num(d, "metadata", "generation"), err
	}
	g0, err := gen()
	if err != nil {
		return err
	}
	time.Sleep(20 * time.Second) // two of Crossplane's polls, and provider-kubernetes's
	c, err := s.counts(budgetNamespace, "batch-worker")
	if err != nil {
		return err
	}
	g1, err := gen()
	if err != nil {
		return err
	}
	if c != (replicaCounts{4, 4, 4}) || g1 != g0 {
		return fmt.Errorf("monitor-only touched batch-worker: %s, generation %d -> %d", c, g0, g1)
	}
	fmt.Printf("  monitor-only at %v%% of its limit, 20 s later: batch-worker %s, generation unchanged (%d)\n", live["status"].(map[string]any)["ratio"], c, g1)
	s.results = append(s.results, fmt.Sprintf("budget: %-28s batch-worker: %s", "monitor-only over the limit", c))
	if err := s.k.delete(apiVersion, kind, budgetNamespace, "team-a-monitor"); err != nil {
		return fmt.Errorf("a monitor-only budget that paused nothing is deleted at once: %w", err)
	}
	return nil
}

// firstLine shortens an API error for the log.
func firstLine(s string) string {
	if i := strings.Index(s, "denied the request: "); i >= 0 {
		s = s[i+len("denied the request: "):]
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
