package rollout

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// A Ruling is the fleet controller's decision for one gated Cluster
// (package fleet): Decide's verdict against the whole fleet, with a clock
// for the waves' soaks, written to a ConfigMap the Cluster requires by
// name (RulingName) in the platform's namespace (Settings.Namespace). A
// Cluster that waits reads one small object, whatever the fleet's size;
// the controller rewrites it only when the Cluster's own decision changes,
// and Crossplane v2.4 re-runs the Cluster then (it watches the resources a
// function requires). No tenant writes the platform's namespace, so no
// tenant can forge one.
type Ruling struct {
	// Cluster is the Cluster it rules on.
	Cluster Ref
	// Wave is the wave the controller counts the Cluster in.
	Wave string
	// Target is what the Cluster asked for when the controller ruled
	// (Target.String()): a ruling on another target says nothing of this
	// one.
	Target string
	// Verdict is the decision: Adopt, Keep, Hold, Halt or Approval.
	Verdict Verdict
	// Message says it in a sentence that changes only with the decision.
	Message string
	// Failed is the Cluster that halts it, when Verdict is Halt and the
	// Cluster's owner may see it.
	Failed *Member
	// Until is when the soak that holds it ends; zero when none does.
	Until time.Time
}

// A Ref names a Cluster XR: Kind is Cluster (namespaced) or XCluster
// (legacy, cluster-scoped, Namespace empty).
type Ref struct {
	Kind, Namespace, Name string
}

// String is the Ref as a Ruling's data names it: "Cluster team-a/prod",
// "XCluster prod-x7k2q".
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// The object a Ruling is written to, and the label the controller finds its
// own by.
const (
	RulingAPIVersion = "v1"
	RulingKind       = "ConfigMap"
	// LabelRuling marks a ConfigMap the fleet controller wrote; its value
	// is "true".
	LabelRuling = "platform.example.org/rollout-ruling"
)

// maxName is the longest object name: a DNS subdomain.
const maxName = 253

// RulingName is the name of the ConfigMap that holds the Ruling of the
// Cluster ref: "cluster.<namespace>.<name>" for a namespaced Cluster,
// "xcluster.<name>" for a legacy XCluster (lowercase kind, then the
// namespace, which has no dot, then the name: no two Clusters share one),
// or "h.<sha256 of both>" when that is longer than an object name may be.
func RulingName(ref Ref) string {
	parts := []string{strings.ToLower(ref.Kind)}
	if ref.Namespace != "" {
		parts = append(parts, ref.Namespace)
	}
	name := strings.Join(append(parts, ref.Name), ".")
	if len(name) <= maxName {
		return name
	}
	sum := sha256.Sum256([]byte(ref.String()))
	return "h." + hex.EncodeToString(sum[:20])
}

// RulingOf is the Ruling of decision d for the Cluster ref asking for
// target.
// The failed Cluster's reason is its Why, which does not change while it
// stays failed for the same cause: the ruling is rewritten when the
// decision changes, not when a failed Cluster's message does.
func RulingOf(ref Ref, d Decision) Ruling {
	r := Ruling{Cluster: ref, Wave: d.Wave, Target: d.Target.String(), Verdict: d.Verdict, Message: d.Message, Until: d.Until}
	if d.Failed != nil {
		f := *d.Failed
		f.Reason = f.Why()
		r.Failed = &f
	}
	return r
}

// Keys of a Ruling's ConfigMap data.
const (
	keyCluster  = "cluster"
	keyWave     = "wave"
	keyTarget   = "target"
	keyVerdict  = "verdict"
	keyMessage  = "message"
	keyUntil    = "until"
	keyFailed   = "failed."
	failedName  = keyFailed + "name"
	failedNS    = keyFailed + "namespace"
	failedCloud = keyFailed + "cloud"
	failedWhy   = keyFailed + "reason"
)

// Data is the Ruling as a ConfigMap's data.
func (r Ruling) Data() map[string]string {
	out := map[string]string{
		keyCluster: r.Cluster.String(),
		keyWave:    r.Wave,
		keyTarget:  r.Target,
		keyVerdict: string(r.Verdict),
		keyMessage: r.Message,
	}
	if !r.Until.IsZero() {
		out[keyUntil] = r.Until.UTC().Format(time.RFC3339)
	}
	if f := r.Failed; f != nil {
		out[failedName], out[failedNS], out[failedCloud], out[failedWhy] = f.Name, f.Namespace, f.Cloud, f.Reason
	}
	return out
}

// Object is the Ruling's ConfigMap in namespace, as an unstructured
// object.
func (r Ruling) Object(namespace string) map[string]any {
	data := map[string]any{}
	for k, v := range r.Data() {
		data[k] = v
	}
	return map[string]any{
		"apiVersion": RulingAPIVersion,
		"kind":       RulingKind,
		"metadata": map[string]any{
			"name":      RulingName(r.Cluster),
			"namespace": namespace,
			"labels":    map[string]any{LabelRuling: "true"},
		},
		"data": data,
	}
}

// ReadRuling reads a Ruling from its ConfigMap, as a map (a required
// resource's AsMap, or an unstructured object's Object). It refuses one
// that is not the controller's (no LabelRuling), or whose verdict it does
// not know: a Cluster holds rather than act on what it cannot read.
func ReadRuling(obj map[string]any) (Ruling, error) {
	meta, _ := obj["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	if labels[LabelRuling] != "true" {
		return Ruling{}, fmt.Errorf("it has no label %s=true: the fleet controller did not write it", LabelRuling)
	}
	raw, _ := obj["data"].(map[string]any)
	str := func(k string) string { s, _ := raw[k].(string); return s }
	r := Ruling{Wave: str(keyWave), Target: str(keyTarget), Verdict: Verdict(str(keyVerdict)), Message: str(keyMessage)}
	kind, rest, _ := strings.Cut(str(keyCluster), " ")
	ns, name, ok := strings.Cut(rest, "/")
	if !ok {
		ns, name = "", rest
	}
	r.Cluster = Ref{Kind: kind, Namespace: ns, Name: name}
	switch r.Verdict {
	case Adopt, Keep, Hold, Halt, Approval:
	default:
		return Ruling{}, fmt.Errorf("cannot read its verdict %q: want Adopt, Keep, Hold, Halt or Approval", r.Verdict)
	}
	if r.Target == "" {
		return Ruling{}, errors.New("it names no target")
	}
	if u := str(keyUntil); u != "" {
		t, err := time.Parse(time.RFC3339, u)
		if err != nil {
			return Ruling{}, fmt.Errorf("cannot read its until %q: %w", u, err)
		}
		r.Until = t.UTC()
	}
	if n := str(failedName); n != "" {
		r.Failed = &Member{Name: n, Namespace: str(failedNS), Cloud: str(failedCloud), Reason: str(failedWhy)}
	}
	return r, nil
}
