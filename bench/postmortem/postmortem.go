// Package postmortem explains an envelope step's first lost frame: what the
// owner thread and the board's clock did in the board's time before it
// (`cand bench -envelope -postmortem`, in a cand built with -tags postmortem;
// docs/BENCHMARKS.md, "Why single frames are lost"). It studies the virtual
// Pi's own clock, so it is not linked into cand by default.
//
// On, the strict clock keeps its per-gap trace (sim/clock trace.go), a bus
// observer keeps the end of every frame, and the reader samples the garbage
// collector's cycle count between its reads of the sockets. At the first RX
// overflow or sequence gap of the window (the capture) all of it is copied;
// once the step has drained and the streams know which frame is missing, the
// copy is analysed into the step's FirstLoss.
//
// Files: postmortem.go (the observer's entry), record.go (what is recorded and
// captured), class.go (the board's time before the loss, segment by segment,
// and its class), markdown.go (the classes per board and bitrate).
package postmortem

import (
	"encoding/json"

	"cand/bench"
	"cand/bench/envelope"
)

// PostMortem is the post-mortem as the envelope takes it (envelope.Options).
type PostMortem struct{}

var _ envelope.PostMortem = PostMortem{}
var _ bench.LossWatcher = (*postMortem)(nil)

// Observe starts recording on w's virtual Pi: its gap trace, its first bus.
// Call it before the daemon starts (Scenario.Observe does).
func (PostMortem) Observe(w *bench.Watched) bench.Observer { return newPostMortem(w) }

// Summary is a FirstLoss as one line (FirstLoss.Text).
func (PostMortem) Summary(firstLoss json.RawMessage) string {
	var fl FirstLoss
	if err := json.Unmarshal(firstLoss, &fl); err != nil {
		return "first loss: " + err.Error()
	}
	return fl.Text()
}
