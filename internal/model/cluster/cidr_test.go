package cluster

import (
	"net/netip"
	"testing"
)

func TestSubnet(t *testing.T) {
	cases := map[string]struct {
		reason       string
		p            string
		extra, index int
		want         string
		err          bool
	}{
		"First":      {reason: "The first subnet starts at the network address.", p: "10.0.0.0/16", extra: 3, index: 0, want: "10.0.0.0/19"},
		"Third":      {reason: "Subnets follow each other.", p: "10.0.0.0/16", extra: 3, index: 2, want: "10.0.64.0/19"},
		"Last":       {reason: "The last subnet ends at the broadcast address.", p: "10.0.0.0/16", extra: 3, index: 7, want: "10.0.224.0/19"},
		"CrossOctet": {reason: "Carries cross octets.", p: "192.168.4.0/22", extra: 2, index: 3, want: "192.168.7.0/24"},
		"OutOfRange": {reason: "There are only 2^extra subnets.", p: "10.0.0.0/16", extra: 1, index: 2, err: true},
		"TooSmall":   {reason: "Subnets cannot be smaller than /32.", p: "10.0.0.0/30", extra: 3, index: 0, err: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Subnet(netip.MustParsePrefix(tc.p), tc.extra, tc.index)
			if (err != nil) != tc.err {
				t.Fatalf("%s\nSubnet(%s, %d, %d): error %v, want error %t", tc.reason, tc.p, tc.extra, tc.index, err, tc.err)
			}
			if !tc.err && got.String() != tc.want {
				t.Errorf("%s\nSubnet(%s, %d, %d) = %s, want %s", tc.reason, tc.p, tc.extra, tc.index, got, tc.want)
			}
		})
	}
	if got := HostAddress(netip.MustParsePrefix("10.104.0.0/20"), 10); got.String() != "10.104.0.10" {
		t.Errorf("HostAddress(10.104.0.0/20, 10) = %s, want 10.104.0.10", got)
	}
}
