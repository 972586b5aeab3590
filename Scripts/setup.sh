#!/usr/bin/env bash
# Installs the Debian packages launchprof needs, when they are missing. As root it installs them
# with apt-get; otherwise it prints the exact command and stops.
#
#   libelf-dev        ELF reading (launchprof links libelf)
#   libunwind-dev     stack unwinding of stopped children: its headers (launchprof loads
#                     libunwind-ptrace with dlopen when it first unwinds a stack)
#   libc6-dbg         ld.so's symbol table, so the loader's map/relocate split can be observed
#   gcc               the tests and benchmarks build their C fixtures from source
#   gdb, git          system programs the tests inspect and run
#   golang-go         builds a static Go program (no libc main) for the tests
#   hyperfine, time   baselines for the benchmarks
#   python3-jsonschema  the tests validate every JSON launchprof writes against docs/formats/schema
#                     (draft 2020-12: Debian 12 ships jsonschema 4.10, which has it)
#   chromium          the tests render the HTML report in headless Chromium
#   nodejs            the tests syntax-check the HTML report's script (node --check)
#   python3-prometheus-client  the Prometheus project's OpenMetrics parser, which the tests run
#                     on `launchprof export --openmetrics` output
#   libxcb1-dev, libxcb-damage0-dev, libxcb-res0-dev  the X11 frame observer (`--ready frame`)
#                     links libxcb and its DAMAGE and X-Resource bindings statically (with
#                     libXau and libXdmcp, which libxcb1-dev brings)
#   libxcb-composite0-dev, libxcb-xfixes0-dev  headers of the extensions the observer's
#                     DAMAGE binding builds on (the Xvfb tests use them through libxcb)
#   libwayland-dev, wayland-protocols  libwayland-client's headers and xdg-shell's XML (with
#                     wayland-scanner), for the tests' wl_shm fixture
#   xvfb              the tests' X server (Xvfb on a free display number, -displayfd)
#   weston            the tests' Wayland compositor (headless backend)
#   x11-apps, xterm, mesa-utils  real X11 programs the first-frame tests launch (xeyes,
#                     xterm, glxgears on Mesa's software GL)
#   gtk-3-examples, gtk-4-examples, foot  real GTK 3/4 and native Wayland programs for the
#                     first-frame tests (gtk3-demo, gtk4-demo, foot)
#   x11-utils         xdpyinfo, to check a server's extensions by hand
#   openbox           a reparenting window manager: the first-frame tests check that a window
#                     reparented into a frame still counts
set -euo pipefail

packages=(libelf-dev libunwind-dev libc6-dbg gcc gdb git golang-go hyperfine time python3-jsonschema chromium nodejs python3-prometheus-client
  libxcb1-dev libxcb-damage0-dev libxcb-res0-dev libxcb-composite0-dev libxcb-xfixes0-dev
  libwayland-dev wayland-protocols xvfb weston x11-apps xterm mesa-utils gtk-3-examples gtk-4-examples foot x11-utils openbox "$@")
missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "launchprof needs these Debian packages: ${missing[*]}" >&2
  echo "Install them with:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "Installing ${missing[*]}…" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >&2
