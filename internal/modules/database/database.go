// Package database is the database module ("module: database" in the
// Input): it runs a Database XR on the machinery every module shares
// (package engine), with its model (internal/model/database): the Cluster
// it joins, the plan, the render, status and conditions.
package database

import (
	"cmp"
	"fmt"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/engine"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/database"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// notRequested explains an empty condition group: a database that joins a
// Cluster's network may compose nothing of its own there (on GCP the
// Cluster composes what Cloud SQL needs in it).
func notRequested(cluster *cluster.Reported) map[string]string {
	if cluster == nil {
		return nil
	}
	return map[string]string{database.ConditionNetworkReady: fmt.Sprintf("The database joins Cluster %q's network, and composes nothing of its own there", cluster.Ref)}
}

// Run computes the response to a request for a Database XR. rsp must
// already carry the desired state of earlier pipeline steps. An error means
// the desired state cannot be computed; the caller returns it as a Fatal
// result, so that Crossplane changes nothing.
func Run(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, opts response.Options) error {
	x, errs := xr.DecodeDatabase(req.GetObserved().GetComposite().GetResource())
	errs = append(errs, xr.ValidateDatabase(x, registry.Clouds())...)
	c, err := engine.Begin(req, rsp, opts, &x.Composite, errs)
	if c == nil {
		return err
	}
	s := *database.SettingsOf(c.Env)

	var cluster *cluster.Reported
	if ref := x.Parameters.ClusterRef; ref != nil && ref.Name != "" && len(c.Errs) == 0 {
		var found bool
		cluster, found = clusterref.ForDatabase.Find(req, rsp, &x.Composite, ref.Name)
		if !found {
			return c.Wait(status(req, x, c.Env, nil, nil, 0), waitingFor(clusterAbsent(x, ref.Name)))
		}
		c.Errs = append(c.Errs, cluster.Check(&x.Composite, "Database", "a database joins a network")...)
		// The database joins the Cluster's network in the Cluster's region,
		// which it may not have reported yet: never plan without it.
		if why := cluster.AwaitLocation(); why != "" && len(c.Errs) == 0 {
			return c.Wait(status(req, x, c.Env, nil, nil, 0), waitingFor("Waiting for the region of the Cluster whose private network the database joins (spec.parameters.clusterRef): "+why))
		}
	}
	eng := database.Engines[c.Cloud.Name]
	plan, perrs := database.Build(x, s, cluster, eng, eng.Observe(c.Observed[database.ResourceInstance]))
	c.Errs = append(c.Errs, perrs...)
	if err := c.Invalid(); err != nil {
		return err
	}
	estimate := plan.Estimate(c.Env, s)

	st, err := c.Render(plan.Components, plan)
	if err != nil {
		return err
	}
	conds := append(st.Conditions([]string{database.ConditionNetworkReady, database.ConditionDatabaseReady}, notRequested(cluster)), upgrading(plan.Upgrade), st.RemovalsCondition())
	if u := plan.Upgrade; len(u.Steps) > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("PostgreSQL upgrade to %s (the server runs %s): %s, waiting for %s", u.Target, u.Running, strings.Join(stepNames(u), ", "), u.Waiting))
	}
	return c.Finish(st, status(req, x, c.Env, plan, st, estimate), conds)
}

// status returns the Database's own status fields. A field the observed
// resources cannot fill this time keeps its last value.
func status(req *fnv1.RunFunctionRequest, x *xr.Database, env *envcfg.Env, plan *database.Plan, st *engine.State, estimate float64) map[string]any {
	out := map[string]any{}
	var o registry.Outputs
	if st != nil {
		o = st.Outputs(req)
	}
	if o.Host == "" {
		o.Host = object.String(x.Status, "host")
	}
	if o.EngineVersion == "" {
		o.EngineVersion = object.String(x.Status, "engineVersion")
	}
	if o.Host != "" {
		out["host"] = o.Host
		out["port"] = int64(database.Port)
	}
	if o.EngineVersion != "" {
		out["engineVersion"] = o.EngineVersion
	}
	if plan != nil {
		out["connectionSecret"] = plan.Instance.ConnectionSecret
		out["username"] = plan.Instance.Username
		out["passwordSecret"] = map[string]any{"name": plan.Instance.PasswordSecret, "namespace": registry.SecretNamespace(&x.Composite, env), "key": database.PasswordKey}
		out["estimatedMonthlyUsd"] = map[string]any{"min": estimate, "max": estimate}
		if u := plan.Upgrade; len(u.Steps) > 0 {
			steps := make([]any, 0, len(u.Steps))
			for _, s := range stepNames(u) {
				steps = append(steps, s)
			}
			out["upgrade"] = map[string]any{"target": u.Target, "running": u.Running, "step": u.Step, "waitingFor": u.Waiting, "plan": steps}
		}
	}
	return out
}

// Reasons of the Upgrading condition.
const (
	reasonEngineUpgrade = "EngineUpgrade"
	reasonUpToDate      = "UpToDate"
)

// upgrading is the Upgrading condition: True with the step while the
// server walks to the target, False and UpToDate once it runs it.
func upgrading(u database.Upgrade) response.Condition {
	if len(u.Steps) == 0 {
		msg := "The server runs PostgreSQL " + u.Target
		if u.Running == "" {
			msg = "The server is asked for PostgreSQL " + u.Target
		}
		return response.Condition{Type: database.ConditionUpgrading, Status: response.StatusFalse, Reason: reasonUpToDate, Message: msg}
	}
	return response.Condition{Type: database.ConditionUpgrading, Status: response.StatusTrue, Reason: reasonEngineUpgrade,
		Message: fmt.Sprintf("PostgreSQL %s to %s, waiting for %s (%d step(s) to %s)", u.Running, cmp.Or(u.Version, u.Step), u.Waiting, len(u.Steps), u.Target)}
}

// stepNames says each step of an upgrade, with the minor it asks for
// where the cloud needs one.
func stepNames(u database.Upgrade) []string {
	out := make([]string, 0, len(u.Steps))
	for i, s := range u.Steps {
		if i < len(u.Versions) && u.Versions[i] != "" {
			s = u.Versions[i]
		}
		out = append(out, "PostgreSQL "+s)
	}
	return out
}

// clusterAbsent says that a Database waits for its Cluster, which is not
// there yet.
func clusterAbsent(x *xr.Database, ref string) string {
	where := "namespace " + x.Namespace
	if x.Namespace == "" {
		where = "the claim's namespace"
	}
	return fmt.Sprintf("Waiting for Cluster %q (%s), whose private network the database joins (spec.parameters.clusterRef): it is not there yet", ref, where)
}

// waitingFor are the conditions of a Database waiting for its Cluster, for
// the reason msg says.
func waitingFor(msg string) []response.Condition {
	return []response.Condition{
		{Type: database.ConditionNetworkReady, Status: response.StatusFalse, Reason: engine.ReasonWaiting, Message: msg},
		{Type: database.ConditionDatabaseReady, Status: response.StatusFalse, Reason: engine.ReasonWaiting, Message: msg},
	}
}
