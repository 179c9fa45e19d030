//go:build !linux

package main

import (
	"fmt"
	"io"
)

func runPeer(args []string, errOut io.Writer) int {
	fmt.Fprintln(errOut, "vmcheck peer: SocketCAN needs Linux")
	return 2
}
