package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
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
// namespace and CRDs. It deletes as the providers and the clouds do
// (deletion.go): with a finalizer on every managed resource, removed only
// once the cloud accepts the delete, which it refuses while the resource
// is in use; and provider-helm's and provider-sql's ProviderConfigs held
// while resources use them. It also plays the kubelet for the pods of the
// one API server that is every workload cluster. It touches nothing else.
type cloud struct {
	k       *kube
	kinds   []kindRef
	patched atomic.Int64
	// cpDelay is how long a control plane takes to report a new version
	// (an upgrade): a change of a ready cluster's spec is reported that
	// much later; other kinds report theirs at once.
	cpDelay time.Duration
	// cpDelays are, by namespace, how long a control plane there takes
	// instead (the rollout scenario's, rollout.go).
	cpDelays sync.Map
	// failing are the XRs, by namespace/name, whose control planes fail
	// every upgrade (rollout.go): asked for a new version, the provider
	// reports Synced False for ReconcileError and the version they ran.
	failing sync.Map
	// pending are the reports scheduled, by kind and name.
	pending sync.Map
	// retries are the objects a handler will handle again, by key: one
	// retry at a time each, however many watch events come meanwhile.
	retries sync.Map
	// pcKinds are provider-helm's and provider-sql's ProviderConfig,
	// ClusterProviderConfig and ProviderConfigUsage kinds, by group and
	// kind.
	pcKinds map[string]kindRef
	// del is what the simulator records of deletion (deletion_record.go).
	del *deletions
	// fake, when set, is what deletion's decisions read in place of the
	// API server (a test's).
	fake store
	// engineRefused counts the RDS modifications refused (engine.go).
	engineRefused atomic.Int64
}

// reported are the fields of status.atProvider a provider updates once it
// carried out an upgrade: the versions asked for and run. Only a change of
// them is reported again (the rest of a ready resource's status stays as
// it was first written).
var reported = []string{"version", "minMasterVersion", "masterVersion", "nodeVersion", "kubernetesVersion", "currentKubernetesVersion", "orchestratorVersion", "addonVersion", "defaultNodePool", "engineVersionActual", "databaseVersion"}

// controlPlanes are the kinds whose changes take cpDelay to report.
var controlPlanes = map[string]bool{"Cluster": true, "KubernetesCluster": true}

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
	c.pcKinds = map[string]kindRef{}
	if c.del == nil {
		c.del = newDeletions()
	}
	for _, crd := range crds {
		spec := crd["spec"].(map[string]any)
		g := spec["group"].(string)
		if !providerGroup(g) {
			continue
		}
		kind := spec["names"].(map[string]any)["kind"].(string)
		for _, v := range spec["versions"].([]any) {
			vm := v.(map[string]any)
			if vm["storage"] != true {
				continue
			}
			kr := kindRef{g + "/" + vm["name"].(string), kind}
			sub, _ := vm["subresources"].(map[string]any)
			switch {
			case kind == "ProviderConfig" || kind == "ClusterProviderConfig" || kind == "ProviderConfigUsage":
				// The upjet providers' ProviderConfigs are the
				// environment's, never deleted; provider-helm's and
				// provider-sql's are composed, and held while in use.
				if !strings.HasSuffix(g, ".upbound.io") {
					c.pcKinds[g+"/"+kind] = kr
				}
			case sub["status"] != nil:
				c.kinds = append(c.kinds, kr)
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
	// Crossplane takes its composite label off a composed resource it
	// deletes because the XR no longer wants it, so the watches select
	// by label no more: what is neither labelled nor carries the
	// simulator's finalizer is left alone.
	for _, kr := range c.kinds {
		go c.k.watch(ctx, kr.apiVersion, kr.kind, "", c.handler(ctx, kr, ours(managedFinalizer, func(o object) error { return c.provide(kr, o) }))) //nolint:errcheck // ends with ctx
	}
	for _, kr := range c.pcKinds {
		if kr.kind != "ProviderConfigUsage" {
			go c.k.watch(ctx, kr.apiVersion, kr.kind, "", c.handler(ctx, kr, ours(inUseFinalizer, c.providerConfig))) //nolint:errcheck // ends with ctx
		}
	}
	go c.k.watch(ctx, "v1", "Pod", "", c.handler(ctx, kindRef{"v1", "Pod"}, c.kubelet)) //nolint:errcheck // ends with ctx
	return nil
}

// ours runs fn on what an XR composed (labelled with its composite) or
// what carries the finalizer f.
func ours(f string, fn func(object) error) func(object) error {
	return func(o object) error {
		if str(o, "metadata", "labels", xr.LabelComposite) == "" && !hasFinalizer(o, f) {
			return nil
		}
		return fn(o)
	}
}

// retryAfter is how long the simulator waits to try again what it failed.
const retryAfter = 2 * time.Second

// handler is a watch's callback that runs fn and, when it fails, prints
// why and runs it again on the object as it is retryAfter later; a delete
// the cloud refused (errRefused) it tries again 2 to 5 s later, without a
// word, as a provider requeues. One retry of an object is pending at a
// time.
func (c *cloud) handler(ctx context.Context, kr kindRef, fn func(object) error) func(object) {
	var handle func(object)
	handle = func(o object) {
		err := fn(o)
		if err == nil || ctx.Err() != nil {
			return
		}
		delay := retryAfter
		if errors.Is(err, errRefused) {
			delay = retryMin + rand.N(retryJitter) //nolint:gosec // a requeue's jitter
		} else {
			fmt.Println("cloud simulator:", err)
		}
		ns, name := str(o, "metadata", "namespace"), str(o, "metadata", "name")
		key := kr.apiVersion + "/" + kr.kind + "/" + ns + "/" + name
		if _, pending := c.retries.LoadOrStore(key, true); pending {
			return
		}
		time.AfterFunc(delay, func() {
			c.retries.Delete(key)
			if now, err := c.k.get(kr.apiVersion, kr.kind, ns, name); err == nil && ctx.Err() == nil {
				handle(now)
			}
		})
	}
	return handle
}

// report writes what a ready resource's provider reports once it carried
// out a change of its spec (a new version, a resize): at once, or for a
// control plane cpDelay later, as an upgrade takes a while.
func (c *cloud) report(kr kindRef, o object) error {
	status := simulate.Status(o)
	want, _ := status["atProvider"].(map[string]any)
	have, _ := at(o, "status", "atProvider").(map[string]any)
	changed := false
	for _, k := range reported {
		changed = changed || !reflect.DeepEqual(want[k], have[k])
	}
	if !changed {
		return nil
	}
	if controlPlanes[kr.kind] && c.fails(kr, o) {
		return c.failUpgrade(kr, o)
	}
	if err := c.checkEngine(kr, o); err != nil {
		return err
	}
	key := kr.apiVersion + "/" + kr.kind + "/" + str(o, "metadata", "namespace") + "/" + str(o, "metadata", "name")
	patch := func() error {
		c.pending.Delete(key)
		now, err := c.k.get(kr.apiVersion, kr.kind, str(o, "metadata", "namespace"), str(o, "metadata", "name"))
		if errors.Is(err, errNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		err = c.k.patchStatus(kr.apiVersion, kr.kind, str(now, "metadata", "namespace"), str(now, "metadata", "name"), map[string]any{"atProvider": simulate.Status(now)["atProvider"]})
		if errors.Is(err, errNotFound) {
			return nil
		}
		return err
	}
	delay := c.cpDelay
	if d, ok := c.cpDelays.Load(str(o, "metadata", "namespace")); ok {
		delay = d.(time.Duration)
	}
	if !controlPlanes[kr.kind] || delay == 0 {
		return patch()
	}
	if _, scheduled := c.pending.LoadOrStore(key, true); !scheduled {
		time.AfterFunc(delay, func() {
			if err := patch(); err != nil {
				fmt.Println("cloud simulator: cannot report", key, ":", err)
			}
		})
	}
	return nil
}

// provide marks a composed managed resource that is not ready yet Synced
// and Ready, with what its provider would write besides.
//
// As a provider, it puts its finalizer on the resource first, and once the
// resource's deletion began, deletes it from the cloud as deletion.go
// says, removing the finalizer only once the cloud did.
func (c *cloud) provide(kr kindRef, o object) error {
	if str(o, "metadata", "deletionTimestamp") != "" {
		return c.deleteManaged(o)
	}
	c.adopt(o)
	if err := c.setFinalizer(o, managedFinalizer, true); err != nil {
		return fmt.Errorf("cannot put the finalizer on %s %s: %w", kr.kind, str(o, "metadata", "name"), err)
	}
	if s, _, _ := condition(o, "Ready"); s == "True" {
		return c.report(kr, o)
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
