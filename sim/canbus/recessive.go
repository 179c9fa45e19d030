package canbus

// The bus level, as far as bus-off recovery needs it (ISO 11898-1 fault
// confinement: a bus-off node waits for 128 occurrences of 11 consecutive
// recessive bits): goDominant and goRecessive mark the level's changes, and the
// sequences are counted from them when asked.

// RecessiveSequences counts the sequences of 11 consecutive recessive bits seen on
// the bus up to at (idle time and the ACK-delimiter+EOF+intermission after each
// frame both count). Bus-off recovery needs 128 of them. Lock held.
func (b *Bus) RecessiveSequences(at int64) int64 {
	n := b.seq
	if b.recessive && b.bitrate != 0 && at > b.recSince {
		n += (at - b.recSince) / b.Bits(11)
	}
	return n
}

// NextRecessiveSequence is the earliest time RecessiveSequences can reach n: exact
// while the bus stays recessive, a lower bound while it is dominant. Lock held.
func (b *Bus) NextRecessiveSequence(n int64) int64 {
	from := b.now
	if b.recessive {
		from = b.recSince
	}
	t := from + (n-b.seq)*b.Bits(11)
	if t < b.now {
		t = b.now
	}
	return t
}

func (b *Bus) goDominant(at int64) {
	if b.recessive {
		b.seq = b.RecessiveSequences(at)
		b.recessive = false
	}
}

func (b *Bus) goRecessive(at int64) {
	if !b.recessive {
		b.recessive = true
		b.recSince = at
	}
}
