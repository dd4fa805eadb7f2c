package rollout

import (
	"cmp"
	"maps"
	"strconv"
	"strings"

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
//   - Failed is the condition Synced being False: the function refused the
//     change with a Fatal (or could not render), so the Cluster is stuck
//     until someone changes it. It is set too when one of the Cluster's
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
	m.Ready = is("Ready", "True")
	m.Failed = is("Synced", "False") || refused != nil
	switch {
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

// lessMinor reports whether minor a is older than minor b; both parse.
func lessMinor(a, b string) bool {
	amaj, amin, _ := parseMinor(a)
	bmaj, bmin, _ := parseMinor(b)
	return amaj < bmaj || amaj == bmaj && amin < bmin
}
