package eval

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBaselineWindows(t *testing.T) {
	dir := t.TempDir()
	var long []string
	for i := 1; i <= 50; i++ {
		long = append(long, fmt.Sprintf("filler line %d", i))
	}
	long[29] = "the quokka lives on Rottnest Island" // line 30: the second window, 25-48
	os.WriteFile(filepath.Join(dir, "long.txt"), []byte(strings.Join(long, "\n")+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "other.txt"), []byte("an island of quokka and quokka\nfiller\n"), 0o644)
	bx := newBaseline([]IndexedFile{{Root: dir, Path: "long.txt"}, {Root: dir, Path: "other.txt"}, {Root: dir, Path: "gone.txt"}})
	// 24 lines every 12: 1-24, 13-36, 25-48, 37-50 of long.txt, and other.txt.
	if len(bx.windows) != 5 || bx.windows[3] != (baselineWindowRef{"long.txt", 37, 50}) {
		t.Fatalf("windows %+v", bx.windows)
	}
	got := bx.search("Where does the QUOKKA live? Rottnest", 5)
	if len(got) != 3 || got[0] != (baselineWindowRef{"long.txt", 13, 36}) || got[1] != (baselineWindowRef{"long.txt", 25, 48}) || got[2].path != "other.txt" {
		t.Fatalf("search: %+v", got)
	}
	if got := bx.search("nothing matches", 5); len(got) != 0 {
		t.Fatalf("no match: %+v", got)
	}
}

func TestCheckGold(t *testing.T) {
	qs := []Question{
		{ID: "a", Gold: []Gold{{Path: "docs/a.md"}}},
		{ID: "b", Gold: []Gold{{Path: "docs/b.md"}, {Path: "docs/a.md"}}},
		{ID: "c", Answerable: new(false)},
	}
	files := []IndexedFile{{Root: "/r", Path: "docs/a.md"}, {Root: "/r", Path: "docs/b.md"}}
	if note, err := CheckGold(qs, files, "work"); note != "" || err != nil {
		t.Errorf("all held: %q %v", note, err)
	}
	note, err := CheckGold(qs, files[:1], "work")
	if want := "1 gold path is not in index work (the first: docs/b.md): questions about them score 0"; note != want || err != nil {
		t.Errorf("one missing: %q %v", note, err)
	}
	// Relative to another folder: every question would score 0.
	note, err = CheckGold(qs, []IndexedFile{{Root: "/r", Path: "a.md"}}, "work")
	if note != "" || err == nil || !strings.Contains(err.Error(), `no gold path of the question set is in index "work" ("docs/a.md" is not; it holds 1 file, e.g. "a.md")`) {
		t.Errorf("none held: %q %v", note, err)
	}
}

// The baseline reads Chinese as overlapping bigrams of Han characters, the
// fair naive baseline there: a question finds a window that says its words
// inside a longer run.
func TestBaselineReadsHanAsBigrams(t *testing.T) {
	if got := strings.Join(baselineTokens("服务的默认端口是9090，Port 口 max_idle café"), " "); got != "服务 务的 的默 默认 认端 端口 口是 9090 port 口 max_idle caf" {
		t.Errorf("tokens = %q", got)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "server.md"), []byte("服务的默认端口是9090，可以修改。\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "logs.md"), []byte("日志文件保存在数据目录中。\n"), 0o644)
	bx := newBaseline([]IndexedFile{{Root: dir, Path: "server.md"}, {Root: dir, Path: "logs.md"}})
	if got := bx.search("默认端口是多少", 5); len(got) != 1 || got[0].path != "server.md" {
		t.Fatalf("search: %+v", got)
	}
}
