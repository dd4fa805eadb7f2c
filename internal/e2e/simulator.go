package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/seed-6471616d/function-cluster-platform/internal/simulate"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// cloud stands in for provider-upjet-gcp/aws/azure, provider-helm and
// provider-sql, which cannot reach real clouds here (provider-kubernetes
// runs for real): it finds the managed resources our XRs compose (those
// Crossplane labels with their composite, of kinds served by the providers'
// CRDs) and writes the status a provider would once the resource exists:
// Synced and Ready conditions and status.atProvider with plausible outputs
// (endpoint, CA, OIDC issuer, name servers), and what the provider writes
// besides (see workload.go): connection secrets, passwords, a release's
// namespace and CRDs. It also plays the kubelet for the pods of the one
// API server that is every workload cluster. It touches nothing else.
type cloud struct {
	k       *kube
	kinds   []kindRef
	patched atomic.Int64
	node    bool
}

// kindRef is a served kind.
type kindRef struct{ apiVersion, kind string }

// providerGroup reports whether a CRD group belongs to a provider the
// simulator stands in for.
func providerGroup(g string) bool {
	return strings.HasSuffix(g, ".upbound.io") ||
		g == "helm.crossplane.io" || g == "helm.m.crossplane.io" ||
		g == "postgresql.sql.crossplane.io" || g == "postgresql.sql.m.crossplane.io"
}

// discover lists the providers' kinds that have a status subresource.
func (c *cloud) discover() error {
	crds, err := c.k.list("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "")
	if err != nil {
		return err
	}
	c.kinds = nil
	for _, crd := range crds {
		spec := crd["spec"].(map[string]any)
		g := spec["group"].(string)
		if !providerGroup(g) {
			continue
		}
		kind := spec["names"].(map[string]any)["kind"].(string)
		if kind == "ProviderConfig" || kind == "ClusterProviderConfig" || kind == "ProviderConfigUsage" {
			continue
		}
		for _, v := range spec["versions"].([]any) {
			vm := v.(map[string]any)
			sub, _ := vm["subresources"].(map[string]any)
			if vm["storage"] == true && sub["status"] != nil {
				c.kinds = append(c.kinds, kindRef{g + "/" + vm["name"].(string), kind})
			}
		}
	}
	return nil
}

// run marks resources ready until the context ends.
func (c *cloud) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := c.once(); err != nil {
				fmt.Println("cloud simulator:", err)
			}
		}
	}
}

// once marks every composed managed resource that is not ready yet, and
// runs the pods.
func (c *cloud) once() error {
	if err := c.kubelet(); err != nil {
		return err
	}
	for _, kr := range c.kinds {
		items, err := c.k.list(kr.apiVersion, kr.kind, "", xr.LabelComposite)
		if err != nil {
			return err
		}
		for _, o := range items {
			if s, _, _ := condition(o, "Ready"); s == "True" {
				continue
			}
			// The object as served carries the API version of the
			// storage version; the outputs table keys on group and kind.
			status := simulate.Status(o)
			if status == nil {
				continue
			}
			for _, f := range []func(object) error{c.passwords, c.install, c.connect} {
				if err := f(o); err != nil {
					return fmt.Errorf("cannot provide for %s %s: %w", kr.kind, str(o, "metadata", "name"), err)
				}
			}
			if err := c.k.patchStatus(kr.apiVersion, kr.kind, str(o, "metadata", "namespace"), str(o, "metadata", "name"), status); err != nil {
				return fmt.Errorf("cannot mark %s %s ready: %w", kr.kind, str(o, "metadata", "name"), err)
			}
			c.patched.Add(1)
		}
	}
	return nil
}
