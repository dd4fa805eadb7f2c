package xr

import (
	"fmt"
	"maps"
	"slices"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The original platform's claim put the cluster's location and node pools
// under spec.forProvider, in GKE's words:
//
//	spec:
//	  forProvider:
//	    location: us-central1
//	    pools:
//	      default:
//	        autoscaling: {minNodeCount: 3, maxNodeCount: 10}
//	        nodeConfig: {machineType: e2-standard-4}
//
// A Cluster XR in that shape renders the same platform as its modern form:
// those fields are read under their new names, each reported once in a
// Warning, and never merged into the managed cluster's forProvider.
var (
	fieldsCompatPool        = []string{"autoscaling", "nodeConfig"}
	fieldsCompatAutoscaling = []string{"minNodeCount", "maxNodeCount"}
	fieldsCompatNodeConfig  = []string{"machineType", "diskSizeGb", "spot", "labels"}
)

// A Renamed field of the original platform, read under its new name.
type Renamed struct {
	Old, New string
}

// Warning says which old field was read as which new one.
func (r Renamed) Warning() string {
	return fmt.Sprintf("%s is the original platform's field; it is read as %s: move it there", r.Old, r.New)
}

// compat moves the original platform's spec.forProvider.location and
// spec.forProvider.pools of a Cluster into its parameters, recording each
// old field in x.Renamed. A field set both ways to different values is an
// error naming both; so is an unknown key of an old pool (nothing is
// silently dropped).
func (d *decoder) compat(x *Cluster, spec map[string]*structpb.Value) {
	fp := field.NewPath("spec", "forProvider")
	f := d.object(spec["forProvider"], fp)
	if v, ok := f["location"]; ok {
		p := fp.Child("location")
		loc := d.str(v, p)
		switch {
		case x.Parameters.Location == "":
			x.Parameters.Location = loc
		case x.Parameters.Location != loc:
			d.errs = append(d.errs, field.Invalid(p, loc, fmt.Sprintf("differs from spec.parameters.location (%q); the original platform's field is read as that one: remove it", x.Parameters.Location)))
		}
		x.Renamed = append(x.Renamed, Renamed{Old: p.String(), New: ParametersPath("location").String()})
		delete(x.ForProvider, "location")
	}
	v, ok := f["pools"]
	if !ok {
		return
	}
	delete(x.ForProvider, "pools")
	pp := fp.Child("pools")
	if len(x.Parameters.Pools) > 0 {
		d.errs = append(d.errs, field.Forbidden(pp, "spec.parameters.pools is set too; the original platform's pools are read as spec.parameters.pools: keep one of them"))
		return
	}
	pools := d.object(v, pp)
	if len(pools) > MaxPools {
		d.errs = append(d.errs, field.TooMany(pp, len(pools), MaxPools))
		return
	}
	for _, k := range slices.Sorted(maps.Keys(pools)) {
		x.Parameters.Pools = append(x.Parameters.Pools, d.compatPool(k, pools[k], pp.Key(k), &x.Renamed))
	}
}

// compatPool reads one pool of the original shape.
func (d *decoder) compatPool(key string, v *structpb.Value, p *field.Path, renamed *[]Renamed) Pool {
	pool := Pool{Key: key, Name: NormalisePoolName(key)}
	np := ParametersPath("pools").Key(key)
	f := d.fields(v, p, fieldsCompatPool...)
	ap, cp := p.Child("autoscaling"), p.Child("nodeConfig")
	af := d.fields(f["autoscaling"], ap, fieldsCompatAutoscaling...)
	cf := d.fields(f["nodeConfig"], cp, fieldsCompatNodeConfig...)
	for _, m := range []struct {
		from *structpb.Value
		old  *field.Path
		new  string
		into func(*structpb.Value, *field.Path)
	}{
		{af["minNodeCount"], ap.Child("minNodeCount"), "minNodes", func(v *structpb.Value, p *field.Path) { pool.MinNodes = d.integer(v, p) }},
		{af["maxNodeCount"], ap.Child("maxNodeCount"), "maxNodes", func(v *structpb.Value, p *field.Path) { pool.MaxNodes = d.integer(v, p) }},
		{cf["machineType"], cp.Child("machineType"), "machineType", func(v *structpb.Value, p *field.Path) { pool.MachineType = d.str(v, p) }},
		{cf["diskSizeGb"], cp.Child("diskSizeGb"), "diskSizeGb", func(v *structpb.Value, p *field.Path) { pool.DiskSizeGB = d.integer(v, p) }},
		{cf["spot"], cp.Child("spot"), "spot", func(v *structpb.Value, p *field.Path) {
			if b := d.boolean(v, p); b != nil {
				pool.Spot = *b
			}
		}},
		{cf["labels"], cp.Child("labels"), "labels", func(v *structpb.Value, p *field.Path) { pool.Labels = d.stringMap(v, p) }},
	} {
		if m.from == nil {
			continue
		}
		m.into(m.from, m.old)
		*renamed = append(*renamed, Renamed{Old: m.old.String(), New: np.Child(m.new).String()})
	}
	return pool
}
