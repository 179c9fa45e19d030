package journal

import "runtime"

// runtimeCaller is the caller's file and line, for the CODE_LINE a test expects.
func runtimeCaller() (pc uintptr, file string, line int, ok bool) { return runtime.Caller(1) }
