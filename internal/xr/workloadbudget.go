package xr

import (
	"slices"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/object"
)

// WorkloadBudget is the XR of the budget module: a spend guardrail for
// Deployments in the XR's namespace.
type WorkloadBudget struct {
	Name       string
	Namespace  string
	Deleting   bool
	Conditions []object.Condition
	Status     *structpb.Struct

	LimitUSD    float64
	Enforcement string
	Thresholds  []float64
	SpendRef    *SpendRef
	Targets     []Target
	// TargetNamespace is the targets' namespace, on the cluster the
	// provider config reaches: the WorkloadBudget's own unless set (an
	// AppEnvironment's WorkloadBudget scales its backend on a workload
	// cluster).
	TargetNamespace string
	ProviderConfig  ProviderConfigRef
}

// Target is a Deployment a WorkloadBudget scales.
type Target struct {
	Name string
	// Replicas is the count while the budget is not exhausted.
	Replicas int64
}

// ProviderConfigRef references the provider-kubernetes provider config of
// the control plane's own cluster.
type ProviderConfigRef struct {
	Name string
	Kind string
}

// AnnotationDeletionAttempt is the annotation Crossplane's Usage webhook
// puts on a resource whose deletion it refused because a Usage protects
// it; a Usage with replayDeletion deletes the resource once it is gone.
const AnnotationDeletionAttempt = "usage.crossplane.io/deletion-attempt-with-policy"

// DeletionRequested reports whether an XR is being deleted, or its owner
// asked to delete it and a Usage holds the deletion until the XR lets go.
func DeletionRequested(s *structpb.Struct) bool {
	return object.String(s, "metadata", "deletionTimestamp") != "" || object.String(s, "metadata", "annotations", AnnotationDeletionAttempt) != ""
}

// DecodeWorkloadBudget reads and validates a WorkloadBudget XR.
func DecodeWorkloadBudget(s *structpb.Struct) (*WorkloadBudget, field.ErrorList) {
	d := &decoder{}
	b := &WorkloadBudget{
		Name:       object.String(s, "metadata", "name"),
		Namespace:  object.String(s, "metadata", "namespace"),
		Deleting:   DeletionRequested(s),
		Conditions: object.Conditions(s),
		Status:     object.Get(s, "status").GetStructValue(),
	}
	sp := field.NewPath("spec")
	spec := d.object(object.Get(s, "spec"), sp)
	if n := d.number(spec["limitUsd"], sp.Child("limitUsd")); n != nil {
		b.LimitUSD = *n
	}
	b.Enforcement = d.str(spec["enforcement"], sp.Child("enforcement"))
	tp := sp.Child("thresholds")
	for i, t := range d.list(spec["thresholds"], tp) {
		if n := d.number(t, tp.Index(i)); n != nil {
			b.Thresholds = append(b.Thresholds, *n)
		}
	}
	b.SpendRef = d.spendRef(spec["spendRef"], sp.Child("spendRef"))
	b.TargetNamespace = d.str(spec["targetNamespace"], sp.Child("targetNamespace"))
	gp := sp.Child("targets")
	for i, t := range d.list(spec["targets"], gp) {
		ip := gp.Index(i)
		f := d.fields(t, ip, "name", "replicas")
		tg := Target{Name: d.str(f["name"], ip.Child("name"))}
		if r := d.integer(f["replicas"], ip.Child("replicas")); r != nil {
			tg.Replicas = *r
		}
		b.Targets = append(b.Targets, tg)
	}
	pp := sp.Child("providerConfigRef")
	pf := d.fields(spec["providerConfigRef"], pp, "name", "kind")
	b.ProviderConfig = ProviderConfigRef{Name: d.str(pf["name"], pp.Child("name")), Kind: d.str(pf["kind"], pp.Child("kind"))}
	if len(d.errs) > 0 {
		return b, d.errs
	}
	return b, b.validate()
}

func (b *WorkloadBudget) validate() field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("spec")
	if b.Namespace == "" {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "namespace"), "a WorkloadBudget is namespaced: its targets are Deployments in its namespace"))
	}
	if b.LimitUSD <= 0 {
		errs = append(errs, field.Invalid(sp.Child("limitUsd"), b.LimitUSD, "must be greater than zero"))
	}
	if b.Enforcement != "" && !slices.Contains(EnforcementModes, b.Enforcement) {
		errs = append(errs, field.NotSupported(sp.Child("enforcement"), b.Enforcement, EnforcementModes))
	}
	if len(b.Targets) == 0 {
		errs = append(errs, field.Required(sp.Child("targets"), "name at least one Deployment"))
	}
	seen := map[string]bool{}
	for i, t := range b.Targets {
		ip := sp.Child("targets").Index(i)
		for _, msg := range validation.IsDNS1123Subdomain(t.Name) {
			errs = append(errs, field.Invalid(ip.Child("name"), t.Name, msg))
		}
		if seen[t.Name] {
			errs = append(errs, field.Duplicate(ip.Child("name"), t.Name))
		}
		seen[t.Name] = true
		if t.Replicas < 0 {
			errs = append(errs, field.Invalid(ip.Child("replicas"), t.Replicas, "must be zero or more"))
		}
	}
	if ns := b.TargetNamespace; ns != "" {
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(sp.Child("targetNamespace"), ns, msg))
		}
	}
	return append(errs, validateSpendRef(b.SpendRef, sp.Child("spendRef"))...)
}
