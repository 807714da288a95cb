// Command ollama_harness answers chat requests as Ollama fb307609 (v0.33.0-rc2) does for a gpt-oss
// model, from the stream its llama-server runner would send, calling Ollama's own packages.
//
// Built by tools/goldens/ollama_build.sh against ollama/ollama@fb3076099 (unmodified Go source);
// driven by tools/goldens/ollama_0_33_0_rc2.py. Ollama's own code runs for everything that decides
// the reply's content: parsers.ParserForName("harmony") (model/parsers/parsers.go, i.e.
// harmony.HarmonyMessageHandler: Init, Add, its tool-call accumulator and FunctionNameMap),
// api.ChatRequest/api.ChatResponse/api.Message JSON (api/types.go), and for /v1/chat/completions
// openai.FromChatRequest, openai.ToStreamChunks, openai.FinishChunk, openai.ToChatCompletion and
// openai.NewError (openai/openai.go). The server package (server/routes.go) and middleware
// (middleware/openai.go) import gin, llama.cpp bindings and dozens of modules that cannot be had
// offline, so their glue is restated line by line (here, ollama_harness_server.go and
// ollama_harness_openai.go), each block citing the lines it follows:
//
//   - llm/llama_server.go:1664-1753 (llamaServerRunner.Completion): the SSE loop over llama-server's
//     /completion events: token-repeat abort (>30 equal trimmed contents: return ctx.Err(), nil,
//     so no Done callback), one callback per non-empty, non-stop content, the stop event's callback
//     last (Done, DoneReason length for stop_type "limit", else stop).
//   - server/routes.go:2679-2692 (ChatHandler): parser Init with the request's tools and the last
//     message; :2745-2940 the completion goroutine and callback (Add, tool call ids, what is sent), parser error
//     → gin.H{"error"}; :2387-2438 writeChatResponse (non-streamed aggregation); :2097-2144
//     streamResponse (NDJSON, errors before/after the first write); :2305-2312 toolCallId;
//     :427-792 GenerateHandler's parser, callback and aggregation for /api/generate.
//   - middleware/openai.go:64-183 (BaseWriter.writeError, ChatWriter.writeResponse/Write) and
//     :446-486 (ChatMiddleware: FromChatRequest, the chatcmpl id) for /v1/chat/completions;
//     :488-548 (ResponsesWriter) and :1154-1230 (ResponsesMiddleware: FromResponsesRequest, the
//     resp_/msg_ ids; ResponsesStreamConverter and ToResponse are openai/responses.go's own) for
//     /v1/responses (without a web_search tool: WebSearchResponsesWriter is not restated).
//
// The prompt: with -template FILE (the model's Go template), a request with "mode": "render" is
// answered with the prompt text Ollama renders for it (ollama_harness_prompt.go: Ollama's template
// package and the harmony parser's Init); the driver tokenizes it (prompt_n, generate's context).
//
// Not covered: structured outputs (format), logprobs, prompt truncation to num_ctx, model options,
// the model's own messages/system (gpt-oss has none). Nothing of Ollama's is stubbed; the build only
// replaces the test-only gopkg.in/check.v1 (needed by gopkg.in/yaml.v3's go.mod, never compiled)
// by an empty module.
//
// Input: JSON lines {"id", "endpoint": "/api/chat" | "/api/generate" | "/v1/chat/completions" |
// "/v1/responses", "request": {...},
// "events": [{"content": "...", "stop": bool, "stop_type": "eos"|"limit"|""}]}.
// Output: JSON lines {"id", "status", "writes": ["..."]}: the bytes written to the client, one
// string per Write call (an NDJSON line, an SSE frame, or the JSON body).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/openai"
)

// fixed clock: the replies' timestamps and durations are not compared.
var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

var rng = rand.New(rand.NewSource(1))

type event struct {
	Content  string `json:"content"`
	Stop     bool   `json:"stop"`
	StopType string `json:"stop_type"`
	// the stop event's timings (llama-server's prompt_n and predicted_n)
	PromptN    int `json:"prompt_n"`
	PredictedN int `json:"predicted_n"`
}

type input struct {
	ID       string          `json:"id"`
	Endpoint string          `json:"endpoint"`
	Request  json.RawMessage `json:"request"`
	Events   []event         `json:"events"`
	// "render": answer the prompt Ollama renders for the request, not the reply
	Mode string `json:"mode"`
	// /api/generate's "context": the runner's tokens of prompt+output (routes.go:711-717),
	// tokenized by the driver (this harness has no tokenizer)
	Context []int `json:"context"`
}

type output struct {
	ID     string   `json:"id"`
	Status int      `json:"status"`
	Writes []string `json:"writes"`
	Prompt *string  `json:"prompt,omitempty"`
	Error  string   `json:"error,omitempty"`
}

// rendered is a render-mode answer: the prompt text, or the error rendering it.
func rendered(id, prompt string, err error) output {
	if err != nil {
		return output{ID: id, Writes: []string{}, Error: "render: " + err.Error()}
	}
	return output{ID: id, Writes: []string{}, Prompt: &prompt}
}

// sink is the client connection as gin's ResponseWriter shows it: a status, then writes.
type sink struct {
	status  int
	written bool
	writes  []string
}

func (s *sink) WriteHeader(code int) {
	if !s.written {
		s.status = code
	}
}
func (s *sink) Status() int   { return s.status }
func (s *sink) Written() bool { return s.written }
func (s *sink) Write(b []byte) (int, error) {
	s.written = true
	s.writes = append(s.writes, string(b))
	return len(b), nil
}

// writer is c.Writer: the sink itself (/api/chat) or the OpenAI middleware's ChatWriter.
type writer interface {
	WriteHeader(int)
	Status() int
	Written() bool
	Write([]byte) (int, error)
}

// ginJSON is gin's c.JSON: status, then json.Marshal of obj in one Write.
func ginJSON(w writer, status int, obj any) {
	w.WriteHeader(status)
	b, _ := json.Marshal(obj)
	w.Write(b)
}

type ginH map[string]any

// toolCallId is server/routes.go:2305-2312 (seeded here; ids are compared by shape).
func toolCallId() string {
	const letterBytes = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 8)
	for i := range b {
		b[i] = letterBytes[rng.Intn(len(letterBytes))]
	}
	return "call_" + strings.ToLower(string(b))
}

type completionResponse struct {
	Content         string
	Done            bool
	DoneReason      string
	PromptEvalCount int
	EvalCount       int
}

// fixed, non-zero durations (so that Go's omitempty keeps their keys); not compared.
const (
	promptEvalDuration = 20 * time.Millisecond
	evalDuration       = 300 * time.Millisecond
	loadDuration       = 5 * time.Millisecond
	totalDuration      = 400 * time.Millisecond
)

// complete is llm/llama_server.go:1664-1753: llama-server's SSE events to the callbacks.
func complete(events []event, fn func(completionResponse)) {
	var lastToken string
	var tokenRepeat int
	var final completionResponse
	hasFinal := false
	for _, ev := range events {
		switch {
		case strings.TrimSpace(ev.Content) == lastToken:
			tokenRepeat++
		default:
			lastToken = strings.TrimSpace(ev.Content)
			tokenRepeat = 0
		}
		if tokenRepeat > 30 {
			return // "prediction aborted, token repeat limit reached": return ctx.Err() (nil)
		}
		if ev.Content != "" && !ev.Stop {
			fn(completionResponse{Content: ev.Content})
		}
		if ev.Stop {
			reason := "stop"
			if ev.StopType == "limit" {
				reason = "length"
			}
			final = completionResponse{Content: ev.Content, Done: true, DoneReason: reason,
				PromptEvalCount: ev.PromptN, EvalCount: ev.PredictedN}
			hasFinal = true
			break
		}
	}
	if hasFinal {
		fn(final)
	}
}

func answer(in input) output {
	out := output{ID: in.ID}
	s := &sink{status: http.StatusOK}
	var w writer = s
	var req api.ChatRequest
	switch in.Endpoint {
	case "/api/chat":
		if err := json.Unmarshal(in.Request, &req); err != nil {
			ginJSON(s, http.StatusBadRequest, ginH{"error": err.Error()})
			return output{ID: in.ID, Status: s.status, Writes: s.writes}
		}
	case "/api/generate":
		var greq api.GenerateRequest
		if err := json.Unmarshal(in.Request, &greq); err != nil {
			ginJSON(s, http.StatusBadRequest, ginH{"error": err.Error()})
			return output{ID: in.ID, Status: s.status, Writes: s.writes}
		}
		if in.Mode == "render" {
			prompt, err := generatePrompt(greq)
			return rendered(in.ID, prompt, err)
		}
		generate(s, greq, in.Events, in.Context)
		out.Status, out.Writes = s.status, s.writes
		if out.Writes == nil {
			out.Writes = []string{}
		}
		return out
	case "/v1/chat/completions":
		var oreq openai.ChatCompletionRequest
		if err := json.Unmarshal(in.Request, &oreq); err != nil {
			ginJSON(s, http.StatusBadRequest, openai.NewError(http.StatusBadRequest, err.Error()))
			return output{ID: in.ID, Status: s.status, Writes: s.writes}
		}
		converted, err := openai.FromChatRequest(oreq)
		if err != nil {
			ginJSON(s, http.StatusBadRequest, openai.NewError(http.StatusBadRequest, err.Error()))
			return output{ID: in.ID, Status: s.status, Writes: s.writes}
		}
		// ChatMiddleware re-encodes the request and ChatHandler binds it (middleware/openai.go:468-473)
		b, _ := json.Marshal(converted)
		if err := json.Unmarshal(b, &req); err != nil {
			out.Error = err.Error()
			return out
		}
		cw := &chatWriter{stream: oreq.Stream, id: fmt.Sprintf("chatcmpl-%d", rng.Intn(999)), inner: s}
		if oreq.StreamOptions != nil {
			cw.includeUsage = oreq.StreamOptions.IncludeUsage
		}
		w = cw
	case "/v1/responses":
		// ResponsesMiddleware, middleware/openai.go:1154-1230 (no web_search tool: the plain writer)
		var rreq openai.ResponsesRequest
		if err := json.Unmarshal(in.Request, &rreq); err != nil {
			ginJSON(s, http.StatusBadRequest, openai.NewError(http.StatusBadRequest, err.Error()))
			return output{ID: in.ID, Status: s.status, Writes: s.writes}
		}
		converted, err := openai.FromResponsesRequest(rreq)
		if err != nil {
			ginJSON(s, http.StatusBadRequest, openai.NewError(http.StatusBadRequest, err.Error()))
			return output{ID: in.ID, Status: s.status, Writes: s.writes}
		}
		streamRequested := rreq.Stream != nil && *rreq.Stream
		converted.Stream = &streamRequested
		b, _ := json.Marshal(converted)
		if err := json.Unmarshal(b, &req); err != nil {
			out.Error = err.Error()
			return out
		}
		responseID := fmt.Sprintf("resp_%d", rng.Intn(999999))
		itemID := fmt.Sprintf("msg_%d", rng.Intn(999999))
		w = &responsesWriter{
			converter: openai.NewResponsesStreamConverter(responseID, itemID, rreq.Model, rreq),
			model:     rreq.Model, stream: streamRequested, responseID: responseID, itemID: itemID,
			request: rreq, inner: s,
		}
	default:
		out.Error = "unknown endpoint " + in.Endpoint
		return out
	}
	// server/routes.go:2616-2620: a thinking-capable model (gpt-oss) defaults think to true.
	if req.Think == nil {
		req.Think = &api.ThinkValue{Value: true}
	}
	if in.Mode == "render" {
		prompt, err := chatPrompt(req)
		return rendered(in.ID, prompt, err)
	}
	writeChatResponse(w, req, chat(req, in.Events))
	out.Status, out.Writes = s.status, s.writes
	if out.Writes == nil {
		out.Writes = []string{}
	}
	return out
}

func main() {
	// openai/responses.go draws rs_ ids from math/rand's global source: seeded, for goldens that
	// regenerate byte for byte (honoured with GODEBUG=randseednop=0, which the driver sets).
	rand.Seed(1) //nolint:staticcheck
	if len(os.Args) == 3 && os.Args[1] == "-template" {
		if err := loadTemplate(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "template:", err)
			os.Exit(2)
		}
	}
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 0, 1<<20), 1<<28)
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	for scanner.Scan() {
		line := bytes.TrimSpace(scanner.Bytes())
		if len(line) == 0 {
			continue
		}
		var in input
		if err := json.Unmarshal(line, &in); err != nil {
			fmt.Fprintln(os.Stderr, "bad input line:", err)
			os.Exit(2)
		}
		enc.Encode(answer(in))
	}
	if err := scanner.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
