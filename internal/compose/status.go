package compose

import (
	"fmt"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/budget"
	"github.com/seed-6471616d/function-cluster-platform/internal/module"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/platform"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Condition reasons.
const (
	ReasonAvailable      = "Available"
	ReasonCreating       = "Creating"
	ReasonWaiting        = "Waiting"
	ReasonReconcileError = "ReconcileError"
	ReasonNotRequested   = "NotRequested"
	ReasonNothingHeld    = "NothingHeld"
	ReasonAwaitingOwner  = "AwaitingOwner"
)

// ConditionRemovalsSettled is False while composed resources that are no
// longer rendered are held because the XR's spec did not remove them.
const ConditionRemovalsSettled = "RemovalsSettled"

// conditionTypes are the XR's custom conditions, in the order they are set.
var conditionTypes = []string{
	platform.ConditionNetworkReady,
	platform.ConditionClusterReady,
	platform.ConditionNodePoolsReady,
	platform.ConditionAddonsReady,
	platform.ConditionDNSReady,
}

// notRequested explains an empty condition group.
var notRequested = map[string]string{
	platform.ConditionDNSReady: "No DNS zones requested: set spec.parameters.domain (and createDnsZones) to get them",
}

// conditions derives the XR's custom conditions from the readiness of the
// resources of each group.
func conditions(st *state) []module.Condition {
	out := make([]module.Condition, 0, len(conditionTypes))
	for _, typ := range conditionTypes {
		var members, synced, held, creating []string
		for _, rd := range st.rendered {
			if rd.Condition != typ {
				continue
			}
			members = append(members, rd.Name)
			if why, ok := st.held[rd.Name]; ok {
				held = append(held, rd.Name+" "+why)
				continue
			}
			if c, ok := object.FindCondition(st.observed[rd.Name], "Synced"); ok && c.Status == "False" {
				synced = append(synced, fmt.Sprintf("%s: %s", rd.Name, firstNonEmpty(c.Message, c.Reason)))
			}
			if !st.ready[rd.Name] {
				creating = append(creating, rd.Name)
			}
		}
		c := module.Condition{Type: typ, Status: module.StatusFalse}
		switch {
		case len(members) == 0:
			c.Status, c.Reason = module.StatusTrue, ReasonNotRequested
			c.Message = firstNonEmpty(notRequested[typ], "Nothing to compose")
		case len(synced) > 0:
			c.Reason, c.Message = ReasonReconcileError, "The provider cannot reconcile "+list(synced)
		case len(held) > 0:
			c.Reason, c.Message = ReasonWaiting, "Not composed yet: "+list(held)
		case len(creating) > 0:
			c.Reason, c.Message = ReasonCreating, "Not ready yet: "+list(creating)
		default:
			c.Status, c.Reason = module.StatusTrue, ReasonAvailable
			c.Message = fmt.Sprintf("All %d composed resources are ready", len(members))
		}
		out = append(out, c)
	}
	return out
}

// removalsCondition reports the composed resources held because no
// statement of the XR's spec removed them, each with what stopped rendering
// it and how the XR's owner confirms its removal.
func removalsCondition(st *state) module.Condition {
	held := st.heldNames()
	if len(held) == 0 {
		return module.Condition{Type: ConditionRemovalsSettled, Status: module.StatusTrue, Reason: ReasonNothingHeld,
			Message: "Every composed resource is rendered, or was removed by the XR's spec"}
	}
	items := make([]string, 0, len(held))
	for _, name := range held {
		items = append(items, fmt.Sprintf("%s (%s; %s)", name, st.kept[name].Why, howToConfirm(name, st.kept[name])))
	}
	return module.Condition{Type: ConditionRemovalsSettled, Status: module.StatusFalse, Reason: ReasonAwaitingOwner,
		Message: "Kept although no longer rendered, until the XR's owner confirms the removal: " + list(items)}
}

// howToConfirm says how the XR's owner removes a held resource.
func howToConfirm(name string, r platform.Removal) string {
	how := fmt.Sprintf("to remove it, list %q in spec.parameters.confirmRemovals", name)
	if r.Confirm != "" {
		how = "to remove it, " + r.Confirm + fmt.Sprintf(", or list %q in spec.parameters.confirmRemovals", name)
	}
	return how
}

// list joins the first few items of a list for a message.
func list(items []string) string {
	const most = 4
	if len(items) <= most {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:most], "; "), len(items)-most)
}

// writeStatus sets the XR's status fields. A field the observed resources
// cannot fill this time keeps its last value, so that a flapping provider
// does not blank the XR's status.
// statusExtras are the status fields that do not come from composed
// resources.
type statusExtras struct {
	warnings []string
	estimate platform.Estimate
	budget   *budget.Evaluation
	// layers are the names of the EnvironmentConfigs of each layer.
	layers map[string][]string
}

// budgetCondition is the BudgetOK condition. A cloud without a budget kind
// (GCP) renders no budget resource, which the message says.
func budgetCondition(e budget.Evaluation, st *state) module.Condition {
	c := e.Condition()
	for _, rd := range st.rendered {
		if rd.Condition == platform.ConditionBudgetOK {
			return c
		}
	}
	c.Message += "; no cloud budget resource is composed: this cloud's provider has no budget kind, so only the estimate and the spend checks apply"
	return c
}

func writeStatus(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, x *xr.Composite, plan *platform.Plan, st *state, extra statusExtras) error {
	var out registry.Outputs
	for _, rd := range st.rendered {
		if rd.Outputs != nil && st.observed[rd.Name] != nil {
			rd.Outputs(st.observed[rd.Name], req.GetObserved().GetResources()[rd.Name].GetConnectionDetails(), &out)
		}
	}
	status := map[string]any{}
	setStr := func(key, v string) {
		if v == "" {
			v = object.String(x.Status, key)
		}
		if v != "" {
			status[key] = v
		}
	}
	setStr("clusterEndpoint", out.ClusterEndpoint)
	setStr("clusterCA", out.ClusterCA)
	setStr("oidcIssuer", out.OIDCIssuer)
	ns := out.DNSNameServers
	if len(ns) == 0 {
		ns = object.Strings(x.Status, "dnsNameServers")
	}
	if len(ns) > 0 {
		status["dnsNameServers"] = object.FromStrings(ns)
	}

	poolsReady := poolReadiness(st)
	pools := make([]any, 0, len(plan.Pools))
	for _, p := range plan.Pools {
		pools = append(pools, map[string]any{
			"name":        p.Name,
			"machineType": p.MachineType,
			"minNodes":    p.MinNodes,
			"maxNodes":    p.MaxNodes,
			"spot":        p.Spot,
			"ready":       poolsReady[platform.PoolID(p.Name)],
		})
	}
	status["nodePools"] = pools
	status["estimatedMonthlyUsd"] = map[string]any{"min": extra.estimate.Min, "max": extra.estimate.Max}
	if extra.budget != nil {
		status["budget"] = extra.budget.Status()
	}
	if len(extra.warnings) > 0 {
		status["warnings"] = object.FromStrings(extra.warnings)
	}
	if len(extra.layers) > 0 {
		layers := make(map[string]any, len(extra.layers))
		for l, names := range extra.layers {
			layers[l] = object.FromStrings(names)
		}
		status["environment"] = layers
	}

	s, err := structpb.NewStruct(map[string]any{"status": status})
	if err != nil {
		return fmt.Errorf("cannot encode XR status: %w", err)
	}
	if rsp.Desired.Composite == nil {
		rsp.Desired.Composite = &fnv1.Resource{}
	}
	dxr := rsp.Desired.Composite.Resource
	if dxr == nil {
		dxr = &structpb.Struct{Fields: map[string]*structpb.Value{}}
		rsp.Desired.Composite.Resource = dxr
	}
	dxr.Fields["apiVersion"] = structpb.NewStringValue(x.APIVersion)
	dxr.Fields["kind"] = structpb.NewStringValue(x.Kind)
	// Keep what earlier pipeline steps wrote into the status.
	if prior := dxr.Fields["status"].GetStructValue(); prior != nil {
		for k, v := range s.Fields["status"].GetStructValue().Fields {
			prior.Fields[k] = v
		}
		return nil
	}
	dxr.Fields["status"] = s.Fields["status"]
	return nil
}

// poolReadiness reports, per node pool component, whether every resource
// of the component is composed and ready, in one pass over the resources.
func poolReadiness(st *state) map[string]bool {
	out := map[string]bool{}
	for _, rd := range st.rendered {
		if !strings.HasPrefix(rd.Component, "pool/") {
			continue
		}
		ok, seen := out[rd.Component]
		out[rd.Component] = (ok || !seen) && st.emitted[rd.Name] && st.ready[rd.Name]
	}
	return out
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
