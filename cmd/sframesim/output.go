package main

import (
	"encoding/json"
	"io"
)

// writeJSONReport writes v as indented JSON to stdout if path is "-", as Go
// tools read "-" for standard output; otherwise writeFile writes it to
// path, in the same form.
func writeJSONReport(stdout io.Writer, path string, v any, writeFile func(path string) error) error {
	if path != "-" {
		return writeFile(path)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
