package images

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// fakeBusybox stands in for the static binary: the digests only depend on its bytes.
var fakeBusybox = []byte("#!/bin/false\nnot really busybox\n")

func TestImagesAreReproducibleAndRetagSharesTheDigest(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	first, err := Push(context.Background(), host, fakeBusybox, Standard)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Push(context.Background(), host, fakeBusybox, Standard)
	if err != nil {
		t.Fatal(err)
	}
	for ref, d := range first {
		if again[ref] != d {
			t.Errorf("%s not reproducible: %s then %s", ref, d, again[ref])
		}
	}
	v1, v2, retag := first[host+"/app:v1"], first[host+"/app:v2"], first[host+"/app:v2-retag"]
	if v1 == v2 {
		t.Error("app:v1 and app:v2 share a digest")
	}
	if v2 != retag {
		t.Errorf("app:v2-retag (%s) must have app:v2's digest (%s)", retag, v2)
	}
	other, err := Build([]byte("another busybox"), Standard[1])
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := other.Digest(); d == v1 {
		t.Error("a different busybox gave the same digest")
	}
}

func TestImageContent(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	if _, err := Push(context.Background(), host, fakeBusybox, Standard); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"v1", "v2", "v2-retag"} {
		ref, _ := name.NewTag(host+"/app:"+tag, name.Insecure)
		img, err := remote.Image(ref)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.OS != "linux" || cfg.Architecture != "amd64" || len(cfg.Config.Entrypoint) == 0 {
			t.Errorf("app:%s config: os %q arch %q entrypoint %v", tag, cfg.OS, cfg.Architecture, cfg.Config.Entrypoint)
		}
		files := map[string]string{}
		r := tar.NewReader(mutate.Extract(img))
		for {
			h, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(r)
			files[h.Name] = string(data)
			if h.Typeflag == tar.TypeSymlink {
				files[h.Name] = "-> " + h.Linkname
			}
		}
		want := strings.TrimSuffix(tag, "-retag")
		if files["etc/app-version"] != want+"\n" {
			t.Errorf("app:%s /etc/app-version = %q; want %q", tag, files["etc/app-version"], want)
		}
		if files["bin/busybox"] != string(fakeBusybox) || files["bin/sh"] != "-> busybox" {
			t.Errorf("app:%s lacks busybox and its sh link: %v", tag, files)
		}
	}
}
