// Package portal is the platform's front door: a JSON API under /api/v1
// that creates, lists, reads and deletes a namespace's AppEnvironments
// from a few fields and the platform team's per-namespace Policy, a
// Server-Sent Events stream per environment with its conditions and the
// readiness of each composed resource, and the page that shows them; and
// the fleet view (/fleet, /api/v1/fleet and its stream): the Clusters of
// every namespace per rollout wave and cloud, with what each wave waits
// for (internal/rollout), each user seeing only the namespaces whose
// Clusters a SubjectAccessReview lets it list.
//
// Kubernetes RBAC decides who may do what: a caller's bearer token is
// checked with a TokenReview, reads and writes are made as that user
// (impersonation), and a stream, read from watches shared by every viewer
// of a namespace, is opened only after a SubjectAccessReview says the user
// may watch the environment. It validates a request with the same
// internal/xr code the function uses and imports no cloud package; no
// package of the function imports it.
//
// It holds under a hostile caller (Limits): a malformed header or the
// anonymous user is a 401; TokenReviews have their own client and rate
// limit, a cache of refusals and a bucket per client address; requests
// have header, body and write deadlines that event streams replace with
// their own; a stream opens only in a namespace that exists, its watches
// stop when the namespace's last viewer has been gone a while, and a user
// has a bounded number of streams; only the kinds the platform composes
// are watched (Composed); a policy may bound a namespace's environments.
package portal
