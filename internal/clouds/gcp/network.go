package gcp

import (
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// Secondary range names of the node subnetwork, used by the cluster's IP
// allocation policy.
const (
	podsRange     = "pods"
	servicesRange = "services"
)

// network renders a custom-mode VPC and the node subnetwork with secondary
// ranges for pods and services.
func network(ctx *registry.Context, n cluster.Network) ([]*registry.Resource, error) {
	reg := region(n.Location)
	return []*registry.Resource{
		{
			Name:         rNetwork,
			Kind:         networkKind,
			ExternalName: base(ctx),
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":               ctx.XR.PlaneID,
				"autoCreateSubnetworks": false,
				"routingMode":           "REGIONAL",
				"description":           "Network of cluster " + base(ctx),
			}}},
		},
		{
			Name:         rSubnet,
			Kind:         subnetworkKind,
			ExternalName: base(ctx) + "-nodes",
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":               ctx.XR.PlaneID,
				"region":                reg,
				"networkSelector":       ctx.Selector(rNetwork),
				"ipCidrRange":           n.CIDR.String(),
				"privateIpGoogleAccess": true,
				"secondaryIpRange": []any{
					map[string]any{"rangeName": podsRange, "ipCidrRange": n.PodsCIDR.String()},
					map[string]any{"rangeName": servicesRange, "ipCidrRange": n.ServicesCIDR.String()},
				},
			}}},
			DependsOn: []string{rNetwork},
		},
	}, nil
}

// egress renders a Cloud Router and Cloud NAT so that private nodes reach
// the internet.
func egress(ctx *registry.Context, e cluster.Egress) ([]*registry.Resource, error) {
	reg := region(e.Location)
	return []*registry.Resource{
		{
			Name:         rRouter,
			Kind:         routerKind,
			ExternalName: base(ctx) + "-router",
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":         ctx.XR.PlaneID,
				"region":          reg,
				"networkSelector": ctx.Selector(rNetwork),
			}}},
			DependsOn: []string{rNetwork},
		},
		{
			Name:         rNAT,
			Kind:         routerNATKind,
			ExternalName: base(ctx) + "-nat",
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":                       ctx.XR.PlaneID,
				"region":                        reg,
				"routerSelector":                ctx.Selector(rRouter),
				"natIpAllocateOption":           "AUTO_ONLY",
				"sourceSubnetworkIpRangesToNat": "ALL_SUBNETWORKS_ALL_IP_RANGES",
				"logConfig":                     map[string]any{"enable": true, "filter": "ERRORS_ONLY"},
			}}},
			DependsOn: []string{rRouter},
		},
	}, nil
}

// egressInUse says what still reaches the internet through the Cloud NAT
// of a cluster made public: its nodes, while the GKE cluster runs private
// ones, which it keeps (privateClusterConfig); "" once it runs none, or
// when there is no NAT to keep.
func egressInUse(observed map[string]*structpb.Struct) string {
	if observed[rNAT] == nil {
		return ""
	}
	if running, _ := privateNodes(observed[rCluster]); !running {
		return ""
	}
	return "the GKE cluster keeps its private nodes (privateClusterConfig.enablePrivateNodes true; only its endpoint is made public, in place), which reach the internet through the Cloud NAT"
}

// privateServices renders private services access in the cluster's
// network, which Cloud SQL needs to join it (the Databases that name the
// Cluster in clusterRef), for as long as the Cluster lives: deleting the
// Cluster, or setting privateServices to false, deletes the range and the
// peering, and GCP refuses to delete the network until they are gone (the
// provider retries). While a Database's Cloud SQL instance uses the
// peering, its Usage (dbInstance) holds the connection's deletion, and
// with it the network's, until the instance is gone; privateServices set
// to false meanwhile holds both (the engine keeps what another XR's Usage
// protects).
//
// Before the Cluster composed them, every GCP Database on a Cluster
// composed the same range and peering itself, with deletionPolicy Orphan
// (the connection ABANDON), and left them in the network for good. The
// Cluster's are the same cloud objects: the range keeps its cloud name,
// <cluster>-db-psa, which the Cluster's GlobalAddress adopts, and the
// connection is created with updateOnCreationFail, which makes it update
// the network's existing peering rather than fail. Nothing is created
// twice, and nothing is deleted.
func privateServices(ctx *registry.Context, _ cluster.PrivateServices) ([]*registry.Resource, error) {
	return privateServicesAccess(ctx, rPrivateServicesRange, rPrivateServicesConnection, psaRangeName(base(ctx)), ctx.Selector(rNetwork), []string{rNetwork}), nil
}

// psaRangeName is the cloud name of the private services range in the
// network of owner: a Cluster's or a standalone Database's cloud name.
func psaRangeName(owner string) string { return owner + "-db-psa" }

// privateServicesAccess renders private services access in the network
// netSel selects: an internal /20 named rangeName reserved for Google's
// services, and the network's peering with them (servicenetworking), as
// the composition resources rangeRes and connRes; both wait for deps.
// Their fields are those the Databases on a Cluster composed before the
// Cluster did, which the cloud cannot change in place: keep them so.
func privateServicesAccess(ctx *registry.Context, rangeRes, connRes, rangeName string, netSel object.Object, deps []string) []*registry.Resource {
	return []*registry.Resource{
		{
			Name:         rangeRes,
			Kind:         globalAddressKind,
			ExternalName: rangeName,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":         ctx.XR.PlaneID,
				"purpose":         "VPC_PEERING",
				"addressType":     "INTERNAL",
				"prefixLength":    20,
				"networkSelector": netSel,
				"description":     "Private services access of Cloud SQL",
			}}},
			DependsOn: deps,
		},
		{
			Name: connRes,
			Kind: serviceConnectionKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"networkSelector":               netSel,
				"service":                       serviceNetworking,
				"reservedPeeringRangesSelector": ctx.Selector(rangeRes),
				// The network may be peered already: by the Databases
				// that composed the Cluster's before it did.
				"updateOnCreationFail": true,
			}}},
			DependsOn: append([]string{rangeRes}, deps...),
		},
	}
}

// needPrivateServices refuses a Cloud SQL instance on Cluster c (nil for
// none) unless the Cluster composes private services access in its network.
// path is the field of the XR that puts the instance there.
func needPrivateServices(c *cluster.Reported, path *field.Path) field.ErrorList {
	if c == nil || c.XR.Parameters.Network.PrivateServices {
		return nil
	}
	return field.ErrorList{field.Invalid(path, c.Ref, fmt.Sprintf(
		"Cloud SQL joins Cluster %q's network through private services access, which the Cluster does not compose: set spec.parameters.network.privateServices to true on Cluster %q (the Service Networking API, servicenetworking.googleapis.com, must be enabled in project %s)",
		c.Ref, c.Ref, c.XR.PlaneID))}
}
