package local

import (
	"context"
	"testing"

	"github.com/lore-cli/lore/index"
)

// Questions in Chinese, Japanese and German meet the pages that answer
// them through the whole keyword path: analysis at index time, postings,
// the query's terms and the ranking.
func TestLexicalSearchAcrossScripts(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, map[string]string{
		"zh/server.md": "# 服务配置\n\n服务的默认端口是 9090，可以在配置文件中修改。\n",
		"zh/logs.md":   "# 日志\n\n日志文件保存在数据目录中，每天轮换一次。\n",
		"ja/cache.md":  "# キャッシュ\n\nキャッシュを削除するには clear コマンドを使います。\n",
		"ja/intro.md":  "# はじめに\n\nこのツールはドキュメントを検索します。\n",
		"de/plan.md":   "# Plan\n\nDie Maßnahmen für den Betrieb stehen hier.\n",
		"en/wide.md":   "# Ports\n\nThe ＨＴＴＰ server listens on port ８０８０.\n",
		"en/other.md":  "# Other\n\nNothing about servers here, only measures.\n",
	})
	build(t, dir, testOptions(nil, src))
	ix, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for q, want := range map[string]string{
		"默认端口是多少":         "zh/server.md",
		"キャッシュの削除":        "ja/cache.md",
		"Massnahmen":      "de/plan.md",
		"http port 8080":  "en/wide.md",
		"Prometheus的默认端口": "zh/server.md",
	} {
		res, err := ix.Search(context.Background(), q, index.SearchOptions{Limit: 3})
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if len(res.Hits) == 0 || res.Hits[0].Path != want {
			t.Errorf("%q: hits %v, want %s first", q, res.Hits, want)
		}
	}
}

// A document analysed by an older analyser is analysed again on the next
// build, keeping its vectors: its terms would otherwise be the old ones
// until the file changed.
func TestOlderAnalyserIsAnalysedAgain(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, corpus)
	age(t, src)
	emb := newFakeEmbedder("fake", 8)
	build(t, dir, testOptions(emb, src))
	ix, err := Open(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	// As a lore before analyser versions recorded them.
	if _, err := ix.st.db.Exec(`UPDATE documents SET chunker = substr(chunker, 1, instr(chunker || ' analysis=', ' analysis=') - 1)`); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	sum := build(t, dir, testOptions(emb))
	if sum.FilesIndexed != 3 || sum.ChunksEmbedded != 0 {
		t.Fatalf("after an analyser change: %+v", sum)
	}
	if sum = build(t, dir, testOptions(emb)); sum.FilesIndexed != 0 {
		t.Fatalf("analysed again on a build with nothing new: %+v", sum)
	}
}
