// Command goref is the Go reference renderer of the tmpl2py test suite.
//
// It reproduces how Ollama turns an /api/chat request (and, in generate.go, an
// /api/generate request) into a prompt with a Go text/template chat template
// (github.com/ollama/ollama, template/template.go and api/types.go; first ported
// from commit fb307609, audited type by type in README.md), using only the
// standard library.
// The parts below are copied from Ollama with third-party imports replaced
// (github.com/wk8/go-ordered-map -> orderedMap, agnivade/levenshtein -> not
// needed) and time.Now() frozen to the request's "now" date.
//
// Protocol: one JSON object per line on stdin, one JSON object per line on
// stdout (flushed after each line):
//
//	{"op":"ollama","template":"...","request":{...},"now":"2024-07-26"}
//	{"op":"plain","template":"...","data":<any JSON>,"funcs":false}
//	{"op":"bench","template":"...","request":{...},"iterations":1000}
//	{"op":"generate","template":"...","request":{"prompt":"..."},"modelfile":{...}}
//	{"op":"ping"}
//
// Answers: {"ok":true,"output":"..."} (plus "output_b64" when the output is not
// valid UTF-8), {"ok":true,"ns_per_op":123.4,"output":"..."} for bench, or
// {"ok":false,"kind":"parse"|"exec"|"request","error":"..."} ("error_b64"
// when the error is not valid UTF-8). "template_b64" may replace "template"
// on input, for templates that are not valid UTF-8.
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"
	"time"
	"unicode/utf8"
)

// ---------------------------------------------------------------------------
// internal/orderedmap (wraps github.com/wk8/go-ordered-map/v2 in Ollama) and
// internal/jsonutil, reimplemented on the standard library.
// ---------------------------------------------------------------------------

// orderedMap keeps keys in insertion order; setting an existing key updates its
// value in place (wk8 OrderedMap.Set semantics).
type orderedMap[V any] struct {
	keys []string
	vals map[string]V
}

func newOrderedMap[V any]() *orderedMap[V] {
	return &orderedMap[V]{vals: map[string]V{}}
}

func (m *orderedMap[V]) Set(k string, v V) {
	if _, ok := m.vals[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.vals[k] = v
}

func (m *orderedMap[V]) Len() int {
	if m == nil {
		return 0
	}
	return len(m.keys)
}

// ToMap mirrors orderedmap.Map.ToMap: nil for a nil map, else a plain Go map.
func (m *orderedMap[V]) ToMap() map[string]V {
	if m == nil {
		return nil
	}
	r := make(map[string]V, len(m.keys))
	for _, k := range m.keys {
		r[k] = m.vals[k]
	}
	return r
}

// jsonutilMarshal mirrors internal/jsonutil.Marshal (json.Marshal without
// HTML escaping).
func jsonutilMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// MarshalJSON mirrors orderedmap.Map.MarshalJSON (keys in insertion order).
// When called through json.Marshal the result is compacted with HTML
// escaping anyway, exactly as in Ollama.
func (m *orderedMap[V]) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range m.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, err := jsonutilMarshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := jsonutilMarshal(m.vals[k])
		if err != nil {
			return nil, err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON mirrors wk8 OrderedMap.UnmarshalJSON: object keys in document
// order, each value decoded with json.Unmarshal into V.
func (m *orderedMap[V]) UnmarshalJSON(data []byte) error {
	m.keys, m.vals = nil, map[string]V{}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("json: cannot unmarshal %s into an ordered map", strings.TrimSpace(string(data)))
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		var v V
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		m.Set(key, v)
	}
	_, err = dec.Token()
	return err
}

func isJSONNull(data []byte) bool {
	return string(bytes.TrimSpace(data)) == "null"
}

// ---------------------------------------------------------------------------
// api/types.go (the parts a chat template can see)
// ---------------------------------------------------------------------------

// ImageData represents the raw binary data of an image file.
type ImageData []byte

// Message mirrors api.Message.
type Message struct {
	Role       string      `json:"role"`
	Content    string      `json:"content"`
	Thinking   string      `json:"thinking,omitempty"`
	Images     []ImageData `json:"images,omitempty"`
	ToolCalls  []ToolCall  `json:"tool_calls,omitempty"`
	ToolName   string      `json:"tool_name,omitempty"`
	ToolCallID string      `json:"tool_call_id,omitempty"`
}

// UnmarshalJSON mirrors api.Message.UnmarshalJSON (the role is lower-cased).
func (m *Message) UnmarshalJSON(b []byte) error {
	type Alias Message
	var a Alias
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	*m = Message(a)
	m.Role = strings.ToLower(m.Role)
	return nil
}

type ToolCall struct {
	ID       string           `json:"id,omitempty"`
	Function ToolCallFunction `json:"function"`
}

type ToolCallFunction struct {
	Index     int                       `json:"index"`
	Name      string                    `json:"name"`
	Arguments ToolCallFunctionArguments `json:"arguments"`
}

// ToolCallFunctionArguments mirrors api.ToolCallFunctionArguments: tool call
// arguments in insertion order.
type ToolCallFunctionArguments struct {
	om *orderedMap[any]
}

func (t *ToolCallFunctionArguments) ToMap() map[string]any {
	if t == nil || t.om == nil {
		return nil
	}
	return t.om.ToMap()
}

func (t *ToolCallFunctionArguments) String() string {
	if t == nil || t.om == nil {
		return "{}"
	}
	bts, _ := json.Marshal(t.om)
	return string(bts)
}

// UnmarshalJSON: in Ollama a JSON null ends with a nil inner map (the wk8
// map pointer is set to nil), so mirror that.
func (t *ToolCallFunctionArguments) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		t.om = nil
		return nil
	}
	t.om = newOrderedMap[any]()
	return json.Unmarshal(data, t.om)
}

func (t ToolCallFunctionArguments) MarshalJSON() ([]byte, error) {
	if t.om == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(t.om)
}

type Tools []Tool

func (t Tools) String() string {
	bts, _ := json.Marshal(t)
	return string(bts)
}

type Tool struct {
	Type     string       `json:"type"`
	Items    any          `json:"items,omitempty"`
	Function ToolFunction `json:"function"`
}

func (t Tool) String() string {
	bts, _ := json.Marshal(t)
	return string(bts)
}

// PropertyType can be either a string or an array of strings.
type PropertyType []string

func (pt *PropertyType) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*pt = []string{s}
		return nil
	}
	var a []string
	if err := json.Unmarshal(data, &a); err != nil {
		return err
	}
	*pt = a
	return nil
}

func (pt PropertyType) MarshalJSON() ([]byte, error) {
	if len(pt) == 1 {
		return json.Marshal(pt[0])
	}
	return json.Marshal([]string(pt))
}

func (pt PropertyType) String() string {
	if len(pt) == 0 {
		return ""
	}
	if len(pt) == 1 {
		return pt[0]
	}
	return fmt.Sprintf("%v", []string(pt))
}

// ToolPropertiesMap mirrors api.ToolPropertiesMap: properties in insertion order.
type ToolPropertiesMap struct {
	om *orderedMap[ToolProperty]
}

func (t *ToolPropertiesMap) ToMap() map[string]ToolProperty {
	if t == nil || t.om == nil {
		return nil
	}
	return t.om.ToMap()
}

func (t ToolPropertiesMap) MarshalJSON() ([]byte, error) {
	if t.om == nil {
		return []byte("null"), nil
	}
	return json.Marshal(t.om)
}

func (t *ToolPropertiesMap) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		t.om = nil
		return nil
	}
	t.om = newOrderedMap[ToolProperty]()
	return json.Unmarshal(data, t.om)
}

type ToolProperty struct {
	AnyOf       []ToolProperty     `json:"anyOf,omitempty"`
	Type        PropertyType       `json:"type,omitempty"`
	Items       any                `json:"items,omitempty"`
	Description string             `json:"description,omitempty"`
	Enum        []any              `json:"enum,omitempty"`
	Properties  *ToolPropertiesMap `json:"properties,omitempty"`
}

// ToTypeScriptType converts a ToolProperty to a TypeScript type string
// (api.ToolProperty.ToTypeScriptType).
func (tp ToolProperty) ToTypeScriptType() string {
	if len(tp.AnyOf) > 0 {
		var types []string
		for _, anyOf := range tp.AnyOf {
			types = append(types, anyOf.ToTypeScriptType())
		}
		return strings.Join(types, " | ")
	}
	if len(tp.Type) == 0 {
		return "any"
	}
	if len(tp.Type) == 1 {
		return mapToTypeScriptType(tp.Type[0])
	}
	var types []string
	for _, t := range tp.Type {
		types = append(types, mapToTypeScriptType(t))
	}
	return strings.Join(types, " | ")
}

// mapToTypeScriptType maps JSON Schema types to TypeScript types (api).
func mapToTypeScriptType(jsonType string) string {
	switch jsonType {
	case "string":
		return "string"
	case "number", "integer":
		return "number"
	case "boolean":
		return "boolean"
	case "array":
		return "any[]"
	case "object":
		return "Record<string, any>"
	case "null":
		return "null"
	default:
		return "any"
	}
}

type ToolFunctionParameters struct {
	Type       string             `json:"type"`
	Defs       any                `json:"$defs,omitempty"`
	Items      any                `json:"items,omitempty"`
	Required   []string           `json:"required,omitempty"`
	Properties *ToolPropertiesMap `json:"properties"`
}

func (t *ToolFunctionParameters) String() string {
	bts, _ := json.Marshal(t)
	return string(bts)
}

type ToolFunction struct {
	Name        string                 `json:"name"`
	Description string                 `json:"description,omitempty"`
	Parameters  ToolFunctionParameters `json:"parameters"`
}

func (t *ToolFunction) String() string {
	bts, _ := json.Marshal(t)
	return string(bts)
}

// ThinkValue mirrors api.ThinkValue: a bool or "high" / "medium" / "low".
type ThinkValue struct {
	Value any
}

func (t *ThinkValue) Bool() bool {
	if t == nil || t.Value == nil {
		return false
	}
	switch v := t.Value.(type) {
	case bool:
		return v
	case string:
		return v == "high" || v == "medium" || v == "low"
	default:
		return false
	}
}

func (t *ThinkValue) String() string {
	if t == nil || t.Value == nil {
		return ""
	}
	switch v := t.Value.(type) {
	case string:
		return v
	case bool:
		if v {
			return "medium" // default level when just true
		}
		return ""
	default:
		return ""
	}
}

func (t *ThinkValue) UnmarshalJSON(data []byte) error {
	var b bool
	if err := json.Unmarshal(data, &b); err == nil {
		t.Value = b
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		if s != "high" && s != "medium" && s != "low" {
			return fmt.Errorf("invalid think value: %q (must be \"high\", \"medium\", \"low\", true, or false)", s)
		}
		t.Value = s
		return nil
	}
	return fmt.Errorf("think must be a boolean or string (\"high\", \"medium\", \"low\", true, or false)")
}

// ChatRequest is the part of api.ChatRequest that reaches the template.
// Unknown keys (model, stream, options, "source", ...) are ignored, as with
// Ollama's JSON binding.
type ChatRequest struct {
	Messages []Message   `json:"messages"`
	Tools    Tools       `json:"tools,omitempty"`
	Think    *ThinkValue `json:"think,omitempty"`
}

// ---------------------------------------------------------------------------
// template/template.go
// ---------------------------------------------------------------------------

type Template struct {
	*template.Template
	raw   string
	funcs template.FuncMap
}

// response is a template node that can be added to templates that don't
// already have one (template.response).
var response = parse.ActionNode{
	NodeType: parse.NodeAction,
	Pipe: &parse.PipeNode{
		NodeType: parse.NodePipe,
		Cmds: []*parse.CommandNode{
			{
				NodeType: parse.NodeCommand,
				Args: []parse.Node{
					&parse.FieldNode{
						NodeType: parse.NodeField,
						Ident:    []string{"Response"},
					},
				},
			},
		},
	},
}

// ollamaFuncs mirrors template.funcs, with time.Now() frozen to now.
func ollamaFuncs(now time.Time) template.FuncMap {
	return template.FuncMap{
		"json": func(v any) string {
			b, _ := json.Marshal(v)
			return string(b)
		},
		"currentDate": func(args ...string) string {
			// Currently ignoring the format argument, but accepting it for future use
			return now.Format("2006-01-02")
		},
		"yesterdayDate": func(args ...string) string {
			return now.AddDate(0, 0, -1).Format("2006-01-02")
		},
		"toTypeScriptType": func(v any) string {
			if param, ok := v.(ToolProperty); ok {
				return param.ToTypeScriptType()
			}
			if param, ok := v.(*ToolProperty); ok && param != nil {
				return param.ToTypeScriptType()
			}
			return "any"
		},
	}
}

// Parse mirrors template.Parse.
func Parse(s string, funcs template.FuncMap) (*Template, error) {
	tmpl := template.New("").Option("missingkey=zero").Funcs(funcs)

	tmpl, err := tmpl.Parse(s)
	if err != nil {
		return nil, err
	}

	t := Template{Template: tmpl, raw: s, funcs: funcs}
	vars, err := t.Vars()
	if err != nil {
		return nil, err
	}

	if !slices.Contains(vars, "messages") && !slices.Contains(vars, "response") {
		// touch up the template and append {{ .Response }}
		tmpl.Tree.Root.Nodes = append(tmpl.Tree.Root.Nodes, &response)
	}

	return &t, nil
}

// Vars mirrors Template.Vars: the lower-cased identifiers of all templates.
func (t *Template) Vars() ([]string, error) {
	var vars []string
	for _, tt := range t.Templates() {
		for _, n := range tt.Root.Nodes {
			v, err := Identifiers(n)
			if err != nil {
				return vars, err
			}
			vars = append(vars, v...)
		}
	}

	set := make(map[string]struct{})
	for _, n := range vars {
		set[strings.ToLower(n)] = struct{}{}
	}

	return slices.Sorted(maps.Keys(set)), nil
}

// Values mirrors template.Values (chat requests only: Prompt/Suffix unused).
type Values struct {
	Messages   []Message
	Tools      Tools
	Prompt     string
	Suffix     string
	Think      bool
	ThinkLevel string
	IsThinkSet bool
}

// execution is one t.Execute(w, data) call of Template.Execute.
type execution struct {
	tmpl *template.Template
	data map[string]any
}

// plan mirrors Template.Execute, but returns the list of executions instead
// of running them, so that bench can run them repeatedly. Like Ollama's
// collate it mutates v.Messages (merged contents).
func (t *Template) plan(v Values) ([]execution, error) {
	system, messages := collate(v.Messages)
	vars, err := t.Vars()
	if err != nil {
		return nil, err
	}
	if v.Prompt != "" && v.Suffix != "" {
		return []execution{{t.Template, map[string]any{
			"Prompt":     v.Prompt,
			"Suffix":     v.Suffix,
			"Response":   "",
			"Think":      v.Think,
			"ThinkLevel": v.ThinkLevel,
			"IsThinkSet": v.IsThinkSet,
		}}}, nil
	} else if slices.Contains(vars, "messages") {
		return []execution{{t.Template, map[string]any{
			"System":     system,
			"Messages":   convertMessagesForTemplate(messages),
			"Tools":      convertToolsForTemplate(v.Tools),
			"Response":   "",
			"Think":      v.Think,
			"ThinkLevel": v.ThinkLevel,
			"IsThinkSet": v.IsThinkSet,
		}}}, nil
	}

	// legacy per-turn Prompt/Response mode
	var plan []execution
	system = ""
	var prompt, response string
	for _, m := range messages {
		execute := func() {
			plan = append(plan, execution{t.Template, map[string]any{
				"System":     system,
				"Prompt":     prompt,
				"Response":   response,
				"Think":      v.Think,
				"ThinkLevel": v.ThinkLevel,
				"IsThinkSet": v.IsThinkSet,
			}})
			system = ""
			prompt = ""
			response = ""
		}

		switch m.Role {
		case "system":
			if prompt != "" || response != "" {
				execute()
			}
			system = m.Content
		case "user":
			if response != "" {
				execute()
			}
			prompt = m.Content
		case "assistant":
			response = m.Content
		}
	}

	// the last turn: everything after the first .Response node is cut
	var cut bool
	nodes := deleteNode(t.Template.Root.Copy(), func(n parse.Node) bool {
		if field, ok := n.(*parse.FieldNode); ok && slices.Contains(field.Ident, "Response") {
			cut = true
			return false
		}

		return cut
	})

	// NB: Ollama executes the cut tree in a fresh template without the func
	// map and without missingkey=zero; reproduced as is.
	tree := parse.Tree{Root: nodes.(*parse.ListNode)}
	plan = append(plan, execution{template.Must(template.New("").AddParseTree("", &tree)), map[string]any{
		"System":     system,
		"Prompt":     prompt,
		"Response":   response,
		"Think":      v.Think,
		"ThinkLevel": v.ThinkLevel,
		"IsThinkSet": v.IsThinkSet,
	}})
	return plan, nil
}

// Execute mirrors Template.Execute. In the messages mode the template writes
// straight to w; in the legacy mode everything goes to a buffer first.
func (t *Template) Execute(w io.Writer, v Values) error {
	plan, err := t.plan(v)
	if err != nil {
		return err
	}
	if len(plan) == 1 && plan[0].tmpl == t.Template {
		return plan[0].tmpl.Execute(w, plan[0].data)
	}
	var b bytes.Buffer
	for _, e := range plan {
		if err := e.tmpl.Execute(&b, e.data); err != nil {
			return err
		}
	}
	_, err = io.Copy(w, &b)
	return err
}

// collate mirrors template.collate: consecutive messages of the same role are
// merged (except tool messages); returns all system contents joined.
func collate(msgs []Message) (string, []*Message) {
	var system []string
	var collated []*Message
	for i := range msgs {
		if msgs[i].Role == "system" {
			system = append(system, msgs[i].Content)
		}

		if len(collated) > 0 && collated[len(collated)-1].Role == msgs[i].Role && msgs[i].Role != "tool" {
			collated[len(collated)-1].Content += "\n\n" + msgs[i].Content
		} else {
			collated = append(collated, &msgs[i])
		}
	}

	return strings.Join(system, "\n\n"), collated
}

// templateTools is a slice of templateTool that marshals to JSON.
type templateTools []templateTool

func (t templateTools) String() string {
	bts, _ := json.Marshal(t)
	return string(bts)
}

// templateArgs is a map type with JSON string output for templates.
type templateArgs map[string]any

func (t templateArgs) String() string {
	if t == nil {
		return "{}"
	}
	bts, _ := json.Marshal(t)
	return string(bts)
}

// templateProperties is a map type with JSON string output for templates.
type templateProperties map[string]ToolProperty

func (t templateProperties) String() string {
	if t == nil {
		return "{}"
	}
	bts, _ := json.Marshal(t)
	return string(bts)
}

type templateTool struct {
	Type     string               `json:"type"`
	Items    any                  `json:"items,omitempty"`
	Function templateToolFunction `json:"function"`
}

type templateToolFunction struct {
	Name        string                         `json:"name"`
	Description string                         `json:"description"`
	Parameters  templateToolFunctionParameters `json:"parameters"`
}

type templateToolFunctionParameters struct {
	Type       string             `json:"type"`
	Defs       any                `json:"$defs,omitempty"`
	Items      any                `json:"items,omitempty"`
	Required   []string           `json:"required,omitempty"`
	Properties templateProperties `json:"properties"`
}

type templateToolCall struct {
	ID       string
	Function templateToolCallFunction
}

type templateToolCallFunction struct {
	Index     int
	Name      string
	Arguments templateArgs
}

type templateMessage struct {
	Role       string
	Content    string
	Thinking   string
	Images     []ImageData
	ToolCalls  []templateToolCall
	ToolName   string
	ToolCallID string
}

// convertToolsForTemplate mirrors template.convertToolsForTemplate.
func convertToolsForTemplate(tools Tools) templateTools {
	if tools == nil {
		return nil
	}
	result := make(templateTools, len(tools))
	for i, tool := range tools {
		result[i] = templateTool{
			Type:  tool.Type,
			Items: tool.Items,
			Function: templateToolFunction{
				Name:        tool.Function.Name,
				Description: tool.Function.Description,
				Parameters: templateToolFunctionParameters{
					Type:       tool.Function.Parameters.Type,
					Defs:       tool.Function.Parameters.Defs,
					Items:      tool.Function.Parameters.Items,
					Required:   tool.Function.Parameters.Required,
					Properties: templateProperties(tool.Function.Parameters.Properties.ToMap()),
				},
			},
		}
	}
	return result
}

// convertMessagesForTemplate mirrors template.convertMessagesForTemplate.
func convertMessagesForTemplate(messages []*Message) []*templateMessage {
	if messages == nil {
		return nil
	}
	result := make([]*templateMessage, len(messages))
	for i, msg := range messages {
		var toolCalls []templateToolCall
		for _, tc := range msg.ToolCalls {
			toolCalls = append(toolCalls, templateToolCall{
				ID: tc.ID,
				Function: templateToolCallFunction{
					Index:     tc.Function.Index,
					Name:      tc.Function.Name,
					Arguments: templateArgs(tc.Function.Arguments.ToMap()),
				},
			})
		}
		result[i] = &templateMessage{
			Role:       msg.Role,
			Content:    msg.Content,
			Thinking:   msg.Thinking,
			Images:     msg.Images,
			ToolCalls:  toolCalls,
			ToolName:   msg.ToolName,
			ToolCallID: msg.ToolCallID,
		}
	}
	return result
}

// Identifiers mirrors template.Identifiers: walks the node tree returning any
// identifiers it finds along the way.
func Identifiers(n parse.Node) ([]string, error) {
	switch n := n.(type) {
	case *parse.ListNode:
		var names []string
		for _, n := range n.Nodes {
			i, err := Identifiers(n)
			if err != nil {
				return names, err
			}
			names = append(names, i...)
		}

		return names, nil
	case *parse.TemplateNode:
		if n.Pipe == nil {
			return nil, errors.New("undefined template specified")
		}
		return Identifiers(n.Pipe)
	case *parse.ActionNode:
		if n.Pipe == nil {
			return nil, errors.New("undefined action in template")
		}
		return Identifiers(n.Pipe)
	case *parse.BranchNode:
		if n.Pipe == nil {
			return nil, errors.New("undefined branch")
		}
		names, err := Identifiers(n.Pipe)
		if err != nil {
			return names, err
		}
		for _, n := range []*parse.ListNode{n.List, n.ElseList} {
			if n != nil {
				i, err := Identifiers(n)
				if err != nil {
					return names, err
				}
				names = append(names, i...)
			}
		}
		return names, nil
	case *parse.IfNode:
		return Identifiers(&n.BranchNode)
	case *parse.RangeNode:
		return Identifiers(&n.BranchNode)
	case *parse.WithNode:
		return Identifiers(&n.BranchNode)
	case *parse.PipeNode:
		var names []string
		for _, c := range n.Cmds {
			for _, a := range c.Args {
				i, err := Identifiers(a)
				if err != nil {
					return names, err
				}
				names = append(names, i...)
			}
		}
		return names, nil
	case *parse.FieldNode:
		return n.Ident, nil
	case *parse.VariableNode:
		return n.Ident, nil
	}

	return nil, nil
}

// deleteNode mirrors template.deleteNode: walks the node list and deletes
// nodes that match the predicate (used to cut after {{ .Response }}).
func deleteNode(n parse.Node, fn func(parse.Node) bool) parse.Node {
	var walk func(n parse.Node) parse.Node
	walk = func(n parse.Node) parse.Node {
		if fn(n) {
			return nil
		}

		switch t := n.(type) {
		case *parse.ListNode:
			var nodes []parse.Node
			for _, c := range t.Nodes {
				if n := walk(c); n != nil {
					nodes = append(nodes, n)
				}
			}

			t.Nodes = nodes
			return t
		case *parse.IfNode:
			t.BranchNode = *(walk(&t.BranchNode).(*parse.BranchNode))
		case *parse.WithNode:
			t.BranchNode = *(walk(&t.BranchNode).(*parse.BranchNode))
		case *parse.RangeNode:
			t.BranchNode = *(walk(&t.BranchNode).(*parse.BranchNode))
		case *parse.BranchNode:
			t.List = walk(t.List).(*parse.ListNode)
			if t.ElseList != nil {
				t.ElseList = walk(t.ElseList).(*parse.ListNode)
			}
		case *parse.ActionNode:
			n := walk(t.Pipe)
			if n == nil {
				return nil
			}

			t.Pipe = n.(*parse.PipeNode)
		case *parse.PipeNode:
			var commands []*parse.CommandNode
			for _, c := range t.Cmds {
				var args []parse.Node
				for _, a := range c.Args {
					if n := walk(a); n != nil {
						args = append(args, n)
					}
				}

				if len(args) == 0 {
					return nil
				}

				c.Args = args
				commands = append(commands, c)
			}

			if len(commands) == 0 {
				return nil
			}

			t.Cmds = commands
		}

		return n
	}

	return walk(n)
}

// ---------------------------------------------------------------------------
// server/prompt.go renderPrompt: ThinkValue -> Values
// ---------------------------------------------------------------------------

func valuesFromRequest(req *ChatRequest) Values {
	think := req.Think
	thinkVal := false
	thinkLevel := ""
	if think != nil {
		thinkVal = think.Bool()
		thinkLevel = think.String()
	}
	return Values{Messages: req.Messages, Tools: req.Tools, Think: thinkVal, ThinkLevel: thinkLevel, IsThinkSet: think != nil}
}

// ---------------------------------------------------------------------------
// the JSON-lines server
// ---------------------------------------------------------------------------

type input struct {
	Op          string          `json:"op"`
	Template    string          `json:"template"`
	TemplateB64 *string         `json:"template_b64"`
	Request     json.RawMessage `json:"request"`
	Now         string          `json:"now"`
	Data        json.RawMessage `json:"data"`
	Funcs       bool            `json:"funcs"`
	Iterations  int             `json:"iterations"`
	Modelfile   json.RawMessage `json:"modelfile"` // generate.go
}

type output struct {
	OK        bool     `json:"ok"`
	Output    *string  `json:"output,omitempty"`
	OutputB64 *string  `json:"output_b64,omitempty"`
	NsPerOp   *float64 `json:"ns_per_op,omitempty"`
	Kind      string   `json:"kind,omitempty"`
	Error     string   `json:"error,omitempty"`
	ErrorB64  *string  `json:"error_b64,omitempty"`
}

// failure is an error with its kind: "parse", "exec" or "request".
type failure struct {
	kind string
	err  error
}

func (f *failure) Error() string { return f.err.Error() }

func fail(kind string, err error) *failure { return &failure{kind, err} }

func success(out []byte) output {
	s := string(out)
	o := output{OK: true, Output: &s}
	if !utf8.Valid(out) {
		b := base64.StdEncoding.EncodeToString(out)
		o.OutputB64 = &b
	}
	return o
}

func parseNow(s string) (time.Time, error) {
	if s == "" {
		s = "2024-07-26"
	}
	return time.Parse("2006-01-02", s)
}

func (in *input) templateText() (string, error) {
	if in.TemplateB64 != nil {
		b, err := base64.StdEncoding.DecodeString(*in.TemplateB64)
		return string(b), err
	}
	return in.Template, nil
}

// parseOllama parses the template and decodes the request the way Ollama does.
func parseOllama(in *input) (*Template, *ChatRequest, *failure) {
	now, err := parseNow(in.Now)
	if err != nil {
		return nil, nil, fail("request", err)
	}
	var req ChatRequest
	if len(in.Request) > 0 {
		if err := json.Unmarshal(in.Request, &req); err != nil {
			return nil, nil, fail("request", err)
		}
	}
	if len(in.Modelfile) > 0 { // the model's SYSTEM and MESSAGE defaults (generate.go)
		m, f := in.modelfile()
		if f != nil {
			return nil, nil, f
		}
		if f := chatModelfile(&req, m); f != nil {
			return nil, nil, f
		}
	}
	src, err := in.templateText()
	if err != nil {
		return nil, nil, fail("request", err)
	}
	t, err := Parse(src, ollamaFuncs(now))
	if err != nil {
		return nil, nil, fail("parse", err)
	}
	return t, &req, nil
}

// prepareOllama parses the template and the request the way Ollama does and
// returns the executions of Template.Execute.
func prepareOllama(in *input) (*Template, []execution, *failure) {
	t, req, f := parseOllama(in)
	if f != nil {
		return nil, nil, f
	}
	plan, err := t.plan(valuesFromRequest(req))
	if err != nil {
		return nil, nil, fail("exec", err)
	}
	return t, plan, nil
}

func doOllama(in *input) (output, *failure) {
	t, plan, f := prepareOllama(in)
	if f != nil {
		return output{}, f
	}
	var b bytes.Buffer
	if len(plan) == 1 && plan[0].tmpl == t.Template {
		// messages mode: Ollama executes straight into the caller's writer,
		// so a failing Execute may leave partial output; we report the error.
		if err := plan[0].tmpl.Execute(&b, plan[0].data); err != nil {
			return output{}, fail("exec", err)
		}
		return success(b.Bytes()), nil
	}
	for _, e := range plan {
		if err := e.tmpl.Execute(&b, e.data); err != nil {
			return output{}, fail("exec", err)
		}
	}
	return success(b.Bytes()), nil
}

func doPlain(in *input) (output, *failure) {
	var data any
	if len(in.Data) > 0 {
		if err := json.Unmarshal(in.Data, &data); err != nil {
			return output{}, fail("request", err)
		}
	}
	src, err := in.templateText()
	if err != nil {
		return output{}, fail("request", err)
	}
	tmpl := template.New("")
	if in.Funcs {
		now, err := parseNow(in.Now)
		if err != nil {
			return output{}, fail("request", err)
		}
		tmpl = tmpl.Funcs(ollamaFuncs(now))
	}
	tmpl, err = tmpl.Parse(src)
	if err != nil {
		return output{}, fail("parse", err)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, data); err != nil {
		return output{}, fail("exec", err)
	}
	return success(b.Bytes()), nil
}

// collateMerges reports whether collate would merge two messages (and so
// change the Content of the request's messages).
func collateMerges(msgs []Message) bool {
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Role == msgs[i-1].Role && msgs[i].Role != "tool" {
			return true
		}
	}
	return false
}

// doBench times Ollama's whole render of a decoded request, as a server runs it
// per request: valuesFromRequest, then Template.Execute (collate, Vars,
// convertMessagesForTemplate, convertToolsForTemplate, the execution(s); in the
// legacy mode also the cut tree), into one reused buffer. Parsing the template
// and JSON-decoding the request happen once, outside the timing. Answers the
// nanoseconds per render and the output of the (untimed) warm-up render.
func doBench(in *input) (output, *failure) {
	t, req, f := parseOllama(in)
	if f != nil {
		return output{}, f
	}
	n := in.Iterations
	if n <= 0 {
		n = 1
	}
	// collate merges into the request's own messages (Ollama's request is
	// fresh per call): when a merge happens, every render gets a shallow copy.
	merges := collateMerges(req.Messages)
	render := func(w *bytes.Buffer) error {
		r := *req
		if merges {
			r.Messages = slices.Clone(req.Messages)
		}
		return t.Execute(w, valuesFromRequest(&r))
	}
	var b bytes.Buffer
	// one warm-up run, which also reports execution errors
	if err := render(&b); err != nil {
		return output{}, fail("exec", err)
	}
	out := success(b.Bytes()) // copies
	start := time.Now()
	for i := 0; i < n; i++ {
		b.Reset()
		_ = render(&b)
	}
	ns := float64(time.Since(start).Nanoseconds()) / float64(n)
	out.NsPerOp = &ns
	// finish the garbage collection the loop started before replying (untimed), so
	// that no background GC work of Go's overlaps the caller's next timed sample
	runtime.GC()
	return out, nil
}

// handle runs one request, turning panics into exec errors.
func handle(line []byte) (out output) {
	defer func() {
		if r := recover(); r != nil {
			out = output{OK: false, Kind: "exec", Error: fmt.Sprintf("panic: %v", r)}
		}
	}()
	var in input
	if err := json.Unmarshal(line, &in); err != nil {
		return output{OK: false, Kind: "request", Error: err.Error()}
	}
	var f *failure
	switch in.Op {
	case "ping":
		s := "pong"
		return output{OK: true, Output: &s}
	case "ollama":
		out, f = doOllama(&in)
	case "plain":
		out, f = doPlain(&in)
	case "bench":
		out, f = doBench(&in)
	case "generate":
		out, f = doGenerate(&in)
	default:
		f = fail("request", fmt.Errorf("unknown op %q", in.Op))
	}
	if f != nil {
		return output{OK: false, Kind: f.kind, Error: f.err.Error()}
	}
	return out
}

func main() {
	r := bufio.NewReaderSize(os.Stdin, 1<<20)
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			out := handle(line)
			if !out.OK && !utf8.ValidString(out.Error) {
				b := base64.StdEncoding.EncodeToString([]byte(out.Error))
				out.ErrorB64 = &b
			}
			if encErr := enc.Encode(out); encErr != nil {
				fmt.Fprintf(os.Stderr, "goref: encode: %v\n", encErr)
				enc.Encode(output{OK: false, Kind: "exec", Error: "encode: " + encErr.Error()})
			}
			w.Flush()
		}
		if err != nil {
			return
		}
	}
}
