package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// deleteBound is how long an XR's deletion may take until everything it
// composed is gone.
const deleteBound = 3 * time.Minute

// deleteXR deletes an XR and waits, within deleteBound, until it and
// everything it composed are gone, and nothing labelled with it is left on
// a finalizer; it checks the order they went in (deletionOrder) and
// returns the line that says how long it took, what the simulated cloud
// refused meanwhile and the order.
func (s *scenarios) deleteXR(example, apiVersion, kind, ns, name string, composed map[string]composedRef) (line, summary string, err error) {
	// What a pool's removal or a spec change removed is gone already.
	snap := map[string]object{}
	for crname, r := range maps.Clone(composed) {
		o, err := s.k.get(r.apiVersion, r.kind, ns, r.name)
		if errors.Is(err, errNotFound) {
			delete(composed, crname)
			continue
		}
		if err != nil {
			return "", "", fmt.Errorf("composed %s (%s %s) before the delete: %w", crname, r.kind, r.name, err)
		}
		snap[crname] = o
	}
	// Nothing an earlier delete left in the cloud may be in the way of
	// this one: the cloud would refuse it for good (a range left in a
	// network keeps the network), and only an operator could finish it.
	if in := s.c.abandonedReferencing(slices.Collect(maps.Values(snap))); len(in) > 0 {
		var what []string
		for _, o := range in {
			what = append(what, fmt.Sprintf("%s %s (of %s)", o["kind"], extName(o), str(o, "metadata", "labels", xr.LabelComposite)))
		}
		return "", "", fmt.Errorf("%s: left in the cloud by earlier deletes, in the way of this one, which the cloud would refuse for good: %s", example, strings.Join(what, ", "))
	}
	inPlace, err := s.usagesInPlace(snap, composed, ns)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", example, err)
	}
	before := s.c.del.tally()
	if err := s.k.delete(apiVersion, kind, ns, name); err != nil {
		return "", "", err
	}
	// Each poll round checks every composed resource that is left; what
	// it finds gone is recorded at the round's start, so that of two
	// resources gone in order the first is never recorded later.
	start := time.Now()
	goneAt := map[string]time.Duration{}
	for {
		round := time.Since(start)
		var left []string
		for crname, r := range composed {
			if _, ok := goneAt[crname]; ok {
				continue
			}
			if _, err := s.k.get(r.apiVersion, r.kind, ns, r.name); errors.Is(err, errNotFound) {
				goneAt[crname] = round
				continue
			}
			left = append(left, crname)
		}
		_, err := s.k.get(apiVersion, kind, ns, name)
		// Once they are, nothing labelled with the XR may be left: what
		// nested XRs composed goes after them.
		var stuck error
		if len(left) == 0 && errors.Is(err, errNotFound) {
			if stuck = s.leftovers(name, ns, false); stuck == nil {
				break
			}
		}
		if time.Since(start) > deleteBound {
			if stuck != nil {
				return "", "", fmt.Errorf("%s not deleted within %s: %w", example, deleteBound, s.leftovers(name, ns, true))
			}
			return "", "", fmt.Errorf("%s not deleted within %s: the XR gone: %t; %d composed resources left: %s", example, deleteBound, errors.Is(err, errNotFound), len(left), s.why(composed, left, ns))
		}
		time.Sleep(250 * time.Millisecond)
	}
	took := time.Since(start)
	if err := s.othersUsed(snap, ns); err != nil {
		return "", "", fmt.Errorf("%s: %w", example, err)
	}
	t := s.c.del.tally().since(before)
	if len(t.stuck) > 0 || len(t.protected) > 0 {
		return "", "", fmt.Errorf("%s: deletes failed for good meanwhile (%s), or were refused for deletion protection (%s)", example, counts(t.stuck), counts(t.protected))
	}
	s.refused[cloudOf(example)] += total(t.refused)
	order, err := deletionOrder(cloudOf(example), snap, goneAt)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", example, err)
	}
	line = fmt.Sprintf("deleted, all %d composed resources gone in %.1f s (bound %s); %s%s", len(composed), took.Seconds(), deleteBound, inPlace, t)
	if order != "" {
		line += "; " + order
	}
	return line, fmt.Sprintf("deleted in %5.1f s; %s", took.Seconds(), t), nil
}

// usagesInPlace waits until every Usage among the XR's composed resources
// is Ready and what it protects carries the label crossplane.io/in-use,
// without which Crossplane's webhook is not asked about its deletion; and
// says how long that took when it was not so at once (a Usage composed a
// moment ago, or one whose predecessor's removal took the label). It
// updates snap with what it read.
func (s *scenarios) usagesInPlace(snap map[string]object, composed map[string]composedRef, ns string) (string, error) {
	var missing, first []string
	took, err := s.waitFor("every Usage in place before the delete", func() (bool, error) {
		missing = missing[:0]
		for _, uName := range slices.Sorted(maps.Keys(snap)) {
			u := snap[uName]
			if u["kind"] != "Usage" && u["kind"] != "ClusterUsage" {
				continue
			}
			ofEnd, _ := at(u, "spec", "of").(map[string]any)
			of := usageEnd(snap, ofEnd)
			if of == "" {
				continue
			}
			ur, or := composed[uName], composed[of]
			lu, err := s.k.get(ur.apiVersion, ur.kind, ns, ur.name)
			if err != nil {
				return false, err
			}
			lo, err := s.k.get(or.apiVersion, or.kind, ns, or.name)
			if err != nil {
				return false, err
			}
			snap[uName], snap[of] = lu, lo
			if st, _, _ := condition(lu, "Ready"); st != "True" || str(lo, "metadata", "labels", "crossplane.io/in-use") != "true" {
				missing = append(missing, fmt.Sprintf("%s (Ready %s, %s in use %q)", uName, st, of, str(lo, "metadata", "labels", "crossplane.io/in-use")))
			}
		}
		if first == nil && len(missing) > 0 {
			first = slices.Clone(missing)
		}
		return len(missing) == 0, errors.New(strings.Join(missing, "; "))
	})
	if err != nil {
		return "", err
	}
	if first == nil {
		return "", nil
	}
	return fmt.Sprintf("Usages in place only %.1f s after the last change (at first: %s); ", took.Seconds(), strings.Join(first, "; ")), nil
}

// othersUsed checks that what the XR's Usages held of other XRs (a
// Database's instance, its Cluster's private services connection) is still
// there once the XR is gone: a Usage keeps what it protects, it never
// takes it along.
func (s *scenarios) othersUsed(snap map[string]object, ns string) error {
	for _, uName := range slices.Sorted(maps.Keys(snap)) {
		u := snap[uName]
		if u["kind"] != "Usage" && u["kind"] != "ClusterUsage" {
			continue
		}
		of, _ := at(u, "spec", "of").(map[string]any)
		if own, _ := at(of, "resourceSelector", "matchControllerRef").(bool); own {
			continue
		}
		ml, _ := at(of, "resourceSelector", "matchLabels").(map[string]any)
		var sel []string
		for _, k := range slices.Sorted(maps.Keys(ml)) {
			sel = append(sel, fmt.Sprintf("%s=%v", k, ml[k]))
		}
		items, err := s.k.list(of["apiVersion"].(string), of["kind"].(string), ns, strings.Join(sel, ","))
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return fmt.Errorf("usage %s held a %s of another XR (%s), which is gone with this XR", uName, of["kind"], strings.Join(sel, ","))
		}
	}
	return nil
}

// why describes the composed resources left: their finalizers and why
// their provider says they are not deleted.
func (s *scenarios) why(composed map[string]composedRef, left []string, ns string) string {
	slices.Sort(left)
	var out []string
	for _, crname := range left {
		r := composed[crname]
		o, err := s.k.get(r.apiVersion, r.kind, ns, r.name)
		if err != nil {
			out = append(out, fmt.Sprintf("%s (%s): %v", crname, r.kind, err))
			continue
		}
		_, _, msg := condition(o, "Synced")
		out = append(out, fmt.Sprintf("%s (%s %s, deleting: %t, finalizers %v, in use: %s): %s", crname, r.kind, r.name,
			str(o, "metadata", "deletionTimestamp") != "", at(o, "metadata", "finalizers"), str(o, "metadata", "labels", "crossplane.io/in-use"), msg))
	}
	return strings.Join(out, "; ")
}

// leftovers fails when anything labelled with the XR as its composite is
// left: a managed resource, a ProviderConfig, an Object or a Usage, of a
// nested XR too, on a finalizer; all, or the first kind found.
func (s *scenarios) leftovers(name, ns string, all bool) error {
	kinds := slices.Clone(s.c.kinds)
	for _, kr := range s.c.pcKinds {
		kinds = append(kinds, kr)
	}
	kinds = append(kinds, kindRef{"kubernetes.m.crossplane.io/v1alpha1", "Object"}, kindRef{"kubernetes.crossplane.io/v1alpha2", "Object"},
		kindRef{"kubernetes.m.crossplane.io/v1alpha1", "ProviderConfig"}, kindRef{"kubernetes.crossplane.io/v1alpha1", "ProviderConfig"},
		kindRef{"protection.crossplane.io/v1beta1", "Usage"}, kindRef{"protection.crossplane.io/v1beta1", "ClusterUsage"})
	var left []string
	for _, kr := range kinds {
		if strings.Contains(kr.apiVersion, ".m.") != (ns != "") && !strings.HasPrefix(kr.apiVersion, "protection.") {
			continue
		}
		items, err := s.k.list(kr.apiVersion, kr.kind, ns, xr.LabelComposite+"="+name)
		if err != nil {
			return err
		}
		for _, o := range items {
			_, _, msg := condition(o, "Synced")
			left = append(left, fmt.Sprintf("%s %s (of %s; finalizers %v): %s", kr.kind, str(o, "metadata", "name"), str(o, "metadata", "annotations", "crossplane.io/composition-resource-name"), at(o, "metadata", "finalizers"), msg))
		}
		if len(left) > 0 && !all {
			// One is enough to wait on.
			break
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("left behind: %s", strings.Join(left, ", "))
	}
	return nil
}

// roleNames name the deletion roles.
var roleNames = []struct {
	r    registry.DeletionRole
	name string
}{{registry.Access, "Access"}, {registry.Credentials, "Credentials"}, {registry.Compute, "Compute"}, {registry.ComputeIdentity, "ComputeIdentity"}, {registry.Database, "Database"}, {registry.Peering, "Peering"}}

// roleName names a set of deletion roles.
func roleName(r registry.DeletionRole) string {
	var out []string
	for _, n := range roleNames {
		if r&n.r != 0 {
			out = append(out, n.name)
		}
	}
	return strings.Join(out, "+")
}

// usageRule names the rule of registry.UsageRules by which a composed
// resource uses another.
func usageRule(cloudName string, by, of object) string {
	c, ok := registry.Lookup(cloudName)
	if !ok {
		return "unlisted"
	}
	kb, ok1 := c.KindOf(by["apiVersion"].(string), by["kind"].(string))
	ko, ok2 := c.KindOf(of["apiVersion"].(string), of["kind"].(string))
	if !ok1 || !ok2 {
		return "unlisted"
	}
	r, ok := registry.NeedsUsage(kb, ko)
	if !ok {
		return "no rule"
	}
	return roleName(r.By) + " holds " + roleName(r.Of)
}

// usageEnd finds the composed resource a Usage's by or of names, by
// resource reference or selector, by composition-resource name.
func usageEnd(snap map[string]object, end map[string]any) string {
	av, _ := end["apiVersion"].(string)
	kind, _ := end["kind"].(string)
	name, _ := at(end, "resourceRef", "name").(string)
	ml, _ := at(end, "resourceSelector", "matchLabels").(map[string]any)
	for crname, o := range snap {
		if o["apiVersion"] != av || o["kind"] != kind {
			continue
		}
		if name != "" && str(o, "metadata", "name") == name {
			return crname
		}
		if name == "" && len(ml) > 0 {
			labels, _ := at(o, "metadata", "labels").(map[string]any)
			all := true
			for k, v := range ml {
				all = all && labels[k] == v
			}
			if all {
				return crname
			}
		}
	}
	return ""
}

// deletionOrder checks, from when each composed resource was found gone,
// what guarantees the order of deletion now: every managed resource of
// provider-kubernetes, provider-helm or provider-sql gone before the
// ProviderConfig it was reached through (the providers hold a
// ProviderConfig while resources use it); and every Usage's user gone no
// later than what it uses (the edges of registry.UsageRules, enforced by
// Crossplane's webhook).
func deletionOrder(cloudName string, snap map[string]object, goneAt map[string]time.Duration) (string, error) {
	var out []string
	for _, pcName := range slices.Sorted(maps.Keys(snap)) {
		pc := snap[pcName]
		if pc["kind"] != "ProviderConfig" && pc["kind"] != "ClusterProviderConfig" {
			continue
		}
		family := cloudOfKey(kindKey(pc["apiVersion"].(string), ""))
		var users []string
		kinds := map[string]bool{}
		for crname, o := range snap {
			ref := str(o, "spec", "providerConfigRef", "kind")
			if ref == "" {
				ref = "ProviderConfig"
			}
			if o["kind"] == pc["kind"] || cloudOfKey(kindKey(o["apiVersion"].(string), "")) != family ||
				ref != pc["kind"] || str(o, "spec", "providerConfigRef", "name") != str(pc, "metadata", "name") {
				continue
			}
			users = append(users, crname)
			kinds[o["kind"].(string)] = true
		}
		if len(users) == 0 {
			continue
		}
		var last time.Duration
		for _, u := range users {
			if goneAt[u] > goneAt[pcName] {
				return "", fmt.Errorf("%s (%s) went at %.1f s, after its ProviderConfig %s at %.1f s", u, snap[u]["kind"], goneAt[u].Seconds(), pcName, goneAt[pcName].Seconds())
			}
			last = max(last, goneAt[u])
		}
		what := "resources"
		if len(kinds) == 1 {
			what = slices.Collect(maps.Keys(kinds))[0] + "s"
		}
		out = append(out, fmt.Sprintf("%d %s gone by %.1f s, their %s ProviderConfig at %.1f s", len(users), what, last.Seconds(), family, goneAt[pcName].Seconds()))
	}
	type edges struct {
		n        int
		min, max time.Duration
	}
	rules := map[string]*edges{}
	across := map[string]int{}
	for _, uName := range slices.Sorted(maps.Keys(snap)) {
		u := snap[uName]
		if u["kind"] != "Usage" && u["kind"] != "ClusterUsage" {
			continue
		}
		byEnd, _ := at(u, "spec", "by").(map[string]any)
		ofEnd, _ := at(u, "spec", "of").(map[string]any)
		by, of := usageEnd(snap, byEnd), usageEnd(snap, ofEnd)
		if own, _ := at(ofEnd, "resourceSelector", "matchControllerRef").(bool); by != "" && !own {
			// What it uses is another XR's (a Database's instance holds
			// its Cluster's private services connection), which outlives
			// this delete: the Usage orders that XR's delete, not this one.
			across[usageRule(cloudName, snap[by], object(ofEnd))]++
			continue
		}
		if by == "" || of == "" {
			return "", fmt.Errorf("usage %s: cannot find its user (%q) or what it uses (%q) among the composed resources", uName, by, of)
		}
		if goneAt[by] > goneAt[of] {
			return "", fmt.Errorf("usage %s did not hold: %s went at %.1f s, after %s it uses at %.1f s (before the delete the Usage was Ready and %s labelled in use)", uName, by, goneAt[by].Seconds(), of, goneAt[of].Seconds(), of)
		}
		rule := usageRule(cloudName, snap[by], snap[of])
		gap := goneAt[of] - goneAt[by]
		e, ok := rules[rule]
		if !ok {
			e = &edges{min: gap, max: gap}
			rules[rule] = e
		}
		e.n++
		e.min, e.max = min(e.min, gap), max(e.max, gap)
	}
	var held []string
	for _, rule := range slices.Sorted(maps.Keys(rules)) {
		e := rules[rule]
		held = append(held, fmt.Sprintf("%s %d (what each uses gone %.1f to %.1f s after it)", rule, e.n, e.min.Seconds(), e.max.Seconds()))
	}
	if len(held) > 0 {
		out = append(out, "Usages held: "+strings.Join(held, ", "))
	}
	var others []string
	for _, rule := range slices.Sorted(maps.Keys(across)) {
		others = append(others, fmt.Sprintf("%s %d", rule, across[rule]))
	}
	if len(others) > 0 {
		out = append(out, "Usages of other XRs' resources, which stayed: "+strings.Join(others, ", "))
	}
	return strings.Join(out, "; "), nil
}
