package metrics

// Stage is one stage of the frame path: its stage label value and its histogram.
type Stage struct {
	Name string
	H    *Histogram
}

// Stages returns c's stage histograms with their label values, in the order
// cand_stage_latency_seconds exports them.
func (c *Controller) Stages() []Stage {
	return []Stage{
		{"int_to_handler", c.IntToHandler},
		{"handler_to_cs", c.HandlerToCS},
		{"rx_end_to_end", c.RXEndToEnd},
		{"int_handled", c.IntHandled},
		{"tx_socket_to_rts", c.TXSocketToRTS},
		{"tx_socket_to_done", c.TXSocketToDone},
		{"both_rx_full", c.BothRXFull},
		{"rx_chip_to_ring", c.RXChipToRing},
		{"rx_ring_to_socket", c.RXRingToSocket},
	}
}
