package main

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

type summary struct {
	Desired      []string
	NotReady     []string
	Conditions   map[string]string
	Status       map[string]any
	Requirements []string
	Warnings     []string
	TTL          time.Duration
}

func summarise(rsp *fnv1.RunFunctionResponse, statusKeys ...string) summary {
	s := summary{Conditions: map[string]string{}, Status: map[string]any{}, TTL: rsp.GetMeta().GetTtl().AsDuration()}
	for name, r := range rsp.GetDesired().GetResources() {
		o := r.GetResource().AsMap()
		s.Desired = append(s.Desired, name+" "+o["kind"].(string)+" "+o["apiVersion"].(string))
		if r.GetReady() != fnv1.Ready_READY_TRUE {
			s.NotReady = append(s.NotReady, name)
		}
	}
	slices.Sort(s.Desired)
	slices.Sort(s.NotReady)
	for _, c := range rsp.GetConditions() {
		s.Conditions[c.GetType()] = strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_") + "/" + c.GetReason()
	}
	st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"]
	for _, k := range statusKeys {
		if v, ok := st.(map[string]any)[k]; ok {
			s.Status[k] = v
		}
	}
	s.Requirements = slices.Sorted(maps.Keys(rsp.GetRequirements().GetResources()))
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING {
			s.Warnings = append(s.Warnings, r.GetMessage())
		}
	}
	return s
}

func TestRunFunction(t *testing.T) {
	type args struct {
		req fntest.Request
	}
	type want struct {
		summary summary
	}
	exampleXR := fntest.MustLoad("examples/gcp/cluster.yaml")[0]
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"GCPNamespacedFirstRender": {
			reason: "A new namespaced XR composes, in the .m. groups, only what has no prerequisites; the rest waits for them, whose changes re-run the XR: the TTL is the ready one.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(), EnvironmentConfigs: envs}},
			want: want{summary: summary{
				Desired: []string{
					"dns-identity ServiceAccount cloudplatform.gcp.m.upbound.io/v1beta1",
					"network Network compute.gcp.m.upbound.io/v1beta1",
					"node-service-account ServiceAccount cloudplatform.gcp.m.upbound.io/v1beta1",
					"public-dns-zone ManagedZone dns.gcp.m.upbound.io/v1beta1",
				},
				NotReady: []string{"dns-identity", "network", "node-service-account", "public-dns-zone"},
				Conditions: map[string]string{
					"NetworkReady": "FALSE/Waiting", "ClusterReady": "FALSE/Waiting", "NodePoolsReady": "FALSE/Waiting",
					"AddonsReady": "FALSE/Waiting", "DnsReady": "FALSE/Waiting", "RemovalsSettled": "TRUE/NothingHeld", "Upgrading": "FALSE/UpToDate",
				},
				Status: map[string]any{"nodePools": []any{
					map[string]any{"name": "general", "machineType": "e2-standard-2", "minNodes": 2.0, "maxNodes": 4.0, "spot": false, "ready": false, "resource": "nodepool-general"},
					map[string]any{"name": "gpu", "machineType": "g2-standard-8", "minNodes": 0.0, "maxNodes": 2.0, "spot": true, "ready": false, "resource": "nodepool-gpu"},
				}},
				TTL: ttlReady,
			}},
		},
		"GCPLegacyFirstRender": {
			reason: "A cluster-scoped XR composes the legacy groups at the versions provider-upjet-gcp v3 serves.",
			args:   args{req: fntest.Request{XR: fntest.GCPXR(fntest.Legacy), EnvironmentConfigs: envs}},
			want: want{summary: summary{
				Desired: []string{
					"dns-identity ServiceAccount cloudplatform.gcp.upbound.io/v1beta1",
					"network Network compute.gcp.upbound.io/v1beta1",
					"node-service-account ServiceAccount cloudplatform.gcp.upbound.io/v1beta1",
					"public-dns-zone ManagedZone dns.gcp.upbound.io/v1beta2",
				},
				NotReady: []string{"dns-identity", "network", "node-service-account", "public-dns-zone"},
				Conditions: map[string]string{
					"NetworkReady": "FALSE/Waiting", "ClusterReady": "FALSE/Waiting", "NodePoolsReady": "FALSE/Waiting",
					"AddonsReady": "FALSE/Waiting", "DnsReady": "FALSE/Waiting", "RemovalsSettled": "TRUE/NothingHeld", "Upgrading": "FALSE/UpToDate",
				},
				TTL: ttlReady,
			}},
		},
		"EnvironmentRequested": {
			reason: "Without EnvironmentConfigs in the context or the step's requirement, the function asks for them and keeps what exists.",
			args: args{req: fntest.Request{XR: fntest.GCPXR(), Observed: map[string]fntest.Object{"network": {
				"apiVersion": "compute.gcp.m.upbound.io/v1beta1", "kind": "Network",
				"metadata": map[string]any{"name": "edge-abcde", "annotations": map[string]any{"platform.example.org/component": "network"}},
				"spec":     map[string]any{"forProvider": map[string]any{"project": "edge-project-42"}},
			}}}},
			want: want{summary: summary{
				Desired:      []string{"network Network compute.gcp.m.upbound.io/v1beta1"},
				NotReady:     []string{"network"},
				Conditions:   map[string]string{},
				Requirements: []string{envcfg.FallbackRequirementName},
				TTL:          ttlConverging,
			}},
		},
		"EnvironmentFromContext": {
			reason: "An environment in the pipeline context (function-environment-configs) is used as is, without a requirement.",
			args: args{req: fntest.Request{XR: fntest.GCPXR(), Context: fntest.Object{envcfg.ContextKey: fntest.Object{
				"apiVersion": "internal.crossplane.io/v1alpha1", "kind": "Environment",
				"sizes":   map[string]any{"small": "e2-standard-2"},
				"tenancy": map[string]any{"namespaces": map[string]any{"team-edge": map[string]any{"hosts": []any{"edge.example.net"}}}},
			}}}},
			want: want{summary: summary{
				Desired: []string{
					"dns-identity ServiceAccount cloudplatform.gcp.m.upbound.io/v1beta1",
					"network Network compute.gcp.m.upbound.io/v1beta1",
					"node-service-account ServiceAccount cloudplatform.gcp.m.upbound.io/v1beta1",
					"public-dns-zone ManagedZone dns.gcp.m.upbound.io/v1beta1",
				},
				NotReady: []string{"dns-identity", "network", "node-service-account", "public-dns-zone"},
				Conditions: map[string]string{
					"NetworkReady": "FALSE/Waiting", "ClusterReady": "FALSE/Waiting", "NodePoolsReady": "FALSE/Waiting",
					"AddonsReady": "FALSE/Waiting", "DnsReady": "FALSE/Waiting", "RemovalsSettled": "TRUE/NothingHeld", "Upgrading": "FALSE/UpToDate",
				},
				Warnings: []string{"the environment lacks keys the platform needs: lifecycle.versions, prices.controlPlanePerHour, prices.machineTypes.e2-standard-2, prices.machineTypes.g2-standard-8, prices.spotMachineTypes.g2-standard-8"},
				TTL:      ttlReady,
			}},
		},
		"Converged": {
			reason: "With the whole stack observed ready, every resource is desired and ready, the conditions are True and the status is filled.",
			args:   args{req: fntest.Request{XR: exampleXR, EnvironmentConfigs: envs, Observed: fntest.ObservedFile("examples/gcp/observed/cluster.yaml")}},
			want: want{summary: summary{
				Desired: slices.Sorted(maps.Keys(func() map[string]bool {
					m := map[string]bool{}
					for name, o := range fntest.ObservedFile("examples/gcp/observed/cluster.yaml") {
						m[name+" "+o["kind"].(string)+" "+o["apiVersion"].(string)] = true
					}
					return m
				}())),
				Conditions: map[string]string{
					"NetworkReady": "TRUE/Available", "ClusterReady": "TRUE/Available", "NodePoolsReady": "TRUE/Available",
					"AddonsReady": "TRUE/Available", "DnsReady": "TRUE/Available", "RemovalsSettled": "TRUE/NothingHeld", "Upgrading": "FALSE/UpToDate",
				},
				Status: map[string]any{
					"clusterEndpoint": "https://34.113.152.149",
					"oidcIssuer":      "https://container.googleapis.com/v1/projects/my-project-123/locations/us-central1/clusters/prod-cluster",
					"dnsNameServers":  []any{"ns-cloud-a1.googledomains.com.", "ns-cloud-a2.googledomains.com.", "ns-cloud-a3.googledomains.com.", "ns-cloud-a4.googledomains.com."},
				},
				TTL: ttlReady,
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req, err := tc.args.req.Proto()
			if err != nil {
				t.Fatal(err)
			}
			rsp := run(req)
			if msg := fntest.Fatal(rsp); msg != "" {
				t.Fatalf("%s\nRunFunction(...): unexpected Fatal: %s", tc.reason, msg)
			}
			keys := slices.Collect(maps.Keys(tc.want.summary.Status))
			if diff := cmp.Diff(tc.want.summary, summarise(rsp, keys...), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// entry is one composed resource of an inventory: its name, kind and
// apiVersions for namespaced and cluster-scoped XRs.
type entry struct{ name, kind, namespaced, cluster string }

func (e entry) line(namespaced bool) string {
	if namespaced {
		return e.name + " " + e.kind + " " + e.namespaced
	}
	return e.name + " " + e.kind + " " + e.cluster
}

// upjet is an entry of a provider-upjet kind: group "compute.gcp" becomes
// compute.gcp.m.upbound.io/v1beta1 and compute.gcp.upbound.io/<legacy>.
func upjet(name, kind, group, legacy string) entry {
	return entry{name, kind, group + ".m.upbound.io/v1beta1", group + ".upbound.io/" + legacy}
}

// addons is what every cloud composes inside the cluster.
var addons = []entry{
	{"helm-provider-config", "ProviderConfig", "helm.m.crossplane.io/v1beta1", "helm.crossplane.io/v1beta1"},
	{"kubernetes-provider-config", "ProviderConfig", "kubernetes.m.crossplane.io/v1alpha1", "kubernetes.crossplane.io/v1alpha1"},
	{"release-cert-manager", "Release", "helm.m.crossplane.io/v1beta1", "helm.crossplane.io/v1beta1"},
	{"release-ingress-nginx", "Release", "helm.m.crossplane.io/v1beta1", "helm.crossplane.io/v1beta1"},
	{"release-kube-prometheus-stack", "Release", "helm.m.crossplane.io/v1beta1", "helm.crossplane.io/v1beta1"},
	{"release-external-dns", "Release", "helm.m.crossplane.io/v1beta1", "helm.crossplane.io/v1beta1"},
	{"cluster-issuer", "Object", "kubernetes.m.crossplane.io/v1alpha1", "kubernetes.crossplane.io/v1alpha2"},
	{"domain-certificate", "Object", "kubernetes.m.crossplane.io/v1alpha1", "kubernetes.crossplane.io/v1alpha2"},
}

var gcpInventory = append([]entry{
	upjet("network", "Network", "compute.gcp", "v1beta1"),
	upjet("subnet", "Subnetwork", "compute.gcp", "v1beta2"),
	upjet("router", "Router", "compute.gcp", "v1beta2"),
	upjet("nat", "RouterNAT", "compute.gcp", "v1beta2"),
	upjet("node-service-account", "ServiceAccount", "cloudplatform.gcp", "v1beta1"),
	upjet("node-iam-container-defaultnodeserviceaccount", "ProjectIAMMember", "cloudplatform.gcp", "v1beta2"),
	upjet("node-iam-artifactregistry-reader", "ProjectIAMMember", "cloudplatform.gcp", "v1beta2"),
	upjet("cluster", "Cluster", "container.gcp", "v1beta2"),
	upjet("nodepool-general", "NodePool", "container.gcp", "v1beta2"),
	upjet("nodepool-gpu", "NodePool", "container.gcp", "v1beta2"),
	upjet("public-dns-zone", "ManagedZone", "dns.gcp", "v1beta2"),
	upjet("private-dns-zone", "ManagedZone", "dns.gcp", "v1beta2"),
	upjet("dns-identity", "ServiceAccount", "cloudplatform.gcp", "v1beta1"),
	upjet("dns-zone-admin", "ManagedZoneIAMMember", "dns.gcp", "v1beta2"),
	upjet("dns-zone-reader", "ProjectIAMMember", "cloudplatform.gcp", "v1beta2"),
	upjet("dns-workload-user-cert-manager", "ServiceAccountIAMMember", "cloudplatform.gcp", "v1beta2"),
	upjet("dns-workload-user-external-dns", "ServiceAccountIAMMember", "cloudplatform.gcp", "v1beta2"),
}, addons...)

var awsInventory = func() []entry {
	out := []entry{
		upjet("network", "VPC", "ec2.aws", "v1beta1"),
		upjet("internet-gateway", "InternetGateway", "ec2.aws", "v1beta1"),
		upjet("public-route-table", "RouteTable", "ec2.aws", "v1beta1"),
		upjet("public-route", "Route", "ec2.aws", "v1beta2"),
		upjet("private-route-table", "RouteTable", "ec2.aws", "v1beta1"),
		upjet("private-route", "Route", "ec2.aws", "v1beta2"),
		upjet("nat-eip", "EIP", "ec2.aws", "v1beta1"),
		upjet("nat", "NATGateway", "ec2.aws", "v1beta1"),
		upjet("cluster-role", "Role", "iam.aws", "v1beta1"),
		upjet("cluster-role-eks-cluster", "RolePolicyAttachment", "iam.aws", "v1beta1"),
		upjet("node-role", "Role", "iam.aws", "v1beta1"),
		upjet("node-role-eks-worker-node", "RolePolicyAttachment", "iam.aws", "v1beta1"),
		upjet("node-role-eks-cni", "RolePolicyAttachment", "iam.aws", "v1beta1"),
		upjet("node-role-ecr-read-only", "RolePolicyAttachment", "iam.aws", "v1beta1"),
		upjet("ebs-csi-role", "Role", "iam.aws", "v1beta1"),
		upjet("ebs-csi-role-ebs-csi-driver", "RolePolicyAttachment", "iam.aws", "v1beta1"),
		upjet("ebs-csi-pod-identity", "PodIdentityAssociation", "eks.aws", "v1beta1"),
		upjet("cluster", "Cluster", "eks.aws", "v1beta2"),
		upjet("cluster-auth", "ClusterAuth", "eks.aws", "v1beta1"),
		upjet("addon-vpc-cni", "Addon", "eks.aws", "v1beta1"),
		upjet("addon-kube-proxy", "Addon", "eks.aws", "v1beta1"),
		upjet("addon-coredns", "Addon", "eks.aws", "v1beta1"),
		upjet("addon-eks-pod-identity-agent", "Addon", "eks.aws", "v1beta1"),
		upjet("addon-aws-ebs-csi-driver", "Addon", "eks.aws", "v1beta1"),
		upjet("access-entry-platform-admins", "AccessEntry", "eks.aws", "v1beta1"),
		{"cluster-admin-binding", "Object", "kubernetes.m.crossplane.io/v1alpha1", "kubernetes.crossplane.io/v1alpha2"},
		upjet("nodepool-general", "NodeGroup", "eks.aws", "v1beta2"),
		upjet("nodepool-gpu", "NodeGroup", "eks.aws", "v1beta2"),
		upjet("public-dns-zone", "Zone", "route53.aws", "v1beta1"),
		upjet("private-dns-zone", "Zone", "route53.aws", "v1beta1"),
		upjet("dns-identity", "Role", "iam.aws", "v1beta1"),
		upjet("dns-zone-access", "RolePolicy", "iam.aws", "v1beta1"),
		upjet("dns-pod-identity-cert-manager", "PodIdentityAssociation", "eks.aws", "v1beta1"),
		upjet("dns-pod-identity-external-dns", "PodIdentityAssociation", "eks.aws", "v1beta1"),
	}
	for _, z := range []string{"a", "b", "c"} {
		for _, tier := range []string{"public", "private"} {
			out = append(out,
				upjet("subnet-"+tier+"-"+z, "Subnet", "ec2.aws", "v1beta1"),
				upjet("subnet-"+tier+"-"+z+"-route-table", "RouteTableAssociation", "ec2.aws", "v1beta1"))
		}
	}
	return append(out, addons...)
}()

var azureInventory = append([]entry{
	upjet("resource-group", "ResourceGroup", "azure", "v1beta1"),
	upjet("network", "VirtualNetwork", "network.azure", "v1beta2"),
	upjet("subnet", "Subnet", "network.azure", "v1beta2"),
	upjet("nat-public-ip", "PublicIP", "network.azure", "v1beta1"),
	upjet("nat", "NATGateway", "network.azure", "v1beta1"),
	upjet("nat-subnet-association", "SubnetNATGatewayAssociation", "network.azure", "v1beta1"),
	upjet("control-plane-identity", "UserAssignedIdentity", "managedidentity.azure", "v1beta1"),
	upjet("network-role-assignment", "RoleAssignment", "authorization.azure", "v1beta1"),
	upjet("cluster", "KubernetesCluster", "containerservice.azure", "v1beta2"),
	upjet("nodepool-general", "KubernetesClusterNodePool", "containerservice.azure", "v1beta2"),
	upjet("nodepool-gpu", "KubernetesClusterNodePool", "containerservice.azure", "v1beta2"),
	upjet("public-dns-zone", "DNSZone", "network.azure", "v1beta2"),
	upjet("private-dns-zone", "PrivateDNSZone", "network.azure", "v1beta2"),
	upjet("private-dns-zone-link", "PrivateDNSZoneVirtualNetworkLink", "network.azure", "v1beta1"),
	upjet("dns-identity", "UserAssignedIdentity", "managedidentity.azure", "v1beta1"),
	upjet("dns-federation-cert-manager", "FederatedIdentityCredential", "managedidentity.azure", "v1beta1"),
	upjet("dns-federation-external-dns", "FederatedIdentityCredential", "managedidentity.azure", "v1beta1"),
	upjet("dns-zone-contributor", "RoleAssignment", "authorization.azure", "v1beta1"),
	{"external-dns-azure-config", "Object", "kubernetes.m.crossplane.io/v1alpha1", "kubernetes.crossplane.io/v1alpha2"},
}, addons...)
