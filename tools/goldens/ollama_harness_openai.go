// The OpenAI layer's writers of ollama_harness (see ollama_harness.go): Ollama's middleware
// (middleware/openai.go at ollama/ollama@fb3076099, which imports gin) restated line by line around
// the openai package's own converters.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/openai"
)

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
