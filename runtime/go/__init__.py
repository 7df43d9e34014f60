"""Go text/template as Ollama runs it: ``execute`` (text/template's evaluation rules and
builtins), ``fmt`` (Go's printing: fmt verbs, strconv, encoding/json), ``ollama`` (Ollama's
func map, view types and request shaping). Standard library only."""
