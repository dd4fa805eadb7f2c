package xr

import (
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"
)

// FuzzDecodeValidate feeds arbitrary JSON objects to Decode and Validate.
// Neither may panic, and an XR that passes both must have the properties
// the rest of the function relies on. The seed corpus lives in
// testdata/fuzz/FuzzDecodeValidate.
func FuzzDecodeValidate(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"a","namespace":"b","labels":{"cloud":"gcp","planeId":"p-123456"}},"spec":{"parameters":{"location":"us-central1","pools":{"a":{"minNodes":1,"maxNodes":2}}}}}`))
	f.Add([]byte(`{"spec":{"parameters":{"pools":{"A_b":{"taints":[{"key":"k","effect":"NoSchedule"}]},"a-b":{}},"budget":{"limitUsd":-1,"thresholds":[1e308]}}}}`))
	f.Add([]byte(`{"spec":{"parameters":{"network":{"cidr":"10.0.0.0/8","podsCidr":"::/0"},"import":{"enabled":true,"resources":{"x":""}}},"forProvider":[]}}`))
	clouds := []string{"aws", "azure", "gcp"}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return
		}
		s, err := structpb.NewStruct(m)
		if err != nil {
			return
		}
		x, errs := Decode(s)
		if x == nil {
			t.Fatal("Decode returned no XR")
		}
		if len(errs) > 0 {
			return
		}
		if len(Validate(x, clouds)) > 0 || len(RequireLocation(x)) > 0 {
			return
		}
		seen := map[string]bool{}
		for _, p := range x.Parameters.Pools {
			if seen[p.Name] {
				t.Errorf("valid XR has two pools named %q", p.Name)
			}
			seen[p.Name] = true
			if p.MinNodes != nil && p.MaxNodes != nil && *p.MinNodes > *p.MaxNodes {
				t.Errorf("valid XR has pool %q with min %d > max %d", p.Key, *p.MinNodes, *p.MaxNodes)
			}
		}
		if x.Parameters.Location == "" || x.Cloud == "" {
			t.Errorf("valid XR without location or cloud: %+v", x)
		}
	})
}
