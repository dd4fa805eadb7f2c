package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/fleet"
	"github.com/seed-6471616d/function-cluster-platform/internal/preview"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// FleetCmd runs the fleet controller, or rules on a fleet offline
// (package fleet).
type FleetCmd struct {
	Run  FleetRunCmd  `cmd:"" help:"Run the fleet controller: decide every gated Cluster of the control plane and write its ruling, a ConfigMap the Cluster requires by name."`
	Rule FleetRuleCmd `cmd:"" help:"Print the ruling ConfigMaps the fleet controller would write for a fleet in files, for crossplane render --required-resources."`
}

// FleetRunCmd runs the fleet controller until SIGTERM or SIGINT.
type FleetRunCmd struct {
	Kubeconfig  string        `env:"KUBECONFIG" help:"The control plane's kubeconfig; empty: the in-cluster service account." placeholder:"FILE"`
	Namespace   string        `env:"POD_NAMESPACE" default:"crossplane-system" help:"The controller's own namespace, where its Lease is."`
	LeaderElect bool          `default:"true" negatable:"" help:"Elect one writer among the controllers with a Lease (--leader-elect=false: write at once, for tests)."`
	LeaseName   string        `default:"function-cluster-platform-fleet" help:"The Lease's name."`
	Interval    time.Duration `default:"1s" help:"Least time between two passes over the fleet: changes in between are ruled on together."`
	QPS         float32       `default:"20" help:"Requests per second to the API server."`
	Burst       int           `default:"40" help:"Burst of requests to the API server."`
	Debug       bool          `short:"d" help:"Log at debug level."`
}

// Run runs the controller.
func (c *FleetRunCmd) Run() error {
	level := slog.LevelInfo
	if c.Debug {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	klog.SetSlogLogger(log)
	cfg, err := restConfig(c.Kubeconfig, c.QPS, c.Burst, fleet.FieldManager)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("cannot build the dynamic client: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	gvrs := []schema.GroupVersionResource{fleet.CompositionRevisionResource}
	for _, k := range slices.Concat(fleet.ReleaseKinds, fleet.ClaimKinds) {
		gvrs = append(gvrs, k.Resource)
	}
	serves, err := served(ctx, cfg, log, gvrs)
	if err != nil {
		return err
	}
	ctl := fleet.New(dyn, fleet.Options{Interval: c.Interval, XClusters: serves[fleet.XClusterResource], Served: func(r schema.GroupVersionResource) bool { return serves[r] }, Log: log})
	var kinds, claims []string
	for _, k := range fleet.ReleaseKinds {
		if serves[k.Resource] {
			kinds = append(kinds, k.Kind)
		}
	}
	for _, k := range fleet.ClaimKinds {
		if serves[k.Resource] {
			claims = append(claims, k.Kind)
		}
	}
	log.Info("fleet controller starting", "kinds", strings.Join(kinds, ","), "claims", strings.Join(claims, ","), "compositionRevisions", serves[fleet.CompositionRevisionResource], "leaderElect", c.LeaderElect, "interval", c.Interval.String())
	if !c.LeaderElect {
		ctl.Lead(true)
		ctl.Run(ctx)
		return nil
	}
	leases, err := dynamic.NewForConfig(cfg) // its own rate limit: writes do not hold a renewal back
	if err != nil {
		return fmt.Errorf("cannot build the Lease client: %w", err)
	}
	host, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("cannot name this controller: %w", err)
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("cannot name this controller: %w", err)
	}
	return ctl.RunElected(ctx, fleet.Election{Leases: leases, Namespace: c.Namespace, Name: c.LeaseName, Identity: host + "_" + hex.EncodeToString(b)})
}

// served asks until it knows whether the API server serves each of gvrs
// (the XR kinds, the claim kinds, Composition revisions): reading a fleet
// without XClusters while they exist would rule on too few Clusters, and
// an informer of a kind that is not served would never list, and hold
// every pass.
func served(ctx context.Context, cfg *rest.Config, log *slog.Logger, gvrs []schema.GroupVersionResource) (map[schema.GroupVersionResource]bool, error) {
	out := make(map[schema.GroupVersionResource]bool, len(gvrs))
	for _, gvr := range gvrs {
		for {
			ok, err := fleet.Served(ctx, cfg, gvr)
			if err == nil {
				out[gvr] = ok
				break
			}
			log.Warn("cannot tell whether a resource is served: asking again in 5s", "resource", gvr.String(), "error", err.Error())
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("cannot tell whether %s are served: %w", gvr.Resource, err)
			case <-time.After(5 * time.Second):
			}
		}
	}
	return out, nil
}

// FleetRuleCmd rules on a fleet in files, as the controller would.
type FleetRuleCmd struct {
	Env    []string `help:"EnvironmentConfig files or folders (the baseline's rollout.waves and target)." placeholder:"PATH"`
	Fleet  []string `help:"Cluster and XCluster files or folders, as the API server returns them, status included; other objects are ignored." placeholder:"PATH"`
	Now    string   `help:"The time the waves' soaks are measured against (RFC 3339); default: now." placeholder:"TIME"`
	Output string   `short:"o" help:"Write one file <name>.yaml per ruling ConfigMap into this folder; default: print them to stdout." placeholder:"DIR"`

	// out is where the ConfigMaps go without --output.
	out io.Writer
}

// Run rules and writes the ConfigMaps.
func (c *FleetRuleCmd) Run() error {
	if len(c.Env) == 0 || len(c.Fleet) == 0 {
		return fmt.Errorf("cannot rule: name the EnvironmentConfigs (--env) and the fleet (--fleet)")
	}
	now := time.Now()
	if c.Now != "" {
		t, err := time.Parse(time.RFC3339, c.Now)
		if err != nil {
			return fmt.Errorf("cannot read --now: %w", err)
		}
		now = t
	}
	w, _, err := preview.Load(c.Env, c.Fleet, false)
	if err != nil {
		return err
	}
	cms, err := fleet.ConfigMaps(w.Environment, w.Objects, now)
	if err != nil {
		return err
	}
	if c.Output == "" {
		if c.out == nil {
			c.out = os.Stdout
		}
		b, err := xpsim.YAMLList(cms)
		if err != nil {
			return fmt.Errorf("cannot write the rulings: %w", err)
		}
		_, err = c.out.Write(b)
		return err
	}
	if err := os.MkdirAll(c.Output, 0o750); err != nil {
		return fmt.Errorf("cannot make %s: %w", c.Output, err)
	}
	for _, cm := range cms {
		b, err := yaml.Marshal(cm)
		if err != nil {
			return fmt.Errorf("cannot write the rulings: %w", err)
		}
		name, _ := cm["metadata"].(map[string]any)["name"].(string)
		if err := os.WriteFile(filepath.Join(c.Output, name+".yaml"), b, 0o600); err != nil {
			return fmt.Errorf("cannot write the ruling %s: %w", name, err)
		}
	}
	return nil
}
