// Package portal is the platform's front door: a JSON API under /api/v1
// that creates, lists, reads and deletes a namespace's AppEnvironments
// from a few fields and the platform team's per-namespace Policy, a
// Server-Sent Events stream per environment with its conditions and the
// readiness of each composed resource, and the page that shows them.
//
// Kubernetes RBAC decides who may do what: a caller's bearer token is
// checked with a TokenReview, reads and writes are made as that user
// (impersonation), and a stream, read from watches shared by every viewer
// of a namespace, is opened only after a SubjectAccessReview says the user
// may watch the environment. It validates a request with the same
// internal/xr code the function uses and imports no cloud package; no
// package of the function imports it.
package portal
