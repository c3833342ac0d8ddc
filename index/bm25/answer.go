package bm25

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// AnswerWeight is what a text gains in Rerank when it holds the kind of
// thing its question asks for (answerKind), as a share of the question's
// largest idf: one rare word's worth. A page that answers "how long"
// says a duration; a page that only shares the question's words often
// does not. Measured keyword only over every public set, 0.25 to 2 all
// helped and none cost a set (docs/ranking.md): 0.5 lifted Argo CD hit@5
// 0.778 → 0.815, 1 its MRR@5 0.619 → 0.667 and Prometheus' 0.730 →
// 0.764; 2 moved two more questions one place, but makes the kind nearly
// a filter over the re-ranked ten.
const AnswerWeight = 1

// answerKind is what a question asks for when a text's form can show it
// holds one.
type answerKind uint8

const (
	anyAnswer answerKind = iota
	// timeAnswer: "how long", "how often", 多久. The answer is a
	// duration (3 minutes, 120s, 1h30m, 30 秒) or a date (until May
	// 2029, 2026-03-01).
	timeAnswer
)

// asksTime is run once per question, so a regexp's cost does not count;
// a text is scanned by holdsTime, which a regexp made 70× slower
// (BENCHMARKS.md). asksLength takes back a "how long" that asks a length
// ("how long can a label value be?").
var (
	asksTime = regexp.MustCompile(`(?i)\bhow (long|often|frequently|soon|quickly)\b|\bhow much time\b|\bhow many (milliseconds|seconds|minutes|hours|days|weeks|months|years)\b` +
		`|多久|多长时间|多長時間|(多少|几)(毫秒|秒|分钟|分|个?小时|天|周|个月)|何秒|何分|何時間|何日|どのくらいの(時間|間隔|頻度)|どれくらいの(時間|間隔|頻度)`)
	asksLength = regexp.MustCompile(`(?i)\bhow long (can|could|may|should|must|is|are|will)\b[^?.!]*\bbe\s*[?.!]?\s*$` +
		`|\bhow long (is|are|can|may) (a|an|the|my|its|their)? ?(name|label|key|string|line|path|value|title|password|token|message|url|tag|id)s?\b`)
)

// answerOf is the kind of thing question asks for.
func answerOf(question string) answerKind {
	if asksTime.MatchString(question) && !asksLength.MatchString(question) {
		return timeAnswer
	}
	return anyAnswer
}

// heldBy reports whether text holds a thing of kind k.
func (k answerKind) heldBy(text string) bool {
	return k == timeAnswer && holdsTime(text)
}

// Units of time: those a number may carry joined or apart (120s, 3 m; a
// one-letter unit in lower case only: 300M is a size), and those a
// number word carries only apart ("a few seconds"; not "a second", which
// is more often the ordinal).
var (
	timeUnits = setOf("ns", "us", "ms", "s", "sec", "secs", "m", "min", "mins", "h", "hr", "hrs", "d", "w", "y",
		"second", "seconds", "minute", "minutes", "hour", "hours", "day", "days", "week", "weeks", "month", "months", "year", "years")
	timeWords   = setOf("second", "seconds", "minute", "minutes", "hour", "hours", "day", "days", "week", "weeks", "month", "months", "year", "years")
	numberWords = setOf("a", "an", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
		"fifteen", "twenty", "thirty", "sixty", "ninety", "few", "several")
	months = setOf("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
		"january", "february", "march", "april", "june", "july", "august", "september", "october", "november", "december")
	// Units not in ASCII, after a number: 30 秒, 5分, 3个小时, 100ミリ秒,
	// 120µs; 分 also begins 分钟, 分鐘 and 分間.
	afterNumber = []string{"秒", "分", "毫秒", "ミリ秒", "小时", "小時", "个小时", "時間", "天", "日", "周", "週間", "个月", "か月", "ヶ月", "年",
		"µs", "μs"}
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// holdsTime reports whether text says a duration or a date: a number
// and a unit of time (120s, 1h30m, 3 minutes, 3-minute, 1.5 hours, a few
// seconds, 30 秒, 120µs), a month and a year (May 2029, Jan 5, 2026) or
// an ISO date (2026-03-01, 2026-03-01T10:00Z). A line break is a space:
// docs wrap lines anywhere. It reads the text's ASCII words and what
// follows a number, and allocates nothing.
func holdsTime(text string) bool {
	var buf [16]byte
	// prev is the word before (lower case, cut at 16 bytes), and
	// prevNum/prevMonth say what it was; apart is whether nothing but
	// white space and hyphens came since.
	var prev [16]byte
	prevLen, prevNum, prevMonth, apart := 0, false, false, false
	for i := 0; i < len(text); {
		c := text[i]
		if !isAlnum(c) {
			if c >= utf8.RuneSelf {
				r, n := utf8.DecodeRuneInString(text[i:])
				switch {
				case prevNum && apart && unitAfterNumber(text[i:]):
					return true
				case r >= '０' && r <= '９': // a full-width number: ３０秒
					prevNum, prevMonth, apart, prevLen = true, false, true, 0
				case unicode.IsSpace(r): // a no-break space
				default:
					prevNum, prevMonth, apart = false, false, false
				}
				i += n
				continue
			}
			switch c {
			case ' ', '\t', '\n', '\r', '-':
			case ',', '.':
				apart = false
			default:
				prevNum, prevMonth, apart = false, false, false
			}
			i++
			continue
		}
		j := i
		for j < len(text) && isAlnum(text[j]) {
			j++
		}
		raw := text[i:j]
		w := lower(buf[:0], raw)
		digits := 0
		for digits < len(w) && w[digits] >= '0' && w[digits] <= '9' {
			digits++
		}
		switch {
		case digits > 0 && digits == len(w):
			if prevMonth && digits == 4 {
				return true // May 2029, Jan 5, 2026
			}
			if digits == 4 && isoDate(text[j:]) {
				return true
			}
		case digits > 0:
			if durationWord(raw) {
				return true // 120s, 1h30m
			}
		case prevNum && apart && timeUnits[string(w)] && (len(raw) > 1 || raw[0] == w[0]):
			return true // 3 minutes, 5 m
		case apart && len(w) >= 3 && timeWords[string(w)] && numberWords[string(prev[:prevLen])] &&
			!(string(w) == "second" && prev[0] == 'a'):
			return true // a few seconds, two hours
		}
		prevMonth = digits == 0 && isMonth(w) || prevMonth && digits > 0 && digits <= 2
		prevNum = digits > 0 && digits == len(w)
		prevLen = copy(prev[:], w)
		apart = true
		i = j
	}
	return false
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// lower is s in lower case in buf, cut at its size.
func lower(buf []byte, s string) []byte {
	for k := 0; k < len(s) && len(buf) < cap(buf); k++ {
		c := s[k]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf
}

// isMonth reports whether w names a month; most words are ruled out by
// their length or first letter without a lookup.
func isMonth(w []byte) bool {
	if len(w) < 3 || len(w) > 9 || !strings.ContainsRune("adfjmnos", rune(w[0])) {
		return false
	}
	return months[string(w)]
}

// durationWord reports whether w is numbers each with a unit: 120s, 5m,
// 1h30m, 15d. A one-letter unit is in lower case (300M is a size, 3D a
// dimension); a lone m is minutes only under 100 (100m, 500m are CPU
// millicores), a lone s not after a year (the 1990s).
func durationWord(w string) bool {
	parts := 0
	for rest := w; len(rest) > 0; parts++ {
		k := 0
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		u := k
		for u < len(rest) && (rest[u] < '0' || rest[u] > '9') {
			u++
		}
		if k == 0 || !isUnit(rest[k:u]) {
			return false
		}
		if parts == 0 && u == len(rest) {
			n, unit := rest[:k], rest[k:]
			if unit == "m" && len(n) > 2 || unit == "s" && len(n) == 4 && (n[:2] == "19" || n[:2] == "20") {
				return false
			}
		}
		rest = rest[u:]
	}
	return true
}

// isUnit reports whether u is a unit of time: in lower case if it is one
// letter, in any case if longer (120Sec).
func isUnit(u string) bool {
	if len(u) == 1 {
		return timeUnits[u]
	}
	var buf [16]byte
	return len(u) <= len(buf) && timeUnits[string(lower(buf[:0], u))]
}

// isoDate reports whether rest, just after four digits, is -MM-DD.
func isoDate(rest string) bool {
	if len(rest) < 6 || rest[0] != '-' || rest[3] != '-' {
		return false
	}
	for _, k := range []int{1, 2, 4, 5} {
		if rest[k] < '0' || rest[k] > '9' {
			return false
		}
	}
	return len(rest) == 6 || !isAlnum(rest[6]) || rest[6] == 'T'
}

// unitAfterNumber reports whether s, just after a number, begins with a
// unit of time that is not ASCII.
func unitAfterNumber(s string) bool {
	for _, u := range afterNumber {
		if strings.HasPrefix(s, u) {
			// µs ends in a letter of a word: not µsec's start, µss.
			return u[len(u)-1] >= utf8.RuneSelf || len(s) == len(u) || !isAlnum(s[len(u)])
		}
	}
	return false
}
