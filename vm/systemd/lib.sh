# Helpers of the systemd VM tier (sourced, not run, with here set to vm/systemd):
# sets vm (vm/, absolute) and repo, and loads vm/lib.sh.
vm=$(dirname "$here")
repo=$(dirname "$vm")
. "$vm/lib.sh"

# The host packages this tier needs beyond vm/lib.sh's VM_PACKAGES: mmdebstrap
# builds the guest's root file system from the host's apt sources.
SD_PACKAGES="mmdebstrap"

sd_ensure_packages() {
	VM_PACKAGES=$SD_PACKAGES vm_ensure_packages
}

# sd_verdict LOG "CHECK..." TIMEOUT: the result of a run from the console log: each
# expected check must have a VMTEST PASS or SKIP line; any VMTEST FAIL, a check
# with no line, or no VMTEST DONE fails. Prints the report and
# "vm: N passed, M failed, K skipped"; returns 1 on any failure.
sd_verdict() {
	log=$1 timeout=$3
	passed=0 failed=0 skipped=0 report=""
	for c in $2; do
		if grep -qx "VMTEST PASS $c" "$log"; then
			passed=$((passed + 1))
		elif grep -q "^VMTEST SKIP $c:" "$log"; then
			skipped=$((skipped + 1))
		elif ! grep -q "^VMTEST FAIL $c:" "$log"; then
			failed=$((failed + 1))
			report="$report
VMTEST MISSING $c (no PASS, FAIL or SKIP line)"
		fi
	done
	fails=$(grep '^VMTEST FAIL' "$log" || true)
	if [ -n "$fails" ]; then
		failed=$((failed + $(printf '%s\n' "$fails" | wc -l)))
		report="$report
$fails"
	fi
	if ! grep -qx 'VMTEST DONE' "$log"; then
		failed=$((failed + 1))
		report="$report
VMTEST MISSING vm/done: the VM stopped or timed out ($timeout s) before its end"
	fi
	skips=$(grep '^VMTEST SKIP' "$log" || true)
	[ -z "$skips" ] || printf 'vm: skipped:\n%s\n' "$skips"
	if [ "$failed" -gt 0 ]; then
		echo "vm: failures:$report"
		echo "vm: last 40 lines of $log:"
		tail -n 40 "$log" | sed 's/^/    /'
	fi
	echo "vm: $passed passed, $failed failed, $skipped skipped"
	[ "$failed" = 0 ]
}
