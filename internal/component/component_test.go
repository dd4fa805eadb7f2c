package component

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestByCloudRegister(t *testing.T) {
	cases := map[string]struct {
		reason string
		clouds []string
		want   ByCloud[int]
		panics bool
	}{
		"Each": {
			reason: "Each cloud's fact is kept under its label.",
			clouds: []string{"gcp", "aws"},
			want:   ByCloud[int]{"gcp": 0, "aws": 1},
		},
		"Twice": {
			reason: "A cloud that registers its fact twice is a programming error.",
			clouds: []string{"gcp", "gcp"},
			want:   ByCloud[int]{"gcp": 0},
			panics: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ByCloud[int]{}
			panicked := func() (p bool) {
				defer func() { p = recover() != nil }()
				for i, c := range tc.clouds {
					got.Register(c, i)
				}
				return false
			}()
			if panicked != tc.panics {
				t.Errorf("%s\nRegister(...) panicked: %t, want %t", tc.reason, panicked, tc.panics)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nRegister(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
