package images

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Spec is one image: Repository:Tag, and the content of /etc/app-version ("" for none).
type Spec struct {
	Repository, Tag string
	Version         string
	// Command is the image's entrypoint.
	Command []string
	// Files are executables added at the image's root, by name (e.g. Kruise's binaries).
	Files map[string][]byte
}

// Ref is the image reference in the registry at host (e.g. 127.0.0.1:5000).
func (s Spec) Ref(host string) string { return fmt.Sprintf("%s/%s:%s", host, s.Repository, s.Tag) }

// loop runs until SIGTERM and exits 0 at once on it: a container that stops within its grace period.
var loop = []string{"/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1 & wait $!; done"}

// Standard are the images every real node gets: the pod sandbox (pause) image, and app:v1 and
// app:v2, whose /etc/app-version says their version, plus app:v2-retag, the same content as app:v2
// (the same digest) under another tag, for the same-imageID update case.
var Standard = []Spec{
	{Repository: "pause", Tag: "3.10", Command: loop},
	{Repository: "app", Tag: "v1", Version: "v1", Command: loop},
	{Repository: "app", Tag: "v2", Version: "v2", Command: loop},
	{Repository: "app", Tag: "v2-retag", Version: "v2", Command: loop},
}

// busyboxApplets are the commands linked to busybox in every image.
var busyboxApplets = []string{"sh", "sleep", "cat", "echo", "ls", "true", "false", "env"}

// Build makes the image of spec from the busybox binary.
func Build(busybox []byte, spec Spec) (v1.Image, error) {
	base, err := layer(func(w *tar.Writer) error {
		if err := dir(w, "bin/"); err != nil {
			return err
		}
		if err := file(w, "bin/busybox", busybox, 0o755); err != nil {
			return err
		}
		for _, applet := range busyboxApplets {
			if err := w.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + applet, Linkname: "busybox",
				Mode: 0o777, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	layers := []v1.Layer{base}
	if spec.Version != "" {
		version, err := layer(func(w *tar.Writer) error {
			if err := dir(w, "etc/"); err != nil {
				return err
			}
			return file(w, "etc/app-version", []byte(spec.Version+"\n"), 0o644)
		})
		if err != nil {
			return nil, err
		}
		layers = append(layers, version)
	}
	if len(spec.Files) > 0 {
		names := make([]string, 0, len(spec.Files))
		for n := range spec.Files {
			names = append(names, n)
		}
		sort.Strings(names)
		files, err := layer(func(w *tar.Writer) error {
			for _, n := range names {
				if err := file(w, n, spec.Files[n], 0o755); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		layers = append(layers, files)
	}
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64" // without a platform containerd does not match the image
	cfg.Config.Entrypoint = spec.Command
	cfg.Config.Env = []string{"PATH=/bin"}
	if spec.Version != "" {
		cfg.Config.Labels = map[string]string{"app-version": spec.Version}
	}
	return mutate.ConfigFile(img, cfg)
}

// Push builds every spec and writes it to the plain-HTTP registry at host. It returns each
// reference's manifest digest.
func Push(ctx context.Context, host string, busybox []byte, specs []Spec) (map[string]v1.Hash, error) {
	out := map[string]v1.Hash{}
	for _, s := range specs {
		img, err := Build(busybox, s)
		if err != nil {
			return nil, fmt.Errorf("build %s: %w", s.Ref(host), err)
		}
		ref, err := name.NewTag(s.Ref(host), name.Insecure)
		if err != nil {
			return nil, err
		}
		if err := remote.Write(ref, img, remote.WithContext(ctx)); err != nil {
			return nil, fmt.Errorf("push %s: %w", ref, err)
		}
		if out[ref.String()], err = img.Digest(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// layer builds a layer from a tar written by fill, reproducibly.
func layer(fill func(*tar.Writer) error) (v1.Layer, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	if err := fill(w); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}

func dir(w *tar.Writer, name string) error {
	return w.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: time.Unix(0, 0), Format: tar.FormatPAX})
}

func file(w *tar.Writer, name string, data []byte, mode int64) error {
	if err := w.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)),
		ModTime: time.Unix(0, 0), Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := w.Write(data)
	return err
}
