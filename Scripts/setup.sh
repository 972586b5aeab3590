#!/usr/bin/env bash
# Installs the Debian packages a task needs, when they are missing. As root it installs them with
# apt-get; otherwise it prints the exact command and stops.
#
#   bash Scripts/setup.sh run        what the launchprof binary needs at run time
#   bash Scripts/setup.sh build      run + what building it from source links
#   bash Scripts/setup.sh demo       build (command 1, Scripts/demo.sh)
#   bash Scripts/setup.sh test       demo + what the tests run or compare against (command 2)
#   bash Scripts/setup.sh package    build + what Scripts/package.sh and its install check use
#   (no task: test; any further arguments are extra packages)
#
# Run time (the package's Depends and Recommends):
#   libelf1           ELF reading (launchprof links it, with zlib, dynamically)
#   libunwind8        libunwind's remote unwinder (libunwind-x86_64), loaded with dlopen when
#                     launchprof first unwinds a stack (--sample, a crash's stack), for the frames
#                     its own call frame rules cannot take
#   libc6-dbg         ld.so's symbol table, so the loader's map/relocate split can be observed
#                     (without it those two phases are reported absent, with the reason)
# Build:
#   libelf-dev        ELF reading
#   libunwind-dev     libunwind's headers
#   libxcb1-dev, libxcb-damage0-dev, libxcb-res0-dev  the X11 frame observer (`--ready frame`)
#                     links libxcb and its DAMAGE and X-Resource bindings statically, so that
#                     launchprof runs where no X library is installed (with
#                     libXau and libXdmcp, which libxcb1-dev brings; DAMAGE's headers bring
#                     XFixes')
#   libsqlite3-dev    SQLite, `launchprof monitor`'s store
#   systemtap-sdt-dev <sys/sdt.h>: the hooks (launchprof.h, LaunchprofApp) are also USDT probes,
#                     which `launchprof monitor` places its uprobes on (without it: no hook
#                     phases in field data, and the monitor says so)
# Tests (command 2):
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
#   libwayland-dev, wayland-protocols  libwayland-client's headers and xdg-shell's XML (with
#                     wayland-scanner), for the tests' wl_shm fixture
#   xvfb              the tests' X server (Xvfb on a free display number, -displayfd)
#   weston            the tests' Wayland compositor (headless backend)
#   x11-apps, xterm, mesa-utils  real X11 programs the first-frame tests launch (xeyes,
#                     xcalc, xmessage, xterm, glxgears on Mesa's software GL)
#   feh               an image viewer whose picture is its window's background pixmap (no
#                     drawing after the map): the first-frame tests launch it
#   gtk-3-examples, gtk-4-examples, foot  real GTK 3/4 and native Wayland programs for the
#                     first-frame tests (gtk3-demo, gtk4-demo, foot)
#   libgtk-3-dev, qtbase5-dev, libgtk-4-dev, qt6-base-dev, libsdl2-dev, tk8.6-dev  the toolkits'
#                     headers: the tests build small GTK 3/4, Qt 5/6, SDL 2 and Tk programs that
#                     never call launchprof and check their toolkit phases
#   x11-utils         xdpyinfo, to check a server's extensions by hand
#   openbox           a reparenting window manager: the first-frame tests check that a window
#                     reparented into a frame still counts
#   prometheus        promtool, and the server (started by the tests on loopback, never as a
#                     service) that scrapes `launchprof monitor`'s /metrics and `export`'s text;
#                     promtool: the tests run `promtool check metrics` on every
#                     `launchprof export --prometheus`. Installed without its recommends (no
#                     node exporter); the service the package starts is stopped and disabled
#                     again: nothing here needs a server listening on :9090.
# Package (Scripts/package.sh):
#   dpkg-dev          dpkg-shlibdeps: the package's dependencies from what the binary links
#   debootstrap       the install check: a Debian 12 root that has never had Swift
#   man-db            the check reads the man page as `man` renders it
#   zsh, fish         the completion scripts are checked by the shells that read them
set -euo pipefail

run=(libelf1 libunwind8 libsqlite3-0 libc6-dbg)
build=("${run[@]}" libelf-dev libunwind-dev libxcb1-dev libxcb-damage0-dev libxcb-res0-dev libsqlite3-dev
  systemtap-sdt-dev)
tests=(gcc gdb git golang-go hyperfine time python3-jsonschema chromium nodejs python3-prometheus-client
  libwayland-dev wayland-protocols xvfb weston x11-apps xterm
  mesa-utils gtk-3-examples gtk-4-examples foot x11-utils openbox feh prometheus libgtk-3-dev qtbase5-dev
  libgtk-4-dev qt6-base-dev libsdl2-dev tk8.6-dev)
packaging=(dpkg-dev debootstrap man-db zsh fish)

task=${1:-test}
[ $# -gt 0 ] && shift
case "$task" in
  run) packages=("${run[@]}") ;;
  build | demo) packages=("${build[@]}") ;;
  test) packages=("${build[@]}" "${tests[@]}") ;;
  package) packages=("${build[@]}" "${packaging[@]}") ;;
  *)
    echo "usage: bash Scripts/setup.sh run|build|demo|test|package [more packages…]" >&2
    exit 64
    ;;
esac
packages+=("$@")

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "launchprof's $task needs these Debian packages: ${missing[*]}" >&2
  echo "Install them with:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "Installing ${missing[*]}…" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
others=()
for package in "${missing[@]}"; do [ "$package" = prometheus ] || others+=("$package"); done
[ ${#others[@]} -eq 0 ] || apt-get install -y -qq "${others[@]}" >&2
if [ ${#others[@]} -ne ${#missing[@]} ]; then
  # The tests need prometheus's promtool, not its service (nor the node exporter it recommends):
  # stop and disable the server the package starts.
  apt-get install -y -qq --no-install-recommends prometheus >&2
  if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    systemctl disable --now prometheus.service >&2 || true
  fi
fi
