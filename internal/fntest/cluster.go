package fntest

import (
	"path/filepath"

	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Cluster fixtures: what XRs that name an example Cluster read of it, in
// examples/<cloud>/required. Every module's golden test writes the same
// fixtures, from all readers.
const (
	// ClusterFixtureFile is of the namespaced Cluster prod-cluster
	// (examples/<cloud>/cluster.yaml).
	ClusterFixtureFile = "cluster.yaml"
	// LegacyClusterFixtureFile is of the legacy Cluster claim's XCluster
	// (examples/<cloud>/legacy.yaml).
	LegacyClusterFixtureFile = "legacy-cluster.yaml"
)

// ClusterFixture is what XRs that name the example Cluster of a cloud read
// of it: the Cluster XR, and the composed resources of it that the
// readers' cloud implementations read, from the Cluster's observed file,
// labelled as Crossplane labels them: in the Cluster's namespace, or with
// the claim's labels for the legacy Cluster (legacy.yaml).
func ClusterFixture(examples, cloud string, legacy bool, readers ...*clusterref.Reader) ([]Object, error) {
	file := "cluster.yaml"
	if legacy {
		file = "legacy.yaml"
	}
	objs, err := Load(filepath.Join(examples, cloud, file))
	if err != nil {
		return nil, err
	}
	x := objs[0]
	meta := x["metadata"].(map[string]any)
	xlabels, _ := meta["labels"].(map[string]any)
	out := []Object{x}
	observed := ObservedFile(filepath.Join(examples, cloud, "observed", file))
	seen := map[string]bool{}
	for _, r := range readers {
		for _, rd := range r.ReadsOf(cloud) {
			if seen[rd.Resource] {
				continue
			}
			seen[rd.Resource] = true
			o := overlay.DeepCopy(observed[rd.Resource])
			m := o["metadata"].(map[string]any)
			labels := m["labels"].(map[string]any)
			labels[xr.LabelComposite] = meta["name"]
			if legacy {
				labels[xr.LabelClaimName] = xlabels[xr.LabelClaimName]
				labels[xr.LabelClaimNamespace] = xlabels[xr.LabelClaimNamespace]
			} else {
				m["namespace"] = meta["namespace"]
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// Required delivers the Cluster an XR names in spec.parameters.clusterRef,
// and what the reader's cloud reads of it, as Crossplane does once the
// function asked for them, from the cloud's fixture for the XR's scope. It
// is nil for an XR without clusterRef.
func Required(examples, cloud string, x Object, r *clusterref.Reader) (map[string][]Object, error) {
	if x["spec"].(map[string]any)["parameters"].(map[string]any)["clusterRef"] == nil {
		return nil, nil
	}
	file, apiVersion, kind := ClusterFixtureFile, xr.ClusterAPIVersion, xr.ClusterKind
	if x["metadata"].(map[string]any)["namespace"] == nil {
		file, apiVersion, kind = LegacyClusterFixtureFile, xr.LegacyClusterAPIVersion, xr.LegacyClusterKind
	}
	objs, err := Load(filepath.Join(examples, cloud, "required", file))
	if err != nil {
		return nil, err
	}
	reads := map[string]bool{}
	for _, rd := range r.ReadsOf(cloud) {
		reads[rd.Resource] = true
	}
	out := map[string][]Object{}
	for _, o := range objs {
		if o["apiVersion"] == apiVersion && o["kind"] == kind {
			out[r.Requirement] = append(out[r.Requirement], o)
			continue
		}
		if name := xpsim.CompositionResourceName(o); reads[name] {
			out[r.ResourceRequirement(name)] = append(out[r.ResourceRequirement(name)], o)
		}
	}
	return out, nil
}

// WriteClusterFixtures writes both Cluster fixtures of a cloud from all
// readers.
func WriteClusterFixtures(examples, cloud string, readers ...*clusterref.Reader) error {
	for file, legacy := range map[string]bool{ClusterFixtureFile: false, LegacyClusterFixtureFile: true} {
		fixture, err := ClusterFixture(examples, cloud, legacy, readers...)
		if err != nil {
			return err
		}
		b, err := xpsim.YAMLList(fixture)
		if err != nil {
			return err
		}
		if _, err := Golden(filepath.Join(examples, cloud, "required", file), b, true); err != nil {
			return err
		}
	}
	return nil
}
