//go:build !postmortem

package main

import (
	"io"

	"cand/bench/envelope"
)

// postMortem is nil: the post-mortem studies the virtual Pi's own clock and is
// built in only with -tags postmortem (postmortem_on.go).
func postMortem() envelope.PostMortem { return nil }

func postMortemMarkdown(io.Writer, *envelope.File) error { return nil }
