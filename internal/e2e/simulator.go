package main

import (
	"context"
	"errors"
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

// run watches the providers' kinds and the pods until ctx ends, each kind
// on its own, and provides for what it sees, as the providers and the
// kubelet would: what a watch shows changed is handled at once, and each
// kind is listed again every resync.
func (c *cloud) run(ctx context.Context) error {
	if err := c.k.apply(object{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": nodeName}}); err != nil {
		return fmt.Errorf("cannot register node %s: %w", nodeName, err)
	}
	for _, kr := range c.kinds {
		go c.k.watch(ctx, kr.apiVersion, kr.kind, xr.LabelComposite, c.handler(ctx, kr, func(o object) error { return c.provide(kr, o) })) //nolint:errcheck // ends with ctx
	}
	go c.k.watch(ctx, "v1", "Pod", "", c.handler(ctx, kindRef{"v1", "Pod"}, c.kubelet)) //nolint:errcheck // ends with ctx
	return nil
}

// retryAfter is how long the simulator waits to try again what it failed.
const retryAfter = 2 * time.Second

// handler is a watch's callback that runs fn and, when it fails, prints
// why and runs it again on the object as it is retryAfter later.
func (c *cloud) handler(ctx context.Context, kr kindRef, fn func(object) error) func(object) {
	var handle func(object)
	handle = func(o object) {
		err := fn(o)
		if err == nil || ctx.Err() != nil {
			return
		}
		fmt.Println("cloud simulator:", err)
		time.AfterFunc(retryAfter, func() {
			if now, err := c.k.get(kr.apiVersion, kr.kind, str(o, "metadata", "namespace"), str(o, "metadata", "name")); err == nil && ctx.Err() == nil {
				handle(now)
			}
		})
	}
	return handle
}

// provide marks a composed managed resource that is not ready yet Synced
// and Ready, with what its provider would write besides.
func (c *cloud) provide(kr kindRef, o object) error {
	if s, _, _ := condition(o, "Ready"); s == "True" {
		return nil
	}
	if str(o, "metadata", "deletionTimestamp") != "" {
		return nil
	}
	// The object as served carries the API version of the storage
	// version; the outputs table keys on group and kind.
	status := simulate.Status(o)
	if status == nil {
		return nil
	}
	for _, f := range []func(object) error{c.passwords, c.install, c.connect} {
		if err := f(o); err != nil {
			return fmt.Errorf("cannot provide for %s %s: %w", kr.kind, str(o, "metadata", "name"), err)
		}
	}
	err := c.k.patchStatus(kr.apiVersion, kr.kind, str(o, "metadata", "namespace"), str(o, "metadata", "name"), status)
	if errors.Is(err, errNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot mark %s %s ready: %w", kr.kind, str(o, "metadata", "name"), err)
	}
	c.patched.Add(1)
	return nil
}
