package lifecycle

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// FuzzNext plays an owner, a cloud and the function against each other: the
// owner asks for any version from 1.29 to 1.37, the cloud reports what it
// was asked for whenever it likes (a version step takes any time), refuses
// what a cloud refuses (a skipped minor, a downgrade, a pool ahead of the
// control plane, EKS's control plane upgrade while a pool lags), and on a
// release channel moves the control plane on its own; now and then the
// control plane's status is lost; the function's decisions are applied as
// the resources' new asks. After every decision
// it checks, from the simulated cloud alone: the control plane is never
// asked for a skip or a downgrade (but for repeating a release channel's
// own minimum), a step under way is never taken back, no pool is asked for more than the control plane runs or
// less than it runs, at most Parallel pools move at a time, the control
// plane moves only once every pool runs its minor, and a target below what
// runs is refused unless the cloud put it there.
func FuzzNext(f *testing.F) {
	f.Add(uint8(0), uint8(2), []byte{0, 5, 1, 0, 2, 0, 2, 1, 1, 0, 2, 0, 2, 1})
	f.Add(uint8(1), uint8(3), []byte{0, 7, 1, 0, 3, 0, 1, 0, 2, 2, 0, 1, 1, 0})
	f.Add(uint8(0), uint8(1), []byte{0, 2, 0, 6, 1, 0, 2, 0, 1, 0, 2, 0, 1, 0, 2, 0})
	f.Fuzz(func(t *testing.T, mode, npools uint8, ops []byte) {
		if len(ops) > 200 {
			return
		}
		auto := mode%2 == 1
		n := int(npools%4) + 1
		pol := Policy{Window: Window{Min: v("1.30"), Max: v("1.36")}, Parallel: int(mode/2%3) + 1, AutoUpgrade: auto}
		minor := func(m int) Minor { return Minor{Major: 1, Minor: m} }

		// The cloud: what runs and what each resource asks for.
		cp, cpAsked := 33, 33
		running, asked := make([]int, n), make([]int, n)
		for i := range running {
			running[i], asked[i] = 33, 33
		}
		target := 33
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%6, int(ops[i+1])
			lost := false
			switch op {
			case 0:
				target = 29 + arg%9
			case 1:
				// The cloud carries out the control plane's ask, if it can.
				lagging := false
				for _, r := range running {
					lagging = lagging || r < cp
				}
				if cpAsked == cp+1 && (!lagging || auto) {
					cp = cpAsked
				}
			case 2:
				p := arg % n
				if auto && running[p] < cp {
					running[p]++ // the channel's node auto-upgrade
				} else if !auto && asked[p] <= cp && asked[p] >= running[p] {
					running[p] = asked[p]
				}
			case 3:
				if auto && cp < 36 {
					cp++ // the release channel moves the master on its own
				}
			case 4:
				// Nothing reported this time.
			case 5:
				// The control plane's status is lost for this call.
				lost = true
			}

			obs := Observed{Exists: true, ControlPlane: minor(cp), Asked: minor(cpAsked)}
			if lost {
				obs.ControlPlane = Minor{}
			}
			for p := range running {
				obs.Pools = append(obs.Pools, Pool{Name: fmt.Sprintf("p%d", p), Running: minor(running[p]), Asked: minor(asked[p])})
			}
			plan, err := Next(minor(target), obs, pol, field.NewPath("spec", "parameters", "version"))
			where := fmt.Sprintf("op %d: target 1.%d, control plane 1.%d (asked 1.%d), pools %v (asked %v)", i/2, target, cp, cpAsked, running, asked)

			downgrade := target < cp && target < cpAsked
			outside := target < 30 || target > 36
			if lost {
				// Nothing is decided while nothing is known.
				downgrade, outside = false, false
			}
			if (downgrade || outside) != (err != nil) {
				t.Fatalf("%s: error %v, want one: %t", where, err, downgrade || outside)
			}
			if err != nil {
				continue
			}
			c := plan.ControlPlane.Minor
			if c > cp+1 {
				t.Fatalf("%s: control plane asked for 1.%d, a skip", where, c)
			}
			if c < cp && (!auto || c != cpAsked) {
				t.Fatalf("%s: control plane asked for 1.%d, a downgrade", where, c)
			}
			if c == cp+1 {
				for p, r := range running {
					if r < cp {
						t.Fatalf("%s: control plane moves while pool %d runs 1.%d", where, p, r)
					}
				}
			}
			moving := 0
			for p := range running {
				got := plan.Pools[fmt.Sprintf("p%d", p)]
				if auto {
					if !got.IsZero() {
						t.Fatalf("%s: pool %d asked for %s on a release channel", where, p, got)
					}
					continue
				}
				if got.Minor > cp {
					t.Fatalf("%s: pool %d asked for 1.%d, ahead of the control plane's 1.%d", where, p, got.Minor, cp)
				}
				if got.Minor < running[p] {
					t.Fatalf("%s: pool %d asked for 1.%d, below the 1.%d it runs", where, p, got.Minor, running[p])
				}
				if got.Minor > running[p] {
					moving++
				}
			}
			if moving > pol.Parallel {
				t.Fatalf("%s: %d pools move at once, more than %d", where, moving, pol.Parallel)
			}
			if cpAsked == cp+1 && c < cpAsked {
				t.Fatalf("%s: the control plane moving to 1.%d is asked for 1.%d: a step under way taken back", where, cpAsked, c)
			}
			// The function's asks become the resources'.
			cpAsked = c
			if !auto {
				for p := range asked {
					asked[p] = plan.Pools[fmt.Sprintf("p%d", p)].Minor
				}
			}
		}
	})
}
