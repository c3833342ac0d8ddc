package analysis

import "strings"

// Definitions calls emit with the names a text defines: the first cell of
// each row of a Markdown table (under its header), the term of a list item
// that opens with a code span or bold text and a separator ("- `timeout`:
// …", "* **name** – …"), a command-line option at the start of its line
// ("  --repo-server-timeout-seconds int   …"), and a term of a definition
// list (the line above ": …"). Analyze counts each as an identifier at
// path weight (definedIdent): the reference row that defines an option
// then outranks the tutorial that merely passes it on a command line
// (issue 36, "a definition loses to a mention"). Counted as words, or at
// heading weight, they pulled plain-word questions to reference tables.
//
// A name is at most maxDefinition bytes: a longer first cell is a
// sentence, not a name.
func Definitions(text string, emit func(string)) {
	var prev string
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		t := strings.TrimSpace(line)
		switch {
		case t == "":
		case t[0] == '|':
			if tableRule(t) || nextIsRule(text) {
				break // a rule, or the header row above one: not a name
			}
			cell, _, _ := strings.Cut(t[1:], "|")
			name(strings.Trim(strings.TrimSpace(cell), "`*_"), emit)
		case t[0] == ':' && len(t) > 1 && t[1] == ' ' && prev != "":
			name(prev, emit)
		case t[0] == '-' && len(t) > 2 && (t[1] == '-' || t[2] == ',' || t[2] == ' ') && isAlpha(t[1+boolInt(t[1] == '-')]):
			flag, _, _ := strings.Cut(t, "  ") // the option and its value, up to the description
			name(flag, emit)
		default:
			if n, ok := listTerm(t); ok {
				name(n, emit)
			}
		}
		prev = t
	}
}

// maxDefinition bounds a defined name: the longest option names in the
// public sets' reference tables are under 60 bytes.
const maxDefinition = 80

func name(n string, emit func(string)) {
	if n != "" && len(n) <= maxDefinition {
		emit(n)
	}
}

// tableRule reports whether t is the rule under a table's header row
// (| --- | :-: |).
func tableRule(t string) bool {
	dash := false
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '-':
			dash = true
		case '|', ':', ' ', '\t':
		default:
			return false
		}
	}
	return dash
}

func nextIsRule(text string) bool {
	line, _, _ := strings.Cut(text, "\n")
	t := strings.TrimSpace(line)
	return t != "" && t[0] == '|' && tableRule(t)
}

// listTerm is the term of a list item (or a line) that opens with `code`
// or **bold** followed by a separator (: - – —), or bold that ends in a
// colon (**name:**).
func listTerm(t string) (string, bool) {
	switch {
	case len(t) > 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ':
		t = strings.TrimLeft(t[2:], " ")
	case len(t) > 3 && t[0] >= '0' && t[0] <= '9':
		i := 1
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' ' {
			t = strings.TrimLeft(t[i+2:], " ")
		}
	}
	var open string
	switch {
	case strings.HasPrefix(t, "**"):
		open = "**"
	case strings.HasPrefix(t, "`"):
		open = "`"
	default:
		return "", false
	}
	body, rest, ok := strings.Cut(t[len(open):], open)
	if !ok || body == "" {
		return "", false
	}
	if open == "**" && strings.HasSuffix(body, ":") {
		return strings.TrimSuffix(body, ":"), true
	}
	rest = strings.TrimLeft(rest, " ")
	for _, sep := range [...]string{":", "- ", "– ", "— "} {
		if strings.HasPrefix(rest, sep) {
			return strings.Trim(body, "`"), true
		}
	}
	return "", false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// definedIdent is a defined name as an identifier term (squashed, as a
// question's word is searched: expansion), or "" when the name is more
// than one word (a flag's value type aside) or too short to be one.
func definedIdent(name string) string {
	name = strings.TrimSpace(name)
	tok, rest, _ := strings.Cut(name, " ")
	switch {
	case strings.HasPrefix(tok, "-"):
		// An option: its long name (-n, --namespace string).
		for _, f := range strings.Fields(name) {
			if strings.HasPrefix(f, "--") {
				tok = f
				break
			}
		}
	case rest != "":
		return "" // "User Meta": words, searched as words
	}
	tok = strings.Trim(tok, "`*_,.:;()[]\"'")
	id := squash(tok)
	if len(id) <= 2 || !isSquashed(id) {
		return ""
	}
	return id
}
