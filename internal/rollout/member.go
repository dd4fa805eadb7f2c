package rollout

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ReasonReconcileError is the reason of a Cluster's condition whose
// composed resources the provider cannot reconcile (the engine's
// ReasonReconcileError): the cloud refused or failed what was asked.
const ReasonReconcileError = "ReconcileError"

// LabelClaimNamespace is the label Crossplane gives a legacy XR of a claim:
// the claim's namespace, which is the XR's owner's, and which a legacy
// XCluster counts in (for a wave's namespaces and for who may see it).
const LabelClaimNamespace = "crossplane.io/claim-namespace"

// LabelCloud is the label that names a Cluster's cloud (the XR's cloud
// label, as in examples/*/cluster.yaml).
const LabelCloud = "cloud"

// MemberOf reads a Cluster XR, as a map (an unstructured object's Object,
// or a required resource's AsMap), as its status reports it:
//
//   - Runs.Kubernetes is the minor of status.upgrade.controlPlane when every
//     node pool of status.nodePools that reports a version runs that minor;
//     when they differ, the lowest minor of the control plane and those
//     pools (what the whole Cluster runs at least); "" when the control
//     plane reports none. A pool without a version (not created yet) is
//     not counted.
//
//   - Asks.Kubernetes is status.upgrade.target: what it has adopted.
//
//   - Ready is the condition Ready being True.
//
//   - Stale is set when Ready or Synced was observed at another generation
//     than metadata.generation (a condition counts only at the object's
//     generation: a Ready of an older spec proves nothing, a Synced False
//     of an older spec fails nothing), or when there is no Ready condition
//     yet (Crossplane has not reconciled it); Ready is then false.
//
//   - Deleting is metadata.deletionTimestamp being set.
//
//   - ReadySince is the latest lastTransitionTime of the Ready condition
//     and of the Upgrading condition while it is False (an upgrade that
//     ended), when Ready is True; zero otherwise.
//
//   - Failed is the condition Synced being False at the current generation
//     (though Ready is of an older one: a reconcile a Fatal refused writes
//     Synced and leaves Ready): the function refused the change with a
//     Fatal (or could not render), so the Cluster is stuck until someone
//     changes it. It is set too when one of the Cluster's
//     own conditions (ClusterReady, NodePoolsReady, ...) is False for
//     ReasonReconcileError: the provider cannot reconcile a composed
//     resource, so the cloud refused or failed the step, which no
//     reconcile of the Cluster will take further. A step merely under
//     way is not a failure.
//
//   - Reason is the failed condition's words when it failed, else the
//     Ready condition's when not Ready, else the Upgrading condition's
//     while an upgrade is under way.
//
//   - Namespace is its namespace; for a legacy XCluster of a claim, the
//     claim's (LabelClaimNamespace), "" for one the platform team made.
//
//   - Wave is its Label, Cloud its LabelCloud.
//
//   - Pinned is spec.parameters.version being set.
//
//   - Runs.Charts are status.charts, the versions its add-on releases run
//     (of the charts that follow the environment), when the status has
//     them: a Cluster writes them while the environment has rollout waves.
//     Asks.Charts are the same: the status does not say what a release
//     asks for, and a release mid-upgrade makes the Cluster not Ready.
func MemberOf(obj map[string]any) Member {
	u := unstructured.Unstructured{Object: obj}
	labels := u.GetLabels()
	m := Member{Name: u.GetName(), Namespace: cmp.Or(u.GetNamespace(), labels[LabelClaimNamespace]), Cloud: labels[LabelCloud], Wave: labels[Label]}
	cp, _, _ := unstructured.NestedString(obj, "status", "upgrade", "controlPlane")
	m.Runs.Kubernetes = Minor(cp)
	if m.Runs.Kubernetes != "" {
		pools, _, _ := unstructured.NestedSlice(obj, "status", "nodePools")
		for _, p := range pools {
			pm, _ := p.(map[string]any)
			v, _ := pm["version"].(string)
			if v = Minor(v); v != "" && lessMinor(v, m.Runs.Kubernetes) {
				m.Runs.Kubernetes = v
			}
		}
	}
	if charts, ok, _ := unstructured.NestedStringMap(obj, "status", "charts"); ok {
		m.Runs.Charts, m.Asks.Charts = charts, maps.Clone(charts)
	}
	pin, _, _ := unstructured.NestedString(obj, "spec", "parameters", "version")
	m.Pinned = pin != ""
	target, _, _ := unstructured.NestedString(obj, "status", "upgrade", "target")
	m.Asks.Kubernetes = Minor(target)

	m.Deleting = u.GetDeletionTimestamp() != nil
	conds := map[string]map[string]any{}
	var refused map[string]any
	list, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, c := range list {
		if cm, ok := c.(map[string]any); ok {
			if t, _ := cm["type"].(string); t != "" {
				conds[t] = cm
			}
			if s, _ := cm["status"].(string); s == "False" && refused == nil && cm["reason"] == ReasonReconcileError {
				refused = cm
			}
		}
	}
	is := func(typ, status string) bool { s, _ := conds[typ]["status"].(string); return s == status }
	// metadata.generation as a number of either encoding: GetGeneration
	// reads only an int64, and a required resource's is a float64.
	meta, _ := obj["metadata"].(map[string]any)
	gen := number(meta["generation"])
	_, seen := conds["Ready"]
	m.Stale = !seen
	for _, typ := range []string{"Ready", "Synced"} {
		if c, ok := conds[typ]; ok && number(c["observedGeneration"]) != gen {
			m.Stale = true
		}
	}
	m.Ready = is("Ready", "True") && !m.Stale
	// A Synced False of the current generation fails the member though its
	// Ready is older: Crossplane, refused by a Fatal, writes Synced (at the
	// generation it read) and leaves Ready as the last render set it.
	syncedNow := number(conds["Synced"]["observedGeneration"]) == gen
	m.Failed = (is("Synced", "False") && syncedNow) || (!m.Stale && refused != nil)
	if m.Ready {
		m.ReadySince = since(conds["Ready"])
		if is("Upgrading", "False") {
			if t := since(conds["Upgrading"]); t.After(m.ReadySince) {
				m.ReadySince = t
			}
		}
	}
	switch {
	case m.Failed && is("Synced", "False"):
		m.Reason = words(conds["Synced"])
	case m.Stale:
		m.Reason = "Crossplane has not reconciled its current spec yet (no Ready condition, or one of an older generation)"
	case is("Synced", "False"):
		m.Reason = words(conds["Synced"])
	case m.Failed:
		t, _ := refused["type"].(string)
		m.Reason = t + " " + words(refused)
	case !m.Ready:
		m.Reason = words(conds["Ready"])
	case is("Upgrading", "True"):
		m.Reason = words(conds["Upgrading"])
	}
	return m
}

// number is a JSON number as an int64: an int64 in an object decoded by
// apimachinery, a float64 in one read from a protobuf Struct; 0 when it is
// neither.
func number(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return 0
}

// since is a condition's lastTransitionTime, zero when it has none.
func since(c map[string]any) time.Time {
	s, _ := c["lastTransitionTime"].(string)
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// words is a condition's reason and message, as one line.
func words(c map[string]any) string {
	reason, _ := c["reason"].(string)
	msg, _ := c["message"].(string)
	switch {
	case reason != "" && msg != "":
		return reason + ": " + msg
	case reason != "":
		return reason
	}
	return msg
}

// Minor is the Kubernetes minor of a version string as clouds and the
// environment write it ("1.31", "v1.31.2", "1.31.2-gke.1200000"), "" when
// it names none.
func Minor(v string) string {
	major, minor, ok := parseMinor(v)
	if !ok {
		return ""
	}
	return strconv.Itoa(major) + "." + strconv.Itoa(minor)
}

// parseMinor reads a version string's major and minor numbers.
func parseMinor(v string) (int, int, bool) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	if i := strings.IndexFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		parts[1] = parts[1][:i]
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || major < 0 || minor < 0 {
		return 0, 0, false
	}
	return major, minor, true
}

// NewerMinor is the newer of two Kubernetes minors ("1.33"), either of
// which may be "" (then the other).
func NewerMinor(a, b string) string {
	if a == "" || (b != "" && lessMinor(a, b)) {
		return b
	}
	return a
}

// lessMinor reports whether minor a is older than minor b; both parse.
func lessMinor(a, b string) bool {
	amaj, amin, _ := parseMinor(a)
	bmaj, bmin, _ := parseMinor(b)
	return amaj < bmaj || amaj == bmaj && amin < bmin
}

// Why is the member's Reason without its message: the condition's type
// and reason ("ClusterReady ReconcileError", "Unavailable"), which stay
// the same while the member stays in one state, where a provider's message
// may change at every reconcile.
func (m Member) Why() string {
	why, _, _ := strings.Cut(m.Reason, ": ")
	return why
}

// RefOf is the Ref of a Cluster XR, as a map: its kind, namespace and name.
func RefOf(obj map[string]any) Ref {
	u := unstructured.Unstructured{Object: obj}
	return Ref{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

// WantsOf is what a Cluster XR reports the environment asks it for, as
// the function wrote it to status.rollout (target, the Kubernetes minor,
// and charts, the catalog's versions of the charts that follow the
// environment), and whether it reports one it is gated on: false when
// status.rollout is missing (no waves), names no target, or says Pinned
// (its owner's version, not the environment's).
func WantsOf(obj map[string]any) (Target, bool) {
	st, ok, _ := unstructured.NestedMap(obj, "status", "rollout")
	if !ok {
		return Target{}, false
	}
	t := Target{}
	t.Kubernetes, _ = st["target"].(string)
	if v, _ := st["verdict"].(string); t.Kubernetes == "" || v == string(Pinned) {
		return Target{}, false
	}
	if charts, ok, _ := unstructured.NestedStringMap(st, "charts"); ok && len(charts) > 0 {
		t.Charts = charts
	}
	return t, true
}

// gated reports whether a Cluster XR says the rollout holds it
// (status.rollout.verdict Hold, Halt or Approval): the function holds a
// Cluster that asks for a target it has not adopted until a ruling lets
// it move, so only such a Cluster needs one. One that adopts or keeps its
// target, or that Crossplane is still creating, is not ruled on: its
// ruling would change at every step of its convergence, and nothing reads
// it.
func gated(obj map[string]any) bool {
	v, _, _ := unstructured.NestedString(obj, "status", "rollout", "verdict")
	return Verdict(v).Gated()
}

// Rulings are the fleet controller's rulings on every Cluster of clusters
// (XRs of both kinds, as maps) that reports a target it is gated on
// (WantsOf, and a verdict that holds it), decided against all of them (Fleet) at now, each naming only
// what its owner may see (its own namespace), in namespace/name order of
// their Refs. One Fleet serves them all, so that the cost grows with the
// fleet, not with its square.
func Rulings(waves []Wave, clusters []map[string]any, now time.Time) []Ruling {
	type asker struct {
		ref    Ref
		self   Member
		target Target
	}
	members := make([]Member, 0, len(clusters))
	var askers []asker
	for _, obj := range clusters {
		m := MemberOf(obj)
		members = append(members, m)
		if t, ok := WantsOf(obj); ok && !m.Pinned && !m.Deleting && gated(obj) {
			askers = append(askers, asker{ref: RefOf(obj), self: m, target: t})
		}
	}
	slices.SortFunc(askers, func(a, b asker) int { return cmp.Compare(a.ref.String(), b.ref.String()) })
	f := NewFleet(waves, members, now)
	out := make([]Ruling, 0, len(askers))
	for _, a := range askers {
		out = append(out, RulingOf(a.ref, f.Decide(a.self, a.target, nil)))
	}
	return out
}
