# The start both run-*.sh scripts share (sourced, not run): finds the repository from
# the running script's path, loads lib.sh, exports BUILD [<repo>/build] and creates
# out, the VM's build directory ($BUILD/vm).
# Sets: here (vm/, absolute), repo, BUILD, out.

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
. "$here/lib.sh"
BUILD=${BUILD:-$repo/build}
export BUILD
out=$BUILD/vm
mkdir -p "$out"
