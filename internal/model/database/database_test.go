package database

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

func ptr[T any](v T) *T { return &v }

func dbXR(p xr.DatabaseParameters) *xr.Database {
	return &xr.Database{Composite: xr.Composite{Name: "ledger", Namespace: "ns", CloudName: "ledger", Scope: xr.Namespaced}, Parameters: p}
}

func settings() Settings {
	var s Settings
	s.Tiers = map[string]string{"small": "t-small", "medium": "t-medium"}
	s.Location = "env-region"
	return s
}

func TestBuild(t *testing.T) {
	cl := &cluster.Reported{Ref: "prod", Location: "cluster-region", Labels: map[string]string{"crossplane.io/composite": "prod"}}
	type args struct {
		params   xr.DatabaseParameters
		settings func(*Settings)
		cl       *cluster.Reported
	}
	type want struct {
		instance *Instance
		network  *Network
		schemas  []string
		errs     []string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Defaults": {
			reason: "An XR that names nothing gets the built-in defaults, the environment's location and a network of its own, and one database named after it.",
			args:   args{},
			want: want{
				instance: &Instance{Name: "ledger", Location: "env-region", Engine: "postgres", Version: "16", Size: "medium", Tier: "t-medium",
					StorageGB: 20, BackupRetentionDays: 7, DeletionProtection: true, Maintenance: Maintenance{Day: "Sunday", Hour: 3},
					Username: "dbadmin", ConnectionSecret: "ledger-connection", PasswordSecret: "ledger-password", Databases: []string{"ledger"}},
				network: &Network{Name: "ledger", Location: "env-region", CIDR: netip.MustParsePrefix("10.30.0.0/24")},
				schemas: []string{"ledger"},
			},
		},
		"XRWins": {
			reason: "The XR's parameters win over the environment's.",
			args: args{
				params: xr.DatabaseParameters{Version: "15", Size: "small", StorageGB: ptr[int64](100), HighAvailability: ptr(true), BackupRetentionDays: ptr[int64](30),
					DeletionProtection: ptr(false), Location: "xr-region", Databases: []string{"a", "b"}, Network: xr.DatabaseNetwork{CIDR: "10.9.0.0/24"}},
				settings: func(s *Settings) { s.StorageGB = ptr[int64](50); s.HighAvailability = ptr(false) },
			},
			want: want{
				instance: &Instance{Name: "ledger", Location: "xr-region", Engine: "postgres", Version: "15", Size: "small", Tier: "t-small",
					StorageGB: 100, HighAvailability: true, BackupRetentionDays: 30, Maintenance: Maintenance{Day: "Sunday", Hour: 3},
					Username: "dbadmin", ConnectionSecret: "ledger-connection", PasswordSecret: "ledger-password", Databases: []string{"a", "b"}},
				network: &Network{Name: "ledger", Location: "xr-region", CIDR: netip.MustParsePrefix("10.9.0.0/24")},
				schemas: []string{"a", "b"},
			},
		},
		"OnCluster": {
			reason: "Joining a Cluster, the database takes the Cluster's region, and has no range of its own unless the XR gives one.",
			args:   args{cl: cl},
			want: want{
				network: &Network{Name: "ledger", Location: "cluster-region", Cluster: cl},
				schemas: []string{"ledger"},
			},
		},
		"Errors": {
			reason: "Every bad value is named: a version not offered, a size not mapped, a maintenance window that is no window, a region other than the Cluster's.",
			args: args{
				params:   xr.DatabaseParameters{Version: "12", Size: "huge", Location: "elsewhere"},
				settings: func(s *Settings) { s.MaintenanceWindow.Day = "Caturday"; s.MaintenanceWindow.Hour = ptr[int64](25) },
				cl:       cl,
			},
			want: want{errs: []string{
				`spec.parameters.version: Unsupported value: "12": supported values: "14", "15", "16", "17"`,
				`spec.parameters.size: Unsupported value: "huge": supported values: "medium", "small"`,
				`environment.database.maintenanceWindow.day: Unsupported value: "Caturday": supported values: "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"`,
				`environment.database.maintenanceWindow.hour: Invalid value: 25: must be an hour of the day, 0 to 23 (UTC)`,
				`spec.parameters.location: Invalid value: "elsewhere": a database joins Cluster "prod"'s network privately in its region, cluster-region; leave location unset or make it cluster-region`,
			}},
		},
		"OnClusterWithoutLocation": {
			reason: "A Cluster whose location is unknown (none in its spec, none reported in its status) is named with the fields that would give it, never read as an empty region, even beside the XR's own location, which could not be checked against it; the message of a Database without a Cluster is not given.",
			args:   args{params: xr.DatabaseParameters{Location: "xr-region"}, cl: &cluster.Reported{Ref: "prod", Labels: map[string]string{"crossplane.io/composite": "prod"}}},
			want: want{errs: []string{
				`spec.parameters.clusterRef.name: Invalid value: "prod": Cluster "prod" has no location: it names none in spec.parameters.location and reports none in status.location; set the Cluster's spec.parameters.location or its environment's location`,
			}},
		},
		"OnClusterWithoutLocationNorOwn": {
			reason: "Without a location of its own either, the Cluster's missing location is the one error: the environment's database.location is not a Cluster's region.",
			args:   args{cl: &cluster.Reported{Ref: "prod", Labels: map[string]string{"crossplane.io/composite": "prod"}}},
			want: want{errs: []string{
				`spec.parameters.clusterRef.name: Invalid value: "prod": Cluster "prod" has no location: it names none in spec.parameters.location and reports none in status.location; set the Cluster's spec.parameters.location or its environment's location`,
			}},
		},
		"NoLocationNoTiers": {
			reason: "Without a location anywhere, or tiers in the environment, the fields to set are named.",
			args:   args{settings: func(s *Settings) { s.Location = ""; s.Tiers = nil }},
			want: want{errs: []string{
				`spec.parameters.size: Invalid value: "medium": the environment maps no size classes to server tiers (key database.tiers); add them to the cloud's EnvironmentConfig`,
				`spec.parameters.location: Required value: the region of the database: set it, name a Cluster in clusterRef, or set the environment's database.location`,
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := settings()
			if tc.args.settings != nil {
				tc.args.settings(&s)
			}
			p, errs := Build(dbXR(tc.args.params), s, tc.args.cl, Engine{}, Server{})
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want.errs, got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("%s\nBuild(...) errors: -want, +got:\n%s", tc.reason, diff)
			}
			if len(tc.want.errs) > 0 {
				return
			}
			opts := []cmp.Option{cmpopts.IgnoreFields(Instance{}, "Network"), cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })}
			if tc.want.instance != nil {
				if diff := cmp.Diff(tc.want.instance, p.Instance, opts...); diff != "" {
					t.Errorf("%s\nBuild(...).Instance: -want, +got:\n%s", tc.reason, diff)
				}
			}
			if diff := cmp.Diff(tc.want.network, p.Network, opts...); diff != "" {
				t.Errorf("%s\nBuild(...).Network: -want, +got:\n%s", tc.reason, diff)
			}
			var schemas []string
			for _, sc := range p.Schemas {
				schemas = append(schemas, sc.Name)
			}
			if diff := cmp.Diff(tc.want.schemas, schemas); diff != "" {
				t.Errorf("%s\nBuild(...).Schemas: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRemoval(t *testing.T) {
	p, errs := Build(dbXR(xr.DatabaseParameters{Databases: []string{"a"}}), settings(), nil, Engine{}, Server{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	cases := map[string]struct {
		id     string
		bySpec bool
	}{
		"DatabaseStillWanted": {id: "database/a"},
		"DatabaseRemoved":     {id: "database/b", bySpec: true},
		"Instance":            {id: "instance"},
		"Network":             {id: "db-network"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if r := p.Removal(tc.id); r.BySpec != tc.bySpec || r.Why == "" {
				t.Errorf("Removal(%q) = %+v, want bySpec %t with a reason", tc.id, r, tc.bySpec)
			}
		})
	}
}

func TestEstimate(t *testing.T) {
	s := settings()
	s.Prices.Tiers = map[string]float64{"t-medium": 0.152}
	s.Prices.StorageGBMonth = ptr(0.115)
	cases := map[string]struct {
		reason  string
		params  xr.DatabaseParameters
		want    float64
		missing []string
	}{
		"Single":  {reason: "The tier for the month and the storage.", params: xr.DatabaseParameters{StorageGB: ptr[int64](50)}, want: 0.152*730 + 50*0.115},
		"HA":      {reason: "A standby doubles the server's cost, not the storage's.", params: xr.DatabaseParameters{StorageGB: ptr[int64](50), HighAvailability: ptr(true)}, want: 2*0.152*730 + 50*0.115},
		"NoPrice": {reason: "A tier without a price is left out and named.", params: xr.DatabaseParameters{Size: "small"}, want: 20 * 0.115, missing: []string{"database.prices.tiers.t-small"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := Build(dbXR(tc.params), s, nil, Engine{}, Server{})
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			env := envcfg.New(nil)
			got := p.Estimate(env, s)
			if diff := cmp.Diff(float64(int64(tc.want*100+0.5))/100, got); diff != "" {
				t.Errorf("%s\nEstimate(...): -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.missing, env.Missing(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nmissing keys: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// The components report into the module's conditions and are named by the
// IDs the removal rules know.
func TestComponents(t *testing.T) {
	p, errs := Build(dbXR(xr.DatabaseParameters{Databases: []string{"a"}}), settings(), nil, Engine{}, Server{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, c := range p.Components {
		got = append(got, string(c.Kind())+" "+c.ID()+" "+c.Condition())
	}
	want := []string{"DatabaseNetwork db-network NetworkReady", "DatabaseInstance instance DatabaseReady", "DatabaseSchema database/a DatabaseReady"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("components: -want, +got:\n%s", diff)
	}
}
