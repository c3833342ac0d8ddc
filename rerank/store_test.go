package rerank

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lore-cli/lore/internal/testmodels"
)

func copyModel(t *testing.T, dst string) {
	t.Helper()
	src := tinyModel(t)
	os.MkdirAll(dst, 0o755)
	for _, f := range []string{"model.onnx", "tokenizer.json", "special_tokens_map.json", "config.json"} {
		b, _ := os.ReadFile(filepath.Join(src, f))
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStore(t *testing.T) {
	if raceEnabled {
		t.Skip("imports run hugot, whose GoMLX backend races under -race; make test runs it without")
	}
	s := Store{Dir: filepath.Join(t.TempDir(), "models")}
	ctx := context.Background()
	if ms, err := s.List(); err != nil || len(ms) != 0 {
		t.Fatalf("empty store: %v %v", ms, err)
	}
	if _, err := s.Find(DefaultORTModel); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("find: %v", err)
	}

	src := filepath.Join(t.TempDir(), "usb", "ms-marco-MiniLM-L-6-v2")
	copyModel(t, src)
	m, err := s.Import(ctx, src, DefaultORTModel)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != DefaultORTModel || len(m.SHA256) != 64 || m.Bytes == 0 {
		t.Fatalf("installed %+v", m)
	}
	if dir, err := s.Find(DefaultORTModel); err != nil || dir != s.Path(DefaultORTModel) {
		t.Fatalf("find: %q %v", dir, err)
	}
	// Importing again replaces it in place; nothing is left beside it.
	if _, err := s.Import(ctx, src, DefaultORTModel); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(s.Dir)
	if len(entries) != 1 {
		t.Fatalf("store holds %d entries after a re-import", len(entries))
	}
	// A name is needed: from the folder when none is given.
	if m, err := s.Import(ctx, src, ""); err != nil || m.Name != "ms-marco-MiniLM-L-6-v2" {
		t.Fatalf("unnamed import: %+v %v", m, err)
	}
	if _, err := s.Import(ctx, src, "../evil"); err == nil {
		t.Fatal("a path as a model name was accepted")
	}
	ms, _ := s.List()
	if len(ms) != 2 {
		t.Fatalf("list: %+v", ms)
	}
}

// fakeHub is a Hugging Face repository in memory: the files of a model
// folder, laid out as the cross-encoder repositories are (ONNX exports in
// onnx/). It records the ONNX file each download asked for.
type fakeHub struct {
	files map[string]string // repository path -> local file
	got   []string
	err   error
}

func (h *fakeHub) Files(context.Context, string) ([]string, error) {
	var out []string
	for f := range h.files {
		out = append(out, f)
	}
	return out, h.err
}

func (h *fakeHub) Download(_ context.Context, name, onnx, dest string) (string, error) {
	h.got = append(h.got, onnx)
	dir := filepath.Join(dest, strings.ReplaceAll(name, "/", "_"))
	os.MkdirAll(dir, 0o755)
	for f, src := range h.files {
		if strings.HasSuffix(f, ".onnx") && f != onnx {
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// newFakeHub holds the tiny model as fp32 and as the int8 exports named.
func newFakeHub(t *testing.T, int8Exports ...string) *fakeHub {
	t.Helper()
	h := &fakeHub{files: map[string]string{}}
	fp32 := tinyModel(t)
	for _, f := range []string{"tokenizer.json", "special_tokens_map.json", "config.json"} {
		h.files[f] = filepath.Join(fp32, f)
	}
	h.files["onnx/model.onnx"] = filepath.Join(fp32, "model.onnx")
	for _, f := range int8Exports {
		cfg := testmodels.Tiny
		cfg.Quant = testmodels.QInt8
		if strings.Contains(f, "quint8") {
			cfg.Quant = testmodels.QUInt8
		}
		dir := t.TempDir()
		if err := testmodels.WriteCrossEncoder(dir, cfg, nil); err != nil {
			t.Fatal(err)
		}
		h.files[f] = filepath.Join(dir, "model.onnx")
	}
	return h
}

var allExports = []string{onnxAVX512VNNI, onnxAVX512, onnxAVX2, onnxARM64}

func TestPull(t *testing.T) {
	if raceEnabled {
		t.Skip("imports run hugot, whose GoMLX backend races under -race; make test runs it without")
	}
	ctx := context.Background()
	// The pure-Go backend checks imports here: auto keeps to fp32.
	s := Store{Dir: t.TempDir(), Check: Options{Backend: "hugot"}}
	hub := newFakeHub(t, allExports...)
	m, err := s.Pull(ctx, DefaultHugotModel, VariantAuto, hub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(m.Path, "model.onnx")); err != nil || m.Variant != VariantFP32 || hub.got[0] != onnxFP32 {
		t.Fatalf("installed %+v from %v; want the fp32 model.onnx beside the tokenizer", m, hub.got)
	}
	// Asked for int8, it downloads it and refuses it, saying what to do;
	// the fp32 model stays installed.
	_, err = s.Pull(ctx, DefaultHugotModel, VariantInt8, hub)
	if !errors.Is(err, ErrNeedsORT) || !strings.Contains(err.Error(), "--variant fp32") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("int8 with the pure-Go backend: %v", err)
	}
	if ms, _ := s.List(); len(ms) != 1 || ms[0].Variant != VariantFP32 {
		t.Fatalf("store after a refused pull: %+v", ms)
	}
	// A failed download installs nothing.
	_, err = s.Pull(ctx, "org/other", VariantAuto, &fakeHub{err: errors.New("no route to huggingface.co")})
	if err == nil || !strings.Contains(err.Error(), "no route") {
		t.Fatalf("failed pull: %v", err)
	}
	if ms, _ := s.List(); len(ms) != 1 {
		t.Fatalf("store after a failed pull: %+v", ms)
	}
}

// With ONNX Runtime, auto installs the int8 export made for this CPU, and
// fp32 when the repository has none; models list says which.
func TestPullVariantsWithONNXRuntime(t *testing.T) {
	lib := ortLibraryPath()
	if lib == "" {
		t.Skip("no ONNX Runtime library: run `make ort`")
	}
	ctx := context.Background()
	s := Store{Dir: t.TempDir(), Check: Options{Backend: "onnxruntime", ORTLibrary: lib}}
	hub := newFakeHub(t, allExports...)
	m, err := s.Pull(ctx, "org/auto", VariantAuto, hub)
	if err != nil {
		t.Fatal(err)
	}
	want := VariantFP32
	if len(HostCPU().int8Exports()) > 0 {
		want = VariantInt8
	}
	if m.Variant != want || hub.got[0] != append(HostCPU().int8Exports(), onnxFP32)[0] {
		t.Fatalf("auto on %+v installed %s from %v", HostCPU(), m.Variant, hub.got)
	}
	if m, err := s.Pull(ctx, "org/fp32", VariantFP32, hub); err != nil || m.Variant != VariantFP32 {
		t.Fatalf("--variant fp32: %+v %v", m, err)
	}
	// No int8 export in the repository: auto falls back to fp32, int8
	// says there is none.
	plain := newFakeHub(t)
	if m, err := s.Pull(ctx, "org/plain", VariantAuto, plain); err != nil || m.Variant != VariantFP32 {
		t.Fatalf("auto without int8 exports: %+v %v", m, err)
	}
	if _, err := s.Pull(ctx, "org/plain8", VariantInt8, plain); !errors.Is(err, ErrNoVariant) {
		t.Fatalf("int8 without int8 exports: %v", err)
	}
	ms, _ := s.List()
	var got []string
	for _, m := range ms {
		got = append(got, m.Name+":"+m.Variant)
	}
	if strings.Join(got, " ") != "org/auto:"+want+" org/fp32:fp32 org/plain:fp32" {
		t.Fatalf("list: %v", got)
	}
}

func TestChooseONNX(t *testing.T) {
	vnni512 := CPU{Arch: "amd64", AVX2: true, AVX512F: true, AVX512BW: true, AVX512VNNI: true}
	avx512 := CPU{Arch: "amd64", AVX2: true, AVX512F: true, AVX512BW: true}
	avxVNNI := CPU{Arch: "amd64", AVX2: true, AVXVNNI: true}
	avx2 := CPU{Arch: "amd64", AVX2: true}
	oldX86 := CPU{Arch: "amd64"}
	arm64 := CPU{Arch: "arm64"}
	riscv := CPU{Arch: "riscv64"}
	full := append([]string{onnxFP32, "onnx/model_O4.onnx", "tokenizer.json"}, allExports...)
	plain := []string{onnxFP32, "tokenizer.json"}
	for _, tt := range []struct {
		name    string
		files   []string
		variant string
		cpu     CPU
		int8OK  bool
		want    string // "" for an error
	}{
		{"vnni512 auto", full, VariantAuto, vnni512, true, onnxAVX512VNNI},
		{"avx512 auto", full, VariantAuto, avx512, true, onnxAVX512},
		{"avx-vnni auto", full, VariantAuto, avxVNNI, true, onnxAVX512VNNI},
		{"avx2 auto", full, VariantAuto, avx2, true, onnxAVX2},
		{"arm64 auto", full, VariantAuto, arm64, true, onnxARM64},
		{"old x86 auto", full, VariantAuto, oldX86, true, onnxFP32},
		{"riscv auto", full, VariantAuto, riscv, true, onnxFP32},
		{"empty is auto", full, "", avx2, true, onnxAVX2},
		{"auto without ONNX Runtime", full, VariantAuto, vnni512, false, onnxFP32},
		{"auto, no int8 exports", plain, VariantAuto, vnni512, true, onnxFP32},
		{"vnni512 auto, only the avx2 export", []string{onnxFP32, onnxAVX2}, VariantAuto, vnni512, true, onnxAVX2},
		{"avx2 auto, only the avx512 export", []string{onnxFP32, onnxAVX512}, VariantAuto, avx2, true, onnxFP32},
		{"fp32", full, VariantFP32, vnni512, true, onnxFP32},
		{"int8 avx2", full, VariantInt8, avx2, true, onnxAVX2},
		{"int8 old x86 takes any", full, VariantInt8, oldX86, true, onnxARM64},
		{"int8 avx2, only the avx512 export", []string{onnxFP32, onnxAVX512}, VariantInt8, avx2, true, onnxAVX512},
		{"int8 generic name", []string{onnxFP32, "onnx/model_quantized.onnx"}, VariantInt8, riscv, true, "onnx/model_quantized.onnx"},
		{"int8, none", plain, VariantInt8, avx2, true, ""},
		{"fp32 missing", []string{onnxAVX2}, VariantFP32, avx2, true, ""},
		{"bad variant", full, "fp8", avx2, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ChooseONNX(tt.files, tt.variant, tt.cpu, tt.int8OK)
			if got != tt.want || (err != nil) != (tt.want == "") || err != nil && !errors.Is(err, ErrNoVariant) {
				t.Fatalf("got %q %v, want %q", got, err, tt.want)
			}
		})
	}
}

// An import loads the model and scores a pair before it installs it: a
// folder that looks right but cannot run is refused, naming the problem,
// and leaves nothing in the store (issue 11, item 6).
func TestStoreImportRefusesModelsThatCannotRun(t *testing.T) {
	if raceEnabled {
		t.Skip("runs hugot, whose GoMLX backend races under -race; make test runs it without")
	}
	write := func(name, body string) func(string) {
		return func(dir string) { os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644) }
	}
	shaped := func(cfg testmodels.Config) func(string) {
		return func(dir string) { testmodels.WriteCrossEncoder(dir, cfg, nil) }
	}
	twoLabels, fewPositions := testmodels.Tiny, testmodels.Tiny
	twoLabels.Labels = 2
	fewPositions.MaxPos = 8
	for _, tt := range []struct {
		name  string
		spoil func(dir string)
		want  string
	}{
		{"garbage onnx", write("model.onnx", "this is not an ONNX model"), "model.onnx cannot be loaded"},
		{"truncated onnx", func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "model.onnx"))
			os.WriteFile(filepath.Join(dir, "model.onnx"), b[:len(b)/2], 0o644)
		}, "model.onnx cannot be loaded"},
		{"no tokenizer", func(dir string) { os.Remove(filepath.Join(dir, "tokenizer.json")) }, "tokenizer.json is missing"},
		{"tokenizer not JSON", write("tokenizer.json", "{"), "tokenizer.json is not valid JSON"},
		{"tokenizer without a vocabulary", write("tokenizer.json", `{"model":{"type":"WordPiece"}}`), "tokenizer.json"},
		// hugot's Go backend refuses the graph when it loads it; ONNX
		// Runtime loads it and the test pair shows the two values.
		{"two logits per pair", shaped(twoLabels), "model.onnx cannot be loaded|gives 2 values per pair, not one logit"},
		// config.json promises 512 positions, the graph has 8: short pairs
		// run, a passage of real length fails.
		{"fewer positions than config.json says", func(dir string) {
			shaped(fewPositions)(dir)
			write("config.json", `{"max_position_embeddings":512}`)(dir)
		}, "fails on a test pair"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := Store{Dir: filepath.Join(t.TempDir(), "models")}
			src := filepath.Join(t.TempDir(), "model")
			copyModel(t, src)
			tt.spoil(src)
			_, err := s.Import(context.Background(), src, "org/broken")
			said := false
			for _, want := range strings.Split(tt.want, "|") {
				said = said || err != nil && strings.Contains(err.Error(), want)
			}
			if !errors.Is(err, ErrBadModel) || !said || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v; want one line with %q", err, tt.want)
			}
			if entries, _ := os.ReadDir(s.Dir); len(entries) != 0 {
				t.Fatalf("the store holds %v after a refused import", entries)
			}
		})
	}
}

// Remove takes a model out of the store in one rename, broken or not, and
// touches nothing outside the store whatever the name (issue 11, item 6).
func TestStoreRemove(t *testing.T) {
	root := t.TempDir()
	s := Store{Dir: filepath.Join(root, "models")}
	copyModel(t, s.Path("org/good"))
	os.MkdirAll(s.Path("org/broken"), 0o755) // no files: List does not show it
	os.MkdirAll(filepath.Join(root, "evil"), 0o755)

	for _, name := range []string{"org/good", "org/broken"} {
		if err := s.Remove(name); err != nil {
			t.Fatalf("remove %s: %v", name, err)
		}
	}
	if entries, _ := os.ReadDir(s.Dir); len(entries) != 0 {
		t.Fatalf("the store holds %v after removing everything", entries)
	}
	if err := s.Remove("org/good"); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("removing it again: %v", err)
	}
	for _, name := range []string{"../evil", "..", "org/../../evil", "a/b/c", "/etc", `..\evil`, ""} {
		if err := s.Remove(name); !errors.Is(err, ErrBadName) {
			t.Errorf("remove %q: %v, want ErrBadName", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "evil")); err != nil {
		t.Fatal("a folder outside the store was removed")
	}
}

func TestORTCandidatesIgnoreRelativeXDG(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "rel")
	for _, c := range ORTLibraryCandidates() {
		if !filepath.IsAbs(c) {
			t.Fatalf("candidate %s is relative: a relative XDG_DATA_HOME must be ignored", c)
		}
	}
}
