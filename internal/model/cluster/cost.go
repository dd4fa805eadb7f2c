package cluster

import (
	"fmt"
	"math"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Estimate is a monthly cost estimate in USD: the control plane plus every
// pool at its minimum and at its maximum size, in every zone it spans, and
// the nodes the cloud composes with the cluster (AKS's system pool).
type Estimate struct {
	Min float64
	Max float64
	// Unpriced lists the machine types the price table lacks.
	Unpriced []string
}

// Estimate prices the plan from environment key prices: hoursPerMonth
// (default 730), controlPlanePerHour, machineTypes.<type> (USD per node
// hour) and spotMachineTypes.<type> (the same for spot nodes; a spot pool
// without one is priced on demand, and the key is named in a Warning). A
// missing price is named in a Warning; with budget enforcement enabled it is
// an error, because the function would otherwise enforce a budget against a
// figure it made up.
func (p *Plan) Estimate(env *envcfg.Env) (Estimate, field.ErrorList) {
	var e Estimate
	var errs field.ErrorList
	hours := env.Shared().HoursPerMonth()
	prices := SettingsOf(env).Prices
	cp := envcfg.Or(prices.ControlPlanePerHour, 0)
	if prices.ControlPlanePerHour == nil {
		env.Need("prices", "controlPlanePerHour")
	}
	e.Min, e.Max = cp*hours, cp*hours
	seen := map[string]bool{}
	pools := slices.Clone(p.Pools)
	if p.traits.FixedPools != nil {
		pools = append(pools, p.traits.FixedPools(env)...)
	}
	zones := int64(1)
	if p.traits.PoolZones != nil {
		zones = p.traits.PoolZones(p.Cluster.Location)
	}
	for _, pool := range pools {
		price, ok := prices.MachineTypes[pool.MachineType]
		if spot, ok := prices.SpotMachineTypes[pool.MachineType]; ok && pool.Spot {
			price = spot
		} else if pool.Spot {
			env.Need("prices", "spotMachineTypes", pool.MachineType)
		}
		if !ok {
			if !seen[pool.MachineType] {
				seen[pool.MachineType] = true
				e.Unpriced = append(e.Unpriced, pool.MachineType)
				env.Need("prices", "machineTypes", pool.MachineType)
				if p.BudgetEnforcement == xr.EnforcementEnabled && p.Budget != nil {
					errs = append(errs, field.Required(field.NewPath("environment", "prices", "machineTypes").Key(pool.MachineType),
						fmt.Sprintf("pool %q uses machine type %s, which has no price; budget enforcement needs a price for every machine type", pool.Key, pool.MachineType)))
				}
			}
			continue
		}
		n := zones
		if pool.Fixed {
			n = 1
		}
		e.Min += price * float64(pool.MinNodes*n) * hours
		e.Max += price * float64(pool.MaxNodes*n) * hours
	}
	e.Min, e.Max = math.Round(e.Min*100)/100, math.Round(e.Max*100)/100
	return e, errs
}

// Pause holds every pool at its floor, its minimum size, while the budget
// is exhausted: the autoscaler can no longer grow it.
func (p *Plan) Pause() {
	for _, pool := range p.Pools {
		floor := pool.MinNodes
		pool.Floor = &floor
		p.Replace(pool)
	}
}
