package names

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShorten(t *testing.T) {
	type args struct {
		s   string
		max int
	}
	cases := map[string]struct {
		reason string
		args   args
		want   string
	}{
		"Fits": {
			reason: "A name within the limit is returned unchanged.",
			args:   args{s: "prod-cluster-nodes", max: 30},
			want:   "prod-cluster-nodes",
		},
		"TooLong": {
			reason: "A long name keeps a prefix and gets a hash of the whole, within the limit.",
			args:   args{s: "a-really-long-production-cluster-nodes", max: 30},
			want:   "a-really-long-productio-385caf",
		},
		"TrailingDashTrimmed": {
			reason: "The kept prefix does not end in a separator before the hash.",
			args:   args{s: "abcdefghijklmnopqrstuv-wxyz-more", max: 30},
			want:   "abcdefghijklmnopqrstuv-fbf123",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Shorten(tc.args.s, tc.args.max)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nShorten(%q, %d): -want, +got:\n%s", tc.reason, tc.args.s, tc.args.max, diff)
			}
			if len(got) > tc.args.max {
				t.Errorf("%s\nShorten(%q, %d) = %q is longer than %d", tc.reason, tc.args.s, tc.args.max, got, tc.args.max)
			}
		})
	}
}

func TestShortenKeepsLongNamesApart(t *testing.T) {
	a := Shorten("shared-prefix-of-a-long-cluster-name-one", 30)
	b := Shorten("shared-prefix-of-a-long-cluster-name-two", 30)
	if a == b {
		t.Errorf("Shorten gave two different long names the same result %q", a)
	}
}
