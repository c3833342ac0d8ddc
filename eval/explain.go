package eval

// MetricsHelp says how every metric is computed (lore eval --explain).
const MetricsHelp = `How lore eval scores a question set

Retrieval (answerable questions; no model needed). A passage is relevant
when its path is a gold path and its lines overlap the gold lines.
  hit@1, hit@5, hit@10  the first relevant passage is within the first 1, 5, 10
  recall@k              share of the question's gold locations found in the first k
  mrr                   1/rank of the first relevant passage within 10 (0 if none)
  ndcg@10               discounted gain of relevant passages in the first 10, each
                        gold location counted once, over the ideal ranking

Answers (the chat model answers each question exactly as lore ask does,
without saving a session).
  keywords      share of answer_keywords found in the answer
  code          the answer holds a code block when the gold passage is code
  code_valid    share of the answer's code blocks that parse: Go (go/parser),
                JSON, YAML; other languages: the fence is closed and not empty
  citations     share of [n] markers that point at a source; 0 for an answer
                that cites nothing
  cited_gold    share of cited passages that overlap a gold location
  refusal       unanswerable questions: the answer declines (route none, or
                says the documents do not cover it)
  route         answerable → docs; unanswerable → none (offline) or web (online)

Judge (with --judge-model or judge-model; the prompts follow).
  faithfulness  share of the answer's claims the cited passages support
  relevancy     how directly the answer addresses the question

The global score is the mean of the metrics that ran, each averaged over the
questions it applies to: EXCELLENT from 0.80, ACCEPTABLE from 0.60, else
INSUFFICIENT. A question whose search or answer failed scores 0 on every
retrieval metric and counts in ERRORS.
`
