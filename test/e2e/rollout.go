package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// rolloutCluster is one Cluster of the rollout scenario, in a namespace of
// its own.
type rolloutCluster struct{ name, namespace, cloud, wave string }

// key is the Cluster's namespace/name.
func (c rolloutCluster) key() string { return c.namespace + "/" + c.name }

// rolloutWaves are the environment's waves, in order; the last requires
// approval.
var rolloutWaves = []string{"canary", "staging", "production"}

// rolloutFleet are the rollout scenario's Clusters: two per wave, on mixed
// clouds, each cloud twice.
var rolloutFleet = []rolloutCluster{
	{"canary-gcp", "rollout-a", "gcp", "canary"},
	{"canary-aws", "rollout-b", "aws", "canary"},
	{"staging-azure", "rollout-c", "azure", "staging"},
	{"staging-gcp", "rollout-d", "gcp", "staging"},
	{"production-aws", "rollout-e", "aws", "production"},
	{"production-azure", "rollout-f", "azure", "production"},
}

// rolloutBroken is the staging Cluster whose control plane fails its
// upgrade in the second round.
var rolloutBroken = rolloutFleet[2]

// rolloutCPDelay is how long the simulated control planes of the rollout's
// namespaces take to report a new version: a window in which a later wave
// that moved too early would be seen asking before the earlier one
// reported, short enough for six upgrades in CI.
const rolloutCPDelay = 5 * time.Second

// rolloutEnvName is the EnvironmentConfig of the plane type the rollout's
// Clusters select (planeType: rollout): the version they are asked for.
const rolloutEnvName = "cluster-platform-planetype-rollout"

// rolloutWavesName is the EnvironmentConfig of the rollout's waves: a
// baseline one, since the fleet controller reads the waves of the
// baseline EnvironmentConfigs only (one set of waves for the whole fleet).
const rolloutWavesName = "cluster-platform-rollout-waves"

// rolloutEnvLabel marks the rollout scenario's EnvironmentConfigs, which
// its record watches.
const rolloutEnvLabel = "e2e.platform.example.org/rollout"

// clusterXR is the Cluster XR's kind.
var clusterXR = kindRef{"platform.example.org/v1alpha1", "Cluster"}

// rolloutCP are, by cloud, the kind of the composed control plane, the
// path of the version it asks for and of the one its provider reports it
// runs.
var rolloutCP = map[string]struct {
	kind          kindRef
	version, runs []string
}{
	"gcp": {kindRef{"container.gcp.m.upbound.io/v1beta1", "Cluster"},
		[]string{"spec", "forProvider", "minMasterVersion"}, []string{"status", "atProvider", "masterVersion"}},
	"aws": {eksCluster,
		[]string{"spec", "forProvider", "version"}, []string{"status", "atProvider", "version"}},
	"azure": {kindRef{"containerservice.azure.m.upbound.io/v1beta1", "KubernetesCluster"},
		[]string{"spec", "forProvider", "kubernetesVersion"}, []string{"status", "atProvider", "currentKubernetesVersion"}},
}

// rolloutEnv is what the rollout's environment says: the version the
// Clusters are asked for, production's approvals, and whether staging's
// namespaces are misspelt.
type rolloutEnv struct {
	version  string
	approved []string
	// typo misspells each of staging's namespaces ("rolout-c" for
	// "rollout-c"): a wave that admits none of its Clusters, which then
	// count in the last wave, so that staging has no Cluster at all.
	typo bool
}

// typoOf is a namespace as the typo misspells it.
func typoOf(ns string) string { return strings.Replace(ns, "rollout-", "rolout-", 1) }

// objects are the rollout's EnvironmentConfigs, in the order they are
// applied: the waves, each admitting its Clusters' namespaces only,
// production approved for the targets listed (a baseline
// EnvironmentConfig: the fleet controller reads the waves there); then the
// version, in the plane type's layer, with GKE's pools walked by the
// function. Approvals go first, so that a version approved ahead is never
// seen unapproved.
func (e rolloutEnv) objects() []object {
	waves := make([]any, 0, len(rolloutWaves))
	for i, w := range rolloutWaves {
		var ns []any
		for _, c := range rolloutFleet {
			if c.wave != w {
				continue
			}
			if e.typo && w == "staging" {
				ns = append(ns, typoOf(c.namespace))
				continue
			}
			ns = append(ns, c.namespace)
		}
		wave := map[string]any{"name": w, "namespaces": ns}
		if i == len(rolloutWaves)-1 {
			wave["requiresApproval"] = true
			if len(e.approved) > 0 {
				wave["approved"] = anyList(e.approved)
			}
		}
		waves = append(waves, wave)
	}
	env := func(name string, labels, data map[string]any) object {
		labels["platform.example.org/environment"] = "cluster-platform"
		labels[rolloutEnvLabel] = "true"
		return object{
			"apiVersion": "apiextensions.crossplane.io/v1beta1", "kind": "EnvironmentConfig",
			"metadata": map[string]any{"name": name, "labels": labels},
			"data":     data,
		}
	}
	return []object{
		env(rolloutWavesName, map[string]any{"baseline": "default"}, map[string]any{"rollout": map[string]any{"waves": waves}}),
		// GKE on a release channel upgrades the pools itself, so they ask
		// for no version and the simulated provider reports none: off a
		// channel the function walks them, and every pool of every cloud
		// reports the version it runs.
		env(rolloutEnvName, map[string]any{"planeType": "rollout"}, map[string]any{"version": e.version, "gcp": map[string]any{"releaseChannel": "UNSPECIFIED"}}),
	}
}

// applyRolloutEnv applies the rollout's EnvironmentConfigs.
func (s *scenarios) applyRolloutEnv(e rolloutEnv) error {
	for _, o := range e.objects() {
		if err := s.k.apply(o); err != nil {
			return err
		}
	}
	return nil
}

// anyList is a list of strings as an object holds it.
func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// xr is the Cluster as its owner writes it: no version of its own (the
// environment's), one small pool, no add-ons, no domain.
func (c rolloutCluster) xr() object {
	location := map[string]string{"gcp": "us-central1", "aws": "eu-west-1", "azure": "westeurope"}[c.cloud]
	plane := map[string]string{"gcp": "rollout-project-123", "aws": "123456789012", "azure": "00000000-0000-0000-0000-000000000000"}[c.cloud]
	charts := map[string]any{}
	for _, ch := range []string{"cert-manager", "ingress-nginx", "kube-prometheus-stack"} {
		charts[ch] = map[string]any{"disabled": true}
	}
	return object{
		"apiVersion": clusterXR.apiVersion, "kind": clusterXR.kind,
		"metadata": map[string]any{"name": c.name, "namespace": c.namespace, "labels": map[string]any{
			"cloud": c.cloud, "planeId": plane, "planeType": "rollout", rollout.Label: c.wave,
		}},
		"spec": map[string]any{"parameters": map[string]any{
			"location":       location,
			"privateCluster": false,
			"pools":          map[string]any{"default": map[string]any{"size": "small", "minNodes": 1, "maxNodes": 1}},
			"charts":         charts,
		}},
	}
}

// rolloutState is what a Cluster XR's status says of its version and its
// rollout.
type rolloutState struct {
	// target is status.upgrade.target, controlPlane
	// status.upgrade.controlPlane and pools each status.nodePools[].version
	// ("" for a pool that reports none), as minors.
	target, controlPlane string
	pools                []string
	ready                bool
	// gated, reason and message are the condition RolloutGated's.
	gated, reason, message string
	// verdict is status.rollout's verdict, said its message, wants its
	// target (what the environment asks for), until when the soak that
	// holds it ends; failed its failed, as "namespace/name (cloud):
	// reason".
	verdict, said, wants, until string
	failed                      string
	// wave is status.rollout.wave; foreign names the rollout's Clusters
	// other than itself that its status names (failed, the messages):
	// a gated Cluster's status names waves, never other Clusters.
	wave    string
	foreign []string
}

// rolloutStateOf reads a Cluster XR.
func rolloutStateOf(o object) rolloutState {
	st := rolloutState{
		target:       rollout.Minor(str(o, "status", "upgrade", "target")),
		controlPlane: rollout.Minor(str(o, "status", "upgrade", "controlPlane")),
		verdict:      str(o, "status", "rollout", "verdict"),
		said:         str(o, "status", "rollout", "message"),
		wants:        str(o, "status", "rollout", "target"),
		until:        str(o, "status", "rollout", "until"),
	}
	pools, _ := at(o, "status", "nodePools").([]any)
	for _, p := range pools {
		v, _ := p.(map[string]any)["version"].(string)
		st.pools = append(st.pools, rollout.Minor(v))
	}
	if f, ok := at(o, "status", "rollout", "failed").(map[string]any); ok {
		st.failed = fmt.Sprintf("%s/%s (%s): %s", str(f, "namespace"), str(f, "name"), str(f, "cloud"), str(f, "reason"))
	}
	ready, _, _ := condition(o, "Ready")
	st.ready = ready == "True"
	st.gated, st.reason, st.message = condition(o, "RolloutGated")
	st.wave = str(o, "status", "rollout", "wave")
	self := str(o, "metadata", "namespace") + "/" + str(o, "metadata", "name")
	named := []string{st.message, st.said, str(o, "status", "rollout", "failed", "namespace") + "/" + str(o, "status", "rollout", "failed", "name")}
	for _, c := range rolloutFleet {
		if c.key() != self && slices.ContainsFunc(named, func(s string) bool { return strings.Contains(s, c.key()) || strings.Contains(s, c.name) }) {
			st.foreign = append(st.foreign, c.key())
		}
	}
	return st
}

// done reports whether the Cluster runs to on its control plane and every
// pool, and is Ready.
func (st rolloutState) done(to string) bool {
	if !st.ready || st.controlPlane != to || len(st.pools) == 0 {
		return false
	}
	for _, p := range st.pools {
		if p != to {
			return false
		}
	}
	return true
}

// gatedBy reports whether the Cluster is gated for reason: RolloutGated
// True with that reason, and status.rollout's verdict the same.
func (st rolloutState) gatedBy(reason string) bool {
	return st.gated == "True" && st.reason == reason && st.verdict == reason
}

// holds reports whether the Cluster is held (RolloutGated True for Hold)
// on to, with status.rollout's message the condition's and containing
// says.
func (st rolloutState) holds(to, says string) bool {
	return st.gatedBy("Hold") && st.wants == to && st.said == st.message && strings.Contains(st.message, says)
}

func (st rolloutState) String() string {
	return fmt.Sprintf("target %q, control plane %q, pools %q, Ready %t, RolloutGated %s/%s (%s), status.rollout wave %q verdict %q target %q until %q, failed %q",
		st.target, st.controlPlane, st.pools, st.ready, st.gated, st.reason, st.message, st.wave, st.verdict, st.wants, st.until, st.failed)
}

// rolloutStates lists the rollout's Clusters, by namespace/name.
func (s *scenarios) rolloutStates() (map[string]rolloutState, error) {
	items, err := s.k.list(clusterXR.apiVersion, clusterXR.kind, "", rollout.Label)
	if err != nil {
		return nil, err
	}
	out := map[string]rolloutState{}
	for _, o := range items {
		out[str(o, "metadata", "namespace")+"/"+str(o, "metadata", "name")] = rolloutStateOf(o)
	}
	return out, nil
}

// waitWave waits until every Cluster of wave holds cond, and says which
// does not meanwhile.
func (s *scenarios) waitWave(what, wave string, cond func(rolloutState) bool) error {
	_, err := s.waitFor(what, func() (bool, error) {
		states, err := s.rolloutStates()
		if err != nil {
			return false, err
		}
		for _, c := range rolloutFleet {
			if (wave == "" || c.wave == wave) && !cond(states[c.key()]) {
				return false, fmt.Errorf("%s: %s", c.key(), states[c.key()])
			}
		}
		return true, nil
	})
	return err
}

// rollout proves the environment's rollout waves on the real control
// plane: six Clusters on three clouds, two per wave, each in a namespace
// of its own, are Ready on the environment's version; the version is
// raised one minor, twice. From the API server's records (the watch
// events of the XRs, their composed control planes and the
// EnvironmentConfig, in resource-version order), no wave's Clusters ask
// for the new version before every Cluster of the wave before it runs it
// on its control plane and every pool and is Ready; production, which
// requires approval, holds until the environment approves the target; in
// the second round a staging control plane fails its upgrade, production
// halts, and moves once the failure is healed.
func (s *scenarios) rollout() error {
	for _, c := range rolloutFleet {
		s.c.cpDelays.Store(c.namespace, rolloutCPDelay)
	}
	defer func() {
		for _, c := range rolloutFleet {
			s.c.cpDelays.Delete(c.namespace)
			s.c.failing.Delete(c.key())
		}
	}()
	from := "1.33"
	for _, c := range rolloutFleet {
		if err := s.k.apply(object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": c.namespace}}); err != nil {
			return err
		}
	}
	if err := s.applyRolloutEnv(rolloutEnv{version: from}); err != nil {
		return err
	}
	for _, c := range rolloutFleet {
		if err := s.k.apply(c.xr()); err != nil {
			return err
		}
	}
	start := time.Now()
	// A new pool may ask for no version of its own (it takes the control
	// plane's), and then its provider reports none.
	if err := s.waitWave("the rollout's Clusters Ready on "+from, "", func(st rolloutState) bool {
		return st.ready && st.target == from && st.controlPlane == from && !slices.ContainsFunc(st.pools, func(p string) bool { return p != "" && p != from })
	}); err != nil {
		return err
	}
	readyIn := time.Since(start)
	// A new Cluster adopts the target at once: not gated, in the wave its
	// label names, which admits its namespace.
	states, err := s.rolloutStates()
	if err != nil {
		return err
	}
	for _, c := range rolloutFleet {
		st := states[c.key()]
		if st.gated != "False" || st.reason != "Adopted" || st.wave != c.wave {
			return fmt.Errorf("%s, new on %s: RolloutGated is %s/%s (%s), not False/Adopted, in wave %q, not %s", c.key(), from, st.gated, st.reason, st.message, st.wave, c.wave)
		}
	}
	fmt.Printf("  %d Clusters (%s) Ready on %s in %.1f s, each RolloutGated False/Adopted in the wave its label names\n", len(rolloutFleet), rolloutNames(), from, readyIn.Seconds())

	// The first round: raised while the fleet controller is stopped,
	// production waiting for its approval.
	to := nextMinor(from)
	first, err := s.rolloutRound(from, to, roundOpts{stopped: true})
	if err != nil {
		return fmt.Errorf("%s -> %s: %w", from, to, err)
	}
	// The second: approved with the raise, staging's namespaces misspelt,
	// then fixed, and a staging control plane failing its upgrade.
	from, to = to, nextMinor(to)
	second, err := s.rolloutRound(from, to, roundOpts{broken: &rolloutBroken, typo: true})
	if err != nil {
		return fmt.Errorf("%s -> %s: %w", from, to, err)
	}
	gone, err := s.rolloutDelete()
	if err != nil {
		return err
	}
	fmt.Printf("  the %d Clusters deleted with everything they composed in %.1f s\n", len(rolloutFleet), gone.Seconds())
	s.results = append(s.results, fmt.Sprintf("%-30s %d Clusters Ready in %.1f s; %s; %s", "rollout waves", len(rolloutFleet), readyIn.Seconds(), first, second))
	return nil
}

// rolloutNames lists the rollout's Clusters as namespace/name (cloud, wave).
func rolloutNames() string {
	out := make([]string, 0, len(rolloutFleet))
	for _, c := range rolloutFleet {
		out = append(out, fmt.Sprintf("%s %s/%s", c.wave, c.cloud, c.namespace))
	}
	return strings.Join(out, ", ")
}

// nextMinor is the minor after v ("1.33" -> "1.34").
func nextMinor(v string) string {
	var major, minor int
	if _, err := fmt.Sscanf(v, "%d.%d", &major, &minor); err != nil {
		panic(fmt.Sprintf("version %q: %v", v, err))
	}
	return fmt.Sprintf("%d.%d", major, minor+1)
}

// roundOpts are what a round of the rollout scenario does besides raising
// the environment's version.
type roundOpts struct {
	// stopped stops the fleet controller before the raise and starts it
	// again once every Cluster holds, saying that it has not ruled: the
	// gate fails closed.
	stopped bool
	// typo raises the version with staging's namespaces misspelt, and
	// fixes them once canary runs the target and everything else holds
	// on the empty staging wave.
	typo bool
	// broken, when set, approves the target with the raise and fails
	// broken's control plane's upgrade until production halts on it;
	// when nil, production waits for its approval, given once its RunFunction
	// calls and writes were counted for rolloutQuietFor.
	broken *rolloutCluster
}

// rolloutRound raises the environment's version from one minor to the
// next and follows the fleet there, as o says. It returns the round's
// summary: the time each wave took, and what the round asserted besides.
func (s *scenarios) rolloutRound(from, to string, o roundOpts) (string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec, err := s.recordRollout(ctx)
	if err != nil {
		return "", err
	}
	env := rolloutEnv{version: to, typo: o.typo}
	// Production's approval comes once it waits for it; with broken, with
	// the raise, so that only the failure holds production.
	if o.broken != nil {
		env.approved = []string{from, to}
		s.c.failing.Store(o.broken.key(), true)
	}
	var notes []string
	if o.stopped {
		if err := s.stopFleetController(); err != nil {
			return "", err
		}
	}
	if err := s.applyRolloutEnv(env); err != nil {
		return "", err
	}
	if o.stopped {
		note, err := s.rolloutFailClosed(from, to)
		if err != nil {
			return "", err
		}
		notes = append(notes, note)
	}
	if err := s.waitWave("canary on "+to, "canary", func(st rolloutState) bool { return st.done(to) }); err != nil {
		return "", err
	}
	if o.typo {
		env.typo = false
		note, err := s.rolloutTypo(to, env)
		if err != nil {
			return "", err
		}
		notes = append(notes, note)
	}
	var halt string
	if o.broken != nil {
		var err error
		if halt, err = s.rolloutHalt(from, to, *o.broken); err != nil {
			return "", err
		}
	}
	if err := s.waitWave("staging on "+to, "staging", func(st rolloutState) bool { return st.done(to) }); err != nil {
		return "", err
	}
	if o.broken == nil {
		if err := s.waitWave("production gated for approval", "production", func(st rolloutState) bool {
			return st.gatedBy("Approval") && st.target == from && st.wants == to
		}); err != nil {
			return "", err
		}
		note, err := s.rolloutQuiet(rec, rolloutQuietFor)
		if err != nil {
			return "", err
		}
		notes = append(notes, note)
		env.approved = []string{to}
		if err := s.applyRolloutEnv(env); err != nil {
			return "", err
		}
	}
	if err := s.waitWave("production on "+to, "production", func(st rolloutState) bool { return st.done(to) && st.gated == "False" && st.reason == "Adopted" }); err != nil {
		return "", err
	}
	// The watches may be an instant behind the reads.
	if _, err := s.waitFor("the records of production on "+to, func() (bool, error) {
		_, ok := rec.doneAt("production", to)
		return ok, errors.New("not recorded yet")
	}); err != nil {
		return "", err
	}
	sum, err := rec.verify(from, to, o, halt)
	if err != nil {
		return "", err
	}
	return strings.Join(append([]string{sum}, notes...), "; "), nil
}

// rolloutHalt waits, while broken's control plane fails its upgrade to
// to, until broken reports the failure and production halts on it:
// RolloutGated True for Halt, its message saying that a Cluster its owner
// may not see failed (broken is in another namespace: status.rollout
// names no failed Cluster then), still asking for from. Then it heals the
// failure. It returns what production said.
func (s *scenarios) rolloutHalt(from, to string, broken rolloutCluster) (string, error) {
	var reported string
	if _, err := s.waitFor(broken.key()+" reporting its failed upgrade", func() (bool, error) {
		o, err := s.k.get(clusterXR.apiVersion, clusterXR.kind, broken.namespace, broken.name)
		if err != nil {
			return false, err
		}
		reported = failedCondition(o)
		return reported != "", fmt.Errorf("no condition says it failed: %s", rolloutStateOf(o))
	}); err != nil {
		return "", err
	}
	var said string
	if err := s.waitWave("production halted", "production", func(st rolloutState) bool {
		said = st.message
		return st.gatedBy("Halt") && st.target == from && st.wants == to && st.failed == "" && st.said == st.message &&
			strings.Contains(st.message, "wave production halted") && strings.Contains(st.message, "may not see failed")
	}); err != nil {
		return "", err
	}
	fmt.Printf("  %s -> %s: %s's control plane failed its upgrade (%s); production halted: %q\n", from, to, broken.key(), reported, said)
	if err := s.c.heal(broken); err != nil {
		return "", err
	}
	return fmt.Sprintf("%q", said), nil
}

// failedCondition is the first condition of an XR that says a step
// failed, as "type reason: message": Synced False, or any condition False
// for ReconcileError (a composed resource its provider cannot
// reconcile); "" when none does.
func failedCondition(o object) string {
	conds, _ := at(o, "status", "conditions").([]any)
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["status"] == "False" && (m["type"] == "Synced" || m["reason"] == "ReconcileError") {
			return fmt.Sprintf("%s %s: %s", m["type"], m["reason"], m["message"])
		}
	}
	return ""
}

// rolloutDelete deletes the rollout's Clusters, waits until they and
// everything they composed are gone, and deletes their
// EnvironmentConfigs and namespaces.
func (s *scenarios) rolloutDelete() (time.Duration, error) {
	took, err := s.deleteClusters("the rollout's Clusters", rolloutFleet)
	if err != nil {
		return 0, err
	}
	for _, name := range []string{rolloutWavesName, rolloutEnvName} {
		if err := s.k.delete("apiextensions.crossplane.io/v1beta1", "EnvironmentConfig", "", name); err != nil {
			return 0, err
		}
	}
	return took, s.deleteNamespaces(rolloutFleet)
}

// deleteClusters deletes a scenario's Clusters and waits until they and
// everything they composed are gone.
func (s *scenarios) deleteClusters(what string, fleet []rolloutCluster) (time.Duration, error) {
	var xrs, left []placedRef
	for _, c := range fleet {
		o, err := s.k.get(clusterXR.apiVersion, clusterXR.kind, c.namespace, c.name)
		if err != nil {
			return 0, err
		}
		for _, r := range resourceRefs(o) {
			left = append(left, placedRef{r, c.namespace})
		}
		if err := s.k.delete(clusterXR.apiVersion, clusterXR.kind, c.namespace, c.name); err != nil {
			return 0, err
		}
		xrs = append(xrs, placedRef{composedRef{clusterXR.apiVersion, clusterXR.kind, c.name}, c.namespace})
	}
	return s.waitGone(what+" gone", xrs, left)
}

// A placedRef is an object's reference with its namespace ("" for a
// cluster-scoped one).
type placedRef struct {
	composedRef
	namespace string
}

// waitGone waits until the deleted XRs xrs and what they composed (left)
// are gone, saying meanwhile which is still there.
func (s *scenarios) waitGone(what string, xrs, left []placedRef) (time.Duration, error) {
	return s.waitFor(what, func() (bool, error) {
		for _, x := range xrs {
			switch _, err := s.k.get(x.apiVersion, x.kind, x.namespace, x.name); {
			case err == nil:
				return false, fmt.Errorf("%s %s/%s still exists", x.kind, x.namespace, x.name)
			case !errors.Is(err, errNotFound):
				return false, err
			}
		}
		left = slices.DeleteFunc(left, func(r placedRef) bool {
			_, err := s.k.get(r.apiVersion, r.kind, r.namespace, r.name)
			return errors.Is(err, errNotFound)
		})
		if len(left) > 0 {
			return false, fmt.Errorf("%d composed resources left, such as %s %s/%s", len(left), left[0].kind, left[0].namespace, left[0].name)
		}
		return true, nil
	})
}

// deleteNamespaces deletes the namespaces of a scenario's Clusters.
func (s *scenarios) deleteNamespaces(fleet []rolloutCluster) error {
	for _, c := range fleet {
		if err := s.k.delete("v1", "Namespace", "", c.namespace); err != nil {
			return err
		}
	}
	return nil
}

// fails reports whether o is the control plane of a Cluster whose
// upgrades fail, asked for another minor than it runs.
func (c *cloud) fails(kr kindRef, o object) bool {
	if _, ok := c.failing.Load(str(o, "metadata", "namespace") + "/" + str(o, "metadata", "labels", xr.LabelComposite)); !ok {
		return false
	}
	cp := rolloutCP[cloudOfKind(kr)]
	return rollout.Minor(str(o, cp.version...)) != rollout.Minor(str(o, cp.runs...))
}

// failUpgrade reports, as a provider whose cloud failed the update, that
// the control plane o cannot be reconciled: Synced False for
// ReconcileError, still Ready, status.atProvider still the version it
// ran.
func (c *cloud) failUpgrade(kr kindRef, o object) error {
	if st, reason, _ := condition(o, "Synced"); st == "False" && reason == "ReconcileError" {
		return nil
	}
	path := rolloutCP[cloudOfKind(kr)].version
	msg := fmt.Sprintf("update failed: upgrade failed: the cloud could not upgrade the control plane to %s (simulated)", str(o, path...))
	return c.k.patchStatus(kr.apiVersion, kr.kind, str(o, "metadata", "namespace"), str(o, "metadata", "name"),
		map[string]any{"conditions": providerConditions("False", "ReconcileError", msg)})
}

// heal ends the failure of cl's control plane: its provider reports it
// Synced again, and from then on carries out what it asks for.
func (c *cloud) heal(cl rolloutCluster) error {
	c.failing.Delete(cl.key())
	cp := rolloutCP[cl.cloud].kind
	items, err := c.k.list(cp.apiVersion, cp.kind, cl.namespace, xr.LabelComposite+"="+cl.name)
	if err != nil {
		return err
	}
	for _, o := range items {
		if st, _, _ := condition(o, "Synced"); st != "False" {
			continue
		}
		if err := c.k.patchStatus(cp.apiVersion, cp.kind, cl.namespace, str(o, "metadata", "name"),
			map[string]any{"conditions": providerConditions("True", "ReconcileSuccess", "")}); err != nil {
			return err
		}
	}
	return nil
}

// cloudOfKind is the cloud of a control plane's kind, of any version.
func cloudOfKind(kr kindRef) string {
	group := func(apiVersion string) string { g, _, _ := strings.Cut(apiVersion, "/"); return g }
	for cl, cp := range rolloutCP {
		if cp.kind.kind == kr.kind && group(cp.kind.apiVersion) == group(kr.apiVersion) {
			return cl
		}
	}
	return ""
}

// providerConditions are a ready managed resource's conditions, with its
// Synced condition's status, reason and message.
func providerConditions(synced, reason, msg string) []any {
	now := time.Now().UTC().Format(time.RFC3339)
	s := map[string]any{"type": "Synced", "status": synced, "reason": reason, "lastTransitionTime": now}
	if msg != "" {
		s["message"] = msg
	}
	return []any{s, map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": now}}
}
