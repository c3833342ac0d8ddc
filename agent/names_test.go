package agent

import (
	"slices"
	"testing"
)

func TestShownPathsTellSourcesApart(t *testing.T) {
	tests := []struct {
		name         string
		roots, paths []string
		want         []string
	}{
		{"no collision", []string{"/h/a/docs", "/h/b/docs"}, []string{"README.md", "guide.md"}, []string{"README.md", "guide.md"}},
		{"same folder name", []string{"/h/a/docs", "/h/b/docs", "/h/a/docs"}, []string{"README.md", "README.md", "x.md"},
			[]string{"a/docs/README.md", "b/docs/README.md", "x.md"}},
		{"different folder names", []string{"/h/api", "/h/web"}, []string{"README.md", "README.md"}, []string{"api/README.md", "web/README.md"}},
		{"one source, two chunks", []string{"/h/a", "/h/a"}, []string{"README.md", "README.md"}, []string{"README.md", "README.md"}},
		{"single-file sources", []string{"/h/a/notes.md", "/h/b/notes.md"}, []string{"notes.md", "notes.md"}, []string{"a/notes.md", "b/notes.md"}},
		{"one inside the other's name", []string{"/docs", "/x/docs"}, []string{"R.md", "R.md"}, []string{"docs/R.md", "x/docs/R.md"}},
		{"web", []string{"", ""}, []string{"", ""}, []string{"", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ShownPaths(tt.roots, tt.paths); !slices.Equal(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSourceLabelsOfTwoRootsDiffer(t *testing.T) {
	ss := []Source{{N: 1, Root: "/h/a/docs", Path: "README.md", Start: 1, End: 3}, {N: 2, Root: "/h/b/docs", Path: "README.md", Start: 1, End: 3}}
	NameSources(ss)
	if ss[0].Label() == ss[1].Label() {
		t.Fatalf("both labelled %q", ss[0].Label())
	}
}
