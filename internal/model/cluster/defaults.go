package cluster

// Built-in defaults of the EnvironmentConfig keys. The README documents
// each; an EnvironmentConfig overrides any of them.
const (
	DefaultVersion        = "1.33"
	DefaultNetworkCIDR    = "10.0.0.0/16"
	DefaultPodsCIDR       = "10.100.0.0/14"
	DefaultServicesCIDR   = "10.104.0.0/20"
	DefaultPrivateCluster = true
	// DefaultPrivateEndpoint keeps the API server reachable, so that
	// Crossplane can install add-ons from outside the cluster's network.
	DefaultPrivateEndpoint = false
	DefaultPoolSize        = "medium"
	DefaultDiskSizeGB      = 100
	DefaultMinNodes        = 1
	DefaultMaxNodes        = 3
	// DefaultParallelPools is how many node pools are upgraded or rotated
	// at a time (lifecycle.parallelPools).
	DefaultParallelPools = 1

	DefaultMonitoringEnabled     = true
	DefaultMonitoringRetention   = "15d"
	DefaultGrafanaSecretName     = "grafana-admin"
	DefaultGrafanaSecretUserKey  = "admin-user"
	DefaultGrafanaSecretPassword = "admin-password"
	DefaultIngressReplicas       = 2
	DefaultIngressInternal       = true

	// ChartMonitoring is the chart that monitoring.enabled switches.
	ChartMonitoring = "kube-prometheus-stack"
	// ChartCertManager, ChartExternalDNS and ChartIngress are the charts
	// of TLS and DNS: the first two run as the DNS identity, the third
	// serves the domain's wildcard certificate.
	ChartCertManager = "cert-manager"
	ChartExternalDNS = "external-dns"
	ChartIngress     = "ingress-nginx"

	// DefaultIssuer is the ClusterIssuer's name, DefaultACMEServer its ACME
	// directory (Let's Encrypt's production one) and
	// DefaultCertificateSecret the Secret of the domain's certificate.
	DefaultIssuer            = "letsencrypt"
	DefaultACMEServer        = "https://acme-v02.api.letsencrypt.org/directory"
	DefaultCertificateSecret = "wildcard-tls"
)

// ChartSpec is one entry of the chart catalog.
type ChartSpec struct {
	Repository string
	Chart      string
	Version    string
	Namespace  string
	// Values is a Go template that renders YAML Helm values.
	Values   string
	Disabled bool
}

// DefaultCharts is the built-in chart catalog: the add-ons every cluster
// gets. Environment key charts.<name> overrides any field and may add charts.
var DefaultCharts = map[string]ChartSpec{
	"cert-manager": {
		Repository: "https://charts.jetstack.io",
		Chart:      "cert-manager",
		Version:    "v1.19.1",
		Namespace:  "cert-manager",
		Values: `crds:
  enabled: true
prometheus:
  enabled: {{ .Monitoring.Enabled }}
`,
	},
	"external-dns": {
		Repository: "https://kubernetes-sigs.github.io/external-dns/",
		Chart:      "external-dns",
		Version:    "1.19.0",
		Namespace:  "external-dns",
		Values: `domainFilters: [{{ .Cluster.Domain }}]
txtOwnerId: {{ .Cluster.Name }}
policy: sync
sources: [ingress, service]
`,
	},
	"ingress-nginx": {
		Repository: "https://kubernetes.github.io/ingress-nginx",
		Chart:      "ingress-nginx",
		Version:    "4.13.3",
		Namespace:  "ingress-nginx",
		Values: `controller:
  replicaCount: {{ .Ingress.Replicas }}
  service:
    annotations: {{ toJson .Ingress.ServiceAnnotations }}
  metrics:
    enabled: {{ .Monitoring.Enabled }}
{{- if .DNS.CertificateSecret }}
  extraArgs:
    default-ssl-certificate: {{ .DNS.CertificateSecret }}
{{- end }}
`,
	},
	"kube-prometheus-stack": {
		Repository: "https://prometheus-community.github.io/helm-charts",
		Chart:      "kube-prometheus-stack",
		Version:    "79.5.0",
		Namespace:  "monitoring",
		Values: `prometheus:
  prometheusSpec:
    retention: {{ .Monitoring.Retention }}
grafana:
  admin:
    existingSecret: {{ .Monitoring.GrafanaAdminSecret.Name }}
    userKey: {{ .Monitoring.GrafanaAdminSecret.UserKey }}
    passwordKey: {{ .Monitoring.GrafanaAdminSecret.PasswordKey }}
`,
	},
}
