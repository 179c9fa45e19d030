// Package rt gives an owner thread its real-time setup: a SCHED_FIFO priority and a CPU
// for that one OS thread, and locked memory for the process.
//
// Setup must run on the owner thread itself, from a goroutine that has called
// runtime.LockOSThread and keeps it locked for its whole life: scheduling attributes
// and affinity belong to the calling thread (pid 0 in sched_setattr(2) and
// sched_setaffinity(2)), so every other thread of the process — the metrics server,
// the garbage collector's workers — keeps normal scheduling. The Go runtime starts new
// threads from a clean template thread, not from a locked one, so they do not inherit
// the owner thread's policy either (golang/go src/runtime/proc.go, templateThread). If
// the goroutine exits while still locked, the runtime ends the thread with it.
//
// # Priority
//
// The default priority is 40, below the kernel's IRQ threads, which run SCHED_FIFO 50
// (sched_set_fifo: MAX_RT_PRIO/2, kernel/sched/core.c). One of those threads,
// gpiolib-cdev's edge_irq_thread, queues the very GPIO edge events the owner thread
// waits for; an owner thread above 50 that keeps its CPU busy would delay its own
// interrupts. Setup therefore warns about priorities of 50 and more.
//
// # Bounded busy polls
//
// The owner thread busy-polls short waits (an SPI transfer's end, the INT level just
// after an interrupt) because a sleep and wake-up costs more than the wait: for a
// 2-byte transfer on a Pi 2 the kernel's SPI driver took 39.56 µs from CS down to CS
// up waiting for interrupts and wake-ups, and 7.2 µs polling
// (https://github.com/msperl/spi-bcm2835/wiki/spi_bcm2835situation). Every such
// poll is bounded by a budget of tens of microseconds, after which the thread
// sleeps in epoll_wait. Unbounded, a SCHED_FIFO spinner would take its CPU from every
// normal thread on it and run into the kernel's RT throttling: by default real-time
// threads may use 950 ms of every 1 s (sched_rt_runtime_us=950000 per
// sched_rt_period_us=1000000), after which they are stopped for the remaining 50 ms
// — a 50 ms hole in which CAN frames are lost.
//
// # Memory
//
// mlockall(MCL_CURRENT|MCL_FUTURE) is process-wide: request it (Config.Mlockall) in one
// Setup call only, normally the first owner thread's; repeating it is harmless but
// logs twice. It keeps page faults off the frame path; it needs CAP_IPC_LOCK or a
// large enough RLIMIT_MEMLOCK (systemd: LimitMEMLOCK=infinity).
//
// Refusals are not fatal unless Config.Require is set (realtime.required): the
// daemon then runs without the refused item and says so in the Report, one line
// per item naming what would allow it, never silently.
package rt
