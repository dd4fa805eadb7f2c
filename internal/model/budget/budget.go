// Package budget is the budget's model: what a WorkloadBudget XR is, a
// limit with thresholds and an enforcement, measured against the spend it
// reads, and the evaluation that decides whether to cut the fuel. The
// Cluster's budget shares it: both the budget module (plain workloads) and
// the cluster module (a Cluster XR's budget) evaluate spend with it.
package budget

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Where spend objects come from.
const (
	// RequirementName is the requirement the function returns to fetch a
	// spend object it was not given.
	RequirementName = "budget-spend"
	// StepRequirementName is the step-level requirement of the shipped
	// Compositions: every ConfigMap labelled LabelSpend, fetched before the
	// first call, so that a labelled spend ConfigMap costs no extra call.
	StepRequirementName = "budget-spend-configmaps"
	// LabelSpend marks ConfigMaps that hold spend figures.
	LabelSpend = "platform.example.org/spend"
)

// Causes reported in status.budget.cause: the budget agent's of the
// original platform.
const (
	// CauseRunning: nothing is paused.
	CauseRunning = "running"
	// CauseExhausted: spend reached the limit and enforcement paused.
	CauseExhausted = "budget-exhausted"
	// CauseUnreachable: the spend source did not answer (the query failed
	// or has not answered yet, the spend object is missing).
	CauseUnreachable = "agent-unreachable"
	// CauseUnknown: no spend source, or one whose answer is not a spend.
	CauseUnknown = "unknown"
)

// Reasons of the BudgetOK condition.
const (
	ReasonWithinBudget     = "WithinBudget"
	ReasonThresholdCrossed = "ThresholdCrossed"
	ReasonBudgetExhausted  = "BudgetExhausted"
	ReasonSpendUnknown     = "SpendUnknown"
	ReasonUnreachable      = "AgentUnreachable"
)

// Spend is what the function found out about month-to-date spend.
type Spend struct {
	// USD is the spend; valid only when Known.
	USD   float64
	Known bool
	// Require, when set, is the requirement to return so that Crossplane
	// fetches the spend object.
	Require *fnv1.ResourceSelector
	// Warning explains an unknown spend.
	Warning string
	// Unreachable is set when the spend is unknown because its source did
	// not answer.
	Unreachable bool
}

// Find looks for the spend object ref names among the required resources of
// the request. namespace is the namespace of a namespaced XR, which a ref
// without a namespace defaults to.
func Find(req *fnv1.RunFunctionRequest, ref *xr.SpendRef, namespace string) Spend {
	if ref == nil {
		return Spend{Warning: "no spendRef: the spend is unknown"}
	}
	ns := ref.Namespace
	if ns == "" {
		ns = namespace
	}
	var s Spend
	var found *structpb.Struct
	for _, key := range slices.Sorted(maps.Keys(req.GetRequiredResources())) {
		for _, it := range req.GetRequiredResources()[key].GetItems() {
			r := it.GetResource()
			if object.String(r, "apiVersion") == ref.APIVersion && object.String(r, "kind") == ref.Kind &&
				object.String(r, "metadata", "name") == ref.Name && object.String(r, "metadata", "namespace") == ns {
				found = r
				break
			}
		}
		if found != nil {
			if key != RequirementName {
				// Delivered by a step-level requirement: no need to ask.
				return read(found, ref)
			}
			break
		}
	}
	// Ask for it by name, and keep asking so the requirement is stable.
	s.Require = &fnv1.ResourceSelector{ApiVersion: ref.APIVersion, Kind: ref.Kind, Match: &fnv1.ResourceSelector_MatchName{MatchName: ref.Name}}
	if ns != "" {
		s.Require.Namespace = &ns
	}
	if found == nil {
		s.Warning = fmt.Sprintf("spend object %s %s not found (yet): the spend is unknown", ref.Kind, nsName(ns, ref.Name))
		s.Unreachable = true
		return s
	}
	r := read(found, ref)
	r.Require = s.Require
	return r
}

// read reads the spend in USD at the ref's field path: a number, or a string
// that parses as one (as in a ConfigMap's data).
func read(o *structpb.Struct, ref *xr.SpendRef) Spend {
	v := object.Get(o, strings.Split(ref.FieldPath, ".")...)
	var usd float64
	switch t := v.GetKind().(type) {
	case *structpb.Value_NumberValue:
		usd = t.NumberValue
	case *structpb.Value_StringValue:
		f, err := strconv.ParseFloat(strings.TrimSpace(t.StringValue), 64)
		if err != nil {
			return Spend{Warning: fmt.Sprintf("%s %s has %s %q, which is not a number: the spend is unknown", ref.Kind, ref.Name, ref.FieldPath, t.StringValue)}
		}
		usd = f
	default:
		return Spend{Warning: fmt.Sprintf("%s %s has no number at %s: the spend is unknown", ref.Kind, ref.Name, ref.FieldPath)}
	}
	if usd < 0 || math.IsNaN(usd) || math.IsInf(usd, 0) {
		return Spend{Warning: fmt.Sprintf("%s %s reports a spend of %v, which is not a valid amount: the spend is unknown", ref.Kind, ref.Name, usd)}
	}
	return Spend{USD: usd, Known: true}
}

// Evaluation is the state of a budget.
type Evaluation struct {
	LimitUSD float64
	SpentUSD float64
	// Ratio is spend over limit in percent (83.5 for $835 of $1000);
	// valid only when the spend is known.
	Ratio  float64
	Known  bool
	Paused bool
	Cause  string
	// Reason and Message are for the BudgetOK condition.
	Reason  string
	Message string
	// OK is the BudgetOK condition's status.
	OK bool
}

// Evaluate decides a budget's state. Unknown spend fails open: never
// paused. Only enforcement "enabled" pauses, once spend reaches the limit,
// and never while the XR is being deleted.
func Evaluate(limit float64, thresholds []float64, enforcement string, s Spend, deleting bool) Evaluation {
	e := Evaluation{LimitUSD: limit, Cause: CauseRunning}
	if !s.Known {
		e.Cause, e.Reason = CauseUnknown, ReasonSpendUnknown
		if s.Unreachable {
			e.Cause, e.Reason = CauseUnreachable, ReasonUnreachable
		}
		e.Message = "The spend is unknown, so nothing is paused (" + s.Warning + ")"
		return e
	}
	e.Known, e.SpentUSD = true, s.USD
	e.Ratio = round(s.USD/limit*100, 2)
	pct := e.Ratio
	switch {
	case pct >= 100:
		e.Reason = ReasonBudgetExhausted
		e.Message = fmt.Sprintf("Spent %s of %s (%.0f%%)", usd(s.USD), usd(limit), pct)
		switch {
		case deleting:
			e.Message += "; the XR is being deleted, so nothing is paused"
		case enforcement == xr.EnforcementEnabled:
			e.Paused, e.Cause = true, CauseExhausted
			e.Message += "; paused until spend drops below the limit or the limit is raised"
		default:
			e.Message += "; enforcement is monitor-only, so nothing is paused"
		}
	case crossed(thresholds, pct) > 0:
		e.OK, e.Reason = true, ReasonThresholdCrossed
		e.Message = fmt.Sprintf("Spent %s of %s (%.0f%%), past the %.0f%% threshold", usd(s.USD), usd(limit), pct, crossed(thresholds, pct))
	default:
		e.OK, e.Reason = true, ReasonWithinBudget
		e.Message = fmt.Sprintf("Spent %s of %s (%.0f%%)", usd(s.USD), usd(limit), pct)
	}
	return e
}

// crossed returns the highest threshold the percentage has reached, or 0.
func crossed(thresholds []float64, pct float64) float64 {
	var top float64
	for _, t := range thresholds {
		if pct >= t && t > top {
			top = t
		}
	}
	return top
}

// Status is status.budget of an XR.
func (e Evaluation) Status() map[string]any {
	st := map[string]any{"limitUsd": e.LimitUSD, "paused": e.Paused, "cause": e.Cause}
	if e.Known {
		st["spentUsd"] = e.SpentUSD
		st["ratio"] = e.Ratio
	}
	return st
}

func usd(v float64) string { return "$" + strconv.FormatFloat(round(v, 2), 'f', -1, 64) }

// round rounds to the given number of decimals.
func round(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(v*p) / p
}

func nsName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// Settings are the environment's budget keys, under data.budget.
type Settings struct {
	// Enforcement is the enforcement of a budget that names none:
	// monitor-only or enabled. Default monitor-only.
	Enforcement string `json:"enforcement"`
	// Prometheus, when its URL is set, is where the spend of a budget
	// without spendRef comes from.
	Prometheus struct {
		// URL is the Prometheus-compatible API's address; without it
		// there is no Prometheus spend source.
		URL string `json:"url"`
		// Query is the query of node-hours by machine type; $cluster,
		// $namespace and $name are replaced by the XR's.
		Query string `json:"query"`
		// Label is the label of the query's results that names the
		// machine type. Default label_node_kubernetes_io_instance_type.
		Label string `json:"label"`
		// TimeoutSeconds bounds one query. Default 2, at most 10.
		TimeoutSeconds *float64 `json:"timeoutSeconds"`
		// CacheSeconds is how long an answer is used. Default 300.
		CacheSeconds *float64 `json:"cacheSeconds"`
		// Prices are the prices of a node-hour in USD, by machine type.
		// Default: the environment's prices.machineTypes.
		Prices map[string]float64 `json:"prices"`
	} `json:"prometheus"`
}

// Query is the Prometheus query of an XR: the environment's, with $cluster,
// $namespace and $name replaced, priced with the environment's
// budget.prometheus.prices, else with prices (the cost estimate's machine
// type prices). ok is false when no Prometheus is configured.
func (s *Settings) Query(cluster, namespace, name string, prices map[string]float64) (PrometheusQuery, bool) {
	p := s.Prometheus
	if p.URL == "" {
		return PrometheusQuery{}, false
	}
	q := PrometheusQuery{
		URL:    p.URL,
		Query:  strings.NewReplacer("$cluster", cluster, "$namespace", namespace, "$name", name).Replace(p.Query),
		Label:  p.Label,
		Prices: p.Prices,
	}
	if len(q.Prices) == 0 {
		q.Prices = prices
	}
	if p.TimeoutSeconds != nil {
		q.Timeout = time.Duration(*p.TimeoutSeconds * float64(time.Second))
	}
	if p.CacheSeconds != nil {
		q.CacheFor = time.Duration(*p.CacheSeconds * float64(time.Second))
	}
	return q, true
}

// Defaults of a budget.
const (
	DefaultPeriod      = "Monthly"
	DefaultEnforcement = xr.EnforcementMonitorOnly
)

// DefaultThresholds are the notification thresholds, in percent of the
// limit, when an XR names none.
var DefaultThresholds = []float64{50, 80, 100}

// ConditionBudgetOK is the condition type both modules report a budget in.
const ConditionBudgetOK = "BudgetOK"

// Condition is the BudgetOK condition of the evaluation: True within the
// budget, False once exhausted, Unknown while the spend is unknown.
func (e Evaluation) Condition() response.Condition {
	c := response.Condition{Type: ConditionBudgetOK, Status: response.StatusFalse, Reason: e.Reason, Message: e.Message}
	switch {
	case e.OK:
		c.Status = response.StatusTrue
	case e.Reason == ReasonSpendUnknown || e.Reason == ReasonUnreachable:
		c.Status = response.StatusUnknown
	}
	return c
}
