package mdstream

import (
	"fmt"
	"strings"
	"sync"

	"charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"
	"github.com/alecthomas/chroma/v2"
	chromastyles "github.com/alecthomas/chroma/v2/styles"
)

// styleConfig is glamour's standard style name with its code-highlighting
// theme registered under a name of its own. Glamour registers every
// style's theme under the one name "charm", first come first served, so in
// a process that renders both dark and light (the chat's /theme) code
// blocks would keep the first theme's colours.
func styleConfig(name string) (ansi.StyleConfig, error) {
	registerThemes()
	base, ok := styles.DefaultStyles[name]
	if !ok {
		return ansi.StyleConfig{}, fmt.Errorf("mdstream: unknown style %q", name)
	}
	cfg := *base
	if cfg.CodeBlock.Chroma != nil {
		cfg.CodeBlock.Theme, cfg.CodeBlock.Chroma = themeName(name), nil
	}
	return cfg, nil
}

func themeName(style string) string { return "lore-" + style }

// registerThemes writes every standard style's theme into chroma's registry
// before the first render. Chroma reads that map unlocked on every
// highlighted code block (styles.Get), so a theme registered lazily while
// another goroutine highlights code with a different style is a data race;
// after this runs, the map is only read.
var registerThemes = sync.OnceFunc(func() {
	for name, s := range styles.DefaultStyles {
		if c := s.CodeBlock.Chroma; c != nil {
			chromastyles.Register(chromaTheme(themeName(name), c))
		}
	}
})

func chromaTheme(name string, c *ansi.Chroma) *chroma.Style {
	return chroma.MustNewStyle(name, chroma.StyleEntries{
		chroma.Text:                chromaStyle(c.Text),
		chroma.Error:               chromaStyle(c.Error),
		chroma.Comment:             chromaStyle(c.Comment),
		chroma.CommentPreproc:      chromaStyle(c.CommentPreproc),
		chroma.Keyword:             chromaStyle(c.Keyword),
		chroma.KeywordReserved:     chromaStyle(c.KeywordReserved),
		chroma.KeywordNamespace:    chromaStyle(c.KeywordNamespace),
		chroma.KeywordType:         chromaStyle(c.KeywordType),
		chroma.Operator:            chromaStyle(c.Operator),
		chroma.Punctuation:         chromaStyle(c.Punctuation),
		chroma.Name:                chromaStyle(c.Name),
		chroma.NameBuiltin:         chromaStyle(c.NameBuiltin),
		chroma.NameTag:             chromaStyle(c.NameTag),
		chroma.NameAttribute:       chromaStyle(c.NameAttribute),
		chroma.NameClass:           chromaStyle(c.NameClass),
		chroma.NameConstant:        chromaStyle(c.NameConstant),
		chroma.NameDecorator:       chromaStyle(c.NameDecorator),
		chroma.NameException:       chromaStyle(c.NameException),
		chroma.NameFunction:        chromaStyle(c.NameFunction),
		chroma.NameOther:           chromaStyle(c.NameOther),
		chroma.Literal:             chromaStyle(c.Literal),
		chroma.LiteralNumber:       chromaStyle(c.LiteralNumber),
		chroma.LiteralDate:         chromaStyle(c.LiteralDate),
		chroma.LiteralString:       chromaStyle(c.LiteralString),
		chroma.LiteralStringEscape: chromaStyle(c.LiteralStringEscape),
		chroma.GenericDeleted:      chromaStyle(c.GenericDeleted),
		chroma.GenericEmph:         chromaStyle(c.GenericEmph),
		chroma.GenericInserted:     chromaStyle(c.GenericInserted),
		chroma.GenericStrong:       chromaStyle(c.GenericStrong),
		chroma.GenericSubheading:   chromaStyle(c.GenericSubheading),
		chroma.Background:          chromaStyle(c.Background),
	})
}

// chromaStyle is glamour's own translation of a style to chroma's syntax.
func chromaStyle(s ansi.StylePrimitive) string {
	var parts []string
	if s.Color != nil {
		parts = append(parts, *s.Color)
	}
	if s.BackgroundColor != nil {
		parts = append(parts, "bg:"+*s.BackgroundColor)
	}
	if s.Italic != nil && *s.Italic {
		parts = append(parts, "italic")
	}
	if s.Bold != nil && *s.Bold {
		parts = append(parts, "bold")
	}
	if s.Underline != nil && *s.Underline {
		parts = append(parts, "underline")
	}
	return strings.Join(parts, " ")
}
