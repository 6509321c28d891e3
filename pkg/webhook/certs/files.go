package certs

import (
	"bytes"
	"os"
	"path/filepath"
)

// File names in the certificate folder, as controller-runtime's webhook server expects them.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// WriteFiles writes the serving certificate and key into dir, each atomically (temporary file, then
// rename) and only when its content changed, so the webhook server's file watcher reloads exactly
// once per renewal. The key is written first: a watcher that reloads on the certificate then finds
// a matching key.
func WriteFiles(dir string, b *Bundle) (changed bool, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{KeyFile, b.ServingKey}, {CertFile, b.ServingCert}} {
		path := filepath.Join(dir, f.name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, f.data) {
			continue
		}
		tmp, err := os.CreateTemp(dir, "."+f.name+"-*")
		if err != nil {
			return changed, err
		}
		if _, err := tmp.Write(f.data); err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			return changed, err
		}
		if err := tmp.Close(); err != nil {
			os.Remove(tmp.Name())
			return changed, err
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			os.Remove(tmp.Name())
			return changed, err
		}
		changed = true
	}
	return changed, nil
}
