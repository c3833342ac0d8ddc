package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/lore-cli/lore/internal/atomicfile"
)

// SetInFile sets key to value in the YAML config file at path, the way a
// person would edit it: every comment and every other line stay as they
// were. The key's line is rewritten in place (an inline comment after the
// value is kept); a key the file lacks is added under a commented-out
// "# key: ..." line when there is one (the sample config documents keys that
// way), else at the end. A missing file is created, with its folder.
//
// The value is checked first, together with the rest of the file, the way
// Load reads it: an unknown key, a value Set refuses or one Validate refuses
// is an error naming the key, and the file is left untouched. The new text
// is written to a temporary file in the same folder, synced and renamed over
// the old one, so a crash leaves the old file or the new one, never half of
// one; the file's permissions are kept (a new file is 0600: it may come to
// hold tavily-api-key).
func SetInFile(path, key, value string) error {
	value = strings.TrimSpace(value)
	c := Defaults()
	if _, ok := fieldByKey(&c, key); !ok {
		return fmt.Errorf("unknown setting %q (see config.yaml for the keys lore reads)", key)
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // write through a symlinked config, do not replace the link
	}
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read config: %w", err)
	}
	if exists {
		if _, err := c.loadFile(path); err != nil {
			return fmt.Errorf("%w; fix it before setting %s", err, key)
		}
	}
	if err := c.Set(key, value); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if err := c.Validate(); err != nil {
		return err
	}

	updated, err := setLine(old, key, yamlScalar(value))
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if err := checkEdit(old, updated, key, value); err != nil {
		return fmt.Errorf("config %s: cannot set %s in place: %w; edit the file by hand", path, key, err)
	}
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return writeAtomic(path, updated, mode)
}

// setLine returns data with key's value replaced, or the key added.
func setLine(data []byte, key, scalar string) ([]byte, error) {
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	if len(doc.Content) > 0 {
		m := doc.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value != key {
				continue
			}
			v := m.Content[i+1]
			if v.Line < 1 || v.Line > len(lines) {
				return nil, fmt.Errorf("cannot find the value of %s", key)
			}
			lines[v.Line-1] = replaceValue(lines[v.Line-1], v.Column, v.LineComment, scalar)
			return []byte(strings.Join(lines, "")), nil
		}
	}

	nl := "\n"
	if strings.Contains(string(data), "\r\n") {
		nl = "\r\n"
	}
	entry := key + ": " + scalar + nl
	at := len(lines) // after a commented-out "# key: ..." line, else at the end
	commented := regexp.MustCompile(`^\s*#\s*` + regexp.QuoteMeta(key) + `\s*:(\s|$)`)
	for i, l := range lines {
		if commented.MatchString(l) {
			at = i + 1
		}
	}
	if at > 0 && !strings.HasSuffix(lines[at-1], "\n") {
		lines[at-1] += nl
	}
	lines = append(lines[:at], append([]string{entry}, lines[at:]...)...)
	return []byte(strings.Join(lines, "")), nil
}

// replaceValue rewrites line from the value's column (1-based, in
// characters, as yaml.v3 counts) to the end, keeping an inline comment and
// the spaces before it.
func replaceValue(line string, col int, comment, scalar string) string {
	eol := ""
	if strings.HasSuffix(line, "\n") {
		line, eol = strings.TrimSuffix(line, "\n"), "\n"
	}
	if strings.HasSuffix(line, "\r") {
		line, eol = strings.TrimSuffix(line, "\r"), "\r"+eol
	}
	runes := []rune(line)
	col = min(max(col-1, 0), len(runes))
	prefix, rest := string(runes[:col]), string(runes[col:])
	if !strings.HasSuffix(prefix, " ") && !strings.HasSuffix(prefix, "\t") {
		prefix += " " // "key:" with no value: the value starts right after the colon
	}
	tail := ""
	if comment != "" {
		if at := strings.LastIndex(rest, comment); at >= 0 {
			start := at
			for start > 0 && (rest[start-1] == ' ' || rest[start-1] == '\t') {
				start--
			}
			tail = rest[start:]
			if start == at {
				tail = " " + tail
			}
		}
	}
	return prefix + scalar + tail + eol
}

// yamlScalar writes value as a YAML scalar that reads back as value: plain
// when it can be, else double-quoted.
func yamlScalar(value string) string {
	var m map[string]yaml.Node
	if value != "" && yaml.Unmarshal([]byte("k: "+value+"\n"), &m) == nil {
		if n, ok := m["k"]; ok && n.Kind == yaml.ScalarNode && n.Value == value && n.LineComment == "" {
			return value
		}
	}
	out, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value, Style: yaml.DoubleQuotedStyle})
	if err != nil {
		return fmt.Sprintf("%q", value) // cannot happen for a string
	}
	return strings.TrimSuffix(string(out), "\n")
}

// checkEdit proves an edit did what it meant to: after it the file reads as
// YAML, key holds value and every other key holds what it held before.
func checkEdit(before, after []byte, key, value string) error {
	var was, is map[string]yaml.Node
	if err := yaml.Unmarshal(before, &was); err != nil {
		return err
	}
	if err := yaml.Unmarshal(after, &is); err != nil {
		return fmt.Errorf("the edit would break the YAML: %w", err)
	}
	if n, ok := is[key]; !ok || n.Kind != yaml.ScalarNode || n.Value != value {
		return errors.New("the edit would not read back as the new value")
	}
	for k, n := range was {
		if k != key && is[k].Value != n.Value {
			return fmt.Errorf("the edit would change %s too", k)
		}
	}
	if len(is) != len(was) && !(len(is) == len(was)+1 && !hasKey(was, key)) {
		return errors.New("the edit would add or drop other keys")
	}
	return nil
}

func hasKey(m map[string]yaml.Node, k string) bool { _, ok := m[k]; return ok }

// writeAtomic replaces path with data, whole or not at all, creating its
// folder if need be.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	err := atomicfile.Write(path, mode, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	return nil
}
