package termsafe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain", "a *markdown* answer [1]\n\tcode", "a *markdown* answer [1]\n\tcode"},
		{"unicode", "évian 日本 😀 \uFFFD", "évian 日本 😀 \uFFFD"},
		{"OSC 52 with BEL", "copy\x1b]52;c;ZWNobyBwd25lZA==\anow", "copynow"},
		{"OSC 0 with ST", "\x1b]0;owned\x1b\\title", "title"},
		{"OSC 8 link", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "click"},
		{"CSI colour", "evil\x1b[31mred\x1b[0m.md", "evilred.md"},
		{"CSI private", "\x1b[?1049hhidden", "hidden"},
		{"DCS", "a\x1bPtmux;\x1b\x1b]52;c;eA==\a\x1b\\b", "ab"},
		{"APC PM SOS", "1\x1b_x\x1b\\2\x1b^y\x1b\\3\x1bXz\x1b\\4", "1234"},
		{"8-bit CSI", "a\u009b31mb", "ab"},
		{"8-bit OSC", "a\u009d0;title\u009cb", "ab"},
		{"8-bit OSC with BEL", "a\u009d52;c;eA==\ab", "ab"},
		{"other C1", "a\u0085\u008eb", "ab"},
		{"raw C1 bytes", "a\x9b31m\x9db", "a31mb"},
		{"invalid UTF-8", "a\xffb\xe2\x82", "a\uFFFDb\uFFFD"},
		{"C0 and DEL", "bell\a nul\x00 bs\b del\x7f", "bell nul bs del"},
		{"CRLF", "one\r\ntwo\rthree", "one\ntwothree"},
		{"charset and reset escapes", "\x1b(Ba\x1bcb\x1b#8c\x1b7d", "abcd"},
		{"lone ESC", "a\x1b\nb\x1b", "a\nb"},
		{"ESC ESC", "a\x1b\x1b[1mb", "ab"},
		{"ESC ends a string", "a\x1b]0;t\x1b[1mb", "ab"},
		{"CAN cancels a string", "a\x1b]0;t\x18b", "ab"},
		{"broken CSI", "a\x1b[12\nb", "a\nb"},
		{"unfinished OSC", "answer\x1b]52;c;ZWNobyBo", "answer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Text(c.in); got != c.want {
				t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestLine(t *testing.T) {
	if got := Line("two\nlines\tand\x1b[1mbold"); got != "two lines andbold" {
		t.Errorf("%q", got)
	}
	if got := Line("plain.md"); got != "plain.md" {
		t.Errorf("%q", got)
	}
}

// A sequence or a character split between pieces is removed or kept whole,
// wherever the split falls.
func TestFilterAcrossPieces(t *testing.T) {
	in := "a\x1b]52;c;ZWNobyBwd25lZA==\a é\x1b[31m日\u009d0;t\x1b\\b\r\n\x1b]0;x\x07c"
	want := Text(in)
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			var f Filter
			got := f.String(in[:i]) + f.String(in[i:j]) + f.String(in[j:]) + string(f.End(nil))
			if got != want {
				t.Fatalf("split at %d,%d: %q, want %q", i, j, got, want)
			}
		}
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, p := range []string{"Paris\x1b]", "52;c;eA==", "\a is the capital\x1b", "]0;pwned\x1b\\.\n", "\xe6\x97", "\xa5"} {
		if _, err := w.WriteString(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "Paris is the capital.\n日" {
		t.Errorf("%q", got)
	}
}

func TestCleanTextIsNotCopied(t *testing.T) {
	s := strings.Repeat("a clean line of an answer, é 日本\n", 100)
	if n := testing.AllocsPerRun(100, func() { _ = Text(s); _ = Line("file.md") }); n != 0 {
		t.Errorf("%v allocations for clean text", n)
	}
	var f Filter
	if n := testing.AllocsPerRun(100, func() { _ = f.String(s) }); n != 0 {
		t.Errorf("%v allocations for a clean piece", n)
	}
}

// shown reports whether r may reach the terminal.
func shown(r rune) bool {
	return r == '\n' || r == '\t' || r >= 0x20 && r != 0x7f && !isC1(r)
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"plain", "\x1b]52;c;eA==\a", "\x1b[31mred", "\u009b1m", "\x9b\xff", "a\r\nb", "\x1bP\x1b\\", "日本\xe6"} {
		f.Add(s, uint(1))
	}
	f.Fuzz(func(t *testing.T, s string, cut uint) {
		out := Text(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Text(%q) = %q: invalid UTF-8", s, out)
		}
		for _, r := range out {
			if !shown(r) {
				t.Fatalf("Text(%q) = %q: holds %U", s, out, r)
			}
		}
		if again := Text(out); again != out {
			t.Fatalf("not idempotent: %q, then %q", out, again)
		}
		if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !shown(r) }) && out != s {
			t.Fatalf("clean text changed: %q to %q", s, out)
		}
		i := int(cut % uint(len(s)+1))
		var fl Filter
		if got := fl.String(s[:i]) + fl.String(s[i:]) + string(fl.End(nil)); got != out {
			t.Fatalf("split at %d: %q, whole: %q", i, got, out)
		}
		if l := Line(s); strings.ContainsAny(l, "\n\t") || l != strings.NewReplacer("\n", " ", "\t", " ").Replace(out) {
			t.Fatalf("Line(%q) = %q", s, l)
		}
	})
}

func BenchmarkText(b *testing.B) {
	clean := strings.Repeat("A passage of prose with `code`, é and 日本語, as most answers are.\n", 64)
	dirty := strings.Repeat("A passage \x1b[1mwith\x1b[0m an \x1b]52;c;ZWNobyBo\a escape.\r\n", 64)
	for _, c := range []struct{ name, s string }{{"clean", clean}, {"escapes", dirty}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			b.ReportAllocs()
			for b.Loop() {
				_ = Text(c.s)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	v := map[string]string{"answer": "a\u009b2Jb\x7f\x1b]0;t\a é 日 \u00a0"}
	var b bytes.Buffer
	if err := json.NewEncoder(JSON(&b)).Encode(v); err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsFunc(b.Bytes(), func(r rune) bool { return !shown(r) }) {
		t.Errorf("control characters in %q", b.String())
	}
	var back map[string]string
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back["answer"] != v["answer"] {
		t.Errorf("%v: %q, want %q", err, back["answer"], v["answer"])
	}
}
