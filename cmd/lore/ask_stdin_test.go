package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// runWith runs lore with in as stdin, for tests that look at what was left
// unread or hand in a real pipe.
func (e *env) runWith(in *os.File, rd *strings.Reader, args ...string) run {
	e.t.Helper()
	var out bytes.Buffer
	var errb lockedBuffer
	streams := &ioStreams{
		Out: &out, Err: &errb,
		Getenv:   func(k string) string { return e.vars[k] },
		ErrWidth: func() int { return 100 },
		OutWidth: func() int { return 100 },
	}
	if in != nil {
		streams.In = in
	} else {
		streams.In = rd
	}
	code := Main(args, streams)
	return run{code: code, stdout: out.String(), stderr: errb.String()}
}

// With a question in the arguments, lore ask leaves stdin alone unless
// told (- or --context -): a `while read q` loop keeps its input, a pipe
// that never closes is not waited on (issue 34, item 7).
func TestAskReadsStdinOnlyWhenAsked(t *testing.T) {
	e, srv := askEnv(t)
	lastPrompt := func() string {
		chats := srv.Chats()
		msgs := chats[len(chats)-1].Messages
		return msgs[len(msgs)-1].Content
	}

	rest := strings.NewReader("what is a timeout?\nhow do I set OLLAMA_HOST?\n")
	r := e.runWith(nil, rest, "ask", "--index", "go", "how do I cancel a context?")
	if r.code != exitOK || rest.Len() == 0 {
		t.Fatalf("a question in the arguments swallowed stdin: exit %d, %d bytes left\n%s", r.code, rest.Len(), r.stderr)
	}
	if strings.Contains(lastPrompt(), "OLLAMA_HOST?") {
		t.Errorf("stdin went into the prompt:\n%s", lastPrompt())
	}

	// A pipe whose writer never closes: answered all the same.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	if r := e.runWith(pr, nil, "ask", "--index", "go", "how do I cancel a context?"); r.code != exitOK {
		t.Fatalf("open pipe on stdin: exit %d %s", r.code, r.stderr)
	}

	// Asked for, stdin is context before the question, both ways.
	for _, args := range [][]string{{"-", "what does this change break?"}, {"--context", "-", "what does this change break?"}} {
		r := e.runWith(nil, strings.NewReader("diff --git a/x.go b/x.go"), append([]string{"ask", "--index", "go"}, args...)...)
		if r.code != exitOK || !strings.Contains(lastPrompt(), "diff --git a/x.go") || !strings.Contains(lastPrompt(), "what does this change break?") {
			t.Errorf("%v: exit %d, prompt:\n%s", args, r.code, lastPrompt())
		}
	}
	// No question: stdin is the question, as before.
	if r := e.runWith(nil, strings.NewReader("how do I cancel a context?\n"), "ask", "--index", "go"); r.code != exitOK {
		t.Errorf("question on stdin: exit %d %s", r.code, r.stderr)
	}
	if r := e.runWith(nil, strings.NewReader("x"), "ask", "--index", "go", "--context", "-"); r.code != exitUsage || !strings.Contains(r.stderr, "needs the question") {
		t.Errorf("--context - without a question: exit %d %q", r.code, r.stderr)
	}
	if r := e.runWith(nil, strings.NewReader("x"), "ask", "--index", "go", "--context", "notes.txt", "q"); r.code != exitUsage || !strings.Contains(r.stderr, "--context-file") {
		t.Errorf("--context FILE: exit %d %q", r.code, r.stderr)
	}
	if r := e.run(false, "ask", "--help"); !strings.Contains(r.stdout, "--context -") || !strings.Contains(r.stdout, "while read q") {
		t.Errorf("ask --help does not say the rule:\n%s", r.stdout)
	}
}

// Stdin over 1 MiB is cut there, and a note says so and at what size
// (issue 34, item 7).
func TestAskSaysStdinWasCut(t *testing.T) {
	e, _ := askEnv(t)
	big := strings.Repeat("the build log says nothing useful here\n", 30000) // 1.1 MiB
	r := e.runWith(nil, strings.NewReader(big), "ask", "--index", "go", "-", "how do I cancel a context?")
	if r.code != exitOK || !strings.Contains(r.stderr, "note: stdin holds more than 1.0 MiB: only its first 1.0 MiB was read (1,048,576 bytes)") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	small := strings.Repeat("x", 1000)
	if r := e.runWith(nil, strings.NewReader(small), "ask", "--index", "go", "-", "how do I cancel a context?"); strings.Contains(r.stderr, "stdin holds more") {
		t.Errorf("a small stdin was called cut: %q", r.stderr)
	}
}
