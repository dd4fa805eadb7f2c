// Package cluster is the cluster module: it turns one Cluster XR into its
// desired composed resources, status and conditions, on the machinery every
// module shares (package engine). What is particular to a Cluster is here:
// its model (internal/model/cluster), the cloud layers' cluster rules, the budget
// and the cost estimate, and its status fields.
package cluster

import (
	"fmt"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/engine"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/budget"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Run computes the response to a request for a Cluster XR. rsp must already
// carry the desired state of earlier pipeline steps. An error means the
// desired state cannot be computed; the caller returns it as a Fatal result,
// so that Crossplane changes nothing.
func Run(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, opts response.Options) error {
	x, errs := xr.Decode(req.GetObserved().GetComposite().GetResource())
	errs = append(errs, xr.Validate(x, registry.Clouds())...)
	c, err := engine.Begin(req, rsp, opts, &x.Composite, errs)
	if c == nil {
		return err
	}

	// The original platform's fields and keys are read under their new
	// names, each said once in a Warning.
	s := cluster.SettingsOf(c.Env)
	for _, r := range x.Renamed {
		c.Warnings = append(c.Warnings, r.Warning())
	}
	c.Warnings = append(c.Warnings, s.Renamed()...)
	if x.Parameters.Location == "" {
		x.Parameters.Location = s.Location
	}
	c.Errs = append(c.Errs, xr.RequireLocation(x)...)
	// A Cluster's domain is a host: its public zone, the delegation in
	// the parent zone and every host of its environments live under it.
	if err := c.CheckHost(xr.ParametersPath("domain"), x.Parameters.Domain); err != nil {
		c.Errs = append(c.Errs, err)
	}

	// Plan and check the cloud's rules even when the XR has errors, so
	// that one Fatal names every bad field.
	plan, perrs := cluster.Build(x, c.Env, cluster.CloudTraits[x.Cloud])
	c.Errs = append(c.Errs, perrs...)
	c.Check(plan.Components)
	g := gate(c, x, plan)
	up, verr := upgrade(c, x, plan)
	if verr != nil {
		c.Errs = append(c.Errs, verr)
	}
	if err := c.Invalid(); err != nil {
		return err
	}
	c.Warnings = append(c.Warnings, up.warnings...)
	keepEgress(c, x, plan)
	eval, warning := evaluateBudget(req, rsp, x, c.Env, plan)
	if warning != "" {
		c.Warnings = append(c.Warnings, warning)
	}
	estimate, eerrs := plan.Estimate(c.Env)
	if len(eerrs) > 0 {
		return response.Invalid(x.Kind, x.Namespace, x.Name, eerrs)
	}

	st, err := c.Render(plan.Components, plan)
	if err != nil {
		return err
	}
	rots := rotations(st)
	conds := append(st.Conditions(conditionTypes, notRequested), st.RemovalsCondition(), upgradingCondition(up.plan, rots))
	if eval != nil {
		conds = append(conds, budgetCondition(*eval, st))
	}
	out := st.Outputs(req)
	stat := status(x, out, plan, st, estimate, eval, up)
	if g != nil {
		conds = append(conds, g.condition())
		stat["rollout"] = g.status()
		stat["charts"] = object.FromStringMap(g.runs)
	}
	if err := c.Finish(st, stat, conds); err != nil {
		return err
	}
	announceStep(rsp, x, up.plan)
	if cd := connectionDetails(x, out); cd != nil {
		rsp.GetDesired().GetComposite().ConnectionDetails = cd
	}
	return nil
}

// evaluateBudget measures the XR's spend against its budget, asking for the
// spend object when it was not delivered, and holds the plan's pools at their
// floor when the budget is exhausted and enforced. It returns nil without a
// budget, and a warning when the spend is unknown.
func evaluateBudget(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, x *xr.Cluster, env *envcfg.Env, plan *cluster.Plan) (*budget.Evaluation, string) {
	b := plan.Budget
	if b == nil {
		return nil, ""
	}
	s := cluster.SettingsOf(env)
	var sp budget.Spend
	if q, ok := s.Budget.Query(x.CloudName, x.Namespace, x.Name, s.Prices.MachineTypes); ok && x.Parameters.Budget.SpendRef == nil {
		sp = budget.Source.Spend(q)
	} else {
		sp = budget.Find(req, x.Parameters.Budget.SpendRef, x.Namespace)
	}
	if sp.Require != nil {
		response.Require(rsp, budget.RequirementName, sp.Require)
	}
	e := budget.Evaluate(b.LimitUSD, b.Thresholds, plan.BudgetEnforcement, sp, x.Deleting)
	if e.Paused {
		plan.Pause()
	}
	if sp.Known {
		return &e, ""
	}
	return &e, "budget: " + sp.Warning + "; nothing is paused"
}

// keepEgress keeps composing the egress (NAT) of a cluster that is being
// made public for as long as its cloud says that what runs still reaches
// the internet through it (registry.Cloud.EgressInUse): EKS node groups
// that still run in the private subnets while they rotate to the public
// ones, an AKS cluster that still sends its outbound traffic through the
// NAT gateway until it reports the load balancer. A Warning says why.
func keepEgress(c *engine.Call, x *xr.Cluster, plan *cluster.Plan) {
	if plan.Cluster.Private || x.Deleting || c.Cloud.EgressInUse == nil {
		return
	}
	if why := c.Cloud.EgressInUse(c.Observed); why != "" {
		plan.KeepEgress()
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s is false, but %s: the cluster's egress (NAT) stays until nothing runs behind it, then goes", plan.PrivatePath(), why))
	}
}
