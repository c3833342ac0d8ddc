package rerank

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Default models by backend, chosen by cost (see README): ONNX Runtime runs
// MiniLM-L-6 in a fraction of a second; the pure-Go backend is 25-30x
// slower, so it defaults to the 2-layer TinyBERT.
const (
	DefaultORTModel   = "cross-encoder/ms-marco-MiniLM-L-6-v2"
	DefaultHugotModel = "cross-encoder/ms-marco-TinyBERT-L-2-v2"
)

// ErrNotInstalled means no model of that name is in the store.
var ErrNotInstalled = errors.New("model not installed")

// ErrBadName marks a model name that cannot be one: a path, "..".
var ErrBadName = errors.New("bad model name")

var modelName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$`)

// Store holds installed models, one folder each, under Dir
// ($XDG_DATA_HOME/lore/models). "org/name" lives in "org__name".
type Store struct {
	Dir string
	// Check chooses how an import is tried before it is installed: the
	// backend and ONNX Runtime library lore would run it with.
	Check Options
}

// Installed describes a model in the store.
type Installed struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"` // of the .onnx file
	// Variant is fp32, int8 or fp16, read from the ONNX graph, so that
	// a model imported from any folder shows it too.
	Variant string `json:"variant"`
}

// CheckName refuses a name that cannot be a model's: a path, "..".
func CheckName(name string) error {
	if !modelName.MatchString(name) {
		return fmt.Errorf("%w: %q is not a model name like cross-encoder/ms-marco-MiniLM-L-6-v2", ErrBadName, name)
	}
	return nil
}

// Path is where model name is (or would be) installed.
func (s Store) Path(name string) string {
	return filepath.Join(s.Dir, strings.ReplaceAll(name, "/", "__"))
}

// Find returns the directory of an installed, valid model.
func (s Store) Find(name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	dir := s.Path(name)
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("%w: %s", ErrNotInstalled, name)
	}
	if _, err := CheckModelDir(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// List returns the installed models, by name.
func (s Store) List() ([]Installed, error) {
	names, err := s.Names()
	if err != nil {
		return nil, err
	}
	var out []Installed
	for _, name := range names {
		if m, err := describe(name, s.Path(name)); err == nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// Names lists the installed models, sorted, without reading their files
// as List does (checksums): shell completion must answer at once. A broken
// folder is not a model; `lore models import` replaces it.
func (s Store) Names() ([]string, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if _, err := CheckModelDir(filepath.Join(s.Dir, e.Name())); err == nil {
				names = append(names, strings.ReplaceAll(e.Name(), "__", "/"))
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

func describe(name, dir string) (Installed, error) {
	info, err := CheckModelDir(dir)
	if err != nil {
		return Installed{}, err
	}
	m := Installed{Name: name, Path: dir}
	m.Variant = "unknown" // a damaged graph: loading it says what is wrong
	if facts, err := inspectONNX(filepath.Join(dir, info.ONNX)); err == nil {
		m.Variant = facts.variant()
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && !e.IsDir() {
			m.Bytes += fi.Size()
		}
	}
	f, err := os.Open(filepath.Join(dir, info.ONNX))
	if err != nil {
		return m, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return m, err
	}
	m.SHA256 = hex.EncodeToString(h.Sum(nil))
	return m, nil
}

// Import checks that the model in src runs (Probe, with the backend
// s.Check chooses) and installs a copy as name, atomically: the files are
// copied and fsynced into a temporary folder in the store, which is then
// renamed into place. An empty name is taken from config.json's
// _name_or_path, else the folder's name.
func (s Store) Import(ctx context.Context, src, name string) (Installed, error) {
	return s.install(ctx, src, name, false)
}

// install is Import; pulled says the folder is a download of Pull's.
func (s Store) install(ctx context.Context, src, name string, pulled bool) (Installed, error) {
	if name == "" {
		var cfg struct {
			Name string `json:"_name_or_path"`
		}
		readJSON(filepath.Join(src, "config.json"), &cfg)
		name = cfg.Name
		if name == "" || !modelName.MatchString(name) {
			name = filepath.Base(filepath.Clean(src))
		}
	}
	if err := CheckName(name); err != nil {
		return Installed{}, err
	}
	// The folder the user named is the one checked, so that messages name
	// its files; the copy is checked again for its layout below.
	check := s.Check
	check.ModelDir, check.ModelName = src, name
	if err := Probe(ctx, check); err != nil {
		if n := (*needsORT)(nil); !pulled && errors.As(err, &n) {
			n.imported = true // not "models pull": it came from a folder
		}
		return Installed{}, err
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return Installed{}, err
	}
	tmp, err := os.MkdirTemp(s.Dir, ".import-")
	if err != nil {
		return Installed{}, err
	}
	defer os.RemoveAll(tmp)
	entries, err := os.ReadDir(src)
	if err != nil {
		return Installed{}, err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return Installed{}, err
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(tmp, e.Name())); err != nil {
			return Installed{}, fmt.Errorf("copy %s: %w", e.Name(), err)
		}
	}
	if _, err := CheckModelDir(tmp); err != nil {
		return Installed{}, err
	}
	if err := s.replace(tmp, s.Path(name)); err != nil {
		return Installed{}, err
	}
	return describe(name, s.Path(name))
}

// Remove takes model name out of the store, whether it works or not. The
// folder leaves its name in one rename and is deleted after, so that no
// search ever sees half a model.
func (s Store) Remove(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	dir := s.Path(name)
	if _, err := os.Lstat(dir); err != nil {
		return fmt.Errorf("%w: %s", ErrNotInstalled, name)
	}
	trash, err := os.MkdirTemp(s.Dir, ".rm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(trash)
	if err := os.Rename(dir, filepath.Join(trash, "model")); err != nil {
		return err
	}
	syncDir(s.Dir)
	return nil
}

// replace puts the folder tmp at dst, moving an existing dst aside first
// so that dst is never half-written.
func (s Store) replace(tmp, dst string) error {
	old := ""
	if _, err := os.Stat(dst); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dst, old); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		if old != "" {
			os.Rename(old, dst)
		}
		return err
	}
	if old != "" {
		os.RemoveAll(old)
	}
	syncDir(s.Dir)
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Hub is where Pull downloads models from: Hugging Face in lore, a fake
// in tests.
type Hub interface {
	// Files lists the paths of the files in repository name.
	Files(ctx context.Context, name string) ([]string, error)
	// Download fetches repository name's tokenizer and config files and
	// the ONNX file at onnxPath into a folder under dest, flat, and
	// returns that folder.
	Download(ctx context.Context, name, onnxPath, dest string) (string, error)
}

// Pull downloads name from hub into the store's temp space, validates it
// and installs it atomically. variant (fp32, int8 or auto) chooses the
// ONNX export, by this CPU (ChooseONNX); auto takes int8 only when the
// store's check backend can run it, and fp32 when the repository has no
// int8 export for this CPU.
func (s Store) Pull(ctx context.Context, name, variant string, hub Hub) (Installed, error) {
	if err := CheckName(name); err != nil {
		return Installed{}, err
	}
	files, err := hub.Files(ctx, name)
	if err != nil {
		return Installed{}, fmt.Errorf("list %s: %w", name, err)
	}
	onnx, err := ChooseONNX(files, variant, HostCPU(), s.int8OK())
	if err != nil {
		return Installed{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return Installed{}, err
	}
	tmp, err := os.MkdirTemp(s.Dir, ".pull-")
	if err != nil {
		return Installed{}, err
	}
	defer os.RemoveAll(tmp)
	got, err := hub.Download(ctx, name, onnx, tmp)
	if err != nil {
		return Installed{}, fmt.Errorf("download %s: %w", name, err)
	}
	return s.install(ctx, got, name, true)
}

// int8OK says whether the backend imports are checked with runs int8
// models: only ONNX Runtime does.
func (s Store) int8OK() bool {
	switch s.Check.Backend {
	case "onnxruntime":
		return true
	case "auto", "", "none":
		return ORTAvailable(s.Check.ORTLibrary) == nil
	}
	return false
}
