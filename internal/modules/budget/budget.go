// Package budget is the budget module ("module: budget" in the Input): it
// runs a WorkloadBudget XR, a spend guardrail for plain workloads, on its
// model (internal/model/budget). It measures spend continuously and cuts
// the fuel, scaling Deployments to zero, once the budget is gone.
package budget

import (
	"cmp"
	"fmt"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/kubekinds"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/budget"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Composition-resource names.
const (
	// targetPrefix starts the name of a target's Object.
	targetPrefix = "deployment-"
	// DeletionHold is the Usage that holds the WorkloadBudget's deletion
	// while a target is scaled down.
	DeletionHold = "deletion-hold"
)

// Deleting a WorkloadBudget must leave its Deployments running. Crossplane
// runs no function once an XR is being deleted, and the Objects only
// observe and update (deleting them leaves each Deployment as it is, at
// zero replicas if paused). So while any target is, or may still be, scaled
// down, the WorkloadBudget composes a Usage of itself with replayDeletion:
// Crossplane's webhook refuses its deletion and records the attempt on it
// (xr.AnnotationDeletionAttempt); the function, seeing the attempt, stops
// pausing and restores the replicas; once every target's Object reports
// its Deployment back at the stated replicas, the Usage is dropped, and
// Crossplane replays the deletion.

// Run is the budget module: it measures
// spend against a WorkloadBudget and, once the budget is exhausted with
// enforcement enabled, scales every target Deployment to zero; otherwise to
// the replica count the XR states. Each target gets a provider-kubernetes
// Object that observes the Deployment and owns nothing but spec.replicas:
// management policies Observe and Update, so it never creates or deletes a
// Deployment.
func Run(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, opts response.Options) error {
	b, errs := xr.DecodeWorkloadBudget(req.GetObserved().GetComposite().GetResource())
	if len(errs) > 0 {
		return response.Invalid("WorkloadBudget", b.Namespace, b.Name, errs)
	}
	thresholds := b.Thresholds
	if len(thresholds) == 0 {
		thresholds = budget.DefaultThresholds
	}
	enforcement := b.Enforcement
	if enforcement == "" {
		enforcement = budget.DefaultEnforcement
	}
	sp := budget.Find(req, b.SpendRef, b.Namespace)
	if sp.Require != nil {
		response.Require(rsp, budget.RequirementName, sp.Require)
	}
	e := budget.Evaluate(b.LimitUSD, thresholds, enforcement, sp, b.Deleting)
	var warnings []string
	if !sp.Known {
		warnings = append(warnings, "budget: "+sp.Warning+"; nothing is paused")
	}

	pc := object.Object{"name": "default", "kind": "ClusterProviderConfig"}
	if b.ProviderConfig.Name != "" {
		pc["name"] = b.ProviderConfig.Name
	}
	if b.ProviderConfig.Kind != "" {
		pc["kind"] = b.ProviderConfig.Kind
	}
	observed := req.GetObserved().GetResources()
	hold := e.Paused
	if rsp.Desired == nil {
		rsp.Desired = &fnv1.State{}
	}
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = map[string]*fnv1.Resource{}
	}
	for _, t := range b.Targets {
		replicas := t.Replicas
		if e.Paused {
			replicas = 0
		}
		name := targetPrefix + t.Name
		o, err := structpb.NewStruct(object.Object{
			"apiVersion": kubekinds.Object.APIVersion(xr.Namespaced),
			"kind":       kubekinds.Object.Kind,
			"metadata": map[string]any{
				"annotations": map[string]any{registry.AnnotationComponent: "target/" + t.Name},
			},
			"spec": map[string]any{
				"managementPolicies": []any{"Observe", "Update"},
				"providerConfigRef":  pc,
				"forProvider": map[string]any{"manifest": map[string]any{
					"apiVersion": "apps/v1",
					"kind":       "Deployment",
					"metadata":   map[string]any{"name": t.Name, "namespace": cmp.Or(b.TargetNamespace, b.Namespace)},
					"spec":       map[string]any{"replicas": replicas},
				}},
			},
		})
		if err != nil {
			return fmt.Errorf("cannot encode the Object of target %q: %w", t.Name, err)
		}
		if applied, ok := object.Get(observed[name].GetResource(), "status", "atProvider", "manifest", "spec", "replicas").GetKind().(*structpb.Value_NumberValue); ok && int64(applied.NumberValue) != t.Replicas {
			hold = true
		}
		ready := object.IsConditionTrue(observed[name].GetResource(), "Ready")
		r := fnv1.Ready_READY_FALSE
		if ready {
			r = fnv1.Ready_READY_TRUE
		}
		rsp.Desired.Resources[name] = &fnv1.Resource{Resource: o, Ready: r}
	}

	if hold {
		if err := holdDeletion(rsp, req.GetObserved().GetComposite().GetResource(), b.Name); err != nil {
			return err
		}
	}

	response.Warn(rsp, object.Strings(b.Status, "warnings"), warnings)
	status := e.Status()
	delete(status, "limitUsd")
	if len(warnings) > 0 {
		status["warnings"] = object.FromStrings(warnings)
	}
	s, err := structpb.NewStruct(map[string]any{"status": status})
	if err != nil {
		return fmt.Errorf("cannot encode the WorkloadBudget's status: %w", err)
	}
	oxr := req.GetObserved().GetComposite().GetResource()
	if rsp.Desired.Composite == nil {
		rsp.Desired.Composite = &fnv1.Resource{}
	}
	if rsp.Desired.Composite.Resource == nil {
		rsp.Desired.Composite.Resource = &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	dxr := rsp.Desired.Composite.Resource.Fields
	dxr["apiVersion"] = structpb.NewStringValue(object.String(oxr, "apiVersion"))
	dxr["kind"] = structpb.NewStringValue(object.String(oxr, "kind"))
	dxr["status"] = s.Fields["status"]

	response.SetConditions(rsp, b.Conditions, []response.Condition{e.Condition()})
	// Its spend is an object Crossplane does not watch for it: a change
	// is seen when the XR runs again, so it runs again soon, whatever its
	// Objects do (a budget exists to act on spend).
	rsp.Meta.Ttl = durationpb.New(opts.TTL(true))
	return nil
}

// holdDeletion composes the Usage of the WorkloadBudget itself that holds
// its deletion until its targets run at their stated replicas.
func holdDeletion(rsp *fnv1.RunFunctionResponse, oxr *structpb.Struct, name string) error {
	u, err := structpb.NewStruct(object.Object{
		"apiVersion": registry.UsageKind(xr.Namespaced).APIVersion(xr.Namespaced),
		"kind":       registry.UsageKind(xr.Namespaced).Kind,
		"metadata": map[string]any{
			"annotations": map[string]any{registry.AnnotationComponent: DeletionHold},
		},
		"spec": map[string]any{
			"of": map[string]any{
				"apiVersion":  object.String(oxr, "apiVersion"),
				"kind":        object.String(oxr, "kind"),
				"resourceRef": map[string]any{"name": name},
			},
			"reason":         "WorkloadBudget " + name + " has scaled Deployments down: it restores their replicas before it is deleted, and the deletion is replayed then",
			"replayDeletion": true,
		},
	})
	if err != nil {
		return fmt.Errorf("cannot encode the deletion hold: %w", err)
	}
	rsp.Desired.Resources[DeletionHold] = &fnv1.Resource{Resource: u, Ready: fnv1.Ready_READY_TRUE}
	return nil
}
