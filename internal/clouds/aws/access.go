package aws

import (
	"strconv"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// access renders the Helm and Kubernetes ProviderConfigs from the
// ClusterAuth's kubeconfig, which carries a token the provider refreshes, and
// a ClusterRoleBinding that makes the admin principals' group cluster-admin.
func access(ctx *registry.Context, a cluster.Access) ([]*registry.Resource, error) {
	deps := append([]string{rClusterAuth}, kube.NodePoolResources(ctx, a.Pools)...)
	out := kube.ProviderConfigs(ctx, a, kube.Credentials{SecretName: kube.KubeconfigSecretName(ctx), Key: kube.KubeconfigKey}, deps)
	if len(settingsOf(ctx.Env).Admins) > 0 {
		out = append(out, kube.Object(ctx, rAdminBinding, a, kube.ClusterAdminBinding("platform-cluster-admins", adminGroup)))
	}
	return out, nil
}

// timeUnits maps budget periods to AWS Budgets time units.
var timeUnits = map[string]string{"Monthly": "MONTHLY", "Quarterly": "QUARTERLY", "Annually": "ANNUALLY"}

// budget renders an AWS Budgets cost budget for the account, filtered to the
// cluster's resources by their cluster tag (environment key
// aws.budgetCostFilter overrides the filter), with one notification per
// threshold to the contacts.
func budget(ctx *registry.Context, b cluster.Budget) ([]*registry.Resource, error) {
	fp := map[string]any{
		"accountId":   ctx.XR.PlaneID,
		"budgetType":  "COST",
		"limitAmount": strconv.FormatFloat(b.LimitUSD, 'f', -1, 64),
		"limitUnit":   "USD",
		"timeUnit":    timeUnits[b.Period],
		"costFilter":  []any{map[string]any{"name": "TagKeyValue", "values": []any{"user:cluster$" + base(ctx)}}},
		"tags":        tags(ctx, base(ctx)+"-budget"),
	}
	if f := settingsOf(ctx.Env).BudgetCostFilter; f != nil {
		fp["costFilter"] = []any{f}
	}
	if len(b.Contacts) == 0 {
		ctx.Warn("AWS budget %q has no contacts, so it gets no notifications: set spec.parameters.budget.contacts", base(ctx))
	} else {
		n := make([]any, 0, len(b.Thresholds))
		for _, t := range b.Thresholds {
			n = append(n, map[string]any{
				"comparisonOperator":       "GREATER_THAN",
				"notificationType":         "ACTUAL",
				"threshold":                t,
				"thresholdType":            "PERCENTAGE",
				"subscriberEmailAddresses": object.FromStrings(b.Contacts),
			})
		}
		fp["notification"] = n
	}
	return []*registry.Resource{{
		Name:         rBudget,
		Kind:         budgetResourceKind,
		ExternalName: strings.ToLower(base(ctx)) + "-budget",
		Body:         object.Object{"spec": map[string]any{"forProvider": fp}},
	}}, nil
}
