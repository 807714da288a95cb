// The prompt Ollama renders for gpt-oss (see ollama_harness.go): server/routes.go's and
// server/prompt.go's glue at ollama/ollama@fb3076099, restated around Ollama's own template package
// (template/template.go: Parse, Execute, collate, the tool and message conversions) and its
// harmony parser's Init (the tool renaming, harmony/harmonyparser.go:393-427).
//
// gpt-oss is served through its model's Go template (no built-in renderer: model/renderers has none
// for gpt-oss; shouldUseHarmony, routes.go:77-87, makes chatModeForModel "rendered",
// :2357-2374). The template is the model's, not Ollama's source: tools/goldens/ollama_build.sh
// extracts it (the registry's gpt-oss template as unslothai/unsloth records it) and the harness
// reads it with -template FILE.
package main

import (
	"bytes"
	"os"
	"slices"
	ttemplate "text/template"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/model/parsers"
	"github.com/ollama/ollama/template"
)

// promptDate is the template's {{ currentDate }}: Ollama writes today's date
// (template/template.go:125-129, time.Now()); fixed here (mockoss's date, harmony/prompt/_common.py).
const promptDate = "2026-01-01"

var gptossTemplate *template.Template

func loadTemplate(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	t, err := template.Parse(string(b))
	if err != nil {
		return err
	}
	// text/template looks functions up when it executes: this replaces the clock, nothing else.
	t.Template.Funcs(ttemplate.FuncMap{"currentDate": func(args ...string) string { return promptDate }})
	gptossTemplate = t
	return nil
}

// renderPrompt is server/prompt.go:135-155 (no renderer: the model's template).
func renderPrompt(msgs []api.Message, tools []api.Tool, think *api.ThinkValue) (string, error) {
	var b bytes.Buffer
	thinkVal := false
	thinkLevel := ""
	if think != nil {
		thinkVal = think.Bool()
		thinkLevel = think.String()
	}
	if err := gptossTemplate.Execute(&b, template.Values{Messages: msgs, Tools: tools, Think: thinkVal, ThinkLevel: thinkLevel, IsThinkSet: think != nil}); err != nil {
		return "", err
	}
	return b.String(), nil
}

// harmonyThink is routes.go:2662-2668 (chat) and :428-433 (generate): "max" becomes "high".
func harmonyThink(think *api.ThinkValue) *api.ThinkValue {
	if think != nil {
		if s, ok := think.Value.(string); ok && s == "max" {
			return &api.ThinkValue{Value: "high"}
		}
	}
	return think
}

// chatPrompt is ChatHandler's prompt (routes.go:2655-2699): the model has no messages or system
// of its own; the harmony parser's Init renames the tools (processedTools); chatPrompt
// (server/prompt.go:23-92) renders the messages (copies: its append(system, msgs...)); its
// truncation to num_ctx is not restated (the goldens' prompts are short).
func chatPrompt(req api.ChatRequest) (string, error) {
	think := harmonyThink(req.Think)
	msgs := slices.Clone(req.Messages)
	var lastMessage *api.Message
	if len(msgs) > 0 {
		lastMessage = &msgs[len(msgs)-1]
	}
	tools := parsers.ParserForName("harmony").Init(req.Tools, lastMessage, think)
	return renderPrompt(slices.Clone(msgs), tools, think)
}

// generatePrompt is GenerateHandler's prompt (routes.go:424-455, 494-610): raw is the prompt as
// given; else a system message (req.System) and the user's prompt, rendered by chatPrompt with no
// tools ([]api.Tool{}), think defaulting to true for a thinking model (:446-452). (req.Context's
// detokenized text, written in front, and suffix/template requests are not covered.)
func generatePrompt(req api.GenerateRequest) (string, error) {
	if req.Raw {
		return req.Prompt, nil
	}
	think := harmonyThink(req.Think)
	if think == nil {
		think = &api.ThinkValue{Value: true}
	}
	var msgs []api.Message
	if req.System != "" {
		msgs = append(msgs, api.Message{Role: "system", Content: req.System})
	}
	msgs = append(msgs, api.Message{Role: "user", Content: req.Prompt})
	return renderPrompt(msgs, []api.Tool{}, think)
}
