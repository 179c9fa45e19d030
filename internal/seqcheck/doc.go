// Package seqcheck follows streams of frames that carry a counter (the virtual Pi's
// peers and the benchmark's and soak's writers put one in, canbus.Payload; a
// periodic sender seen by candump has one) and says how each frame follows the
// stream: in order, after missing frames, repeated, or after a later frame.
//
// Follow and Last compare a counter with the previous one of its stream, for
// checks that read every frame in the order it arrived. Window counts a stream
// over a measured window against what the sender says it sent, for the
// benchmark's loss, gap, reorder and duplicate figures.
package seqcheck
