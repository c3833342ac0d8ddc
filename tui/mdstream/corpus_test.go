package mdstream

import "strings"

// answers are realistic retrieval-augmented answers as an LLM streams them.
var answers = []struct{ name, md string }{
	{"go-code", `To read a file line by line in Go, wrap it in a ` + "`bufio.Scanner`" + ` [1]. The scanner splits on newlines by default and strips the trailing ` + "`\\n`" + `.

` + "```go" + `
package main

import (
	"bufio"
	"fmt"
	"os"
)

func main() {
	f, err := os.Open("notes.txt")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fmt.Println(sc.Text())
	}
}
` + "```" + `

Two caveats from the documentation [2]:

1. Lines longer than 64 KiB make ` + "`Scan`" + ` fail; raise the limit with ` + "`sc.Buffer`" + `.
2. Always check ` + "`sc.Err()`" + ` after the loop, because ` + "`Scan`" + ` returns false on both EOF and error.

Sources: [1] https://pkg.go.dev/bufio#Scanner, [2] https://go.dev/doc/effective_go
`},
	{"json-config", `## Configuration

The indexer reads ` + "`config.json`" + ` from the working directory [3]. A minimal file looks like this:

` + "```json" + `
{
  "index": {
    "path": "./data/index",
    "chunk_size": 512,
    "overlap": 64
  },
  "embedder": {"model": "bge-small-en", "batch": 32},
  "rerank": true
}
` + "```" + `

- ` + "`chunk_size`" + ` is measured in tokens, not characters.
- ` + "`overlap`" + ` must be smaller than ` + "`chunk_size`" + `.
  - A good default is 10–15 % of the chunk.
  - Set it to ` + "`0`" + ` to disable overlap entirely.
- ` + "`rerank`" + ` enables the cross-encoder pass described in [4].

If the file is missing, defaults are used and a warning is logged.
`},
	{"bash-steps", `Setup
=====

Install the dependencies and build the binary:

` + "```bash" + `
sudo apt-get install -y build-essential libsqlite3-dev
git clone https://example.com/lore.git && cd lore
make build   # produces ./bin/lore
./bin/lore index --dir ~/notes --verbose
` + "```" + `

Then check the index:

` + "```" + `
$ lore stats
documents: 1204
chunks:    18311
` + "```" + `

Troubleshooting
---------------

If ` + "`make`" + ` fails with *undefined reference to sqlite3_open*, the dev package is missing [5].
`},
	{"unclosed-fence", `Here is the migration script you asked for. It copies every row and rewrites the timestamps:

` + "```python" + `
import sqlite3

def migrate(src, dst):
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        for row in a.execute("SELECT id, body, ts FROM notes"):
            b.execute("INSERT INTO notes VALUES (?, ?, ?)", (row[0], row[1], row[2] * 1000))

if __name__ == "__main__":
    migrate("old.db", "new.db")
`},
	{"loose-nested-lists", `There are three common chunking strategies [1][2]:

1. **Fixed-size chunks.** Split every N tokens.

   Simple and fast, but it cuts sentences in half.

2. **Sentence-aware chunks.** Split on sentence boundaries, then merge.

   - Works well for prose.
   - Struggles with code and tables.

3. **Semantic chunks.** Embed sentences and split where similarity drops.

   This gives the best recall in the benchmark [3], at roughly 4× the indexing cost.

In practice, start with sentence-aware chunks and measure.
`},
	{"table", `The three embedding models compare as follows on our evaluation set [4]:

| Model | Dim | Recall@10 | Latency (ms) |
|:------|----:|:---------:|-------------:|
| bge-small-en | 384 | 0.81 | 4.2 |
| e5-base | 768 | 0.84 | 9.8 |
| gte-large | 1024 | **0.87** | 21.5 |

` + "`gte-large`" + ` wins on recall, but ` + "`bge-small-en`" + ` is five times faster.
| a | b |
|---|---|
| not | a table after a paragraph line |

Choose based on your latency budget.
`},
	{"quotes", `The original design note puts it bluntly:

> Retrieval quality matters more than the generator.
> A perfect model cannot answer from the wrong passage.
lazy continuation of the quote

> Second quote, with a list:
> - one
> - two

And a nested quote:

> outer
>> inner quote with ` + "`code`" + `

That is why the reranker exists [6].
`},
	{"headings", `# Overview

Lore is a local-first notes search tool.

## Architecture
The pipeline has three stages.

### Ingestion
Files are parsed and chunked.

### Retrieval
Chunks are embedded and stored in SQLite.

Setext heading level one
===

Setext level two
---

Paragraph after a setext heading.
#### Deep heading ####
Final paragraph.
`},
	{"long-lines-cjk", `This answer contains a single very long line that must be wrapped by glamour at the configured width, it keeps going with more and more words so that the renderer has to wrap it several times, including some punctuation, commas; semicolons; and hyphen-separated-words-that-are-long to test the breakpoints and a URL https://example.com/a/very/long/path/that/should/not/break/in/the/middle?query=string&other=value [7].

检索增强生成（RAG）是一种将信息检索与文本生成相结合的方法。它首先从知识库中检索相关文档，然后把这些文档作为上下文提供给语言模型【1】。这种方法可以显著减少幻觉，并使答案可以追溯到来源。

日本語の段落もあります。長い行は正しく折り返される必要があります。全角文字は二つのセル幅を占めます。

- 中文列表项一
- 中文列表项二，包含` + "`代码`" + `和**粗体**
`},
	{"emoji-links", `Great question! 🎉 Here's a summary with links:

- 📄 The [official docs](https://example.com/docs "Docs title") cover setup.
- 🔍 Search tips are in the <https://example.com/search> guide.
- 🧪 Tests live in ` + "`./internal/...`" + ` ✅
- Autolinked www.example.org and mail me at someone@example.com.

> 💡 **Tip:** use ~~old flags~~ new flags instead.

Hope this helps! 👍🏽 👨‍👩‍👧‍👦
`},
	{"citations-refdefs", `According to the survey [1], hybrid retrieval beats dense-only retrieval on most benchmarks. Later work [2] confirmed the result and showed that BM25 [bm25] remains a strong baseline.

The effect is largest on keyword-heavy queries [1].

- see [1] for the methodology
- see [2] for the ablation

[1]: https://arxiv.org/abs/2104.08663 "BEIR"
[2]: https://arxiv.org/abs/2210.11934
[bm25]: <https://en.wikipedia.org/wiki/Okapi_BM25>
`},
	{"mixed-long", `**Short answer:** yes, but only for read-heavy workloads.

### Why

SQLite with WAL mode lets readers proceed while a single writer commits [1]. For a notes app that is exactly the access pattern:
* many concurrent searches
* rare, batched writes

### How

1. Enable WAL once:
   ` + "```sql" + `
   PRAGMA journal_mode=WAL;
   ` + "```" + `
2. Use a single writer goroutine.
3. Open readers with ` + "`?mode=ro`" + `.

- [x] WAL enabled
- [ ] checkpoints tuned

***

Term
: A definition list entry, which the parser supports.

Final note: measure before tuning [2].
`},
	{"html-and-hard-breaks", `Line one with two trailing spaces  
line two after a hard break\
line three after a backslash break.

<details>
<summary>Raw HTML block</summary>

hidden text
</details>

Inline <kbd>Ctrl</kbd>+<kbd>C</kbd> stops it.

    indented code block
    second line

Done.
`},
}

// tricky holds short texts built around constructs where later text changes
// how earlier text parses. Each is streamed byte by byte.
var tricky = []struct{ name, md string }{
	{"setext-after-para", "First para.\n\nsecond para\n---\n\nthird\n===\nafter\n"},
	{"setext-vs-rule", "para\n\n---\n\npara2\n***\n"},
	{"lazy-quote", "> quoted\nlazy line\n\n> q2\n- not lazy, a list\n"},
	{"lazy-list", "- item\ncontinued lazily\n\npara\n"},
	{"loose-after-blank", "- a\n- b\n\n- c\n\npara\n"},
	{"list-blank-indent", "- a\n\n  still in a\n\n- b\n\nout\n"},
	{"ordered-continues", "1. one\n\n2. two\n\n3. three\n\ntext\n"},
	{"ordered-interrupt", "para\n2. not a list\n1. a list\n\nend\n"},
	{"fence-info-backtick", "para\n\n```x`\nnot code\n\n```go\ncode\n```\nafter\n"},
	{"fence-unclosed", "text\n\n```\nopen fence\n\nstill code\n"},
	{"fence-no-info", "a\n\n```\ncode\n```\n\nb\n\n```\n```\n\nc\n"},
	{"empty-items", "-\n\n- b\n\n-\n  foo\n\nend\n"},
	{"ref-def-later", "See [x] and [Y z].\n\nMiddle.\n\n[x]: http://example.com/long/url \"T\"\n[y  Z]: /y\n\nAfter.\n"},
	{"ref-def-vanish", "para\n\n[1]:\nhttp://x.y\n\n: not a def\n"},
	{"ref-def-first", "[a]: /a\n\nuse [a] and [b]\n\n[b]: /b\n"},
	{"deflist", "Term\n\n: def one\n\nTerm2\n: def two\n\nPara\n\n[z]: /z\n: def three\n"},
	{"deflist-merge", "Apple\n: fruit\n\nBanana\n: yellow\n\nplain para\n"},
	{"table-streams", "intro\n| a | b |\n|---|---|\n| 1 | 2 |\nrow3 | x\n\nafter\n"},
	{"heading-no-blank", "# H1\npara\n## H2\n```\ncode\n```\n# H3\n"},
	{"html-types", "<div>\nblock\n</div>\npara\n\n<!-- comment\nmore -->\n<custom-tag>\ntext\n\nend\n"},
	{"thematic", "a\n\n* * *\n\n- - -\nb\n___\n"},
	{"indented-code", "para\n\n    code\n\n    more code\n\nafter\n"},
	{"hard-break-eol", "line  \nnext\\\nlast\n\nz\n"},
	{"crlf", "a\r\n\r\nb\r\n- c\r\n\r\nd\r\n"},
	// Glamour writes an HTML block without a leading newline, so a long one
	// continues (and wraps with) the previous block's partial last line.
	{"html-after-code", "```\ncode\n```\n<div>" + strings.Repeat("word ", 30) + "</div>\n\npara one\n\npara two\n"},
	{"html-after-heading", "# Heading\n<custom>\n" + strings.Repeat("word ", 30) + "\n\npara\n\n<p>" + strings.Repeat("w ", 50) + "</p>\n\nmore\n"},
	{"tabs-quotes", "\t- tab list?\n>\tquote tab\n\n  > indented quote\n\nend\n"},
}

// longAnswer concatenates the corpus into an answer of at least n bytes.
func longAnswer(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		a := answers[i%len(answers)]
		if a.name == "unclosed-fence" {
			continue
		}
		b.WriteString("## Part ")
		b.WriteString(a.name)
		b.WriteString("\n\n")
		b.WriteString(a.md)
		b.WriteString("\n")
	}
	return b.String()
}
