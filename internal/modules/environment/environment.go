// Package environment is the application environment module ("module:
// environment" in the Input): an AppEnvironment XR becomes, on the Cluster
// it names, a namespace, the backend's Deployment, Service and Ingress, a
// ServiceAccount bound to a cloud identity without keys, a bucket only that
// identity may use, a nested Database XR whose connection details reach the
// backend without the function reading them, and a nested WorkloadBudget.
// Every cloud implements the bucket and the identity; what runs on the
// workload cluster and the nested XRs are the same on every cloud
// (kube.ImplementApp).
package environment

import (
	"fmt"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/engine"
	"github.com/seed-6471616d/function-cluster-platform/internal/module"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Clusters finds the Cluster an AppEnvironment runs on, asking Crossplane
// with the requirement names environment-cluster and
// environment-cluster-<resource>. Cloud packages register what they read
// of it (Clusters.Reads) from init.
var Clusters = &clusterref.Reader{Requirement: "environment-cluster"}

// notRequested explains empty condition groups.
var notRequested = map[string]string{
	ConditionBucketReady:   "No bucket requested (spec.parameters.bucket)",
	ConditionDatabaseReady: "No database requested (spec.parameters.database)",
}

// Run computes the response to a request for an AppEnvironment XR. rsp
// must already carry the desired state of earlier pipeline steps. An error
// means the desired state cannot be computed; the caller returns it as a
// Fatal result, so that Crossplane changes nothing.
func Run(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, opts module.Options) error {
	x, errs := xr.DecodeAppEnvironment(req.GetObserved().GetComposite().GetResource())
	errs = append(errs, xr.ValidateAppEnvironment(x, registry.Clouds())...)
	c, err := engine.Begin(req, rsp, opts, &x.Composite, errs)
	if c == nil {
		return err
	}
	// Without a valid clusterRef there is nothing to look up.
	if err := c.Invalid(); err != nil {
		return err
	}
	ref := x.Parameters.ClusterRef.Name
	cluster, found := Clusters.Find(req, rsp, &x.Composite, ref)
	if !found {
		return c.Wait(status(req, x, nil, nil), waitingFor(x, ref))
	}
	c.Errs = append(c.Errs, cluster.Check(&x.Composite, "AppEnvironment", "an environment runs on a Cluster")...)
	plan, perrs := Build(x, c.Env, cluster)
	c.Errs = append(c.Errs, perrs...)
	if err := c.Invalid(); err != nil {
		return err
	}
	st, err := c.Render(plan.Components, plan, nil)
	if err != nil {
		return err
	}
	conds := append(st.Conditions(ConditionTypes, notRequested), st.RemovalsCondition())
	return c.Finish(st, status(req, x, plan, st), conds)
}

// status returns the AppEnvironment's own status fields. A field the
// observed resources cannot fill this time keeps its last value.
func status(req *fnv1.RunFunctionRequest, x *xr.AppEnvironment, plan *Plan, st *engine.State) map[string]any {
	out := map[string]any{"namespace": x.AppNamespace(), "ready": st != nil && st.Ready()}
	if plan == nil {
		return out
	}
	be := plan.Backend
	out["url"] = fmt.Sprintf("http://%s.%s.svc.cluster.local:%d", BackendName, be.Namespace, be.Port)
	if i := plan.Ingress; i != nil {
		scheme := "http"
		if i.TLS {
			scheme = "https"
		}
		out["url"] = scheme + "://" + i.Host
	}
	o := st.Outputs(req)
	if plan.Database != nil {
		host := object.String(req.GetObserved().GetResources()[ResourceDatabase].GetResource(), "status", "host")
		if host == "" {
			host = object.String(x.Status, "databaseHost")
		}
		if host != "" {
			out["databaseHost"] = host
		}
	}
	if b := plan.Bucket; b != nil {
		out["bucketName"] = b.Name
		if o.BucketURL == "" {
			o.BucketURL = object.String(x.Status, "bucketUrl")
		}
		if o.BucketURL != "" {
			out["bucketUrl"] = o.BucketURL
		}
	}
	return out
}

// waitingFor are the conditions of an AppEnvironment waiting for its
// Cluster.
func waitingFor(x *xr.AppEnvironment, ref string) []module.Condition {
	where := "namespace " + x.Namespace
	if x.Namespace == "" {
		where = "the claim's namespace"
	}
	msg := fmt.Sprintf("Waiting for Cluster %q (%s), which the environment runs on (spec.parameters.clusterRef): it is not there yet", ref, where)
	out := make([]module.Condition, 0, len(ConditionTypes))
	for _, t := range ConditionTypes {
		out = append(out, module.Condition{Type: t, Status: module.StatusFalse, Reason: engine.ReasonWaiting, Message: msg})
	}
	return out
}
