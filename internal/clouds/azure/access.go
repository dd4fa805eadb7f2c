package azure

import (
	"time"

	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// access renders the Helm and Kubernetes ProviderConfigs from the AKS
// cluster's kubeconfig.
func access(ctx *registry.Context, a cluster.Access) ([]*registry.Resource, error) {
	deps := append([]string{rCluster}, kube.NodePoolResources(ctx, a.Pools)...)
	return kube.ProviderConfigs(ctx, a, kube.Credentials{SecretName: kube.KubeconfigSecretName(ctx), Key: kube.KubeconfigKey}, deps), nil
}

// budget renders a consumption budget on the cluster's resource group with
// one notification per threshold, to the contacts or else to the group's
// owners. Azure wants the start of the budget's first period, set once at
// creation: the month the XR was created in.
func budget(ctx *registry.Context, b cluster.Budget) ([]*registry.Resource, error) {
	contacts := map[string]any{"contactRoles": []any{"Owner"}}
	if len(b.Contacts) > 0 {
		contacts = map[string]any{"contactEmails": object.FromStrings(b.Contacts)}
	}
	n := make([]any, 0, len(b.Thresholds))
	for _, t := range b.Thresholds {
		nt := map[string]any{"enabled": true, "operator": "GreaterThanOrEqualTo", "threshold": t, "thresholdType": "Actual"}
		for k, v := range contacts {
			nt[k] = v
		}
		n = append(n, nt)
	}
	return []*registry.Resource{{
		Name:         rBudget,
		Kind:         budgetKind,
		ExternalName: base(ctx) + "-budget",
		Body: object.Object{"spec": map[string]any{
			"forProvider": map[string]any{
				"name":                    base(ctx) + "-budget",
				"resourceGroupIdSelector": ctx.Selector(rResourceGroup),
				"amount":                  b.LimitUSD,
				"timeGrain":               b.Period,
				"notification":            n,
			},
			"initProvider": map[string]any{"timePeriod": map[string]any{"startDate": startOfMonth(ctx.XR.CreationTimestamp)}},
		}},
		DependsOn: []string{rResourceGroup},
	}}, nil
}

// startOfMonth is the first instant of the month of t, or of the current
// month when t is unknown (an XR that was never stored, as in crossplane
// render).
func startOfMonth(t time.Time) string {
	if t.IsZero() {
		t = time.Now().UTC()
	}
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)
}
