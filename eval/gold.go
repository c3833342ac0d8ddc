package eval

import (
	"fmt"
	"path/filepath"

	"github.com/lore-cli/lore/internal/units"
)

// CheckGold compares the gold paths of qs with the files index holds:
// none found means the set is relative to another folder (every question
// would score 0), which is an error; some missing is worth the note it
// returns ("" when every gold path is held).
func CheckGold(qs []Question, files []IndexedFile, index string) (note string, err error) {
	held := map[string]bool{}
	for _, f := range files {
		held[filepath.ToSlash(f.Path)] = true
	}
	unknown := UnknownGold(qs, func(p string) bool { return held[p] })
	all := UnknownGold(qs, func(string) bool { return false })
	switch {
	case len(unknown) == 0:
		return "", nil
	case len(unknown) == len(all):
		example := ""
		if len(files) > 0 {
			example = fmt.Sprintf(", e.g. %q", filepath.ToSlash(files[0].Path))
		}
		return "", fmt.Errorf("no gold path of the question set is in index %q (%q is not; it holds %s%s): index the folder the gold paths are relative to, lore --index NAME index FOLDER",
			index, unknown[0], units.Plural(len(files), "file"), example)
	}
	what := fmt.Sprintf("%d gold paths are", len(unknown))
	if len(unknown) == 1 {
		what = "1 gold path is"
	}
	return fmt.Sprintf("%s not in index %s (the first: %s): questions about them score 0", what, index, unknown[0]), nil
}
