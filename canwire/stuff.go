package canwire

// Bit stuffing (ISO 11898-1): after five consecutive equal bits the transmitter
// inserts one bit of the opposite value, which counts as the first bit of the next
// run. It applies from SOF through the CRC sequence, and also after the CRC's last
// bit when that ends a run of five.
//
// The stuffer follows the bit stream a byte at a time. Its state is the last bit
// and the length of the run it ends (1..4; a fifth equal bit is stuffed at once),
// packed as last<<2 | run-1; stuffTable[state][byte] is the state after the byte
// (MSB first) in bits 0..2 and the number of stuff bits it needed (at most 2)
// above.
const (
	stuffRun       = 5
	stuffStates    = 8
	stuffStateMask = 7
	stuffCountSh   = 3
)

// stuffTable is built once when the package is initialised; only read afterwards.
var stuffTable = makeStuffTable()

func makeStuffTable() (t [stuffStates][256]uint8) {
	for st := range stuffStates {
		for b := range 256 {
			last, run := st>>2, st&3+1
			stuffs := 0
			for i := 7; i >= 0; i-- {
				bit := b >> i & 1
				if bit == last {
					run++
				} else {
					last, run = bit, 1
				}
				if run == stuffRun {
					stuffs++
					last, run = 1-last, 1
				}
			}
			t[st][b] = uint8(last<<2|(run-1)) | uint8(stuffs)<<stuffCountSh
		}
	}
	return t
}

// stuffer counts the stuff bits of a bit stream pushed in pieces of up to 56 bits.
type stuffer struct {
	acc       uint64 // bits pushed and not yet looked up, in its low n bits
	n         uint
	state     uint8
	stuffBits uint32
}

// start prepares for a stream of total bits that begins with SOF (0). So that the
// stream can go through the table in whole bytes, it is preceded by the bits that
// fill its first byte, alternating and ending in 1: they make no run of five, and
// SOF, a 0 after a 1, starts a run of its own as it does after the idle bus.
func (s *stuffer) start(total uint) {
	pad := (8 - total%8) % 8
	*s = stuffer{state: 1 << 2} // last bit 1, run 1
	s.push(0x55&(1<<pad-1), pad)
}

// push appends the low width bits of v, MSB first.
func (s *stuffer) push(v uint64, width uint) {
	s.acc = s.acc<<width | v&(1<<width-1)
	s.n += width
	for s.n >= 8 {
		s.n -= 8
		e := stuffTable[s.state][byte(s.acc>>s.n)]
		s.state = e & stuffStateMask
		s.stuffBits += uint32(e >> stuffCountSh)
	}
}
