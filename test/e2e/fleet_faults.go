package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// touch annotates every XR, so that each reconciles at once.
func (s *scenarios) touch(xrs []*fleetXR) {
	for _, x := range xrs {
		_ = s.k.applyAs("e2e-touch", object{"apiVersion": x.apiVersion, "kind": x.kind, "metadata": map[string]any{
			"name": x.name, "namespace": x.namespace, "annotations": map[string]any{"e2e.example.org/touched": time.Now().Format(time.RFC3339Nano)},
		}})
	}
}

// restart makes the fleet reconcile, stops a process of the stack with sig
// while it does, waits, and starts it again with run.sh's start script.
func (s *scenarios) restart(work, name string, sig syscall.Signal, down time.Duration, xrs []*fleetXR) (int, error) {
	go s.touch(xrs)
	time.Sleep(2 * time.Second)
	if err := stopProcess(work, name, sig); err != nil {
		return 0, err
	}
	time.Sleep(down)
	hit, err := s.notSynced(xrs)
	if err != nil {
		return 0, err
	}
	return hit, startProcess(work, name)
}

// stopProcess sends sig to the process of the stack run.sh names name (its
// pid file) and waits up to 10 s for it to end.
func stopProcess(work, name string, sig syscall.Signal) error {
	b, err := os.ReadFile(filepath.Join(work, name+".pid")) //nolint:gosec // run.sh's pid files
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("cannot stop %s: %w", name, err)
	}
	for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// startProcess starts the process of the stack run.sh names name again,
// with its start script, env added to this process's environment.
func startProcess(work, name string, env ...string) error {
	cmd := exec.Command(filepath.Join(work, "start-"+name+".sh")) //nolint:gosec // run.sh's start script
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("cannot start %s again: %w: %s", name, err, out)
	}
	return nil
}

// notSynced counts the XRs whose Synced condition is not True.
func (s *scenarios) notSynced(xrs []*fleetXR) (int, error) {
	n := 0
	for _, x := range xrs {
		o, err := s.k.get(x.apiVersion, x.kind, x.namespace, x.name)
		if err != nil {
			return 0, err
		}
		if st, _, _ := condition(o, "Synced"); st != "True" {
			n++
		}
	}
	return n, nil
}

// dropEnvironment deletes the example EnvironmentConfigs, waits, and
// applies them again: each as the fleet last applied it (s.env), or as
// the examples have it.
func (s *scenarios) dropEnvironment(d time.Duration, xrs []*fleetXR) (int, error) {
	configs := fntest.MustLoad(filepath.Join(s.examples, "envconfigs"))
	for i, o := range configs {
		if e, ok := s.env[str(o, "metadata", "name")]; ok {
			configs[i] = e
		}
	}
	for _, o := range configs {
		if err := s.k.delete(o["apiVersion"].(string), o["kind"].(string), "", str(o, "metadata", "name")); err != nil {
			return 0, err
		}
	}
	time.Sleep(d)
	hit, err := s.notSynced(xrs)
	if err != nil {
		return 0, err
	}
	for _, o := range configs {
		if err := s.k.apply(o); err != nil {
			return 0, err
		}
	}
	return hit, nil
}
