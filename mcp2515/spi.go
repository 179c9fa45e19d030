package mcp2515

// Op names the kind of SPI transfer, so the transport below the driver can label
// its timing (metrics) without knowing the instruction set.
type Op uint8

const (
	OpReset Op = iota
	OpRead
	OpWrite
	OpBitModify
	OpReadStatus
	OpRxStatus
	OpReadRxBuf
	OpLoadTxBuf
	OpRTS
	NumOps
)

var opNames = [NumOps]string{"reset", "read", "write", "bit_modify", "read_status", "rx_status", "read_rx_buffer", "load_tx_buffer", "rts"}

func (o Op) String() string {
	if o < NumOps {
		return opNames[o]
	}
	return "unknown"
}

// SPI is one chip-select's full-duplex transport. Transfer asserts CS, shifts tx out
// while shifting len(tx) bytes into rx, and releases CS before it returns (the CS
// rising edge is what clears RXnIF after READ RX BUFFER and starts a frame after RTS).
// It must not allocate.
type SPI interface {
	Transfer(op Op, tx, rx []byte) error
}

// SPIThen is an SPI that can lengthen a transfer while CS stays low: TransferThen
// shifts tx[:first], calls more with the bytes received so far, shifts the further
// bytes of tx more asks for (0 to len(tx)−first), and then releases CS. It returns
// the bytes shifted. It must not allocate. The driver uses it, when the transport
// has it (New looks once), to read a received frame's data bytes only as far as
// its DLC.
type SPIThen interface {
	TransferThen(op Op, tx, rx []byte, first int, more func(head []byte) int) (int, error)
}
