package bridge

import "cand/internal/kernelop"

// meter is the owner's kernelop.Meter, or nothing: each frame-path system call
// is bracketed by enter and exit so that a board model can charge it by its kind.
type meter struct{ m kernelop.Meter }

func (k meter) enter(op kernelop.Op) {
	if k.m != nil {
		k.m.Enter(op)
	}
}

func (k meter) exit(op kernelop.Op) {
	if k.m != nil {
		k.m.Exit(op)
	}
}
