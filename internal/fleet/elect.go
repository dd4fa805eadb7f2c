package fleet

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// DefaultLeaseName is the name of the Lease the controllers of a control
// plane elect their leader with.
const DefaultLeaseName = "function-cluster-platform-fleet"

// The default timing of an Election: client-go's usual.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// LeaseResource is the resource of the Lease an Election holds.
var LeaseResource = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// An Election elects the one controller that writes, among those of a
// control plane, with a Lease. It reads and writes the Lease as client-go's
// leader election does (the same fields, with the same meaning), so that
// controllers of either kind elect one leader among them, but through the
// dynamic client: client-go's typed clientset would double the binary.
type Election struct {
	// Leases reads and writes the Lease; nil means the Controller's own
	// client. A client of its own has a rate limit of its own, so that a
	// burst of the controller's writes does not hold a renewal back.
	Leases dynamic.Interface
	// Namespace and Name are the Lease's: the controller's own namespace
	// and DefaultLeaseName (an empty Name).
	Namespace, Name string
	// Identity tells this controller from the others: its Pod's name and
	// more.
	Identity string
	// LeaseDuration is how long a Lease stays its holder's after its last
	// renewal; RenewDeadline how long the leader tries to renew it before
	// it stops leading; RetryPeriod how often a candidate tries to take it
	// and the leader renews it. 0 means the defaults. LeaseDuration less
	// RenewDeadline is the margin for the skew of the candidates' clocks:
	// a candidate takes a Lease whose renewTime is LeaseDuration old by
	// its own clock, while its leader stopped leading RenewDeadline after
	// that renewTime by the leader's clock.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// RunElected runs c until ctx ends or c loses the lease of e, writing only
// while it holds it: its informers run all the time, so that a new leader
// rules at once on a fleet it already read. It returns an error when the
// lease is lost (another controller took it, or it could not be renewed
// within the renew deadline), so that the process exits and starts over;
// it gives the lease up when ctx ends, once c has stopped writing.
func (c *Controller) RunElected(ctx context.Context, e Election) error {
	el, err := c.elector(e)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(rctx)
	}()
	led, err := el.run(rctx, c.Lead) // until ctx ends or the lease is lost
	c.Lead(false)
	cancel()
	<-done
	if ctx.Err() == nil {
		return fmt.Errorf("cannot keep the lease %s: %w, so stopped (a new process reads the fleet again)", el.key(), err)
	}
	if led {
		// No write of c's follows: the next leader's cannot cross one.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), el.deadline)
		defer cancel()
		if err := el.release(rctx); err != nil {
			c.log.Warn("cannot give the lease up: the next leader waits for it to expire", "lease", el.key(), "error", err.Error())
		} else {
			c.log.Info("gave the lease up", "lease", el.key(), "identity", el.identity)
		}
	}
	return nil
}

// An elector takes, renews and gives up the Lease of an Election.
type elector struct {
	leases                    dynamic.ResourceInterface
	namespace, name, identity string
	duration, deadline, retry time.Duration
	log                       *slog.Logger
}

// elector returns the elector of e, its defaults filled in.
func (c *Controller) elector(e Election) (*elector, error) {
	el := &elector{
		namespace: e.Namespace, name: cmp.Or(e.Name, DefaultLeaseName), identity: e.Identity,
		duration: cmp.Or(e.LeaseDuration, DefaultLeaseDuration), deadline: cmp.Or(e.RenewDeadline, DefaultRenewDeadline), retry: cmp.Or(e.RetryPeriod, DefaultRetryPeriod),
		log: c.log,
	}
	switch {
	case el.identity == "":
		return nil, errors.New("cannot elect a leader: no identity")
	case el.namespace == "":
		return nil, errors.New("cannot elect a leader: no namespace for the lease")
	case el.duration <= el.deadline:
		return nil, fmt.Errorf("cannot elect a leader: the lease duration %s is not longer than the renew deadline %s", el.duration, el.deadline)
	case el.deadline <= el.retry:
		return nil, fmt.Errorf("cannot elect a leader: the renew deadline %s is not longer than the retry period %s", el.deadline, el.retry)
	}
	dyn := e.Leases
	if dyn == nil {
		dyn = c.dyn
	}
	el.leases = dyn.Resource(LeaseResource).Namespace(el.namespace)
	return el, nil
}

// key is the Lease's namespace/name.
func (el *elector) key() string { return el.namespace + "/" + el.name }

// run takes the Lease, then leads (lead(true)) and renews it every retry
// period, until ctx ends (nil) or the Lease is lost (the error says why).
// led says whether it took the Lease.
func (el *elector) run(ctx context.Context, lead func(bool)) (led bool, err error) {
	var renewed time.Time // when the last renewal that held stamped the Lease
	seen := ""
	for {
		now := time.Now()
		tctx, cancel := context.WithTimeout(ctx, el.deadline)
		held, holder, err := el.try(tctx, now, false)
		cancel()
		if held {
			renewed = now
			break
		}
		if holder != "" && holder != seen {
			el.log.Info("another controller leads: writing nothing", "lease", el.key(), "leader", holder)
			seen = holder
		}
		if err != nil && ctx.Err() == nil {
			el.log.Warn("cannot take the lease: trying again", "lease", el.key(), "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-time.After(wait.Jitter(el.retry, 1.2)):
		}
	}
	el.log.Info("leading: writing rulings", "lease", el.key(), "identity", el.identity)
	lead(true)
	for {
		// Never lead past the renew deadline: wake by then at the latest.
		end := renewed.Add(el.deadline)
		select {
		case <-ctx.Done():
			return true, nil
		case <-time.After(min(el.retry, time.Until(end))):
		}
		now := time.Now()
		if !now.Before(end) {
			return true, fmt.Errorf("cannot renew it within %s", el.deadline)
		}
		tctx, cancel := context.WithDeadline(ctx, end)
		held, holder, err := el.try(tctx, now, true)
		cancel()
		switch {
		case held:
			renewed = now
		case ctx.Err() != nil:
			return true, nil
		case err == nil:
			return true, fmt.Errorf("%s took it", cmp.Or(holder, "another controller"))
		default:
			el.log.Warn("cannot renew the lease: trying again until the renew deadline", "lease", el.key(), "error", err.Error(), "deadline", end.Format(time.RFC3339Nano))
		}
	}
}

// try takes the Lease at now when nobody holds it, its holder let it
// expire or it is this candidate's already, and renews it if so; leading
// says this candidate held it until now, so that nobody else may hold it.
// It reports whether this candidate holds the Lease, and who else does:
// the one the Lease names, when it holds none and says nothing went
// wrong. Every write carries the resourceVersion of the read it is made
// from, so that of two candidates that read the same Lease one takes it,
// the other's write conflicting; a write that conflicts reads the Lease
// again, once.
func (el *elector) try(ctx context.Context, now time.Time, leading bool) (held bool, holder string, err error) {
	for attempt := 0; ; attempt++ {
		held, holder, err = el.tryOnce(ctx, now, leading)
		if attempt > 0 || (!kerrors.IsConflict(err) && !kerrors.IsAlreadyExists(err)) {
			return held, holder, err
		}
	}
}

// tryOnce is one read and one write of try.
func (el *elector) tryOnce(ctx context.Context, now time.Time, leading bool) (held bool, holder string, err error) {
	u, err := el.leases.Get(ctx, el.name, metav1.GetOptions{})
	if kerrors.IsNotFound(err) {
		u = &unstructured.Unstructured{}
		u.SetAPIVersion(LeaseResource.GroupVersion().String())
		u.SetKind("Lease")
		u.SetNamespace(el.namespace)
		u.SetName(el.name)
		el.stamp(u, now, true)
		if _, err := el.leases.Create(ctx, u, metav1.CreateOptions{FieldManager: FieldManager}); err != nil {
			return false, "", fmt.Errorf("cannot create the lease: %w", err)
		}
		return true, el.identity, nil
	}
	if err != nil {
		return false, "", fmt.Errorf("cannot read the lease: %w", err)
	}
	holder, _, _ = unstructured.NestedString(u.Object, "spec", "holderIdentity")
	if holder != "" && holder != el.identity && (leading || !el.expired(u, now)) {
		return false, holder, nil
	}
	el.stamp(u, now, false)
	if _, err := el.leases.Update(ctx, u, metav1.UpdateOptions{FieldManager: FieldManager}); err != nil {
		return false, "", fmt.Errorf("cannot write the lease: %w", err)
	}
	return true, el.identity, nil
}

// expired reports whether the Lease u is its holder's no longer at now:
// its renewTime (or acquireTime, or creation) and leaseDurationSeconds
// (or the elector's lease duration) are past.
func (el *elector) expired(u *unstructured.Unstructured, now time.Time) bool {
	renewed := u.GetCreationTimestamp().Time
	for _, f := range []string{"acquireTime", "renewTime"} {
		s, _, _ := unstructured.NestedString(u.Object, "spec", f)
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			renewed = t
		}
	}
	d := el.duration
	if s, ok := number(u, "leaseDurationSeconds"); ok && s > 0 {
		d = time.Duration(s) * time.Second
	}
	return renewed.Add(d).Before(now)
}

// stamp makes the Lease u this candidate's at now: it renews it if it was
// already, or takes it, one more transition unless it creates it.
func (el *elector) stamp(u *unstructured.Unstructured, now time.Time, create bool) {
	at := now.UTC().Format(metav1.RFC3339Micro)
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	if spec == nil {
		spec = map[string]any{}
	}
	if holder, _ := spec["holderIdentity"].(string); holder != el.identity {
		transitions, _ := number(u, "leaseTransitions")
		if !create {
			transitions++
		}
		spec["acquireTime"], spec["leaseTransitions"] = at, transitions
	}
	spec["holderIdentity"], spec["leaseDurationSeconds"], spec["renewTime"] = el.identity, int64(el.duration/time.Second), at
	u.Object["spec"] = spec
}

// release gives the Lease up if this candidate still holds it: it clears
// its holder, so that the next candidate takes it at once.
func (el *elector) release(ctx context.Context) error {
	u, err := el.leases.Get(ctx, el.name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("cannot read the lease: %w", err)
	}
	if holder, _, _ := unstructured.NestedString(u.Object, "spec", "holderIdentity"); holder != el.identity {
		return nil
	}
	at := time.Now().UTC().Format(metav1.RFC3339Micro)
	for f, v := range map[string]any{"holderIdentity": "", "leaseDurationSeconds": int64(1), "acquireTime": at, "renewTime": at} {
		if err := unstructured.SetNestedField(u.Object, v, "spec", f); err != nil {
			return fmt.Errorf("cannot clear the lease: %w", err)
		}
	}
	if _, err := el.leases.Update(ctx, u, metav1.UpdateOptions{FieldManager: FieldManager}); err != nil {
		return fmt.Errorf("cannot clear the lease: %w", err)
	}
	return nil
}

// number is the integer field of the Lease u's spec, however it was
// decoded.
func number(u *unstructured.Unstructured, field string) (int64, bool) {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", field)
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int:
		return int64(n), true
	case float64:
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// Served reports whether the API server of cfg serves the resource gvr:
// false when it serves no such group version (a control plane without the
// legacy XCluster CRD) or no such resource in it. It reads the discovery
// document over plain HTTP, as the portal does, not through client-go's
// discovery client.
func Served(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource) (bool, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return false, fmt.Errorf("cannot build the HTTP client: %w", err)
	}
	host := cfg.Host
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	path := "/apis/" + gvr.GroupVersion().String()
	if gvr.Group == "" {
		path = "/api/" + gvr.Version
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(host, "/")+path, nil)
	if err != nil {
		return false, fmt.Errorf("cannot ask for %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/json")
	rsp, err := hc.Do(req)
	if err != nil {
		return false, fmt.Errorf("cannot discover %s: %w", gvr.GroupVersion(), err)
	}
	defer rsp.Body.Close() //nolint:errcheck // a read body's close has nothing to report.
	switch rsp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return false, nil
	default:
		return false, fmt.Errorf("cannot discover %s: %s", gvr.GroupVersion(), rsp.Status)
	}
	l := &metav1.APIResourceList{}
	if err := json.NewDecoder(rsp.Body).Decode(l); err != nil {
		return false, fmt.Errorf("cannot read the discovery of %s: %w", gvr.GroupVersion(), err)
	}
	return slices.ContainsFunc(l.APIResources, func(r metav1.APIResource) bool { return r.Name == gvr.Resource }), nil
}
