package eval

import (
	"regexp"
	"strings"

	"github.com/lore-cli/lore/internal/mdcode"
)

// A refusal says that the documents (or the one answering) lack the
// answer. It is told from a claim about the subject ("X is not
// supported", "damage is not covered by the warranty") by what the
// negation is about: the documents, the sources, the context, or "I"
// failing to find. Each pattern below names that subject.
var (
	docNoun = `(?:documents?|docs|documentation|sources?|context|passages?|excerpts?|snippets?|notes|(?:your|these|the provided|the given) (?:files|texts?|material)|provided (?:text|material|information|content))`
	// Words that may stand between a document noun and its verb without
	// making the verb someone else's ("the documents you provided don't").
	docGap     = `(?:\s+(?:you|i|we|provided|given|gave|shared|supplied|retrieved|have|here|above|below|available|listed|me|to))*`
	docVerb    = `(?:mention|cover|contain|say|state|specify|include|provide|discuss|address|describe|explain|talk about|answer|give|have|offer|list|touch on|document|detail|seem to \w+|appear to \w+)`
	refusalRes = []*regexp.Regexp{
		// "the documents don't mention", "the context does not say",
		// "the sources you gave don't seem to cover"
		regexp.MustCompile(`\b` + docNoun + docGap + `\s+(?:do|does|did)(?:n't| not)\s+(?:\w+ly\s+)?` + docVerb + `\b`),
		// "not covered in the documents", "not found in the provided sources"
		regexp.MustCompile(`\bnot\s+(?:\w+ly\s+)?(?:mentioned|covered|discussed|addressed|described|specified|documented|found|included|stated|explained|present|available|contained|answered)\s+(?:anywhere\s+)?(?:in|by|within|among)\s+(?:the|these|your|any of the|any)\s+(?:provided\s+|given\s+)?` + docNoun),
		// "not in the documents", "isn't in the sources", "nothing in your
		// notes", "no details in the sources"
		regexp.MustCompile(`(?:\bnot|n't|\bnothing|\bno \w+)\s+(?:\w+\s+)?(?:in|within)\s+(?:the|these|your)\s+(?:provided\s+|given\s+)?` + docNoun),
		// "my sources have nothing on", "the notes contain no information"
		regexp.MustCompile(`\b` + docNoun + docGap + `\s+(?:has|have|had|contain|contains|give|gives|offer|offers|say|says)\s+(?:nothing|no (?:information|mention|details?))\b`),
		// "none of the sources mention"
		regexp.MustCompile(`\bnone of the\s+(?:provided\s+|given\s+)?` + docNoun),
		// "there is no information about", "no mention of"
		regexp.MustCompile(`\bno (?:information|mention|details?|documentation|references?|explanation|description|instructions?|guidance)\s+(?:about|on|of|regarding|concerning|for|related to|in|as to)\b`),
		// "I couldn't find", "I don't know", "I can't answer", "I don't see
		// any mention" (not "I can't tell you more": that has answered)
		regexp.MustCompile(`\bi(?:'m| am)?\s+(?:could ?n't|could not|can't|cannot|can not|was unable to|wasn't able to|was not able to|unable to|not able to|did not|didn't|do not|don't)\s+(?:\w+\s+)?(?:find|see|locate|answer|know|have (?:any |enough )?(?:information|details|data))\b`),
		// "cannot tell from the documents", "unable to determine from the context"
		regexp.MustCompile(`\b(?:unable to|cannot|can't|can not|not possible to) (?:find|locate|determine|answer|tell|say)\b.*\b(?:from|in)\s+(?:the|these|your)\s+(?:provided\s+)?` + docNoun),
		regexp.MustCompile(`\bcannot be (?:found|answered|determined) (?:from|in|with)\b`),
		// "none of this is documented"
		regexp.MustCompile(`\bnone of (?:this|that|it)\s+(?:is|was)\s+(?:mentioned|covered|documented|discussed|addressed)\b`),
		// "your files are silent on", "outside the scope of the documents"
		regexp.MustCompile(`\b` + docNoun + docGap + `\s+(?:is|are)\s+silent\b`),
		regexp.MustCompile(`\b(?:outside|beyond)\s+(?:the\s+scope\s+of\s+)?(?:the|these|your|what the)\s+(?:provided\s+)?` + docNoun),
		// "found nothing about", "doesn't appear in the documents"
		regexp.MustCompile(`\b(?:found|find|see|saw)\s+nothing\s+(?:about|on|regarding|related|that|concerning)\b`),
		regexp.MustCompile(`(?:n't|\bnot|\bnever)\s+(?:\w+\s+)?(?:appear|appears|show up|shows up|come up|comes up)\s+(?:anywhere\s+)?(?:in|within)\s+(?:the|these|your)\s+(?:provided\s+)?` + docNoun),
	}
	// weakRefusalRes read as refusals only in a sentence that cites
	// nothing: "It is not covered [1]." quotes a source (about a warranty,
	// say), while "It is not covered." says the documents lack it.
	weakRefusalRes = []*regexp.Regexp{
		// "this isn't covered.", at the end: "it is not covered by the
		// warranty" is a claim
		regexp.MustCompile(`\b(?:this|that|it|the question|this question|this topic|that topic|the topic)\s+(?:isn't|is not|wasn't|was not|is nowhere)\s+(?:covered|addressed|mentioned|discussed|answered|documented)(?:\s+(?:here|anywhere|at all))?$`),
		// "Windows 95 is not mentioned.": texts mention, things do not
		regexp.MustCompile(`\b(?:is|are|was|were)(?:n't| not| nowhere)\s+(?:\w+ly\s+)?(?:mentioned|discussed|addressed)(?:\s+(?:here|anywhere|at all))?$`),
	}
	sentenceEnd = regexp.MustCompile(`[.!?]+(?:\s+|$)|\n+`)
	refusalNorm = strings.NewReplacer("’", "'", "‘", "'", "`", "", "*", "", "_", " ", "\u00a0", " ")
)

// IsRefusal reports whether an answer says that the documents do not
// answer the question. Only its first two sentences are read: the prompt
// asks the model to say so plainly, so a refusal leads, while an answer
// that ends on "the documents do not mention Windows" has answered the
// rest. Code and citation markers are not read.
func IsRefusal(answer string) bool {
	text := strings.ToLower(refusalNorm.Replace(mdcode.Prose(answer)))
	n := 0
	for _, sentence := range sentenceEnd.Split(text, -1) {
		cites := citeRe.MatchString(sentence)
		sentence = strings.Join(strings.Fields(citeRe.ReplaceAllString(sentence, "")), " ")
		if sentence == "" || strings.HasPrefix(sentence, "#") {
			continue
		}
		for _, re := range refusalRes {
			if re.MatchString(sentence) {
				return true
			}
		}
		for _, re := range weakRefusalRes {
			if !cites && re.MatchString(sentence) {
				return true
			}
		}
		if n++; n == 2 {
			break
		}
	}
	return false
}
