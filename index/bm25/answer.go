package bm25

import (
	"regexp"
	"strings"
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
	// duration (3 minutes, 120s, 1h30m, 30 秒) or the date a period
	// ends (until May 2029, 2026-03-01).
	timeAnswer
)

// asksTime is run once per question, so a regexp's cost does not count;
// a text is scanned by holdsTime, which a regexp made 70× slower
// (BENCHMARKS.md).
var asksTime = regexp.MustCompile(`(?i)\bhow (long|often|frequently|soon|quickly)\b|\bhow much time\b|\bhow many (milliseconds|seconds|minutes|hours|days|weeks|months|years)\b` +
	`|多久|多长时间|多長時間|多少(秒|分钟|小时|天)|何秒|何分|何時間|何日|どのくらいの(時間|間隔|頻度)|どれくらいの(時間|間隔|頻度)`)

// answerOf is the kind of thing question asks for.
func answerOf(question string) answerKind {
	if asksTime.MatchString(question) {
		return timeAnswer
	}
	return anyAnswer
}

// heldBy reports whether text holds a thing of kind k.
func (k answerKind) heldBy(text string) bool {
	return k == timeAnswer && holdsTime(text)
}

// Units of time: those a number may carry joined or apart (120s, 3 m),
// and those a number word carries only apart ("a few seconds"; not "a
// second", which is more often the ordinal).
var (
	timeUnits = setOf("ns", "us", "µs", "ms", "s", "sec", "secs", "m", "min", "mins", "h", "hr", "hrs", "d", "w", "y",
		"second", "seconds", "minute", "minutes", "hour", "hours", "day", "days", "week", "weeks", "month", "months", "year", "years")
	timeWords   = setOf("seconds", "minute", "minutes", "hour", "hours", "day", "days", "week", "weeks", "month", "months", "year", "years")
	numberWords = setOf("a", "an", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
		"fifteen", "twenty", "thirty", "sixty", "ninety", "few", "several")
	months = setOf("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
		"january", "february", "march", "april", "june", "july", "august", "september", "october", "november", "december")
	cjkTimeUnits = []string{"秒", "分钟", "分鐘", "分間", "小时", "小時", "時間", "天", "日", "周", "週間", "个月", "か月", "ヶ月", "年"}
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
// seconds, 30 秒), a month and a year (May 2029, Jan 5, 2026) or an ISO
// date. It reads the text's ASCII words and the CJK after a number, and
// allocates nothing.
func holdsTime(text string) bool {
	var buf [16]byte
	// prev is the word before (lower case, cut at 16 bytes), and
	// prevNum/prevMonth say what it was; apart is whether nothing but
	// spaces and hyphens came since.
	var prev [16]byte
	prevLen, prevNum, prevMonth, apart := 0, false, false, false
	for i := 0; i < len(text); {
		c := text[i]
		if !isAlnum(c) {
			if c >= utf8.RuneSelf {
				if prevNum && apart && hasCJKUnit(text[i:]) {
					return true
				}
				_, n := utf8.DecodeRuneInString(text[i:])
				i += n
				prevNum, prevMonth, apart = false, false, false
				continue
			}
			if c != ' ' && c != '-' && c != '\t' {
				apart = false
				if c != ',' && c != '.' {
					prevNum, prevMonth = false, false
				}
			}
			i++
			continue
		}
		j := i
		for j < len(text) && isAlnum(text[j]) {
			j++
		}
		w := lower(buf[:0], text[i:j])
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
			if durationWord(w) {
				return true // 120s, 1h30m
			}
		case prevNum && apart && timeUnits[string(w)]:
			return true // 3 minutes, 5 m
		case apart && len(w) >= 3 && timeWords[string(w)] && numberWords[string(prev[:prevLen])]:
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
// 1h30m, 2d.
func durationWord(w []byte) bool {
	for len(w) > 0 {
		k := 0
		for k < len(w) && w[k] >= '0' && w[k] <= '9' {
			k++
		}
		if k == 0 {
			return false
		}
		u := k
		for u < len(w) && (w[u] < '0' || w[u] > '9') {
			u++
		}
		if !timeUnits[string(w[k:u])] {
			return false
		}
		w = w[u:]
	}
	return true
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
	return len(rest) == 6 || !isAlnum(rest[6])
}

func hasCJKUnit(s string) bool {
	for _, u := range cjkTimeUnits {
		if strings.HasPrefix(s, u) {
			return true
		}
	}
	return false
}
