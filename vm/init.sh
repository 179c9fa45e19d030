#!/bin/sh
# /init of the cand test VM (busybox sh). Scenarios from the kernel command line:
#   cand.mode=smoke[,kernel][,test][,seq] | shell
#   smoke   the VM itself (modules, vcan, can-utils, vmcheck) without cand
#   kernel  the socketcan package's kernel tests (/usr/bin/socketcan.test, go test -c)
#   test    cand bridging the simulated bus to vcan0: cangen requests, their answers
#   seq     cand again: cansequence through the bus, a flood whose losses are all
#           counted, vcan0 down and up while traffic runs, SIGTERM during a flood
#   slcan   cand with interface kind slcan (/etc/cand-slcan.yaml): can0 a kernel CAN
#           netdev; frames both ways, ISO-TP, ip link's bitrate and down/up, error
#           states under a wrong bitrate
#   shell   interactive (make run on a host without SocketCAN)
# Expectations (defaults in brackets):
#   cand.periodic=SPEC  vmcheck -periodic spec for cand's periodic peer [0x200:min=5:dlc=8:counter=8]
#   cand.req=ID cand.ans=ID cand.n=N  frames sent with cangen and their answers [0x123 0x122 1000]
#   cand.gap=MS         cangen gap between frames [40]
#   cand.seqn=N         frames cansequence sends and must get back in sequence [300]
#   cand.flood=N        frames of each cangen -g 0 flood on vcan1 [1000]
# Markers on the console: VMTEST BEGIN <scenario>, VMTEST PASS <check>,
# VMTEST FAIL <check>: <reason>, VMTEST SKIP <check>: <reason>, VMTEST DONE; lines
# starting "vm: " are information for the log.
export PATH=/sbin:/usr/sbin:/bin:/usr/bin
# Debian's busybox sh runs its own applets before PATH; prefer iproute2's ip when present.
[ -L /sbin/ip ] || ip() { /sbin/ip "$@"; }
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
echo "vm: init started at $(cut -d" " -f1 /proc/uptime) s of guest uptime"

arg() { # arg NAME DEFAULT: value of NAME= on the kernel command line
	local w
	for w in $(cat /proc/cmdline); do
		case $w in "$1="*) echo "${w#*=}"; return ;; esac
	done
	echo "$2"
}
pass() { echo "VMTEST PASS $1"; }
fail() { echo "VMTEST FAIL $1: $2"; }
skip() { echo "VMTEST SKIP $1: $2"; }
# alive PID: the process exists and is not a zombie (ash reaps only on wait).
alive() { [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* (.*) Z ' "/proc/$1/stat" 2>/dev/null; }
# now: seconds of guest uptime, to 0.01 s, as an integer of hundredths.
now() { local u; read -r u _ </proc/uptime; echo $((${u%.*} * 100 + 1${u#*.} - 100)); }
# poll SECONDS CMD...: run CMD every 0.1 s until it succeeds; fail after SECONDS
# (of uptime: CMD itself may take long in a slow guest).
poll() {
	local until=$(($(now) + $1 * 100))
	shift
	while ! "$@"; do
		[ "$(now)" -lt $until ] || return 1
		sleep 0.1
	done
}
count() { grep -c " $1#" "$2" 2>/dev/null || true; }
has_at_least() { [ "$(count "$1" "$3")" -ge "$2" ]; }
# wait_count ID N FILE SECONDS: wait until FILE (a candump log) holds N frames with
# ID; fail once SECONDS pass without a new one (a slow guest is slow, not stuck).
wait_count() {
	local last=-1 until=0 c
	while c=$(count "$1" "$3") && [ "$c" -lt "$2" ]; do
		if [ "$c" != "$last" ]; then
			last=$c until=$(($(now) + $4 * 100))
		elif [ "$(now)" -ge $until ]; then
			return 1
		fi
		sleep 0.2
	done
}
link_up() { [ -e "/sys/class/net/$1" ] && [ $(($(cat "/sys/class/net/$1/flags") & 1)) = 1 ]; }
# receivers: CAN_RAW receivers registered on IFACE (/proc/net/can/rcvlist_*).
receivers() { cat /proc/net/can/rcvlist_* 2>/dev/null | grep -c "^ *$1 " || true; }
more_receivers() { [ "$(receivers "$1")" -gt "$2" ]; }
stop() { # stop PID SECONDS: SIGTERM, wait up to SECONDS, then SIGKILL; sets $rc
	kill -TERM "$1" 2>/dev/null
	if poll "$2" eval '! alive '"$1"; then
		wait "$1"
		rc=$?
		return 0
	fi
	kill -KILL "$1" 2>/dev/null
	wait "$1"
	rc=$?
	return 1
}
id3() { printf '%03X' "$(($1))"; } # hex ID as cangen and candump write it

# scrape FILE: save cand's /metrics.
scrape() { wget -q -O "$1" http://127.0.0.1:9108/metrics; }
# metric FILE NAME IFACE: NAME's value for interface IFACE in a saved scrape
# (empty when cand does not export it).
metric() { grep "^$2{.*interface=\"$3\"" "$1" 2>/dev/null | awk '{ s += $2; n++ } END { if (n) printf "%d\n", s }'; }
# metric_at_least NAME IFACE N: a fresh scrape shows NAME >= N.
metric_at_least() { scrape /tmp/poll-metrics.txt && [ "$(metric /tmp/poll-metrics.txt "$1" "$2")" -ge "$3" ] 2>/dev/null; }
# metric_is NAME IFACE V: a fresh scrape shows NAME = V.
metric_is() { scrape /tmp/poll-metrics.txt && [ "$(metric /tmp/poll-metrics.txt "$1" "$2")" = "$3" ]; }
# drained IFACE N: cand has read all N frames offered on IFACE: sent, dropped or
# refused (the ledger's TX side, vm/vmcheck/conserve.go), against the scrape in $base.
drained() {
	local now=/tmp/poll-metrics.txt t=0 m b
	scrape $now || return 1
	for m in cand_tx_frames_total cand_socket_drops_total cand_tx_dropped_total cand_tx_invalid_total; do
		b=$(metric "$base" $m "$1")
		t=$((t + $(metric $now $m "$1") - ${b:-0}))
	done
	[ $t -ge "$2" ]
}
# settle IFACE REQ ANS DUMP: after a flood, send marker requests (data FF..FF0k, unlike
# any of cangen -D i's) until one is answered, counting them in $offered. The
# kernel stamps each frame it queues with the socket's drop count at that moment
# (sock_skb_set_dropcount, include/net/sock.h), and cand counts drops from those
# stamps (SO_RXQ_OVFL): drops after the last frame queued show only on the next.
# An answered marker was queued, so every drop before it is in cand's count.
settle() {
	local k=1 data
	while [ $k -le 10 ]; do
		data=FFFFFFFFFFFFFF$(printf '%02X' $k)
		cansend "$1" "$2#$data" && offered=$((offered + 1))
		poll 10 grep -q " $3#$data\$" "$4" && return 0
		k=$((k + 1))
	done
	return 1
}
# show_metrics FILE: the counters worth reading in the log.
show_metrics() {
	grep -E '^cand_((rx|tx|socket|error|interrupts|int_|message|spi_errors|polled|sim_peer|link_up)[a-z_]*[{ ]|stage_latency_seconds_(sum|count))' "$1" | head -60
}

# start_cand NAME: cand on /etc/cand.yaml, stderr in /tmp/NAME-cand.err, until its
# interfaces are up; sets $cand. Fails NAME/interfaces-up otherwise.
start_cand() {
	cand -config /etc/cand.yaml 2>"/tmp/$1-cand.err" &
	cand=$!
	if ! poll 60 link_up vcan0 || ! poll 10 link_up vcan1; then
		fail "$1/interfaces-up" "vcan0 and vcan1 not up 60 s after cand started (cand $(alive $cand && echo running || echo exited)); cand stderr: $(tail -n 5 "/tmp/$1-cand.err")"
		stop "$cand" 10
		return 1
	fi
	pass "$1/interfaces-up"
}

# said FILE: cand's errors from its stderr FILE on one line, else its last lines.
said() {
	{ grep 'level=ERROR' "$1" || tail -n 3 "$1"; } | tail -n 3 | tr '\n' '|' | sed 's/|$//; s/|/ | /g'
}

# stop_cand NAME: SIGTERM; cand must exit 0 within 20 s and leave its interfaces down.
stop_cand() {
	if stop "$cand" 20; then
		if [ "$rc" = 0 ]; then pass "$1/cand-exit"; else fail "$1/cand-exit" "exit status $rc after SIGTERM, want 0; cand said: $(said "/tmp/$1-cand.err")"; fi
	else
		fail "$1/cand-exit" "still running 20 s after SIGTERM (killed); cand said: $(said "/tmp/$1-cand.err")"
	fi
	# Like a kernel netdev, an interface outlives the service, down while cand is
	# not running (writes then fail with ENETDOWN). Removed here so the next mode
	# starts afresh.
	local bad=""
	for i in vcan0 vcan1; do
		if [ ! -e "/sys/class/net/$i" ]; then
			bad="$bad $i:gone"
		elif [ $(( $(cat "/sys/class/net/$i/flags") & 1 )) -ne 0 ]; then
			bad="$bad $i:up"
		fi
	done
	if [ -z "$bad" ]; then pass "$1/interfaces-down"; else fail "$1/interfaces-down" "after cand exited, want each interface kept and down:$bad"; fi
	for i in vcan0 vcan1; do ip link del "$i" 2>/dev/null || true; done
}

# need_cand NAME: the initramfs has cand and its configuration.
need_cand() {
	[ -x /usr/bin/cand ] || { fail "$1/cand" "no /usr/bin/cand in the initramfs (build-initramfs.sh --cand PATH)"; return 1; }
	[ -f /etc/cand.yaml ] || { fail "$1/cand" "no /etc/cand.yaml in the initramfs (build-initramfs.sh --config PATH)"; return 1; }
}

# dump NAME IFACE: candump of everything on IFACE, error frames included, into
# /tmp/NAME.log; sets $dump. -d: candump reports the frames the kernel dropped
# from ITS socket (a starved reader in a slow guest), which vmcheck counts; -r:
# room; -D: stay through the interface going down.
start_dump() {
	local r0
	r0=$(receivers "$2")
	candump -D -d -r 8388608 -L "$2,0:0,#FFFFFFFF" >"/tmp/$1.log" 2>"/tmp/$1-candump.err" &
	dump=$!
	poll 10 more_receivers "$2" "$r0" || fail "$1/candump" "candump did not bind to $2 in 10 s: $(cat "/tmp/$1-candump.err")"
}

load_modules() {
	local ok=1 m out
	for m in $(cat /etc/modules.order); do
		out=$(insmod "/lib/modules/$m" 2>&1) || { fail vm/modules "insmod $m: $out"; ok=0; }
	done
	[ $ok = 1 ] && pass vm/modules
	[ $ok = 1 ]
}

# smoke: the VM itself — modules, vcan, can-utils, the checker — without cand.
# vmcheck peer stands in for the simulated bus's periodic and answering peers.
smoke() {
	echo "VMTEST BEGIN smoke"
	if ! { ip link add dev vcan0 type vcan && ip link set vcan0 up; } >/tmp/smoke-ip.err 2>&1; then
		fail smoke/vcan-up "ip link add dev vcan0 type vcan: $(cat /tmp/smoke-ip.err)"
		return
	fi
	pass smoke/vcan-up
	start_dump smoke vcan0
	r0=$(receivers vcan0)
	vmcheck peer -if vcan0 -periodic 0x100 -period 10ms -dlc 8 -counter 2 -answer 0x123:0x124 2>/tmp/smoke-peer.err &
	peer=$!
	poll 10 more_receivers vcan0 "$r0" || fail smoke/peer "vmcheck peer did not bind to vcan0 in 10 s: $(cat /tmp/smoke-peer.err)"
	timeout 60 cangen vcan0 -I 123 -L 8 -D i -g 1 -p 10 -n 1000 || fail smoke/cangen "cangen exited with status $?"
	poll 30 has_at_least 124 1000 /tmp/smoke.log || true # vmcheck names what is missing
	poll 10 has_at_least 100 20 /tmp/smoke.log || true
	stop "$peer" 5
	stop "$dump" 5
	vmcheck -name smoke -dump /tmp/smoke.log -periodic 0x100:min=20:dlc=8:counter=2:rest=000000000000 \
		-answers 0x123:0x124:1000 -no-error-frames
	if ip link del vcan0 2>/tmp/smoke-ip.err; then pass smoke/vcan-del; else fail smoke/vcan-del "$(cat /tmp/smoke-ip.err)"; fi
}

# kernel: the socketcan package's tests against this kernel, which has CAN (the
# build machine's has not, so there they skip): a test binary from go test -c.
# run-test.sh turns go test's -test.v lines below into checks.
kernel_tests() {
	echo "VMTEST BEGIN kernel"
	[ -x /usr/bin/socketcan.test ] || { fail kernel/binary "no /usr/bin/socketcan.test in the initramfs (run-test.sh builds it with go test -c)"; return; }
	(cd /tmp && socketcan.test -test.v -test.run Kernel -test.timeout 120s 2>&1)
	local rc=$?
	echo "VMTEST GOTEST END"
	if [ $rc = 0 ]; then pass kernel/exit; else fail kernel/exit "socketcan.test exited with status $rc"; fi
}

# test: cand on the simulator config, driven with candump and cangen.
cand_test() {
	echo "VMTEST BEGIN test"
	periodic=$(arg cand.periodic 0x200:min=5:dlc=8:counter=8)
	req=$(arg cand.req 0x123)
	ans=$(arg cand.ans 0x122)
	n=$(arg cand.n 1000)
	# 40 ms between requests: a request and its answer take ~26 ms of the 10 kbit/s
	# bus the VM config uses (see vm/cand-vm.yaml for why it is that slow).
	gap=$(arg cand.gap 40)
	pid0=${periodic%%[:,]*}
	need_cand test || return
	if v=$(cand -version 2>&1) && [ -n "$v" ]; then pass test/version; else fail test/version "cand -version: status $?, output '$v'"; fi
	if out=$(cand -check-config -config /etc/cand.yaml 2>&1); then pass test/check-config; else fail test/check-config "$out"; fi

	start_cand test || return
	# ,#FFFFFFFF: receive error frames too (a raw socket gets none by default), so
	# an RX overflow cand reports shows up and fails test/no-error-frames by name.
	start_dump test vcan0
	# cand's periodic peer proves the whole path (bus → cand → vcan0 → candump) is live.
	poll 30 has_at_least "$(id3 "$pid0")" 1 /tmp/test.log ||
		fail test/first-frame "no frame with ID $pid0 on vcan0 30 s after it came up; cand stderr: $(tail -n 5 /tmp/test-cand.err)"
	# cangen's own time is n × gap; a slow guest takes longer, the limit is generous.
	timeout $((n * gap / 250 + 60)) cangen vcan0 -I "$(id3 "$req")" -L 8 -D i -g "$gap" -p 10 -n "$n" ||
		fail test/cangen "cangen exited with status $?"
	wait_count "$(id3 "$ans")" "$n" /tmp/test.log 30 || true # vmcheck names what is missing
	scrape /tmp/test-metrics.txt || fail test/metrics "cannot read http://127.0.0.1:9108/metrics"
	echo "--- cand metrics ---"
	show_metrics /tmp/test-metrics.txt
	stop "$dump" 5
	stop_cand test
	vmcheck -name test -dump /tmp/test.log -periodic "$periodic" -answers "$req:$ans:$n" -no-error-frames \
		-metrics /tmp/test-metrics.txt -iface vcan0
	echo "--- cand stderr (last 20 lines) ---"
	tail -n 20 /tmp/test-cand.err
}

# seq: cand again, with can-utils' own checks and the faults a host brings.
cand_seq() {
	echo "VMTEST BEGIN seq"
	seqn=$(arg cand.seqn 300)
	flood=$(arg cand.flood 1000)
	need_cand seq || return
	start_cand seq || return

	# cansequence -p sends seqn frames with ID 2 and a rising sequence byte as fast
	# as vcan0 takes them; cand queues them in its socket and sends them; the
	# answering peer echoes each with ID 1; cansequence -r checks the sequence
	# bytes of the echoes (and --quit=1 exits 1 at the first gap: a lost frame).
	start_dump seq vcan0
	seqdump=$dump
	scrape /tmp/seq-m0.txt
	r0=$(receivers vcan0)
	cansequence -r -i 1 --loop="$seqn" --quit=1 vcan0 >/tmp/seq-rx.out 2>/tmp/seq-rx.err &
	rx=$!
	poll 10 more_receivers vcan0 "$r0" || fail seq/cansequence-bind "cansequence -r did not bind to vcan0 in 10 s: $(cat /tmp/seq-rx.err)"
	timeout 60 cansequence -p -i 2 --loop="$seqn" vcan0 2>/tmp/seq-tx.err ||
		fail seq/cansequence-send "cansequence -p exited with status $?: $(cat /tmp/seq-tx.err)"
	wait_count 001 "$seqn" /tmp/seq.log 30 || true # cansequence and vmcheck say what is missing
	if poll 10 eval '! alive '"$rx"; then
		wait "$rx"
		rc=$?
		if [ $rc = 0 ] && ! grep -q ERRORFRAME /tmp/seq-rx.err; then
			pass seq/cansequence
		else
			fail seq/cansequence "cansequence -r exited with status $rc: $(head -c 600 /tmp/seq-rx.err)"
		fi
	else
		kill -TERM "$rx" 2>/dev/null
		fail seq/cansequence "cansequence -r still waiting for its $seqn echoes: $(head -c 600 /tmp/seq-rx.err)"
	fi
	scrape /tmp/seq-m1.txt
	vmcheck -name cansequence -dump /tmp/seq.log -answers "0x2:0x1:$seqn" -no-error-frames \
		-metrics /tmp/seq-m1.txt -metrics-base /tmp/seq-m0.txt -iface vcan0

	# A flood: cangen -g 0 writes $flood frames at once; cand's 16 KiB socket
	# (vcan1) holds a few dozen, the kernel drops the rest and says so (SO_RXQ_OVFL,
	# cand_socket_drops_total). Conservation: every frame offered is answered or
	# counted lost, exactly.
	start_dump flood vcan1
	base=/tmp/flood-m0.txt
	scrape $base
	timeout 60 cangen vcan1 -I 401 -L 8 -D i -g 0 -p 10 -n "$flood" || fail flood/cangen "cangen exited with status $?"
	offered=$flood
	settle vcan1 401 400 /tmp/flood.log || fail flood/settled "no marker frame after the flood was answered within 10 tries"
	poll 60 drained vcan1 "$offered" || fail flood/drained "cand has not read all $offered frames offered on vcan1 60 s after the flood"
	wait_count 400 "$(($(metric /tmp/poll-metrics.txt cand_tx_frames_total vcan1) - $(metric $base cand_tx_frames_total vcan1)))" /tmp/flood.log 10 || true
	scrape /tmp/flood-m1.txt
	stop "$dump" 5
	d=$(($(metric /tmp/flood-m1.txt cand_socket_drops_total vcan1) - $(metric $base cand_socket_drops_total vcan1)))
	if [ "$d" -gt 0 ]; then pass flood/overran; else fail flood/overran "no SO_RXQ_OVFL drops after $flood frames at once: the flood did not overrun cand's socket (vcan1's rcvbuf in /etc/cand.yaml)"; fi
	echo "vm: flood of $flood frames: cand's socket dropped $d (cand_socket_drops_total)"
	vmcheck -name flood -dump /tmp/flood.log -answers "0x401:0x400:$offered:lossy" -no-error-frames \
		-metrics /tmp/flood-m1.txt -metrics-base $base -iface vcan1

	link_down_up
	sigterm_in_flood
	stop "$seqdump" 5
	echo "--- cand stderr (last 20 lines) ---"
	tail -n 20 /tmp/seq-cand.err
}

# link_down_up: vcan0 down and up again while the periodic peer's frames flow. cand
# takes the controller off the bus while its interface is down and back on when it
# is up: it keeps running, cand_link_up goes 0 then 1, and frames flow again both
# ways. A cand that never sets cand_link_up exits on link down instead: skipped.
link_down_up() {
	scrape /tmp/link-m0.txt
	local up c
	up=$(metric /tmp/link-m0.txt cand_link_up vcan0)
	if [ "$up" != 1 ]; then
		for c in seq/link-down seq/link-up seq/link-traffic link/dump link/answers-0x301 link/conservation-0x301; do
			skip $c "cand at this version exits on link down (its cand_link_up is ${up:-not exported}, not 1, while bridging)"
		done
		return
	fi
	ip link set vcan0 down
	if poll 10 metric_is cand_link_up vcan0 0 && alive "$cand"; then
		pass seq/link-down
	else
		fail seq/link-down "10 s after ip link set vcan0 down: cand $(alive "$cand" && echo running || echo exited), cand_link_up $(metric /tmp/poll-metrics.txt cand_link_up vcan0); stderr: $(tail -n 3 /tmp/seq-cand.err)"
		return
	fi
	ip link set vcan0 up
	if poll 10 metric_is cand_link_up vcan0 1; then
		pass seq/link-up
	else
		fail seq/link-up "cand_link_up $(metric /tmp/poll-metrics.txt cand_link_up vcan0) 10 s after ip link set vcan0 up"
		return
	fi
	# Traffic resumes: the periodic peer's frames again, and requests answered.
	local p0 pid
	pid=$(arg cand.periodic 0x200)
	pid=$(id3 "${pid%%[:,]*}")
	p0=$(count "$pid" /tmp/seq.log)
	if poll 30 has_at_least "$pid" $((p0 + 2)) /tmp/seq.log; then
		pass seq/link-traffic
	else
		fail seq/link-traffic "no new frame with ID 0x$pid on vcan0 30 s after it came up again"
	fi
	scrape /tmp/link-m1.txt
	timeout 60 cangen vcan0 -I 301 -L 8 -D i -g 40 -p 10 -n 20 || fail seq/link-cangen "cangen exited with status $?"
	wait_count 300 20 /tmp/seq.log 30 || true
	scrape /tmp/link-m2.txt
	vmcheck -name link -dump /tmp/seq.log -answers "0x301:0x300:20" -metrics /tmp/link-m2.txt -metrics-base /tmp/link-m1.txt -iface vcan0
}

# sigterm_in_flood: SIGTERM while cand's socket on vcan1 still holds a flood's
# frames: cand exits 0, removes its interfaces, and logs how many it never sent.
sigterm_in_flood() {
	local unsent=""
	scrape /tmp/term-m0.txt
	timeout 60 cangen vcan1 -I 402 -L 8 -D i -g 0 -p 10 -n "$flood" || fail term/cangen "cangen exited with status $?"
	stop_cand seq
	# cand_tx_unsent_at_exit_total says this cand counts the frames left in its
	# socket when it stops; it logs the count on its way out.
	if ! grep -q '^cand_tx_unsent_at_exit_total{' /tmp/term-m0.txt; then
		skip seq/unsent-logged "cand at this version does not count the frames it leaves unsent at exit (no cand_tx_unsent_at_exit_total)"
		return
	fi
	# The count: a frames=N field on cand's "unsent" log line for can1/vcan1.
	unsent=$(grep -i unsent /tmp/seq-cand.err | grep 'can1' | sed -n 's/.*[ "]frames=\([0-9][0-9]*\).*/\1/p' | tail -n 1)
	if [ -n "$unsent" ] && [ "$unsent" -gt 0 ]; then
		pass seq/unsent-logged
		echo "vm: cand stopped with $unsent frames unsent on vcan1"
	else
		fail seq/unsent-logged "SIGTERM right after a flood of $flood frames into a socket that holds dozens, and cand's log names no unsent count for vcan1 above 0: $(grep -i unsent /tmp/seq-cand.err | tail -n 2)"
	fi
}

# Scenario variables are global; helpers above use only locals and $rc.

# shell: interactive; networking for the metrics port forward, cand in the background.
shell() {
	local port rate ovf st=""
	port=$(arg cand.hostport 9108)
	ip addr add 10.0.2.15/24 dev eth0 && ip link set eth0 up && ip route add default via 10.0.2.2 ||
		echo "vm: eth0 setup failed (no -nic user?); metrics will not be reachable from the host"
	if [ -x /usr/bin/cand ] && [ -f /etc/cand.yaml ]; then
		cand -config /etc/cand.yaml 2>/tmp/cand.log &
		echo "vm: cand started (pid $!, log /tmp/cand.log)"
		if poll 60 link_up vcan0; then
			echo "vm: vcan0 is up; 20 frames from it:"
			timeout 10 candump -n 20 vcan0
			if scrape /tmp/shell-metrics.txt; then
				ovf=$(metric /tmp/shell-metrics.txt cand_rx_overflows_total vcan0)
				echo "vm: so far: $(metric /tmp/shell-metrics.txt cand_rx_frames_total vcan0) frames received," \
					"${ovf:-?} RX overflows, $(metric /tmp/shell-metrics.txt cand_error_frames_total vcan0) error frames"
				[ "${ovf:-0}" = 0 ] || echo "vm: frames were lost: this emulated CPU fell behind the simulated bus (a loaded host stalls the VM" \
					"for longer than the gaps between the frames); cand counts each loss (cand_rx_overflows_total) and reports it" \
					"in an error frame, as on a Pi too slow for its bus"
			fi
		else
			echo "vm: vcan0 did not come up; cand log:"
			tail -n 20 /tmp/cand.log
		fi
		rate=$(sed -n 's/.*timing="bitrate \([0-9]*\).*/\1/p' /tmp/cand.log | head -n 1)
		# cand status, where this cand has the subcommand (an older one exits 1 on it).
		timeout 5 cand status >/dev/null 2>&1 && st="    cand status              the controllers at a glance"
	else
		echo "vm: no cand in this image; creating vcan0 by hand"
		ip link add dev vcan0 type vcan && ip link set vcan0 up
	fi
	cat <<MSG

  cand VM shell. The simulated bus runs at ${rate:-?} bit/s: the CPU here is emulated,
  some 2 ms per interrupt, so the demo keeps to a rate it can drain (vm/cand-demo.yaml).
  Tools: candump, cansend, cangen, cansniffer, canbusload, ip.
    candump vcan0            cansend vcan0 123#DEADBEEF   (answered as 124#DEADBEEF)
    ip -details -statistics link show vcan0
${st:+$st
}  Metrics: wget -q -O - http://127.0.0.1:9108/metrics   (here)
           curl http://127.0.0.1:$port/metrics          (from the host)
    losses: cand_rx_overflows_total, cand_socket_drops_total, cand_tx_dropped_total
  Leave: type 'exit' (powers off) or press Ctrl-A then X.

MSG
	setsid cttyhack sh -l
}

# status_field KEY: the first "KEY": value of cand status -json, without quotes.
status_field() {
	cand status -socket /run/cand/status.sock -json 2>/dev/null | tr ',{}' '\n\n\n' | sed -n "s/^ *\"$1\": *\"*\([^\"]*\)\"*$/\1/p" | head -n 1
}

# can_state IFACE: the "can state" of ip -details link show (ERROR-ACTIVE, ...).
can_state() { ip -details link show "$1" | sed -n 's/.*can state \([A-Z-]*\).*/\1/p' | head -n 1; }
state_in() { case " $2 " in *" $(can_state "$1") "*) return 0 ;; esac; return 1; }
# state_changes IFACE: error-warn + error-pass + bus-off of ip -details -statistics
# (the line after "re-started bus-errors arbit-lost error-warn error-pass bus-off").
state_changes() { ip -details -statistics link show "$1" | awk '/error-warn error-pass bus-off/ { getline; print $4 + $5 + $6; exit }'; }
changed_state() { [ "$(state_changes "$1")" -gt 0 ] 2>/dev/null; }
bus_offs() { ip -details -statistics link show "$1" | awk '/error-warn error-pass bus-off/ { getline; print $6; exit }'; }
had_bus_off() { [ "$(bus_offs "$1")" -gt 0 ] 2>/dev/null; }
carrier_active() { ip link show "$1" | grep -q 'LOWER_UP' && [ "$(can_state "$1")" = ERROR-ACTIVE ]; }
bitrate_is() { [ "$(status_field bitrate)" = "$1" ] && [ "$(status_field from)" = "$2" ]; }

# slcan: cand with interface kind slcan. can0 is a kernel CAN netdev (the slcan
# line discipline on a pseudo-terminal cand holds), with the configured 10 kbit/s.
cand_slcan() {
	echo "VMTEST BEGIN slcan"
	[ -f /etc/cand-slcan.yaml ] || { fail slcan/config "no /etc/cand-slcan.yaml in the initramfs"; return; }
	need_cand slcan || return
	cand -config /etc/cand-slcan.yaml 2>/tmp/slcan-cand.err &
	cand=$!
	if poll 60 link_up can0; then
		pass slcan/netdev-up
	else
		fail slcan/netdev-up "can0 not up 60 s after cand started; cand said: $(said /tmp/slcan-cand.err)"
		stop "$cand" 10
		return
	fi
	echo "--- ip -details link show can0 ---"
	ip -details -statistics link show can0
	if ip -details link show can0 | grep -qw 'bitrate 10000'; then pass slcan/kernel-bitrate; else fail slcan/kernel-bitrate "ip -details shows no bitrate 10000: $(ip -details link show can0 | tr '\n' ' ')"; fi
	poll 20 bitrate_is 10000 configuration && pass slcan/status-bitrate ||
		fail slcan/status-bitrate "cand status: bitrate $(status_field bitrate) from $(status_field from), want 10000 from configuration"

	# Frames both ways through the pty, the bus and the answering peer, conserved.
	start_dump slcan can0
	scrape /tmp/slcan-m0.txt
	# 100 ms apart: the adapter's two goroutines share the emulated CPUs with the
	# owner thread, and a request and its answer take ~26 ms of the bus.
	timeout 120 cangen can0 -I 123 -L 8 -D i -g 100 -p 10 -n 50 || fail slcan/cangen "cangen exited with status $?"
	wait_count 122 50 /tmp/slcan.log 60 || true
	scrape /tmp/slcan-m1.txt
	vmcheck -name slcan -dump /tmp/slcan.log -answers "0x123:0x122:50" -no-error-frames -metrics /tmp/slcan-m1.txt -metrics-base /tmp/slcan-m0.txt -iface can0

	# ISO-TP single frames: the peer's echo (ID - 1) is a valid single frame back.
	isotprecv -s 321 -d 320 can0 >/tmp/isotp.out 2>/tmp/isotp.err &
	local rcv=$!
	sleep 1
	echo "11 22 33 44 55" | isotpsend -s 321 -d 320 can0 2>>/tmp/isotp.err
	if poll 20 grep -q "11 22 33 44 55" /tmp/isotp.out; then pass slcan/isotp; else fail slcan/isotp "isotprecv got '$(cat /tmp/isotp.out)'; $(cat /tmp/isotp.err)"; fi
	stop "$rcv" 2
	# The same on a vcan cand serves.
	if poll 10 link_up vcan2; then
		isotprecv -s 321 -d 320 vcan2 >/tmp/isotp-vcan.out 2>/tmp/isotp-vcan.err &
		rcv=$!
		sleep 1
		echo "66 77 88" | isotpsend -s 321 -d 320 vcan2 2>>/tmp/isotp-vcan.err
		if poll 20 grep -q "66 77 88" /tmp/isotp-vcan.out; then pass slcan/isotp-vcan; else fail slcan/isotp-vcan "isotprecv got '$(cat /tmp/isotp-vcan.out)'; $(cat /tmp/isotp-vcan.err)"; fi
		stop "$rcv" 2
	else
		fail slcan/isotp-vcan "vcan2 not up"
	fi

	# ip link down and up: the controller off the bus and back (cand_link_up).
	ip link set can0 down
	if poll 10 metric_is cand_link_up can0 0; then pass slcan/link-down; else fail slcan/link-down "cand_link_up $(metric /tmp/poll-metrics.txt cand_link_up can0) after ip link set can0 down"; fi
	ip link set can0 up
	if poll 10 metric_is cand_link_up can0 1; then pass slcan/link-up; else fail slcan/link-up "cand_link_up $(metric /tmp/poll-metrics.txt cand_link_up can0) after ip link set can0 up"; fi

	# ip link's bitrate reprograms the controller; on the 10 kbit/s bus its frames
	# at 500 kbit/s are destroyed, and the error states show in ip -details.
	ip link set can0 down
	if ip link set can0 up type can bitrate 500000 2>/tmp/slcan-ip.err; then pass slcan/ip-bitrate; else fail slcan/ip-bitrate "$(cat /tmp/slcan-ip.err)"; fi
	poll 20 bitrate_is 500000 "ip link" && pass slcan/reprogrammed ||
		fail slcan/reprogrammed "cand status: bitrate $(status_field bitrate) from $(status_field from), want 500000 from ip link"
	cansend can0 456#AA
	# The controller goes warning, passive, bus-off and (restart_ms) back: the
	# states pass quickly, their counts stay.
	if poll 60 changed_state can0; then pass slcan/error-state; else fail slcan/error-state "can state $(can_state can0), no error-warn/error-pass/bus-off counted 60 s after a frame at the wrong bitrate"; fi
	# The frame is retried until bus-off (the kernel's slcan turns the carrier off);
	# cand restarts the controller (restart_ms 100), which drops the frame, and sets
	# the interface down and up to turn the carrier on again.
	if poll 60 had_bus_off can0; then pass slcan/bus-off; else fail slcan/bus-off "no bus-off counted in ip -details -statistics 60 s after a frame at the wrong bitrate (can state $(can_state can0))"; fi
	if poll 30 carrier_active can0; then pass slcan/carrier-back; else fail slcan/carrier-back "after the bus-off: $(ip link show can0 | head -n 1), can state $(can_state can0); cand said: $(said /tmp/slcan-cand.err)"; fi
	echo "--- ip -details -statistics link show can0 (wrong bitrate) ---"
	ip -details -statistics link show can0
	ip link set can0 down
	ip link set can0 up type can bitrate 250000 && poll 20 bitrate_is 250000 "ip link" && pass slcan/reprogrammed-250k ||
		fail slcan/reprogrammed-250k "cand status: bitrate $(status_field bitrate) from $(status_field from), want 250000"
	ip link set can0 down
	ip link set can0 up type can bitrate 10000 && poll 20 bitrate_is 10000 "ip link" || true
	if poll 30 state_in can0 "ERROR-ACTIVE ERROR-WARNING"; then pass slcan/state-back; else fail slcan/state-back "can state $(can_state can0) after the bus's own bitrate again"; fi
	cansend can0 345#BEEF
	if poll 30 grep -q "344#BEEF" /tmp/slcan.log; then pass slcan/answered-again; else fail slcan/answered-again "no 344#BEEF on can0 after the bitrate went back to 10000"; fi
	stop "$dump" 5
	echo "--- ip -details -statistics link show can0 ---"
	ip -details -statistics link show can0

	if stop "$cand" 20 && [ "$rc" = 0 ]; then pass slcan/cand-exit; else fail slcan/cand-exit "exit status ${rc:-none} after SIGTERM; cand said: $(said /tmp/slcan-cand.err)"; fi
	if [ ! -e /sys/class/net/can0 ]; then pass slcan/netdev-gone; else fail slcan/netdev-gone "can0 still there after cand exited"; fi
	ip link del vcan2 2>/dev/null || true
	echo "--- cand stderr (last 30 lines) ---"
	tail -n 30 /tmp/slcan-cand.err
	slcan_overflow
}

# rx_over_errors IFACE: the kernel's count of RX overruns on IFACE.
rx_over_errors() { cat "/sys/class/net/$1/statistics/rx_over_errors" 2>/dev/null || echo 0; }
# rx_overrun IFACE: the kernel counted an RX overrun on IFACE.
rx_overrun() { [ "$(rx_over_errors "$1")" -gt 0 ]; }

# slcan_overflow: the chip overflows (/etc/cand-slcan-overflow.yaml); each RX
# overflow cand reports shows in the slcan netdev's rx_over_errors, no more of
# them than cand counted.
slcan_overflow() {
	[ -f /etc/cand-slcan-overflow.yaml ] || { fail slcan/overflow-config "no /etc/cand-slcan-overflow.yaml in the initramfs"; return; }
	cand -config /etc/cand-slcan-overflow.yaml 2>/tmp/slcan-ovf.err &
	cand=$!
	if ! poll 60 link_up can0; then
		fail slcan/overflow-up "can0 not up 60 s after cand started; cand said: $(said /tmp/slcan-ovf.err)"
		stop "$cand" 10
		return
	fi
	if poll 60 rx_overrun can0; then
		scrape /tmp/slcan-ovf.txt
		ovf=$(metric /tmp/slcan-ovf.txt cand_rx_overflows_total can0)
		if [ "${ovf:-0}" -ge "$(rx_over_errors can0)" ]; then pass slcan/rx-over-errors; else
			fail slcan/rx-over-errors "rx_over_errors $(rx_over_errors can0), more than cand's ${ovf:-?} overflows"; fi
	else
		scrape /tmp/slcan-ovf.txt
		fail slcan/rx-over-errors "rx_over_errors still 0 60 s into a flood the chip cannot keep up with; cand_rx_overflows_total $(metric /tmp/slcan-ovf.txt cand_rx_overflows_total can0); cand said: $(said /tmp/slcan-ovf.err)"
	fi
	ip -details -statistics -statistics link show can0
	stop "$cand" 20
}

ip link set lo up
load_modules || true
mode=$(arg cand.mode test)
for m in $(echo "$mode" | tr ',' ' '); do
	t0=$(cut -d. -f1 /proc/uptime)
	case $m in
	smoke) smoke ;;
	kernel) kernel_tests ;;
	test) cand_test ;;
	seq) cand_seq ;;
	slcan) cand_slcan ;;
	shell) shell ;;
	*) fail vm/mode "unknown cand.mode=$m (want smoke, kernel, test, seq, slcan or shell)" ;;
	esac
	echo "vm: $m took $(($(cut -d. -f1 /proc/uptime) - t0)) s"
done
echo "VMTEST DONE"
poweroff -f
