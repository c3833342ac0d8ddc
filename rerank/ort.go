//go:build cgo

package rerank

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// ORT's environment is per process and takes one library path.
var ortEnv struct {
	sync.Mutex
	lib string
	err error
}

// ORTLibraryCandidates are the places searched for libonnxruntime when
// onnxruntime-lib is not set, in order.
func ORTLibraryCandidates() []string {
	var c []string
	// A relative XDG_DATA_HOME is ignored, as the XDG spec says (and as
	// config does): it would load a library from the working directory.
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		c = append(c, filepath.Join(d, "lore", "lib", "libonnxruntime.so.1"))
	} else if h, err := os.UserHomeDir(); err == nil {
		c = append(c, filepath.Join(h, ".local", "share", "lore", "lib", "libonnxruntime.so.1"))
	}
	for _, dir := range []string{"/usr/local/lib", "/usr/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu"} {
		c = append(c, filepath.Join(dir, "libonnxruntime.so"), filepath.Join(dir, "libonnxruntime.so.1"))
	}
	return c
}

// loadORT initialises ONNX Runtime from lib, or from the first standard
// place that has it.
func loadORT(lib string) error {
	ortEnv.Lock()
	defer ortEnv.Unlock()
	if ortEnv.lib != "" {
		if lib != "" && lib != ortEnv.lib {
			return fmt.Errorf("%w: ONNX Runtime is already loaded from %s", ErrUnavailable, ortEnv.lib)
		}
		return ortEnv.err
	}
	if lib == "" {
		for _, c := range ORTLibraryCandidates() {
			if _, err := os.Stat(c); err == nil {
				lib = c
				break
			}
		}
		if lib == "" {
			return fmt.Errorf("%w: libonnxruntime not found (set onnxruntime-lib or LORE_ONNXRUNTIME_LIB; see README)", ErrUnavailable)
		}
	} else if _, err := os.Stat(lib); err != nil {
		return fmt.Errorf("%w: onnxruntime-lib %s: %v", ErrUnavailable, lib, err)
	}
	ort.SetSharedLibraryPath(lib)
	ortEnv.lib = lib
	if err := ort.InitializeEnvironment(); err != nil {
		ortEnv.err = fmt.Errorf("%w: load %s: %v (lore needs ONNX Runtime 1.23.x)", ErrUnavailable, lib, err)
	}
	return ortEnv.err
}

// ORTAvailable reports why ONNX Runtime cannot run here (nil when it can),
// loading it from lib or the standard places as New would.
func ORTAvailable(lib string) error { return loadORT(lib) }

// ORTLoaded names the ONNX Runtime library this process loaded and the
// version it reports; both are "" until one has loaded.
func ORTLoaded() (lib, version string) {
	ortEnv.Lock()
	defer ortEnv.Unlock()
	if ortEnv.lib == "" || ortEnv.err != nil || !ort.IsInitialized() {
		return "", ""
	}
	return ortEnv.lib, ort.GetVersion()
}

type ortReranker struct {
	sess   *ort.DynamicAdvancedSession
	tok    *pairTokenizer
	opt    Options
	inputs []string // the model's input names, in our order
}

func newORT(opt Options) (Reranker, error) {
	if err := loadORT(opt.ORTLibrary); err != nil {
		return nil, err
	}
	info, tok, err := openModel(opt)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(opt.ModelDir, info.ONNX)
	ins, outs, err := ort.GetInputOutputInfo(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("%w: %s has no outputs", ErrBadModel, path)
	}
	var names []string
	for _, want := range []string{"input_ids", "attention_mask", "token_type_ids"} {
		for _, in := range ins {
			if in.Name == want {
				names = append(names, want)
			}
		}
	}
	if len(names) == 0 || names[0] != "input_ids" {
		return nil, fmt.Errorf("%w: %s does not take input_ids", ErrBadModel, path)
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	if opt.Threads > 0 {
		so.SetIntraOpNumThreads(opt.Threads)
	}
	sess, err := ort.NewDynamicAdvancedSession(path, names, []string{outs[0].Name}, so)
	if err != nil {
		return nil, fmt.Errorf("load %s with ONNX Runtime: %w", path, err)
	}
	return &ortReranker{sess: sess, tok: tok, opt: opt, inputs: names}, nil
}

func (r *ortReranker) Backend() string { return "onnxruntime" }
func (r *ortReranker) Model() string   { return r.opt.ModelName }
func (r *ortReranker) Close() error    { return r.sess.Destroy() }

func (r *ortReranker) Rerank(ctx context.Context, query string, passages []string) ([]Result, error) {
	return score(ctx, r.tok, query, passages, r.opt.BatchSize, true, r.run)
}

// run scores one batch and returns one logit per passage.
func (r *ortReranker) run(q tokens, docs []tokens) ([]float32, error) {
	ids, mask, types, seq := r.tok.encode(q, docs)
	shape := ort.NewShape(int64(len(docs)), int64(seq))
	data := map[string][]int64{"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
	inputs := make([]ort.Value, len(r.inputs))
	for i, name := range r.inputs {
		t, err := ort.NewTensor(shape, data[name])
		if err != nil {
			return nil, err
		}
		defer t.Destroy()
		inputs[i] = t
	}
	outputs := []ort.Value{nil}
	if err := r.sess.Run(inputs, outputs); err != nil {
		return nil, fmt.Errorf("onnxruntime: %w", err)
	}
	defer outputs[0].Destroy()
	t, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, errors.New("onnxruntime: the model's output is not float32")
	}
	logits := t.GetData()
	if len(logits) != len(docs) {
		// A classifier with several labels would be read as scores of the wrong thing.
		return nil, fmt.Errorf("%w: the model gives %d values per pair, not one logit", ErrBadModel, len(logits)/len(docs))
	}
	return append([]float32(nil), logits...), nil
}

// ORTCompiled reports whether this build can load ONNX Runtime at all.
func ORTCompiled() bool { return true }
