// The server's handlers of ollama_harness (see ollama_harness.go): ChatHandler's and
// GenerateHandler's harmony paths, writeChatResponse and streamResponse (server/routes.go at
// ollama/ollama@fb3076099, which imports gin and the llama.cpp runner) restated line by line around
// Ollama's own harmony parser.
package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/model/parsers"
)

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
	streamItems(w, items)
}

// streamItems is streamResponse (server/routes.go:2097-2144) over the channel's items.
func streamItems(w writer, items []any) {
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

// generate is GenerateHandler's harmony path (server/routes.go:427-445 the parser, :649-748 the
// completion callback, :750-792 the non-streamed aggregation, else streamResponse). The runner
// tokenizes prompt+output for "context" (:711-717): the driver does (this harness has no
// tokenizer) and passes the ids in. raw: no parser and no preserved tokens (the gpt-oss template has no
// thinking tags for thinking.InferTags).
func generate(w writer, req api.GenerateRequest, events []event, context []int) {
	var parser parsers.Parser
	if !req.Raw {
		parser = parsers.ParserForName("harmony")
		parser.Init(nil, nil, req.Think)
	}
	var items []any
	var parserErr error
	cancelled := false
	complete(events, func(cr completionResponse) {
		if cancelled {
			return
		}
		res := api.GenerateResponse{Model: req.Model, CreatedAt: now, Response: cr.Content, Done: cr.Done}
		if cr.Done {
			res.Metrics = api.Metrics{PromptEvalCount: cr.PromptEvalCount, PromptEvalDuration: promptEvalDuration,
				EvalCount: cr.EvalCount, EvalDuration: evalDuration}
		}
		if parser != nil {
			content, thinking, toolCalls, err := parser.Add(cr.Content, cr.Done)
			if err != nil {
				parserErr = err
				cancelled = true
				return
			}
			res.Response = content
			res.Thinking = thinking
			if cr.Done && len(toolCalls) > 0 {
				res.ToolCalls = toolCalls
			}
		}
		if cr.Done {
			res.DoneReason = cr.DoneReason
			res.TotalDuration = totalDuration
			res.LoadDuration = loadDuration
			if !req.Raw {
				res.Context = context
			}
		}
		if parser != nil {
			if res.Response != "" || res.Thinking != "" || res.Done || len(res.ToolCalls) > 0 {
				items = append(items, res)
			}
			return
		}
		items = append(items, res)
	})
	if parserErr != nil {
		items = append(items, ginH{"error": parserErr.Error()})
	}
	if req.Stream != nil && !*req.Stream {
		var r api.GenerateResponse
		var sbThinking, sbContent strings.Builder
		for _, rr := range items {
			switch t := rr.(type) {
			case api.GenerateResponse:
				sbThinking.WriteString(t.Thinking)
				sbContent.WriteString(t.Response)
				r = t
			case ginH:
				ginJSON(w, http.StatusInternalServerError, ginH{"error": t["error"]})
				return
			}
		}
		r.Thinking = sbThinking.String()
		r.Response = sbContent.String()
		ginJSON(w, http.StatusOK, r)
		return
	}
	streamItems(w, items)
}
