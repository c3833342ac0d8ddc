// Package termsafe makes text that lore did not write (answers, passages,
// file names, headings, web titles, server errors) safe to print on a
// terminal: a model answer or a file name must not be able to set the
// clipboard (OSC 52), retitle the window, move the cursor or hide text.
//
// What is removed: C0 control characters other than newline and tab
// (carriage return too: a lone one overwrites the line, and "\r\n" becomes
// "\n"), DEL, C1 controls, and whole escape sequences, payload included:
// CSI (ESC [ … final byte), OSC, DCS, SOS, PM and APC strings (up to BEL or
// ST), other escapes (ESC ( B, ESC c), and the same introduced by their
// 8-bit C1 forms (U+009B, U+009D, …). Invalid UTF-8 becomes U+FFFD, except
// stray bytes 0x80–0x9F, which some terminals take for C1 controls: they are
// dropped. They do not start a sequence, though, as the same bytes are
// printable in legacy encodings (cp1252's ›, ž) and swallowing the text
// after them would lose content, not protect anyone.
//
// lore adds its own styling after this, so its own escapes are untouched.
package termsafe

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// Text is s without control characters and escape sequences; newlines and
// tabs are kept. Text that is already clean, the common case, is returned as
// it is, without allocating.
func Text(s string) string {
	if clean(s, false) {
		return s
	}
	var f Filter
	b := f.Append(make([]byte, 0, len(s)), s)
	return string(f.End(b))
}

// Line is Text for a label that must stay on one line (a file name, a
// heading, a title): newlines and tabs become spaces.
func Line(s string) string {
	if clean(s, true) {
		return s
	}
	s = Text(s)
	if strings.ContainsAny(s, "\n\t") {
		s = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\t' {
				return ' '
			}
			return r
		}, s)
	}
	return s
}

// clean reports whether s needs no change: valid UTF-8 with no control
// character but newline and tab (none at all when line is set).
func clean(s string, line bool) bool {
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b < 0x20 && (line || b != '\n' && b != '\t') || b == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if size == 1 || isC1(r) { // size 1 with b ≥ 0x80 is invalid UTF-8
			return false
		}
		i += size
	}
	return true
}

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

// state is where the filter is within an escape sequence.
type state uint8

const (
	ground   state = iota
	escape         // after ESC
	escInter       // ESC and intermediate bytes (ESC ( B, ESC # 8)
	csi            // a control sequence: parameters, intermediates, final byte
	str            // an OSC, DCS, SOS, PM or APC string, up to BEL or ST
	strEsc         // ESC inside a string: ESC \ is ST
)

// Filter sanitises text that arrives in pieces, such as a streamed answer: an
// escape sequence or a UTF-8 character split between two pieces is removed
// (or kept) as a whole. The zero value is ready to use.
type Filter struct {
	st   state
	pend [utf8.UTFMax]byte // the start of a character the next piece ends
	n    int
}

// String returns the sanitised form of the next piece s: what of it can be
// shown now.
func (f *Filter) String(s string) string {
	if f.idle() && clean(s, false) {
		return s
	}
	return string(f.Append(nil, s))
}

// idle reports whether the filter is between characters, outside any
// sequence: clean text then passes unchanged.
func (f *Filter) idle() bool { return f.st == ground && f.n == 0 }

// Append appends the sanitised form of the next piece s to dst.
func (f *Filter) Append(dst []byte, s string) []byte {
	if f.n > 0 {
		s = string(f.pend[:f.n]) + s
		f.n = 0
	}
	return f.run(dst, s, false)
}

// End appends what the text's last piece left undecided: a character cut
// short is shown as U+FFFD; an unfinished escape sequence is dropped.
func (f *Filter) End(dst []byte) []byte {
	s := string(f.pend[:f.n])
	f.n = 0
	dst = f.run(dst, s, true)
	f.st = ground
	return dst
}

func (f *Filter) run(dst []byte, s string, final bool) []byte {
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			if !final && !utf8.FullRuneInString(s[i:]) {
				f.n = copy(f.pend[:], s[i:])
				return dst
			}
			r, size = utf8.DecodeRuneInString(s[i:])
			if size == 1 {
				i++
				if f.st == ground && !isC1(rune(s[i-1])) {
					dst = utf8.AppendRune(dst, utf8.RuneError)
				}
				continue // a stray byte: see the package comment
			}
		}
		if f.step(r) {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

// step moves the filter past r and reports whether r is shown.
func (f *Filter) step(r rune) bool {
	for {
		switch f.st {
		case ground:
			switch {
			case r == '\n' || r == '\t':
				return true
			case r == 0x1b:
				f.st = escape
			case r == 0x9b:
				f.st = csi
			case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f:
				f.st = str
			case r < 0x20 || r == 0x7f || isC1(r):
			default:
				return true
			}
			return false
		case escape:
			switch {
			case r == '[':
				f.st = csi
			case r == ']' || r == 'P' || r == 'X' || r == '^' || r == '_':
				f.st = str
			case r == 0x1b:
			case r >= 0x20 && r <= 0x2f:
				f.st = escInter
			case r >= 0x30 && r <= 0x7e:
				f.st = ground
			default:
				f.st = ground
				continue // a lone ESC: r is itself
			}
			return false
		case escInter, csi:
			lo := rune(0x30) // the final bytes of ESC sequences
			if f.st == csi {
				lo = 0x40
			}
			switch {
			case r >= 0x20 && r < lo:
			case r >= lo && r <= 0x7e:
				f.st = ground
			default:
				f.st = ground
				continue // a broken sequence ends before r
			}
			return false
		case str:
			switch r {
			case 0x07, 0x9c, 0x18, 0x1a: // BEL, ST, and CAN, SUB that cancel
				f.st = ground
			case 0x1b:
				f.st = strEsc
			}
			return false
		case strEsc:
			if r == '\\' {
				f.st = ground
				return false
			}
			f.st = escape // an ESC ends the string and starts a sequence
			continue
		}
	}
}

// Writer sanitises what is written through it to w, across writes.
type Writer struct {
	w   io.Writer
	f   Filter
	buf []byte
}

// NewWriter returns a Writer to w; Close shows what the last write left
// undecided (it does not close w).
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

func (w *Writer) Write(p []byte) (int, error) { return w.WriteString(string(p)) }

// WriteString writes s sanitised.
func (w *Writer) WriteString(s string) (int, error) {
	if w.f.idle() && clean(s, false) {
		return io.WriteString(w.w, s)
	}
	w.buf = w.f.Append(w.buf[:0], s)
	if _, err := w.w.Write(w.buf); err != nil {
		return 0, err
	}
	return len(s), nil
}

// Close writes what the last write left undecided.
func (w *Writer) Close() error {
	w.buf = w.f.End(w.buf[:0])
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.w.Write(w.buf)
	return err
}

// JSON returns a writer of JSON text to w that escapes DEL and the C1
// controls (U+0080–U+009F): encoding/json escapes C0 controls but writes
// these raw, and some terminals obey an 8-bit CSI in UTF-8. The values
// stay the same for any JSON reader. Each write must be whole JSON text
// (json.Encoder writes a value in one call): a split character is not
// rejoined.
func JSON(w io.Writer) io.Writer { return jsonWriter{w} }

type jsonWriter struct{ w io.Writer }

func (j jsonWriter) Write(p []byte) (int, error) {
	if !bytes.ContainsFunc(p, func(r rune) bool { return r == 0x7f || isC1(r) }) {
		return j.w.Write(p)
	}
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(p)+32)
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		if r == 0x7f || isC1(r) {
			out = append(out, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		} else {
			out = append(out, p[i:i+size]...)
		}
		i += size
	}
	if _, err := j.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
