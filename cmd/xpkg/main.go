// Command xpkg builds the function's package without Docker and checks it.
//
//	xpkg image --dockerfile=Dockerfile --binary=function --out=image.tar
//	xpkg check --package=function-cluster-platform.xpkg
//
// image assembles the OCI runtime image as a tarball from the static binary:
// an empty base, one layer with the binary and a non-root user, and the
// entrypoint, user and port of the Dockerfile's final stage, which it reads so
// that the two builds cannot disagree. crossplane xpkg build then embeds the
// tarball with --embed-runtime-image-tarball.
//
// check opens the built package and fails unless it holds the Function's
// metadata, the Input CRD and the runtime layer with the binary.
//
// It is a module of its own, so that go-containerregistry stays out of the
// function's module (as the crossplane CLI's pin does in tools/go.mod).
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: xpkg image|check [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "image":
		err = image(os.Args[2:])
	case "check":
		err = check(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "xpkg:", err)
		os.Exit(1)
	}
}

// stage is what the image needs from the Dockerfile's final stage.
type stage struct {
	binary     string // path of the binary in the image
	entrypoint []string
	user       string
	ports      []string
}

// users maps the named users of distroless images to their IDs.
var users = map[string]string{"nonroot": "65532", "root": "0"}

// parseDockerfile reads the final stage of a Dockerfile.
func parseDockerfile(p string) (stage, error) {
	b, err := os.ReadFile(p) //nolint:gosec // the repository's Dockerfile
	if err != nil {
		return stage{}, err
	}
	var s stage
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			s = stage{} // only the final stage counts
		case "COPY":
			if len(f) >= 3 && strings.HasPrefix(f[1], "--from=") {
				s.binary = f[len(f)-1]
			}
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(sc.Text(), f[0]))), &s.entrypoint); err != nil {
				return stage{}, fmt.Errorf("ENTRYPOINT must be in exec form: %w", err)
			}
		case "USER":
			ids := []string{}
			for _, u := range strings.Split(f[1], ":") {
				if id, ok := users[u]; ok {
					u = id
				}
				ids = append(ids, u)
			}
			s.user = strings.Join(ids, ":")
		case "EXPOSE":
			for _, port := range f[1:] {
				if !strings.Contains(port, "/") {
					port += "/tcp"
				}
				s.ports = append(s.ports, port)
			}
		}
	}
	if s.binary == "" || len(s.entrypoint) == 0 || s.user == "" || len(s.ports) == 0 {
		return stage{}, fmt.Errorf("%s: the final stage needs COPY --from of the binary, ENTRYPOINT, USER and EXPOSE: got %+v", p, s)
	}
	return s, nil
}

func image(args []string) error {
	fs := flag.NewFlagSet("image", flag.ExitOnError)
	dockerfile := fs.String("dockerfile", "Dockerfile", "the Dockerfile whose final stage the image follows")
	binary := fs.String("binary", "", "the static binary")
	out := fs.String("out", "image.tar", "the OCI image tarball to write")
	arch := fs.String("arch", runtime.GOARCH, "the binary's architecture")
	tag := fs.String("tag", "function-cluster-platform:latest", "the image's tag in the tarball")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := parseDockerfile(*dockerfile)
	if err != nil {
		return err
	}
	bin, err := os.ReadFile(*binary)
	if err != nil {
		return err
	}
	layerTar, err := layer(s.binary, bin)
	if err != nil {
		return err
	}
	l, err := tarball.LayerFromReader(bytes.NewReader(layerTar))
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return err
	}
	ports := map[string]struct{}{}
	for _, p := range s.ports {
		ports[p] = struct{}{}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.Architecture = *arch
	cf.OS = "linux"
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cf.Config = v1.Config{
		Entrypoint:   s.entrypoint,
		User:         s.user,
		ExposedPorts: ports,
		WorkingDir:   "/",
		Env:          []string{"PATH=/"},
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return err
	}
	ref, err := name.ParseReference(*tag)
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(*out, ref, img); err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s: %s, %s, entrypoint %v, user %s, ports %v\n", *out, d, *arch, s.entrypoint, s.user, s.ports)
	return nil
}

// layer is a reproducible tar with the binary and the files that give the
// non-root user a name.
func layer(binPath string, bin []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0).UTC()
	files := []struct {
		name string
		mode int64
		data []byte
	}{
		{"etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{"etc/group", 0o644, []byte("root:x:0:\nnonroot:x:65532:\n")},
		{strings.TrimPrefix(binPath, "/"), 0o755, bin},
	}
	for _, dir := range []string{"etc/", "home/", "home/nonroot/", "tmp/"} {
		mode := int64(0o755)
		if dir == "tmp/" {
			mode = 0o1777
		}
		h := &tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: mode, ModTime: epoch}
		if dir == "home/nonroot/" {
			h.Uid, h.Gid = 65532, 65532
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: epoch}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func check(args []string) error {
	fs := flag.NewFlagSet("check", flag.ExitOnError)
	pkg := fs.String("package", "", "the .xpkg to check")
	binary := fs.String("binary", "function", "path of the runtime binary in the image")
	if err := fs.Parse(args); err != nil {
		return err
	}
	img, err := tarball.ImageFromPath(*pkg, nil)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	var meta, inputCRD, runtimeBinary bool
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return err
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			switch {
			case path.Clean(h.Name) == path.Clean(*binary) && h.Mode&0o111 != 0 && h.Size > 0:
				runtimeBinary = true
			case path.Base(h.Name) == "package.yaml":
				b, err := io.ReadAll(tr)
				if err != nil {
					return err
				}
				for _, doc := range strings.Split(string(b), "\n---") {
					o := map[string]any{}
					if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
						continue
					}
					md, _ := o["metadata"].(map[string]any)
					switch {
					case o["apiVersion"] == "meta.pkg.crossplane.io/v1" && o["kind"] == "Function":
						caps, _ := o["spec"].(map[string]any)["capabilities"].([]any)
						meta = len(caps) > 0 && caps[0] == "composition"
					case o["kind"] == "CustomResourceDefinition" && md["name"] == "inputs.platform.fn.example.org":
						inputCRD = true
					}
				}
			}
		}
		_ = rc.Close()
	}
	fmt.Printf("%s: %d layers; Function metadata with composition capability: %t; Input CRD: %t; runtime binary /%s: %t; entrypoint %v, user %s, ports %v\n",
		*pkg, len(layers), meta, inputCRD, *binary, runtimeBinary, cf.Config.Entrypoint, cf.Config.User, keys(cf.Config.ExposedPorts))
	if !meta || !inputCRD || !runtimeBinary {
		return errors.New("the package is incomplete")
	}
	if len(cf.Config.Entrypoint) == 0 || cf.Config.User == "" || cf.Config.User == "0" {
		return errors.New("the runtime must have an entrypoint and run as a non-root user")
	}
	return nil
}

func keys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
