#!/bin/bash
# vmtest.sh — the systemd VM's test driver, run by cand-vmtest.service once
# multi-user.target is reached (vm/systemd/run-test.sh). Parts, from the kernel
# command line cand.parts=install[,slcan][,deb]:
#   install  cand as `make install DESTDIR=<root> PREFIX=/usr` put it into the root:
#            the unit checked by systemd-analyze, Type=notify readiness, a missing
#            chip, traffic both ways, restart and stop with a candump bound
#            throughout, reload, the watchdog, journal fields, vxcan in a
#            network namespace
#   slcan    can0 as a slcan interface (a kernel CAN netdev on cand's pseudo-terminal)
#            under the unit's sandbox, its bitrate set by systemd-networkd
#            ([CAN] BitRate=250K) and taken by cand, gone when cand stops
#   deb      the make-install files taken away, then the amd64 .deb: install,
#            configure, upgrade to a higher version, remove, purge
# Prints VMTEST PASS <check>, VMTEST FAIL <check>: <reason>, VMTEST SKIP <check>:
# <reason>, lines starting "vm: " for the log, VMTEST DONE; then powers off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin SYSTEMD_COLORS=0 SYSTEMD_PAGER= LC_ALL=C
lib=/usr/lib/cand-vmtest
conf=/etc/cand/cand.yaml

pass() { echo "VMTEST PASS $1"; }
fail() { echo "VMTEST FAIL $1: $2"; }
skip() { echo "VMTEST SKIP $1: $2"; }
# check NAME REASON CMD...: PASS if CMD succeeds, else FAIL with REASON.
check() {
	local n=$1 why=$2
	shift 2
	if "$@"; then pass "$n"; else fail "$n" "$why"; fi
}
arg() { # arg NAME DEFAULT: NAME= from the kernel command line
	local w
	for w in $(</proc/cmdline); do
		case $w in "$1="*) echo "${w#*=}"; return ;; esac
	done
	echo "$2"
}
uptime_s() { cut -d' ' -f1 /proc/uptime; }
step() { echo "vm: $1 at $(uptime_s) s"; } # where the guest's time goes
# poll SECONDS CMD...: CMD every 0.2 s until it succeeds; fails after SECONDS.
poll() {
	local until=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $until ] || return 1
		sleep 0.2
	done
}
prop() { systemctl show -p "$2" --value "$1"; } # prop UNIT PROPERTY
link_up() { ip link show "$1" 2>/dev/null | grep -q '[<,]UP[,>]'; }
link_down() { ip link show "$1" >/dev/null 2>&1 && ! link_up "$1"; }
metrics() { # cand's /metrics, through bash's /dev/tcp (no curl in minbase)
	exec 3<>/dev/tcp/127.0.0.1/9108 || return 1
	printf 'GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
	cat <&3
	exec 3<&-
}
count() { grep -c " $1#" "$2" 2>/dev/null; } # count ID CANDUMP-LOG
more_than() { [ "$(count "$1" "$3")" -gt "$2" ]; }
journal_since() { journalctl -u cand --no-pager -o cat --since "@$1" 2>/dev/null; }
# reload_applied SINCE: the journal has cand's "reload: applied" for can0's restart_ms.
reload_applied() {
	journalctl -u cand --no-pager -o cat --since "@$1" 'KEYS=controllers[0].restart_ms' | grep -q 'reload: applied'
}
said() { journalctl -u cand --no-pager -o cat -n 5 2>/dev/null | tr '\n' '|'; }

# start_ready NAME: systemctl start returns once cand sent READY=1, so the
# interfaces are there and up at once, without waiting.
start_ready() {
	local n=$1
	if ! systemctl start cand; then
		fail "$n/start" "systemctl start cand failed: $(said)"
		return 1
	fi
	pass "$n/start"
	if link_up can0 && link_up can1; then
		pass "$n/ready-means-up"
	else
		fail "$n/ready-means-up" "right after systemctl start returned: $(ip -br link show 2>&1 | tr '\n' '|')"
	fi
}

part_install() {
	local u=/lib/systemd/system/cand.service out score t n0 n1 dump pid
	echo "VMTEST BEGIN install"
	cp "$lib/cand-sd.yaml" "$conf"
	out=$(systemd-analyze verify "$u" 2>&1)
	if [ $? = 0 ] && ! grep -q 'cand\.service' <<<"$out"; then
		pass install/analyze-verify
	else
		fail install/analyze-verify "$(tr '\n' '|' <<<"$out")"
	fi
	out=$(systemd-analyze security --no-pager cand.service 2>&1)
	score=$(sed -n 's/.*Overall exposure level for cand.service: \([0-9.]*\).*/\1/p' <<<"$out")
	echo "vm: systemd-analyze security cand.service: ${score:-?}"
	if [ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s <= 2.5) }'; then
		pass install/analyze-security
	else
		fail install/analyze-security "exposure ${score:-not found} (want <= 2.5): $(tail -n 3 <<<"$out" | tr '\n' '|')"
	fi
	check install/user "no user cand after boot (systemd-sysusers, /usr/lib/sysusers.d/cand.conf)" id cand

	start_ready install || return
	out=$(prop cand StatusText)
	echo "vm: StatusText=$out"
	# The line cand sends with READY=1: each interface's state and frame rates
	# (daemon/sdstatus.go); can1's chip is absent.
	check install/status-text "StatusText='$out', want 'can0 <STATE> rx N/s tx N/s; can1 chip missing rx 0/s tx 0/s'" \
		grep -Eqx 'can0 ERROR-[A-Z]+ rx [0-9]+/s tx [0-9]+/s; can1 chip missing rx 0/s tx 0/s' <<<"$out"
	# Refreshed every 5 s: the periodic peer's 5 frames/s show as can0's RX rate.
	status_rates() { prop cand StatusText | grep -Eq '^can0 ERROR-ACTIVE rx [1-9][0-9]*/s tx [0-9]+/s; can1 chip missing'; }
	check install/status-rates "StatusText '$(prop cand StatusText)' shows no RX rate for can0 within 15 s (the periodic peer sends 5 frames/s)" poll 15 status_rates

	step "chip absent"
	# can1's chip is absent: served all the same, and said so.
	check install/chip-absent-active "cand not active with can1's chip absent: $(said)" [ "$(systemctl is-active cand)" = active ]
	out=$(metrics | grep '^cand_chip_up{')
	echo "vm: $(tr '\n' ' ' <<<"$out")"
	if grep -q 'controller="can1".* 0$' <<<"$out" && grep -q 'controller="can0".* 1$' <<<"$out"; then
		pass install/chip-absent-metrics
	else
		fail install/chip-absent-metrics "cand_chip_up: '$out', want can0 1 and can1 0"
	fi
	out=$(cand status -json 2>&1)
	if tr -d ' \n' <<<"$out" | grep -q '"name":"can1"[^}]*"chip_up":false'; then
		pass install/chip-absent-status
	else
		fail install/chip-absent-status "cand status -json: $(head -c 400 <<<"$out" | tr '\n' ' ')"
	fi

	step traffic
	# Traffic: the periodic peer's frames on can0, and an answer to a request.
	dump=/tmp/can0.log
	candump -D -L can0 >"$dump" 2>/tmp/candump.err &
	pid=$!
	check install/rx "no frame 0x200 from the periodic peer on can0 in 20 s" poll 20 more_than 200 2 "$dump"
	cansend can0 123#C0FFEE01
	check install/tx-answer "no answer 122#C0FFEE01 to cansend 123#C0FFEE01 in 20 s" poll 20 grep -q ' 122#C0FFEE01$' "$dump"

	step stop
	# Stop: clean, the interface stays and is down, writes fail with ENETDOWN.
	if systemctl stop cand && [ "$(prop cand Result)" = success ] && [ "$(prop cand ExecMainStatus)" = 0 ]; then
		pass install/stop-clean
	else
		fail install/stop-clean "Result=$(prop cand Result) ExecMainStatus=$(prop cand ExecMainStatus): $(said)"
	fi
	check install/stopped-link-down "can0 after stop: $(ip -br link show can0 2>&1)" link_down can0
	out=$(cansend can0 123#01 2>&1)
	check install/stopped-enetdown "cansend on the stopped cand's can0: '$out', want 'Network is down'" grep -q 'Network is down' <<<"$out"

	step "restart with candump"
	# The candump bound before the stop (-D: it reads on after ENETDOWN, as an
	# application that outlives the service must) receives again after a start
	# and a restart: the same socket, on the same interface.
	start_ready install-again
	n0=$(count 200 "$dump")
	check install/candump-after-start "the candump started first received nothing after the start ($n0 frames before; candump: $(tail -n 2 /tmp/candump.err | tr '\n' ' '))" poll 20 more_than 200 $((n0 + 2)) "$dump"
	n1=$(prop cand MainPID)
	systemctl restart cand
	n0=$(count 200 "$dump")
	check install/restart-new-pid "MainPID $n1 before and $(prop cand MainPID) after systemctl restart" [ "$(prop cand MainPID)" != "$n1" ]
	check install/candump-after-restart "the candump started first received nothing after systemctl restart ($n0 frames before)" poll 20 more_than 200 $((n0 + 2)) "$dump"

	step "link down and up"
	# ip link set can0 down takes the controller off the bus, as a kernel CAN
	# driver does: cand stays active, says so (cand_link_up 0, STOPPED), writes
	# fail with ENETDOWN; up puts it back and the bound candump receives again.
	link_metric() { metrics | grep '^cand_link_up{' | grep 'controller="can0"' | grep -q " $1\$"; }
	ip link set can0 down
	check install/link-down-active "cand not active after ip link set can0 down: $(said)" [ "$(systemctl is-active cand)" = active ]
	check install/link-down-metric "cand_link_up for can0 not 0 within 10 s of ip link set can0 down" poll 10 link_metric 0
	check install/link-down-status "cand status does not show can0 STOPPED: $(cand status 2>&1 | head -n 3 | tr '\n' ' ')" \
		eval 'cand status -json 2>/dev/null | tr -d " \n" | grep -q "\"name\":\"can0\"[^}]*\"state\":\"STOPPED\""'
	out=$(cansend can0 123#02 2>&1)
	check install/link-down-enetdown "cansend on can0 set down: '$out', want 'Network is down'" grep -q 'Network is down' <<<"$out"
	ip link set can0 up
	check install/link-up-metric "cand_link_up for can0 not 1 within 10 s of ip link set can0 up" poll 10 link_metric 1
	n0=$(count 200 "$dump")
	check install/link-up-frames "the bound candump received nothing after ip link set can0 up ($n0 frames before)" poll 20 more_than 200 $((n0 + 2)) "$dump"
	kill "$pid" 2>/dev/null

	step reload
	# Reload: a key applied live, and one that needs a restart, each logged.
	t=$(date +%s)
	sleep 1
	sed -i 's/restart_ms: 100/restart_ms: 200/; s/period: 200ms/period: 300ms/' "$conf"
	if systemctl reload cand; then pass install/reload; else fail install/reload "systemctl reload cand failed: $(said)"; fi
	check install/reload-applied "no 'reload: applied' with KEYS=controllers[0].restart_ms in the journal: $(journal_since "$t" | tail -n 3 | tr '\n' '|')" \
		poll 20 reload_applied "$t"
	check install/reload-needs-restart "no 'takes effect only when cand is restarted' for the peer's period: $(journal_since "$t" | tail -n 3 | tr '\n' '|')" \
		poll 20 eval 'journal_since '"$t"' | grep -q "reload: changed, but takes effect only when cand is restarted"'
	check install/reload-active "cand not active after reload" [ "$(systemctl is-active cand)" = active ]

	step journal
	# journald keeps cand's own fields.
	out=$(journalctl -u cand -o verbose --no-pager 2>/dev/null)
	if grep -q '^ *CONTROLLER=can0$' <<<"$out" && grep -q '^ *CODE_FUNC=' <<<"$out" && grep -q '^ *SYSLOG_IDENTIFIER=cand$' <<<"$out"; then
		pass install/journal-fields
	else
		fail install/journal-fields "journalctl -o verbose lacks CONTROLLER=can0, CODE_FUNC= or SYSLOG_IDENTIFIER=cand"
	fi

	step watchdog
	# Watchdog: the virtual Pi's bus stalls 3 s after start, the owner thread
	# wedges, WATCHDOG=1 stops and systemd restarts cand (WatchdogSec=5s). The
	# configuration is put back as soon as the stalling cand has read it.
	cp "$lib/cand-sd.yaml" "$conf"
	sed -i 's/^  sim_cpu: dedicated$/  sim_cpu: dedicated\n  sim_stall_bus_after: 3s/' "$conf"
	n0=$(prop cand NRestarts)
	t=$(date +%s)
	sleep 1
	systemctl restart cand
	cp "$lib/cand-sd.yaml" "$conf"
	check install/watchdog-stall-logged "cand did not log the stalled bus: $(journal_since "$t" | tail -n 3 | tr '\n' '|')" \
		poll 30 eval 'journal_since '"$t"' | grep -q "peripheral bus stalled"'
	check install/watchdog-restart "NRestarts still $(prop cand NRestarts) (was $n0) 60 s after the stall: $(said)" \
		poll 60 eval '[ "$(prop cand NRestarts)" -gt '"$n0"' ]'
	out=$(journalctl -u cand --no-pager --since "@$t" 2>/dev/null)
	check install/watchdog-journal "the journal has no watchdog timeout for cand: $(tail -n 3 <<<"$out" | tr '\n' '|')" grep -qi 'watchdog timeout' <<<"$out"
	check install/watchdog-active-again "cand not active again after the watchdog's restart: $(systemctl is-active cand) $(said)" \
		poll 60 eval '[ "$(systemctl is-active cand)" = active ]'

	step "vxcan"
	# vxcan: cand holds can0p, the applications' end can0 lives in namespace app.
	systemctl stop cand
	ip link del can0 2>/dev/null
	ip netns add app
	sed '/^      name: can0$/,/^      kind: vcan$/ { s/^      kind: vcan$/      kind: vxcan\n      netns: \/run\/netns\/app/ }' "$lib/cand-sd.yaml" >"$conf"
	if systemctl start cand && ip link show can0p >/dev/null 2>&1 && ip -n app link show can0 >/dev/null 2>&1; then
		pass install/vxcan-netns-start
		ip -n app link set can0 up
		ip netns exec app candump -D -L can0 >/tmp/app.log 2>&1 &
		pid=$!
		check install/vxcan-netns-rx "no frame 0x200 on can0 in namespace app in 20 s: $(head -n 2 /tmp/app.log | tr '\n' ' ')" poll 20 more_than 200 2 /tmp/app.log
		ip netns exec app cansend can0 123#0BADCAFE
		check install/vxcan-netns-answer "no answer 122#0BADCAFE in namespace app in 20 s" poll 20 grep -q ' 122#0BADCAFE$' /tmp/app.log
		kill "$pid" 2>/dev/null
	else
		fail install/vxcan-netns-start "$(systemctl is-active cand); $(ip -br link 2>&1 | tr '\n' ' '); $(said)"
	fi

	if systemctl stop cand && [ "$(prop cand Result)" = success ] && [ "$(prop cand ExecMainStatus)" = 0 ]; then
		pass install/final-stop-clean
	else
		fail install/final-stop-clean "Result=$(prop cand Result) ExecMainStatus=$(prop cand ExecMainStatus): $(said)"
	fi
	check install/final-stop-link-down "can1 after stop: $(ip -br link show can1 2>&1)" link_down can1
}

# deb: the make-install files out of the way (their list is $lib/install.list),
# then the package as a Debian user meets it.
part_deb() {
	local v1 v2 out pid
	echo "VMTEST BEGIN deb"
	v1=$(cat "$lib/deb1.version") v2=$(cat "$lib/deb2.version")
	systemctl stop cand 2>/dev/null
	systemctl disable cand 2>/dev/null
	xargs rm -f <"$lib/install.list"
	rm -rf /etc/cand /usr/share/doc/cand
	userdel cand 2>/dev/null
	ip link del can0p 2>/dev/null
	ip link del can1 2>/dev/null
	ip netns del app 2>/dev/null
	systemctl daemon-reload

	step "deb install"
	# Install: the default configuration is for a real Pi (backend bcm2835), so the
	# service is enabled and started, and retried until it is configured.
	out=$(dpkg -i "$lib/cand_${v1}_amd64.deb" 2>&1)
	check deb/install "dpkg -i: $(tail -n 3 <<<"$out" | tr '\n' '|')" [ "$(dpkg-query -W -f='${Status} ${Version}' cand 2>/dev/null)" = "install ok installed $v1" ]
	check deb/user "no user cand after dpkg -i" id cand
	check deb/enabled "systemctl is-enabled cand: $(systemctl is-enabled cand 2>&1)" [ "$(systemctl is-enabled cand 2>&1)" = enabled ]
	check deb/conffile "no /etc/cand/cand.yaml" [ -f "$conf" ]
	check deb/started "the unit was not started by the postinst: ActiveState=$(prop cand ActiveState) NRestarts=$(prop cand NRestarts)" \
		[ "$(prop cand ActiveEnterTimestampMonotonic)$(prop cand InactiveExitTimestampMonotonic)" != 00 ]
	echo "vm: on the default (bcm2835) configuration: $(systemctl is-active cand); $(said)"

	step "deb configure"
	# Configure it for the virtual Pi, as an administrator edits the conffile.
	cp "$lib/cand-sd.yaml" "$conf"
	systemctl restart cand
	check deb/configured-active "cand not active on the edited configuration: $(said)" [ "$(systemctl is-active cand)" = active ]
	check deb/configured-up "can0 not up" link_up can0
	candump -D -L can0 >/tmp/deb.log 2>&1 &
	pid=$!
	check deb/rx "no frame 0x200 on can0 in 20 s" poll 20 more_than 200 2 /tmp/deb.log

	step "deb upgrade"
	# Upgrade: the edited conffile stays (the package's own did not change), the
	# service runs the new version.
	out=$(dpkg -i "$lib/cand_${v2}_amd64.deb" 2>&1)
	check deb/upgrade "dpkg -i $v2: $(tail -n 3 <<<"$out" | tr '\n' '|')" [ "$(dpkg-query -W -f='${Status} ${Version}' cand 2>/dev/null)" = "install ok installed $v2" ]
	check deb/upgrade-conffile-kept "the edited /etc/cand/cand.yaml was replaced" cmp -s "$lib/cand-sd.yaml" "$conf"
	check deb/upgrade-active "cand not active after the upgrade: $(said)" poll 30 eval '[ "$(systemctl is-active cand)" = active ]'
	out=$(tr '\0' ' ' <"/proc/$(prop cand MainPID)/cmdline" 2>/dev/null; cand -version 2>&1)
	check deb/upgrade-version "cand -version: $out, want $v2" grep -q "$v2" <<<"$out"
	n0=$(count 200 /tmp/deb.log)
	check deb/upgrade-candump "the candump started before the upgrade received nothing after it" poll 20 more_than 200 $((n0 + 2)) /tmp/deb.log
	kill "$pid" 2>/dev/null

	step "deb remove"
	# Remove: the service stops, the binary goes, the conffile and the user stay.
	out=$(dpkg -r cand 2>&1)
	check deb/remove "dpkg -r: $(tail -n 3 <<<"$out" | tr '\n' '|')" [ "$(dpkg-query -W -f='${Status}' cand 2>/dev/null)" = "deinstall ok config-files" ]
	check deb/remove-stopped "cand still $(systemctl is-active cand) after dpkg -r" [ "$(systemctl is-active cand)" != active ]
	check deb/remove-binary-gone "/usr/bin/cand still there" [ ! -e /usr/bin/cand ]
	check deb/remove-conffile-kept "/etc/cand/cand.yaml removed by dpkg -r" cmp -s "$lib/cand-sd.yaml" "$conf"
	check deb/remove-user-kept "user cand removed by dpkg -r" id cand
	check deb/remove-link-stays "can0 after dpkg -r: $(ip -br link show can0 2>&1)" link_down can0

	step "deb purge"
	# Purge: the conffiles, /etc/cand, the user and the enablement go.
	out=$(dpkg -P cand 2>&1)
	check deb/purge "dpkg -P: $(tail -n 3 <<<"$out" | tr '\n' '|')" [ -z "$(dpkg-query -W -f='${Status}' cand 2>/dev/null)" ]
	check deb/purge-etc-gone "/etc/cand still there: $(ls -A /etc/cand 2>&1 | tr '\n' ' ')" [ ! -e /etc/cand ]
	check deb/purge-user-gone "user cand still there after dpkg -P" eval '! id cand >/dev/null 2>&1'
	check deb/purge-disabled "enablement symlink left: $(ls /etc/systemd/system/multi-user.target.wants/ 2>&1 | tr '\n' ' ')" \
		[ ! -e /etc/systemd/system/multi-user.target.wants/cand.service ]
}

# slcan: can0 as a kernel CAN netdev (interface.kind slcan) configured by
# systemd-networkd like any CAN driver's: [CAN] BitRate= reprograms the controller.
part_slcan() {
	echo "VMTEST BEGIN slcan"
	systemctl stop cand
	for l in can0 can0p can1; do ip link del "$l" 2>/dev/null; done
	ip netns del app 2>/dev/null
	sed '/^      name: can0$/,/^      kind: vcan$/ { s/^      kind: vcan$/      kind: slcan/ }' "$lib/cand-sd.yaml" >"$conf"
	mkdir -p /etc/systemd/network
	printf '[Match]\nName=can0\n\n[CAN]\nBitRate=250K\n' >/etc/systemd/network/80-can0.network
	check slcan/networkd "systemd-networkd does not start: $(systemctl status systemd-networkd --no-pager 2>&1 | tail -n 3 | tr '\n' '|')" \
		systemctl start systemd-networkd
	check slcan/start "systemctl start cand with kind slcan: $(said)" systemctl start cand
	check slcan/kernel-netdev "can0 is no CAN netdev: $(ip -details link show can0 2>&1 | tr '\n' ' ')" \
		eval 'ip -details link show can0 | grep -q "can state"'
	check slcan/networkd-bitrate "ip -details after networkd: $(ip -details link show can0 2>&1 | grep -o 'bitrate [0-9]*' | head -n 1)" \
		poll 60 eval 'ip -details link show can0 | grep -qw "bitrate 250000"'
	# cand status -json is indented: compared without its blanks ("ip link": "iplink").
	check slcan/status-bitrate "cand status: $(cand status -json 2>&1 | tr -d ' \n' | grep -o '"bit_timing":{[^}]*}')" \
		poll 30 eval 'cand status -json 2>/dev/null | tr -d " \n" | grep -q "\"bitrate\":250000,.*\"from\":\"iplink\""'
	systemctl stop cand
	check slcan/netdev-gone "can0 still there after cand stopped: $(ip -br link show can0 2>&1)" eval '! ip link show can0 >/dev/null 2>&1'
	rm -f /etc/systemd/network/80-can0.network
	systemctl stop systemd-networkd
	cp "$lib/cand-sd.yaml" "$conf"
}

echo "vm: test driver started at $(uptime_s) s of guest uptime; multi-user.target reached at $(prop multi-user.target ActiveEnterTimestampMonotonic | awk '{ printf "%.2f", $1 / 1e6 }') s"
for p in $(arg cand.parts install,deb | tr ',' ' '); do
	t0=$SECONDS
	"part_$p"
	echo "vm: part $p took $((SECONDS - t0)) s"
done
echo "VMTEST DONE"
systemctl poweroff --no-block
