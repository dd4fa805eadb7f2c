package portal

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Discovery resolves kinds from the API server's discovery documents, one
// group version at a time, remembering each one found. It reads them over
// plain HTTP so that the binary does not carry client-go's discovery and
// OpenAPI packages.
type Discovery struct {
	Client *http.Client
	Host   string

	mu    sync.Mutex
	lists map[schema.GroupVersion]*metav1.APIResourceList
}

// Resolve finds the resource of gvk.
func (d *Discovery) Resolve(ctx context.Context, gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, error) {
	gv := gvk.GroupVersion()
	d.mu.Lock()
	l, ok := d.lists[gv]
	d.mu.Unlock()
	if !ok {
		var err error
		if l, err = d.read(ctx, gv); err != nil {
			return schema.GroupVersionResource{}, false, err
		}
	}
	for _, r := range l.APIResources {
		if r.Kind == gvk.Kind && !strings.Contains(r.Name, "/") {
			d.mu.Lock()
			if d.lists == nil {
				d.lists = map[schema.GroupVersion]*metav1.APIResourceList{}
			}
			d.lists[gv] = l
			d.mu.Unlock()
			return gv.WithResource(r.Name), r.Namespaced, nil
		}
	}
	return schema.GroupVersionResource{}, false, fmt.Errorf("the API server serves no kind %s in %s", gvk.Kind, gv)
}

func (d *Discovery) read(ctx context.Context, gv schema.GroupVersion) (*metav1.APIResourceList, error) {
	path := "/apis/" + gv.String()
	if gv.Group == "" {
		path = "/api/" + gv.Version
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(d.Host, "/")+path, nil)
	if err != nil {
		return nil, fmt.Errorf("cannot ask for %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/json")
	rsp, err := d.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot discover %s: %w", gv, err)
	}
	defer rsp.Body.Close() //nolint:errcheck // a read body's close has nothing to report.
	if rsp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("cannot discover %s: %s", gv, rsp.Status)
	}
	l := &metav1.APIResourceList{}
	if err := json.NewDecoder(rsp.Body).Decode(l); err != nil {
		return nil, fmt.Errorf("cannot read the discovery of %s: %w", gv, err)
	}
	return l, nil
}
