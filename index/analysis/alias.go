package analysis

import (
	"maps"
	"slices"
)

// Abbreviations that code writes for a word, and the word: a question
// says "idle connections" where the code says maxIdleConns, whose part
// conns stems to conn, not to connect. A question's word is also searched
// as its other forms (Aliases): among camelCase parts, and among words at
// half a word's weight (bm25.AliasWeight), since prose clips words too
// ("my repo", "80 apps" for a page on applications). Aliases are looked up
// by stem, so an abbreviation whose word's stem other common words share
// is not here: spec for specif is also "specific", ref for refer, info for
// inform, exec for execut ("executive"). app for applic, which
// "applicable" shares, is: "app" is by far the commoner clipping, and a
// stray "applicable" weighs half a word.
var abbreviations = map[string]string{
	"addr":   "address",
	"admin":  "administrator",
	"app":    "application",
	"apps":   "applications",
	"arg":    "argument",
	"args":   "arguments",
	"async":  "asynchronous",
	"attr":   "attribute",
	"auth":   "authentication",
	"buf":    "buffer",
	"cert":   "certificate",
	"certs":  "certificates",
	"cfg":    "configuration",
	"config": "configuration",
	"conn":   "connection",
	"conns":  "connections",
	"ctx":    "context",
	"db":     "database",
	"dest":   "destination",
	"dir":    "directory",
	"dirs":   "directories",
	"doc":    "document",
	"docs":   "documentation",
	"env":    "environment",
	"err":    "error",
	"k8s":    "kubernetes",
	"len":    "length",
	"lib":    "library",
	"mem":    "memory",
	"msg":    "message",
	"msgs":   "messages",
	"ns":     "namespace",
	"num":    "number",
	"obj":    "object",
	"param":  "parameter",
	"params": "parameters",
	"perm":   "permission",
	"perms":  "permissions",
	"pkg":    "package",
	"prev":   "previous",
	"proc":   "process",
	"repo":   "repository",
	"repos":  "repositories",
	"req":    "request",
	"resp":   "response",
	"src":    "source",
	"str":    "string",
	"sync":   "synchronize",
	"temp":   "temporary",
	"tmp":    "temporary",
	"val":    "value",
	"var":    "variable",
	"vars":   "variables",
}

// aliases maps a term (as Words makes it) to the terms of its other
// forms.
var aliases = func() map[string][]string {
	out := map[string][]string{}
	stemOf := func(w string) string {
		var t string
		word(w, func(s string) { t = s })
		return t
	}
	for _, abbr := range slices.Sorted(maps.Keys(abbreviations)) {
		a, f := stemOf(abbr), stemOf(abbreviations[abbr])
		if a == "" || f == "" || a == f {
			continue
		}
		if !slices.Contains(out[a], f) {
			out[a] = append(out[a], f)
		}
		if !slices.Contains(out[f], a) {
			out[f] = append(out[f], a)
		}
	}
	return out
}()

// Aliases are the other forms of a term (repo for repositori, connect for
// conn); nil for most. Clipped: an append to them must not write into
// the table.
func Aliases(term string) []string { return slices.Clip(aliases[term]) }
