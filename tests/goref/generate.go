// The /api/generate side of the reference: how Ollama's GenerateHandler fills
// the template values (server/routes.go), the part of chatPrompt it goes
// through for chat-like requests (server/prompt.go: image tags, renderPrompt),
// and the Modelfile defaults (SYSTEM, MESSAGE) of both request kinds.
//
// What a model brings besides its template is not modelled: no renderer or
// built-in parser (m.Config.Renderer / Parser empty), no thinking capability
// default (a request without "think" stays unset), and the prompt always fits
// the context window (chatPrompt's truncation never drops a message).
//
//	{"op":"generate","template":"...","request":{"prompt":"...","suffix":"...",
//	 "system":"...","images":[...],"think":true,"raw":false},
//	 "modelfile":{"system":"...","messages":[...]},"now":"2024-07-26"}
//
// The "ollama" op takes the same optional "modelfile".
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// GenerateRequest is the part of api.GenerateRequest that reaches the
// template (unknown keys are ignored, as with Ollama's JSON binding).
type GenerateRequest struct {
	Prompt   string      `json:"prompt"`
	Suffix   string      `json:"suffix"`
	System   string      `json:"system"`
	Template string      `json:"template"`
	Context  []int       `json:"context,omitempty"`
	Raw      bool        `json:"raw,omitempty"`
	Images   []ImageData `json:"images,omitempty"`
	Think    *ThinkValue `json:"think,omitempty"`
}

// Modelfile holds the defaults a model carries: its SYSTEM (m.System) and its
// MESSAGE lines (m.Messages).
type Modelfile struct {
	System   string    `json:"system"`
	Messages []Message `json:"messages"`
}

func (in *input) modelfile() (*Modelfile, *failure) {
	var m Modelfile
	if len(in.Modelfile) > 0 {
		if err := json.Unmarshal(in.Modelfile, &m); err != nil {
			return nil, fail("request", err)
		}
	}
	return &m, nil
}

// chatModelfile applies the Modelfile defaults the way ChatHandler does:
// the MESSAGE lines go before the request's messages, and SYSTEM before all
// unless the request starts with a system message. A request without
// messages only loads the model: nothing is rendered.
func chatModelfile(req *ChatRequest, m *Modelfile) *failure {
	if len(req.Messages) == 0 {
		return fail("request", errors.New("no messages: Ollama only loads the model (no template is rendered)"))
	}
	msgs := append(append([]Message{}, m.Messages...), req.Messages...)
	if req.Messages[0].Role != "system" && m.System != "" {
		msgs = append([]Message{{Role: "system", Content: m.System}}, msgs...)
	}
	req.Messages = msgs
	return nil
}

// imageTaggedMessages mirrors chatPrompt's loop over the kept messages (no
// renderer): each image gets an ID counted over the whole conversation and a
// tag "[img-ID]" that replaces the content's first "[img]", or else is put
// in front of the content.
func imageTaggedMessages(msgs []Message) {
	n := 0
	for i := range msgs {
		var prefix string
		prompt := msgs[i].Content
		for range msgs[i].Images {
			imgTag := fmt.Sprintf("[img-%d]", n)
			n++
			if !strings.Contains(prompt, "[img]") {
				prefix += imgTag
			} else {
				prompt = strings.Replace(prompt, "[img]", imgTag, 1)
			}
		}
		msgs[i].Content = prefix + prompt
	}
}

// generateValues mirrors GenerateHandler from the request checks to the
// template values. raw: the prompt is used as it is (no template).
func generateValues(req *GenerateRequest, m *Modelfile) (values Values, chatLike bool, f *failure) {
	if req.Raw && (req.Template != "" || req.System != "" || len(req.Context) > 0) {
		return values, false, fail("request", errors.New("raw mode does not support template, system, or context"))
	}
	if req.Prompt == "" {
		return values, false, fail("request", errors.New("empty prompt: Ollama only loads the model (no template is rendered)"))
	}
	if req.Context != nil && !req.Raw {
		// Ollama detokenizes the context with the model and writes it first
		return values, false, fail("request", errors.New("context: detokenizing token ids needs the model"))
	}
	if req.Suffix != "" {
		values.Prompt = req.Prompt
		values.Suffix = req.Suffix
	} else {
		var msgs []Message
		if req.System != "" {
			msgs = append(msgs, Message{Role: "system", Content: req.System})
		} else if m.System != "" {
			msgs = append(msgs, Message{Role: "system", Content: m.System})
		}
		if req.Context == nil {
			msgs = append(msgs, m.Messages...)
		}
		userMsg := Message{Role: "user", Content: req.Prompt}
		userMsg.Images = append(userMsg.Images, req.Images...)
		values.Messages = append(msgs, userMsg)
	}
	values.Think = req.Think != nil && req.Think.Bool()
	values.ThinkLevel = ""
	if req.Think != nil {
		values.ThinkLevel = req.Think.String()
	}
	values.IsThinkSet = req.Think != nil
	chatLike = values.Messages != nil && values.Suffix == "" && req.Template == ""
	if chatLike {
		// chatPrompt(..., values.Messages, []api.Tool{}, req.Think, ...): the
		// tools are an empty, non-nil list there
		imageTaggedMessages(values.Messages)
		values.Tools = Tools{}
	}
	return values, chatLike, nil
}

func doGenerate(in *input) (output, *failure) {
	now, err := parseNow(in.Now)
	if err != nil {
		return output{}, fail("request", err)
	}
	var req GenerateRequest
	if len(in.Request) > 0 {
		if err := json.Unmarshal(in.Request, &req); err != nil {
			return output{}, fail("request", err)
		}
	}
	m, f := in.modelfile()
	if f != nil {
		return output{}, f
	}
	// the model's template was parsed when the model was created (a template that does
	// not parse makes no model): before any request check
	src, err := in.templateText()
	if err != nil {
		return output{}, fail("request", err)
	}
	t, err := Parse(src, ollamaFuncs(now))
	if err != nil {
		return output{}, fail("parse", err)
	}
	values, _, f := generateValues(&req, m)
	if f != nil {
		return output{}, f
	}
	if req.Raw {
		return success([]byte(req.Prompt)), nil
	}
	if req.Template != "" {
		if t, err = Parse(req.Template, ollamaFuncs(now)); err != nil {
			return output{}, fail("parse", err)
		}
	}
	var b bytes.Buffer
	if err := t.Execute(&b, values); err != nil {
		return output{}, fail("exec", err)
	}
	return success(b.Bytes()), nil
}
