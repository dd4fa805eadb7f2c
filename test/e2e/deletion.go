package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Deletion as the providers and the clouds carry it out. A provider puts
// its finalizer on every managed resource it reconciles and removes it only
// once the cloud deleted the external resource; the cloud refuses to delete
// what is still in use, and the provider tries again (a requeue) until it
// is not. Crossplane deletes an XR's composed resources all at once (the
// garbage collector does), so the order in which they go is the order the
// clouds, the providers and the Usages impose. The simulator plays the
// clouds' part from deletionRules, the providers' from the finalizers, the
// retries and their hold on their ProviderConfigs. A managed resource
// whose management policies leave out Delete (a legacy deletionPolicy
// Orphan, a Terraform deletion_policy ABANDON) loses its finalizer without
// a call to the cloud: its external resource stays (deletions.kept), and
// still keeps what it is in from being deleted. One with its deletion
// protection on the cloud refuses until it is turned off.

const (
	// managedFinalizer is crossplane-runtime's finalizer on a managed
	// resource.
	managedFinalizer = "finalizer.managedresource.crossplane.io"
	// inUseFinalizer is crossplane-runtime's finalizer on a ProviderConfig,
	// removed once no ProviderConfigUsage (no managed resource) uses it.
	inUseFinalizer = "in-use.crossplane.io"
	// retryMin and retryJitter bound how long a provider waits before it
	// tries a refused delete again: 2 to 5 s.
	retryMin    = 2 * time.Second
	retryJitter = 3 * time.Second
)

// errRefused is a delete the cloud (or provider) refused, to be tried
// again retryMin to retryMin+retryJitter later: the handler retries it
// without printing it.
var errRefused = errors.New("refused")

// objKey names an object for the simulator's maps.
func objKey(o object) string {
	return o["apiVersion"].(string) + "/" + o["kind"].(string) + "/" + str(o, "metadata", "namespace") + "/" + str(o, "metadata", "name")
}

// hasFinalizer reports whether an object carries a finalizer.
func hasFinalizer(o object, f string) bool {
	l, _ := at(o, "metadata", "finalizers").([]any)
	return slices.Contains(l, any(f))
}

// setFinalizer adds or removes a finalizer, conditional on the object's
// resource version, reading it again on a conflict.
func (c *cloud) setFinalizer(o object, f string, add bool) error {
	av, kind, ns, name := o["apiVersion"].(string), o["kind"].(string), str(o, "metadata", "namespace"), str(o, "metadata", "name")
	for range 5 {
		if hasFinalizer(o, f) == add {
			return nil
		}
		l, _ := at(o, "metadata", "finalizers").([]any)
		next := []any{}
		for _, e := range l {
			if e != f {
				next = append(next, e)
			}
		}
		if add {
			next = append(next, f)
		}
		err := c.k.patch(av, kind, ns, name, object{"metadata": map[string]any{"finalizers": next, "resourceVersion": str(o, "metadata", "resourceVersion")}})
		if errors.Is(err, errNotFound) {
			return nil
		}
		if !errors.Is(err, errConflict) {
			return err
		}
		if o, err = c.k.get(av, kind, ns, name); errors.Is(err, errNotFound) {
			return nil
		} else if err != nil {
			return err
		}
	}
	return fmt.Errorf("cannot update the finalizers of %s %s: conflicts", kind, name)
}

// kindsOf are the served managed resource kinds a holder's kind names, in
// the scope of o (namespaced, or cluster-scoped for a legacy XR's).
func (c *cloud) kindsOf(key string, o object) []kindRef {
	namespaced := str(o, "metadata", "namespace") != ""
	var out []kindRef
	for _, kr := range c.kinds {
		if strings.Contains(kr.apiVersion, ".m.") != namespaced {
			continue
		}
		k := kindKey(kr.apiVersion, kr.kind)
		if k == key || (key == "*" && cloudOfKey(k) == cloudOfKey(kindKey(o["apiVersion"].(string), o["kind"].(string)))) {
			out = append(out, kr)
		}
	}
	return out
}

// live lists the managed resources of a kind in o's scope whose external
// resource exists: in the API server (deleting or not), not deleted with
// another, not o.
func (c *cloud) live(key string, o object) ([]object, error) {
	var out []object
	for _, kr := range c.kindsOf(key, o) {
		items, err := c.listObjs(kr.apiVersion, kr.kind, str(o, "metadata", "namespace"), "")
		if err != nil {
			return nil, err
		}
		c.del.mu.Lock()
		for _, it := range items {
			if !c.del.gone[str(it, "metadata", "uid")] && str(it, "metadata", "uid") != str(o, "metadata", "uid") {
				out = append(out, it)
			}
		}
		c.del.mu.Unlock()
	}
	c.del.mu.Lock()
	defer c.del.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(c.del.kept)) {
		it := c.del.kept[k]
		if str(it, "metadata", "namespace") != str(o, "metadata", "namespace") || str(it, "metadata", "uid") == str(o, "metadata", "uid") {
			continue
		}
		ik := kindKey(it["apiVersion"].(string), it["kind"].(string))
		if ik == key || (key == "*" && cloudOfKey(ik) == cloudOfKey(kindKey(o["apiVersion"].(string), o["kind"].(string)))) {
			out = append(out, it)
		}
	}
	return out, nil
}

// extKey names a managed resource's external resource: its kind and
// external name.
func extKey(o object) string {
	return kindKey(o["apiVersion"].(string), o["kind"].(string)) + "/" + extName(o)
}

// extName is a managed resource's external name, or its name.
func extName(o object) string {
	if name := str(o, "metadata", "annotations", "crossplane.io/external-name"); name != "" {
		return name
	}
	return str(o, "metadata", "name")
}

// orphans reports whether deleting a managed resource leaves its external
// resource, as crossplane-runtime and the Terraform providers do: with
// management policies without Delete, a legacy deletionPolicy Orphan, or
// a Terraform deletion_policy ABANDON.
func orphans(o object) bool {
	if mp, ok := at(o, "spec", "managementPolicies").([]any); ok && len(mp) > 0 && !slices.Contains(mp, any("*")) && !slices.Contains(mp, any("Delete")) {
		return true
	}
	return str(o, "spec", "deletionPolicy") == "Orphan" || strings.EqualFold(str(o, "spec", "forProvider", "deletionPolicy"), "ABANDON")
}

// adopt forgets an abandoned external resource that a managed resource
// manages again (another XR composing the same, by external name).
func (c *cloud) adopt(o object) {
	c.del.mu.Lock()
	defer c.del.mu.Unlock()
	delete(c.del.kept, extKey(o))
}

// abandonedReferencing returns the external resources left in the cloud
// that reference any of objs: what keeps them from being deleted.
func (c *cloud) abandonedReferencing(objs []object) []object {
	c.del.mu.Lock()
	defer c.del.mu.Unlock()
	var out []object
	for _, k := range slices.Sorted(maps.Keys(c.del.kept)) {
		if references(c.del.kept[k], objs) {
			out = append(out, c.del.kept[k])
		}
	}
	return out
}

// holding returns a live resource that holds o, by a holder, or nil.
func (c *cloud) holding(o object, h holder) (object, error) {
	holders, err := c.live(h.kind, o)
	if err != nil || len(holders) == 0 {
		return nil, err
	}
	ends := []object{o}
	if h.at != "" {
		ats, err := c.live(h.at, o)
		if err != nil {
			return nil, err
		}
		if ends = referenced(o, ats); len(ends) == 0 {
			return nil, nil
		}
	}
	if h.via != "" {
		vias, err := c.live(h.via, o)
		if err != nil {
			return nil, err
		}
		var mids []object
		for _, v := range vias {
			if references(v, ends) {
				mids = append(mids, v)
			}
		}
		ends = mids
	}
	for _, hd := range holders {
		if references(hd, ends) {
			return hd, nil
		}
	}
	return nil, nil
}

// unmet returns why a resource's deletion fails for good, or "": what it
// needs is gone.
func (c *cloud) unmet(o object, r deletionRule) (string, error) {
	if why, err := c.missing(o, r.needs); why != "" || err != nil {
		return r.fails + " " + why, err
	}
	if r.connects {
		why, err := c.reach(o)
		if why != "" || err != nil {
			return r.fails + ": " + why, err
		}
	}
	return "", nil
}

// missing returns which of what o needs is gone, or "".
func (c *cloud) missing(o object, needs []need) (string, error) {
	for _, n := range needs {
		for _, rf := range refsOf(o) {
			if rf.field != n.field {
				continue
			}
			cands, err := c.live(n.kind, o)
			if err != nil {
				return "", err
			}
			found := false
			for _, cd := range cands {
				found = found || resolves(rf, o, cd)
			}
			if !found {
				return fmt.Sprintf("(the %s its %s selects is gone)", strings.SplitN(n.kind, " ", 2)[1], n.field), nil
			}
		}
	}
	return "", nil
}

// reach returns why a provider-helm or provider-sql resource's provider
// cannot connect, or "": its ProviderConfig is gone, or the Secret of its
// credentials, or what wrote that Secret (a cluster, a token, a server).
func (c *cloud) reach(o object) (string, error) {
	group := strings.Split(o["apiVersion"].(string), "/")[0]
	pcKind := str(o, "spec", "providerConfigRef", "kind")
	if pcKind == "" {
		pcKind = "ProviderConfig"
	}
	pcName := str(o, "spec", "providerConfigRef", "name")
	kr, ok := c.pcKinds[group+"/"+pcKind]
	if !ok || pcName == "" {
		return "", nil
	}
	ns := ""
	if strings.Contains(group, ".m.") && pcKind == "ProviderConfig" {
		ns = str(o, "metadata", "namespace")
	}
	pc, err := c.getObj(kr.apiVersion, kr.kind, ns, pcName)
	if errors.Is(err, errNotFound) {
		return fmt.Sprintf("its %s %s is gone", pcKind, pcName), nil
	}
	if err != nil {
		return "", err
	}
	sref, _ := at(pc, "spec", "credentials", "secretRef").(map[string]any)
	if sref == nil {
		sref, _ = at(pc, "spec", "credentials", "connectionSecretRef").(map[string]any)
	}
	name, _ := sref["name"].(string)
	sns, _ := sref["namespace"].(string)
	if sns == "" {
		sns = str(o, "metadata", "namespace")
	}
	if name == "" {
		return "", nil
	}
	sec, err := c.getObj("v1", "Secret", sns, name)
	if errors.Is(err, errNotFound) {
		return fmt.Sprintf("the credentials Secret %s/%s of its %s is gone", sns, name, pcKind), nil
	}
	if err != nil {
		return "", err
	}
	owners, _ := at(sec, "metadata", "ownerReferences").([]any)
	for _, ow := range owners {
		m, _ := ow.(map[string]any)
		av, _ := m["apiVersion"].(string)
		kind, _ := m["kind"].(string)
		oname, _ := m["name"].(string)
		ons := sns
		if !strings.Contains(av, ".m.") {
			ons = ""
		}
		owner, err := c.getObj(av, kind, ons, oname)
		c.del.mu.Lock()
		gone := err == nil && c.del.gone[str(owner, "metadata", "uid")]
		c.del.mu.Unlock()
		if errors.Is(err, errNotFound) || gone {
			return fmt.Sprintf("the %s %s whose credentials Secret it reads is gone", kind, oname), nil
		}
		if err != nil {
			return "", err
		}
		if r, ok := ruleOf(kindKey(av, kind)); ok {
			if why, err := c.missing(owner, r.goodWhile); why != "" || err != nil {
				return fmt.Sprintf("the credentials the %s %s wrote are no good %s", kind, oname, why), err
			}
		}
	}
	return "", nil
}

// tried reports whether a delete of o was tried less than retryMin ago (a
// watch event of the object's own update since); else it records the try.
func (c *cloud) tried(o object) bool {
	c.del.mu.Lock()
	defer c.del.mu.Unlock()
	k := objKey(o)
	if t, ok := c.del.lastTry[k]; ok && time.Since(t) < retryMin {
		return true
	}
	c.del.lastTry[k] = time.Now()
	return false
}

// deleteManaged is the provider deleting a managed resource whose
// deletion began: the cloud deletes it unless it refuses (then errRefused:
// tried again later), and the provider removes its finalizer.
func (c *cloud) deleteManaged(o object) error {
	if !hasFinalizer(o, managedFinalizer) {
		return nil
	}
	if c.tried(o) {
		return errRefused
	}
	out, why, err := c.decide(o)
	if err != nil {
		return err
	}
	if c.record(o, out) {
		fmt.Printf("cloud simulator: STUCK: %s %s/%s cannot be deleted: %s\n", o["kind"], str(o, "metadata", "namespace"), str(o, "metadata", "name"), why)
	}
	if out != deleted && out != orphaned {
		return c.refuse(o, why)
	}
	return c.setFinalizer(o, managedFinalizer, false)
}

// The outcomes of deleting a managed resource.
const (
	// deleted: the cloud deleted it (or had, with another).
	deleted = iota
	// orphaned: its management policies leave it in the cloud.
	orphaned
	// inUse: the cloud refused, while something uses it.
	inUse
	// protected: the cloud refused, for its deletion protection.
	protected
	// failed: it fails, and will fail: what it needs is gone.
	failed
)

// decide is what becomes of deleting o, and why.
func (c *cloud) decide(o object) (int, string, error) {
	if orphans(o) {
		return orphaned, "", nil
	}
	r, _ := ruleOf(kindKey(o["apiVersion"].(string), o["kind"].(string)))
	for _, p := range r.protectedBy {
		if on, _ := at(o, append([]string{"spec", "forProvider"}, p...)...).(bool); on {
			return protected, r.protects, nil
		}
	}
	why, forGood, err := c.verdict(o)
	switch {
	case err != nil:
		return 0, "", err
	case why == "":
		return deleted, "", nil
	case forGood:
		return failed, why, nil
	}
	return inUse, why, nil
}

// record counts an outcome, keeps what is orphaned as abandoned in the
// cloud, and reports whether the object failed for good for the first
// time.
func (c *cloud) record(o object, out int) bool {
	c.del.mu.Lock()
	defer c.del.mu.Unlock()
	kind := o["kind"].(string)
	switch out {
	case orphaned:
		if !c.del.gone[str(o, "metadata", "uid")] {
			c.del.kept[extKey(o)] = o
			c.del.abandoned[kind]++
		}
	case inUse:
		c.del.refused[kind]++
	case protected:
		c.del.protected[kind]++
	case failed:
		c.del.stuck[kind]++
		first := !c.del.reported[objKey(o)]
		c.del.reported[objKey(o)] = true
		return first
	}
	if out == deleted || out == orphaned {
		delete(c.del.lastTry, objKey(o))
	}
	return false
}

// verdict is the cloud's answer to deleting o: "" when it deletes it (and
// what goes with it, which it marks gone); else why not, and whether for
// good (what the deletion needs is gone) or until what uses it is gone.
func (c *cloud) verdict(o object) (why string, forGood bool, err error) {
	c.del.mu.Lock()
	gone := c.del.gone[str(o, "metadata", "uid")]
	c.del.mu.Unlock()
	if gone {
		return "", false, nil
	}
	r, _ := ruleOf(kindKey(o["apiVersion"].(string), o["kind"].(string)))
	if why, err := c.unmet(o, r); why != "" || err != nil {
		return why, true, err
	}
	for _, h := range r.heldBy {
		by, err := c.holding(o, h)
		if err != nil {
			return "", false, err
		}
		if by != nil {
			return fmt.Sprintf("%s: in use by %s %s", r.refuses, by["kind"], str(by, "metadata", "name")), false, nil
		}
	}
	return "", false, c.cascade(o, r)
}

// listObjs and getObj are the API server's list and get, or what a test
// puts in their place.
func (c *cloud) listObjs(apiVersion, kind, namespace, selector string) ([]object, error) {
	if c.fake != nil {
		return c.fake.list(apiVersion, kind, namespace, selector)
	}
	return c.k.list(apiVersion, kind, namespace, selector)
}

func (c *cloud) getObj(apiVersion, kind, namespace, name string) (object, error) {
	if c.fake != nil {
		return c.fake.get(apiVersion, kind, namespace, name)
	}
	return c.k.get(apiVersion, kind, namespace, name)
}

// store is what deletion's decisions read, the API server or a test's
// objects.
type store interface {
	list(apiVersion, kind, namespace, selector string) ([]object, error)
	get(apiVersion, kind, namespace, name string) (object, error)
}

// cascade marks what the cloud deletes along with o gone, and what goes
// with that.
func (c *cloud) cascade(o object, r deletionRule) error {
	for _, t := range r.takes {
		items, err := c.live(t, o)
		if err != nil {
			return err
		}
		for _, it := range items {
			if !references(it, []object{o}) {
				continue
			}
			c.del.mu.Lock()
			c.del.gone[str(it, "metadata", "uid")] = true
			if kept, ok := c.del.kept[extKey(it)]; ok && str(kept, "metadata", "uid") == str(it, "metadata", "uid") {
				delete(c.del.kept, extKey(it))
			}
			c.del.mu.Unlock()
			if tr, ok := ruleOf(kindKey(it["apiVersion"].(string), it["kind"].(string))); ok {
				if err := c.cascade(it, tr); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// refuse reports a refused delete on the resource as crossplane-runtime
// does (Synced False, "delete failed"; Ready False, Deleting) when it says
// something new, and returns errRefused.
func (c *cloud) refuse(o object, why string) error {
	msg := "delete failed: " + why
	if _, _, m := condition(o, "Synced"); m != msg {
		now := time.Now().UTC().Format(time.RFC3339)
		err := c.k.patchStatus(o["apiVersion"].(string), o["kind"].(string), str(o, "metadata", "namespace"), str(o, "metadata", "name"), map[string]any{"conditions": []any{
			map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": msg, "lastTransitionTime": now},
			map[string]any{"type": "Ready", "status": "False", "reason": "Deleting", "lastTransitionTime": now},
		}})
		if err != nil && !errors.Is(err, errNotFound) {
			return err
		}
	}
	return errRefused
}

// providerConfig is provider-helm's or provider-sql's ProviderConfig
// reconciler, as crossplane-runtime's: it puts its finalizer on the
// ProviderConfig and, once its deletion began, removes it only when no
// ProviderConfigUsage and no managed resource of the provider references
// it any more.
func (c *cloud) providerConfig(o object) error {
	if str(o, "metadata", "deletionTimestamp") == "" {
		return c.setFinalizer(o, inUseFinalizer, true)
	}
	if !hasFinalizer(o, inUseFinalizer) {
		return nil
	}
	if c.tried(o) {
		return errRefused
	}
	users, err := c.configUsers(o)
	if err != nil {
		return err
	}
	if users > 0 {
		c.del.mu.Lock()
		c.del.held["provider-"+cloudOfKey(kindKey(o["apiVersion"].(string), o["kind"].(string)))]++
		c.del.mu.Unlock()
		return errRefused
	}
	return c.setFinalizer(o, inUseFinalizer, false)
}

// configUsers counts what uses a ProviderConfig: the provider's managed
// resources that reference it (spec.providerConfigRef), and its
// ProviderConfigUsages.
func (c *cloud) configUsers(pc object) (int, error) {
	group := strings.Split(pc["apiVersion"].(string), "/")[0]
	ns := str(pc, "metadata", "namespace")
	name := str(pc, "metadata", "name")
	n := 0
	for _, kr := range c.kinds {
		if strings.Split(kr.apiVersion, "/")[0] != group {
			continue
		}
		items, err := c.listObjs(kr.apiVersion, kr.kind, ns, "")
		if err != nil {
			return 0, err
		}
		for _, it := range items {
			kind := str(it, "spec", "providerConfigRef", "kind")
			if kind == "" {
				kind = "ProviderConfig"
			}
			if kind == pc["kind"] && str(it, "spec", "providerConfigRef", "name") == name {
				n++
			}
		}
	}
	if kr, ok := c.pcKinds[group+"/ProviderConfigUsage"]; ok {
		items, err := c.listObjs(kr.apiVersion, kr.kind, ns, "crossplane.io/provider-config="+name)
		if err != nil {
			return 0, err
		}
		n += len(items)
	}
	return n, nil
}
