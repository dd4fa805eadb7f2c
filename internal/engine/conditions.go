package engine

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
)

// Condition reasons.
const (
	ReasonAvailable      = "Available"
	ReasonCreating       = "Creating"
	ReasonWaiting        = "Waiting"
	ReasonReconcileError = "ReconcileError"
	ReasonNotRequested   = "NotRequested"
	ReasonNothingHeld    = "NothingHeld"
	ReasonAwaitingOwner  = "AwaitingOwner"
	// ReasonInUseElsewhere is RemovalsSettled's reason while everything
	// held waits only for another XR to stop using it: there is nothing
	// for this XR's owner to confirm.
	ReasonInUseElsewhere = "InUseElsewhere"
)

// ConditionRemovalsSettled is False while composed resources that are no
// longer rendered are held because the XR's spec did not remove them.
const ConditionRemovalsSettled = "RemovalsSettled"

// Conditions derives the XR's conditions from the readiness of the
// resources of each group: types in order, each the condition its
// components report into. notRequested explains an empty group.
func (st *State) Conditions(types []string, notRequested map[string]string) []response.Condition {
	out := make([]response.Condition, 0, len(types))
	for _, typ := range types {
		var members, synced, held, creating []string
		for _, rd := range st.rendered {
			if rd.Condition != typ || rd.Retire != "" {
				continue
			}
			members = append(members, rd.Name)
			if why, ok := st.held[rd.Name]; ok {
				held = append(held, rd.Name+" "+why)
				continue
			}
			if c, ok := object.FindCondition(st.observed[rd.Name], "Synced"); ok && c.Status == "False" {
				synced = append(synced, fmt.Sprintf("%s: %s", rd.Name, cmp.Or(c.Message, c.Reason)))
			}
			if !st.ready[rd.Name] {
				creating = append(creating, rd.Name)
			}
		}
		c := response.Condition{Type: typ, Status: response.StatusFalse}
		switch {
		case len(members) == 0:
			c.Status, c.Reason = response.StatusTrue, ReasonNotRequested
			c.Message = cmp.Or(notRequested[typ], "Nothing to compose")
		case len(synced) > 0:
			c.Reason, c.Message = ReasonReconcileError, "The provider cannot reconcile "+List(synced)
		case len(held) > 0:
			c.Reason, c.Message = ReasonWaiting, "Not composed yet: "+List(held)
		case len(creating) > 0:
			c.Reason, c.Message = ReasonCreating, "Not ready yet: "+List(creating)
		default:
			c.Status, c.Reason = response.StatusTrue, ReasonAvailable
			c.Message = fmt.Sprintf("All %d composed resources are ready", len(members))
			if len(members) == 1 {
				c.Message = "The composed resource " + members[0] + " is ready"
			}
		}
		out = append(out, c)
	}
	return out
}

// RemovalsCondition reports the composed resources held because no
// statement of the XR's spec removed them, or because another XR still uses
// them, each with what stopped rendering it and how the XR's owner confirms
// its removal (AwaitingOwner), or what it waits for when every one of them
// only waits for another XR (InUseElsewhere).
func (st *State) RemovalsCondition() response.Condition {
	held := st.heldNames()
	if len(held) == 0 {
		return response.Condition{Type: ConditionRemovalsSettled, Status: response.StatusTrue, Reason: ReasonNothingHeld,
			Message: "Every composed resource is rendered, or was removed by the XR's spec"}
	}
	items := make([]string, 0, len(held))
	reason := ReasonInUseElsewhere
	for _, name := range held {
		items = append(items, fmt.Sprintf("%s (%s; %s)", name, st.kept[name].Why, howToConfirm(name, st.kept[name])))
		if !st.kept[name].InUse {
			reason = ReasonAwaitingOwner
		}
	}
	return response.Condition{Type: ConditionRemovalsSettled, Status: response.StatusFalse, Reason: reason,
		Message: "Kept although no longer rendered: " + List(items)}
}

// Rendering reports whether the condition group has rendered resources.
func (st *State) Rendering(condition string) bool {
	for _, rd := range st.rendered {
		if rd.Condition == condition {
			return true
		}
	}
	return false
}

// howToConfirm says how the XR's owner removes a held resource.
func howToConfirm(name string, r component.Removal) string {
	if r.InUse {
		return "it goes once nothing uses it: delete what uses it first (the XR whose Usage holds it), or undo the change that removed it"
	}
	how := fmt.Sprintf("to remove it, list %q in spec.parameters.confirmRemovals", name)
	if r.Confirm != "" {
		how = "to remove it, " + r.Confirm + fmt.Sprintf(", or list %q in spec.parameters.confirmRemovals", name)
	}
	return how
}

// List joins the first few items of a list for a message.
func List(items []string) string {
	const most = 4
	if len(items) <= most {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:most], "; "), len(items)-most)
}
