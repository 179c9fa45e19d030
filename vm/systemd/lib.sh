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
