// Package wastegate is the budget module ("module: budget" in the Input):
// the wastegate pattern for plain workloads. It measures spend continuously
// and cuts the fuel, scaling Deployments to zero, once the budget is gone.
package workloadbudget

import (
	"cmp"
	"fmt"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/budget"
	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/module"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// targetPrefix starts the composition-resource name of a target's Object.
const targetPrefix = "deployment-"

// Run is the budget module: it measures
// spend against a WorkloadBudget and, once the budget is exhausted with
// enforcement enabled, scales every target Deployment to zero; otherwise to
// the replica count the XR states. Each target gets a provider-kubernetes
// Object that observes the Deployment and owns nothing but spec.replicas:
// management policies Observe and Update, so it never creates or deletes a
// Deployment.
func Run(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, opts module.Options) error {
	b, errs := xr.DecodeWorkloadBudget(req.GetObserved().GetComposite().GetResource())
	if len(errs) > 0 {
		return module.Invalid("WorkloadBudget", b.Namespace, b.Name, errs)
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
		module.Require(rsp, budget.RequirementName, sp.Require)
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
	allReady := true
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
			"apiVersion": kube.ObjectKind.APIVersion(xr.Namespaced),
			"kind":       kube.ObjectKind.Kind,
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
		ready := object.IsConditionTrue(observed[name].GetResource(), "Ready")
		allReady = allReady && ready
		r := fnv1.Ready_READY_FALSE
		if ready {
			r = fnv1.Ready_READY_TRUE
		}
		rsp.Desired.Resources[name] = &fnv1.Resource{Resource: o, Ready: r}
	}

	module.Warn(rsp, object.Strings(b.Status, "warnings"), warnings)
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

	module.SetConditions(rsp, b.Conditions, []module.Condition{e.Condition()})
	rsp.Meta.Ttl = durationpb.New(opts.TTL(allReady))
	return nil
}
