// Command ollama_harness answers chat requests as Ollama fb307609 (v0.33.0-rc2) does for a gpt-oss
// model, from the stream its llama-server runner would send, calling Ollama's own packages.
//
// Built by tools/goldens/ollama_build.sh against ollama/ollama@fb3076099 (unmodified Go source);
// driven by tools/goldens/ollama_v0_33_0_rc2.py. Ollama's own code runs for everything that decides
// the reply's content: parsers.ParserForName("harmony") (model/parsers/parsers.go, i.e.
// harmony.HarmonyMessageHandler: Init, Add, its tool-call accumulator and FunctionNameMap),
// api.ChatRequest/api.ChatResponse/api.Message JSON (api/types.go), and for /v1/chat/completions
// openai.FromChatRequest, openai.ToStreamChunks, openai.FinishChunk, openai.ToChatCompletion and
// openai.NewError (openai/openai.go). The server package (server/routes.go) and middleware
// (middleware/openai.go) import gin, llama.cpp bindings and dozens of modules that cannot be had
// offline, so their glue is restated here line by line, each block citing the lines it follows:
//
//   - llm/llama_server.go:1664-1753 (llamaServerRunner.Completion): the SSE loop over llama-server's
//     /completion events: token-repeat abort (>30 equal trimmed contents: return ctx.Err(), nil,
//     so no Done callback), one callback per non-empty, non-stop content, the stop event's callback
//     last (Done, DoneReason length for stop_type "limit", else stop).
//   - server/routes.go:2679-2692 (ChatHandler): parser Init with the request's tools and the last
//     message; :2745-2940 the completion goroutine and callback (Add, tool call ids, what is sent), parser error
//     → gin.H{"error"}; :2387-2438 writeChatResponse (non-streamed aggregation); :2097-2144
//     streamResponse (NDJSON, errors before/after the first write); :2305-2312 toolCallId.
//   - middleware/openai.go:64-183 (BaseWriter.writeError, ChatWriter.writeResponse/Write) and
//     :446-486 (ChatMiddleware: FromChatRequest, the chatcmpl id) for /v1/chat/completions;
//     :488-548 (ResponsesWriter) and :1154-1230 (ResponsesMiddleware: FromResponsesRequest, the
//     resp_/msg_ ids; ResponsesStreamConverter and ToResponse are openai/responses.go's own) for
//     /v1/responses (without a web_search tool: WebSearchResponsesWriter is not restated).
//
// Not covered: structured outputs (format), logprobs, the prompt (chatPrompt), model options, the
// model's own messages/system (gpt-oss has none). Nothing of Ollama's is stubbed; the build only
// replaces the test-only gopkg.in/check.v1 (needed by gopkg.in/yaml.v3's go.mod, never compiled)
// by an empty module.
//
// Input: JSON lines {"id", "endpoint": "/api/chat" | "/v1/chat/completions" | "/v1/responses", "request": {...},
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
	"github.com/ollama/ollama/model/parsers"
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
}

type output struct {
	ID     string   `json:"id"`
	Status int      `json:"status"`
	Writes []string `json:"writes"`
	Error  string   `json:"error,omitempty"`
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

// chat is ChatHandler's harmony branch (server/routes.go:2679-2692, 2745-2940) up to the channel's items.
func chat(req api.ChatRequest, events []event) []any {
	var items []any
	parser := parsers.ParserForName("harmony")
	var lastMessage *api.Message
	if len(req.Messages) > 0 {
		lastMessage = &req.Messages[len(req.Messages)-1]
	}
	parser.Init(req.Tools, lastMessage, req.Think)
	var parserErr error
	cancelled := false
	complete(events, func(r completionResponse) {
		if cancelled {
			return
		}
		res := api.ChatResponse{
			Model:     req.Model,
			CreatedAt: now,
			Message:   api.Message{Role: "assistant", Content: r.Content},
			Done:      r.Done,
		}
		if r.Done {
			res.Metrics = api.Metrics{PromptEvalCount: r.PromptEvalCount, PromptEvalDuration: promptEvalDuration,
				EvalCount: r.EvalCount, EvalDuration: evalDuration}
			res.DoneReason = r.DoneReason
			res.TotalDuration = totalDuration
			res.LoadDuration = loadDuration
		}
		content, thinking, toolCalls, err := parser.Add(r.Content, r.Done)
		if err != nil {
			parserErr = err
			cancelled = true
			return
		}
		res.Message.Content = content
		res.Message.Thinking = thinking
		for i := range toolCalls {
			toolCalls[i].ID = toolCallId()
		}
		res.Message.ToolCalls = toolCalls
		if res.Message.Content != "" || res.Message.Thinking != "" || len(res.Message.ToolCalls) > 0 || r.Done {
			items = append(items, res)
		}
	})
	if parserErr != nil {
		items = append(items, ginH{"error": parserErr.Error()})
	}
	return items
}

// writeChatResponse is server/routes.go:2387-2438 with streamResponse (:2097-2144).
func writeChatResponse(w writer, req api.ChatRequest, items []any) {
	if req.Stream != nil && !*req.Stream {
		var resp api.ChatResponse
		var toolCalls []api.ToolCall
		var sbThinking, sbContent strings.Builder
		for _, rr := range items {
			switch t := rr.(type) {
			case api.ChatResponse:
				sbThinking.WriteString(t.Message.Thinking)
				sbContent.WriteString(t.Message.Content)
				resp = t
				if len(req.Tools) > 0 {
					toolCalls = append(toolCalls, t.Message.ToolCalls...)
				}
			case ginH:
				ginJSON(w, http.StatusInternalServerError, ginH{"error": t["error"]})
				return
			}
		}
		resp.Message.Content = sbContent.String()
		resp.Message.Thinking = sbThinking.String()
		if len(toolCalls) > 0 {
			resp.Message.ToolCalls = toolCalls
		}
		ginJSON(w, http.StatusOK, resp)
		return
	}
	for _, val := range items {
		if h, ok := val.(ginH); ok {
			if !w.Written() {
				ginJSON(w, http.StatusInternalServerError, ginH{"error": h["error"]})
			} else {
				var b bytes.Buffer
				json.NewEncoder(&b).Encode(ginH{"error": h["error"]})
				w.Write(b.Bytes())
			}
			return
		}
		bts, err := json.Marshal(val)
		if err != nil {
			return
		}
		w.Write(append(bts, '\n'))
	}
}

// chatWriter is middleware/openai.go:30-40 and :64-183.
type chatWriter struct {
	stream         bool
	includeUsage   bool
	id             string
	toolCallSent   bool
	firstChunkSent bool
	createdAt      time.Time
	inner          *sink
}

func (w *chatWriter) WriteHeader(code int) { w.inner.WriteHeader(code) }
func (w *chatWriter) Status() int          { return w.inner.Status() }
func (w *chatWriter) Written() bool        { return w.inner.Written() }

func (w *chatWriter) writeError(data []byte) (int, error) {
	var serr api.StatusError
	if err := json.Unmarshal(data, &serr); err != nil {
		serr.ErrorMessage = string(data)
	}
	var b bytes.Buffer
	json.NewEncoder(&b).Encode(openai.NewError(w.inner.Status(), serr.Error()))
	w.inner.Write(b.Bytes())
	return len(data), nil
}

func (w *chatWriter) writeResponse(data []byte) (int, error) {
	var chatResponse api.ChatResponse
	if err := json.Unmarshal(data, &chatResponse); err != nil {
		return 0, err
	}
	if w.stream {
		if chatResponse.CreatedAt.IsZero() {
			chatResponse.CreatedAt = now
		}
		if w.createdAt.IsZero() {
			w.createdAt = chatResponse.CreatedAt
		}
		chatResponse.CreatedAt = w.createdAt
		isEmptyTrailer := chatResponse.Done && w.firstChunkSent &&
			chatResponse.Message.Content == "" && chatResponse.Message.Thinking == "" &&
			len(chatResponse.Message.ToolCalls) == 0 && len(chatResponse.Logprobs) == 0
		if !isEmptyTrailer {
			includeRole := !w.firstChunkSent
			for _, c := range openai.ToStreamChunks(w.id, chatResponse, includeRole) {
				d, err := json.Marshal(c)
				if err != nil {
					return 0, err
				}
				if !w.toolCallSent && len(c.Choices) > 0 && len(c.Choices[0].Delta.ToolCalls) > 0 {
					w.toolCallSent = true
				}
				w.inner.Write([]byte(fmt.Sprintf("data: %s\n\n", d)))
			}
			w.firstChunkSent = true
		}
		if chatResponse.Done {
			finishChunk := openai.FinishChunk(w.id, chatResponse, w.toolCallSent)
			d, _ := json.Marshal(finishChunk)
			w.inner.Write([]byte(fmt.Sprintf("data: %s\n\n", d)))
			if w.includeUsage {
				u := openai.ToUsage(chatResponse)
				finishChunk.Usage = &u
				finishChunk.Choices = []openai.ChunkChoice{}
				d, _ := json.Marshal(finishChunk)
				w.inner.Write([]byte(fmt.Sprintf("data: %s\n\n", d)))
			}
			w.inner.Write([]byte("data: [DONE]\n\n"))
		}
		return len(data), nil
	}
	var b bytes.Buffer
	json.NewEncoder(&b).Encode(openai.ToChatCompletion(w.id, chatResponse))
	w.inner.Write(b.Bytes())
	return len(data), nil
}

func (w *chatWriter) Write(data []byte) (int, error) {
	if w.inner.Status() != http.StatusOK {
		return w.writeError(data)
	}
	return w.writeResponse(data)
}

// responsesWriter is middleware/openai.go:488-548 (ResponsesWriter: writeEvent, writeResponse, Write).
type responsesWriter struct {
	converter  *openai.ResponsesStreamConverter
	model      string
	stream     bool
	responseID string
	itemID     string
	request    openai.ResponsesRequest
	inner      *sink
}

func (w *responsesWriter) WriteHeader(code int) { w.inner.WriteHeader(code) }
func (w *responsesWriter) Status() int          { return w.inner.Status() }
func (w *responsesWriter) Written() bool        { return w.inner.Written() }

func (w *responsesWriter) writeResponse(data []byte) (int, error) {
	var chatResponse api.ChatResponse
	if err := json.Unmarshal(data, &chatResponse); err != nil {
		return 0, err
	}
	if w.stream {
		for _, event := range w.converter.Process(chatResponse) {
			d, err := json.Marshal(event.Data)
			if err != nil {
				return 0, err
			}
			w.inner.Write([]byte(fmt.Sprintf("event: %s\ndata: %s\n\n", event.Event, d)))
		}
		return len(data), nil
	}
	response := openai.ToResponse(w.model, w.responseID, w.itemID, chatResponse, w.request)
	completedAt := now.Unix()
	response.CompletedAt = &completedAt
	var b bytes.Buffer
	json.NewEncoder(&b).Encode(response)
	w.inner.Write(b.Bytes())
	return len(data), nil
}

func (w *responsesWriter) Write(data []byte) (int, error) {
	if w.inner.Status() != http.StatusOK {
		return (&chatWriter{inner: w.inner}).writeError(data) // BaseWriter.writeError, shared
	}
	return w.writeResponse(data)
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
