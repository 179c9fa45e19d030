//go:build postmortem

package main

import (
	"io"

	"cand/bench/envelope"
	"cand/bench/postmortem"
)

// postMortem is the envelope's post-mortem (package bench/postmortem), built in
// with -tags postmortem.
func postMortem() envelope.PostMortem { return postmortem.PostMortem{} }

// postMortemMarkdown writes the first losses of f by class.
func postMortemMarkdown(w io.Writer, f *envelope.File) error { return postmortem.Markdown(w, f) }
