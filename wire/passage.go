package wire

import "github.com/lore-cli/lore/index"

// Passage is lines of an indexed document, as `lore mcp`'s get_passage
// returns them.
type Passage struct {
	Index     string `json:"index"`
	Source    string `json:"source"` // the folder Path is relative to
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Lines     int    `json:"lines"` // lines in the file; 0 when the text came from the index's chunks
	Text      string `json:"text"`
	// From is "file" when the text is the file's own lines (unchanged since
	// indexed) or "chunks" when it is the index's stored chunk texts (the
	// file changed since, or it is HTML or PDF).
	From      string `json:"from"`
	Truncated bool   `json:"truncated"` // the range was longer than the most one passage returns
}

// NewPassage is p of the index named indexName.
func NewPassage(indexName string, p index.Passage) Passage {
	from := "file"
	if p.FromChunks {
		from = "chunks"
	}
	return Passage{Index: indexName, Source: p.Source, Path: p.Path, StartLine: p.Start, EndLine: p.End, Lines: p.Lines, Text: p.Text,
		From: from, Truncated: p.Truncated}
}
