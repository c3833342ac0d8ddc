package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lore-cli/lore/internal/testmodels"
	"github.com/lore-cli/lore/rerank"
)

// repoHub is a Hugging Face repository on disk, laid out as the
// cross-encoder repositories are: tokenizer and config at the top, the
// fp32 export and the int8 ones in onnx/.
type repoHub struct{ dir string }

func (h repoHub) Files(context.Context, string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(h.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(h.dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	return out, err
}

func (h repoHub) Download(_ context.Context, name, onnx, dest string) (string, error) {
	files, _ := h.Files(context.Background(), name)
	dir := filepath.Join(dest, "download")
	os.MkdirAll(dir, 0o755)
	for _, f := range files {
		if strings.HasSuffix(f, ".onnx") && f != onnx {
			continue
		}
		b, err := os.ReadFile(filepath.Join(h.dir, f))
		if err != nil {
			return "", err
		}
		os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644)
	}
	return dir, nil
}

// newRepoHub writes the tiny model's repository with every int8 export.
func newRepoHub(t *testing.T) repoHub {
	t.Helper()
	dir := t.TempDir()
	write := func(q testmodels.Quant, to string) {
		cfg := testmodels.Tiny
		cfg.Quant = q
		tmp := t.TempDir()
		if err := testmodels.WriteCrossEncoder(tmp, cfg, nil); err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dir, "onnx"), 0o755)
		if err := os.Rename(filepath.Join(tmp, "model.onnx"), filepath.Join(dir, to)); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"tokenizer.json", "special_tokens_map.json", "config.json"} {
			os.Rename(filepath.Join(tmp, f), filepath.Join(dir, f))
		}
	}
	write(testmodels.FP32, "onnx/model.onnx")
	for _, f := range []string{"model_qint8_avx512_vnni.onnx", "model_qint8_avx512.onnx", "model_qint8_arm64.onnx"} {
		write(testmodels.QInt8, "onnx/"+f)
	}
	write(testmodels.QUInt8, "onnx/model_quint8_avx2.onnx")
	return repoHub{dir}
}

// lore models pull --variant and models list/import with variants, on the
// pure-Go backend, which runs fp32 only (issue 13).
func TestModelsVariants(t *testing.T) {
	if raceEnabled {
		t.Skip("imports run hugot, whose GoMLX backend races under -race; make test runs it without")
	}
	hub := newRepoHub(t)
	old := modelHub
	modelHub = hub
	t.Cleanup(func() { modelHub = old })
	e := newEnv(t)
	e.vars["LORE_RERANKER"] = "hugot"

	if r := e.run(false, "models", "pull", "org/m", "--variant", "fp8"); r.code != exitUsage || !strings.Contains(r.stderr, "auto, fp32, int8") {
		t.Fatalf("bad variant: exit %d %s", r.code, r.stderr)
	}
	// auto on the pure-Go backend: fp32, whatever the CPU.
	r := e.run(false, "models", "pull", "org/m")
	if r.code != 0 || !strings.Contains(r.stdout, "installed org/m (fp32,") {
		t.Fatalf("pull: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	// int8 asked for: downloaded, refused in one line that says what to do.
	r = e.run(false, "models", "pull", "org/q", "--variant", "int8")
	if r.code == 0 || !strings.Contains(r.stderr, "int8-quantised") || !strings.Contains(r.stderr, "--variant fp32") || strings.Count(r.stderr, "\n") != 2 {
		t.Fatalf("int8 pull on pure Go: exit %d %q", r.code, r.stderr)
	}
	// models import of an int8 folder is refused the same way, as a usage error.
	folder := filepath.Join(t.TempDir(), "m-int8")
	cfg := testmodels.Tiny
	cfg.Quant = testmodels.QInt8
	if err := testmodels.WriteCrossEncoder(folder, cfg, nil); err != nil {
		t.Fatal(err)
	}
	if r := e.run(false, "models", "import", folder, "--name", "org/q"); r.code != exitUsage || !strings.Contains(r.stderr, "int8-quantised") {
		t.Fatalf("int8 import on pure Go: exit %d %q", r.code, r.stderr)
	}
	r = e.run(false, "models", "list")
	if !strings.Contains(r.stdout, "VARIANT") || !strings.Contains(r.stdout, "org/m") || !strings.Contains(r.stdout, "fp32") || strings.Contains(r.stdout, "org/q") {
		t.Fatalf("list:\n%s", r.stdout)
	}

	// With ONNX Runtime checking imports, the int8 folder goes in, and
	// list --json says which variant each model is.
	lib := os.Getenv("LORE_TEST_ORT_LIB")
	if _, err := os.Stat(lib); err != nil || lib == "" || rerank.ORTAvailable(lib) != nil {
		return // no library, or a build without cgo
	}
	e.vars["LORE_RERANKER"], e.vars["LORE_ONNXRUNTIME_LIB"] = "onnxruntime", lib
	if r := e.run(false, "models", "import", folder, "--name", "org/q"); r.code != 0 || !strings.Contains(r.stdout, "(int8,") {
		t.Fatalf("int8 import with onnxruntime: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = e.run(false, "models", "list", "--json")
	var ms []rerank.Installed
	json.Unmarshal([]byte(r.stdout), &ms)
	if len(ms) != 2 || ms[0].Name != "org/m" || ms[0].Variant != "fp32" || ms[1].Name != "org/q" || ms[1].Variant != "int8" {
		t.Fatalf("list --json: %s", r.stdout)
	}
}
