package cluster

import (
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/engine"
	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/budget"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// conditionTypes are the XR's condition groups, in the order they are set.
var conditionTypes = []string{
	cluster.ConditionNetworkReady,
	cluster.ConditionClusterReady,
	cluster.ConditionNodePoolsReady,
	cluster.ConditionAddonsReady,
	cluster.ConditionDNSReady,
}

// notRequested explains an empty condition group.
var notRequested = map[string]string{
	cluster.ConditionDNSReady: "No DNS zones requested: set spec.parameters.domain (and createDnsZones) to get them",
}

// budgetCondition is the BudgetOK condition. A cloud without a budget kind
// (GCP) renders no budget resource, which the message says.
func budgetCondition(e budget.Evaluation, st *engine.State) response.Condition {
	c := e.Condition()
	if st.Rendering(cluster.ConditionBudgetOK) {
		return c
	}
	c.Message += "; no cloud budget resource is composed: this cloud's provider has no budget kind, so only the estimate and the spend checks apply"
	return c
}

// status returns the Cluster's own status fields. A field the observed
// resources cannot fill this time keeps its last value, so that a flapping
// provider does not blank the XR's status.
func status(x *xr.Cluster, out registry.Outputs, plan *cluster.Plan, st *engine.State, estimate cluster.Estimate, eval *budget.Evaluation, up *upgraded) map[string]any {
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
	current := poolResources(st)
	pools := make([]any, 0, len(plan.Pools))
	for _, p := range plan.Pools {
		entry := map[string]any{
			"name":        p.Name,
			"machineType": p.MachineType,
			"minNodes":    p.MinNodes,
			"maxNodes":    p.MaxNodes,
			"spot":        p.Spot,
			"ready":       poolsReady[cluster.PoolID(p.Name)],
		}
		if v := up.runs[p.Name]; v != "" {
			entry["version"] = v
		}
		if rd := current[cluster.PoolID(p.Name)]; rd != nil {
			entry["resource"] = rd.Name
			if r := rd.Rotation; r != nil {
				rot := map[string]any{"changes": object.FromStrings(lifecycle.Describe(r.Changes)), "waitingFor": r.Waiting}
				if len(r.From) > 0 {
					rot["from"] = object.FromStrings(r.From)
				}
				entry["rotation"] = rot
			}
		}
		pools = append(pools, entry)
	}
	status["nodePools"] = pools
	// The location the plan was built in: the spec's, else the
	// environment's, which Run resolved before planning.
	status[xr.StatusLocation] = x.Parameters.Location
	status["upgrade"] = upgradeStatus(up.plan)
	status["kubeconfigSecret"] = kubeconfigSecret(x)
	status["estimatedMonthlyUsd"] = map[string]any{"min": estimate.Min, "max": estimate.Max}
	if eval != nil {
		status["budget"] = eval.Status()
	}
	return status
}

// poolResources are, per node pool component, the resource of its current
// generation: the one rendered with its desired state, or kept while it
// waits to rotate.
func poolResources(st *engine.State) map[string]*registry.Rendered {
	out := map[string]*registry.Rendered{}
	for _, rd := range st.Rendered() {
		if !strings.HasPrefix(rd.Component, "pool/") || rd.UsageBy != "" || rd.Retire != "" {
			continue
		}
		if rd.Object != nil || (rd.Rotation != nil && rd.Rotation.Held) {
			if _, ok := out[rd.Component]; !ok {
				out[rd.Component] = rd
			}
		}
	}
	return out
}

// poolReadiness reports, per node pool component, whether every resource
// of the component is composed and ready, in one pass over the resources.
func poolReadiness(st *engine.State) map[string]bool {
	out := map[string]bool{}
	for _, rd := range st.Rendered() {
		if !strings.HasPrefix(rd.Component, "pool/") || rd.Retire != "" {
			continue
		}
		ok, seen := out[rd.Component]
		out[rd.Component] = (ok || !seen) && st.Composed(rd.Name)
	}
	return out
}

// Ways the kubeconfig reaches the XR's owner, in status.kubeconfigSecret.via.
const (
	// viaManagedResource: the managed resource writes it to the Secret
	// named in status, in the namespaced XR's own namespace.
	viaManagedResource = "ManagedResource"
	// viaClaim: the legacy XR's connection details, which Crossplane copies
	// to the Secret the claim names in spec.writeConnectionSecretToRef, in
	// the claim's namespace.
	viaClaim = "Claim"
	// viaComposite: the connection secret of a legacy XR without a claim.
	viaComposite = "Composite"
)

// Connection details of a legacy Cluster XR (the legacy XRD's
// connectionSecretKeys).
const (
	connKubeconfig = registry.KubeconfigKey
	connEndpoint   = "endpoint"
	connClusterCA  = "clusterCA"
)

// kubeconfigSecret says where the XR's owner finds the cluster's kubeconfig.
func kubeconfigSecret(x *xr.Cluster) map[string]any {
	if x.Scope == xr.Namespaced {
		return map[string]any{"name": registry.KubeconfigSecretName(&x.Composite), "namespace": x.Namespace, "key": connKubeconfig, "via": viaManagedResource}
	}
	if ns := x.Labels[xr.LabelClaimNamespace]; ns != "" {
		return map[string]any{"namespace": ns, "key": connKubeconfig, "via": viaClaim}
	}
	out := map[string]any{"key": connKubeconfig, "via": viaComposite}
	if x.ConnectionSecret.Name != "" {
		out["name"], out["namespace"] = x.ConnectionSecret.Name, x.ConnectionSecret.Namespace
	}
	return out
}

// connectionDetails are the legacy XR's connection details: the kubeconfig
// its managed cluster published, the endpoint and the CA. Crossplane v2 XRs
// have no connection details; their owners read the managed resource's
// Secret in their namespace.
func connectionDetails(x *xr.Cluster, out registry.Outputs) map[string][]byte {
	if x.Scope == xr.Namespaced || len(out.Kubeconfig) == 0 {
		return nil
	}
	cd := map[string][]byte{connKubeconfig: out.Kubeconfig}
	if out.ClusterEndpoint != "" {
		cd[connEndpoint] = []byte(out.ClusterEndpoint)
	}
	if out.ClusterCA != "" {
		cd[connClusterCA] = []byte(out.ClusterCA)
	}
	return cd
}
