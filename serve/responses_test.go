package serve

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/lore-cli/lore/internal/ollamatest"
)

func responseInput(q string) responses.ResponseNewParams {
	return responses.ResponseNewParams{Model: "lore", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(q)}}
}

// TestResponsesAPIGetsACitedAnswer: openai-go's Responses client gets the
// answer as output text with a url_citation on its sources line, usage,
// and the lore extension.
func TestResponsesAPIGetsACitedAnswer(t *testing.T) {
	f := newFixture(t, Options{Token: testToken})
	res, err := f.client().Responses.New(context.Background(), responseInput("How do I cancel a request after a timeout?"))
	if err != nil {
		t.Fatal(err)
	}
	text := res.OutputText()
	if res.Object != "response" || res.Status != "completed" || res.Model != "lore" ||
		!strings.HasPrefix(text, "Use WithTimeout [1].") || !strings.Contains(text, "\n\nSources:\n[1] timeouts.md:") {
		t.Fatalf("object %q status %q model %q text:\n%s", res.Object, res.Status, res.Model, text)
	}
	if len(res.Output) != 1 || res.Output[0].Type != "message" || res.Output[0].Role != "assistant" || len(res.Output[0].Content) != 1 {
		t.Fatalf("output %+v", res.Output)
	}
	notes := res.Output[0].Content[0].Annotations
	if len(notes) != 1 || notes[0].Type != "url_citation" || !strings.Contains(notes[0].URL, "timeouts.md#L") ||
		!strings.HasPrefix(string([]rune(text)[notes[0].StartIndex:notes[0].EndIndex]), "[1] timeouts.md:") {
		t.Errorf("annotations %+v", notes)
	}
	if res.Usage.OutputTokens != 3 || res.Usage.InputTokens == 0 || res.Usage.TotalTokens != res.Usage.InputTokens+res.Usage.OutputTokens {
		t.Errorf("usage %+v", res.Usage)
	}
	var ext struct {
		Route string `json:"route"`
	}
	json.Unmarshal([]byte(res.JSON.ExtraFields["lore"].Raw()), &ext)
	if ext.Route != "docs" {
		t.Errorf("lore extension: %s", res.JSON.ExtraFields["lore"].Raw())
	}
}

// TestResponsesAPIReadsMessageItems: input as a list of message items
// (the conversation, with developer instructions and input_text parts)
// asks its last user message.
func TestResponsesAPIReadsMessageItems(t *testing.T) {
	f := newFixture(t, Options{})
	p := responses.ResponseNewParams{Model: "lore", Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("Answer briefly.", responses.EasyInputMessageRoleDeveloper),
		responses.ResponseInputItemParamOfMessage("What spins?", responses.EasyInputMessageRoleUser),
		responses.ResponseInputItemParamOfMessage("The alpha widget.", responses.EasyInputMessageRoleAssistant),
		responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
			responses.ResponseInputContentParamOfInputText("How do I cancel a request after a timeout?")}, responses.EasyInputMessageRoleUser),
	}}}
	res, err := f.client().Responses.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.OutputText(), "Use WithTimeout [1].") {
		t.Errorf("text:\n%s", res.OutputText())
	}
	chats := f.ollama.Chats()
	last := chats[len(chats)-1]
	if q := last.Messages[len(last.Messages)-1].Content; !strings.Contains(q, "How do I cancel a request after a timeout?") {
		t.Errorf("the model was asked %q", q)
	}
}

// TestResponsesAPIStreams: openai-go's streaming Responses client reads
// the typed events in order, the deltas make the whole text, and the
// annotation and the lore extension arrive.
func TestResponsesAPIStreams(t *testing.T) {
	f := newFixture(t, Options{})
	stream := f.client().Responses.NewStreaming(context.Background(), responseInput("How do I cancel a request after a timeout?"))
	var types []string
	var text strings.Builder
	var seqs []int64
	var completed responses.Response
	var cited []string
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		seqs = append(seqs, ev.SequenceNumber)
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.AsResponseOutputTextDelta().Delta)
		case "response.output_text.annotation.added":
			a := ev.AsResponseOutputTextAnnotationAdded().Annotation
			if a.Type == "url_citation" {
				cited = append(cited, a.URL)
			}
		case "response.completed":
			completed = ev.AsResponseCompleted().Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"}
	if len(types) < 8 || !slices.Equal(types[:4], want) || types[len(types)-1] != "response.completed" {
		t.Fatalf("events %v", types)
	}
	for i, s := range seqs {
		if s != int64(i) {
			t.Fatalf("sequence numbers %v", seqs)
		}
	}
	if got := text.String(); got != completed.OutputText() || !strings.HasPrefix(got, "Use WithTimeout [1].") || !strings.Contains(got, "Sources:\n[1] timeouts.md:") {
		t.Errorf("deltas:\n%s\ncompleted:\n%s", got, completed.OutputText())
	}
	if len(cited) != 1 || !strings.Contains(cited[0], "timeouts.md#L") {
		t.Errorf("url citations %v", cited)
	}
	if completed.Status != "completed" || completed.Usage.OutputTokens != 3 || !strings.Contains(completed.JSON.ExtraFields["lore"].Raw(), `"route":"docs"`) {
		t.Errorf("completed %+v", completed)
	}
}

// TestResponsesAPIStreamErrorIsRaised: a turn that breaks mid-stream ends
// with an error event that openai-go raises with the message.
func TestResponsesAPIStreamErrorIsRaised(t *testing.T) {
	f := newFixture(t, Options{})
	f.ollama.SetChat(ollamatest.ChatScript{Tokens: []string{"Use ", "WithTimeout", " [1]."}, FailAfter: 2})
	stream := f.client().Responses.NewStreaming(context.Background(), responseInput("How do I cancel a request after a timeout?"))
	for stream.Next() {
	}
	if err := stream.Err(); err == nil || !strings.Contains(err.Error(), "Ollama") {
		t.Errorf("stream error: %v", err)
	}
}

// TestResponsesAPIRefusals: what lore cannot do is a 400 saying why.
func TestResponsesAPIRefusals(t *testing.T) {
	f := newFixture(t, Options{})
	p := responseInput("alpha widget")
	p.PreviousResponseID = openai.String("resp_abc")
	_, err := f.client().Responses.New(context.Background(), p)
	if ae := apiError(t, err); ae.StatusCode != 400 || !strings.Contains(ae.Message, "whole conversation") {
		t.Errorf("previous_response_id: %d %s", ae.StatusCode, ae.Message)
	}
	p = responseInput("alpha widget")
	p.Text = responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{OfJSONObject: &openai.ResponseFormatJSONObjectParam{}}}
	_, err = f.client().Responses.New(context.Background(), p)
	if ae := apiError(t, err); ae.StatusCode != 400 || ae.Code != "unsupported_response_format" {
		t.Errorf("text.format json_object: %d %s %s", ae.StatusCode, ae.Code, ae.Message)
	}
}
