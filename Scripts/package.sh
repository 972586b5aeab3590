#!/usr/bin/env bash
# Builds launchprof's Debian package, and checks that it installs and runs on a machine that has
# never had Swift.
#
#   bash Scripts/package.sh            build .build/package/launchprof_VERSION_ARCH.deb
#   bash Scripts/package.sh --check    build it, then install it with dpkg -i in a clean Debian 12
#                                      root (debootstrap, chroot) and run launchprof there
#
# The package holds the release build of launchprof (as Scripts/demo.sh builds it), its man pages
# and bash, zsh and fish completions (Scripts/references.sh: generated from the command
# definitions), launchprof.h with a pkg-config file, the Swift hooks (LaunchprofApp, with the C
# header it wraps) as a local Swift package in /usr/share/launchprof/launchprof-hooks, and any systemd unit
# kept in the repository under Packaging/systemd/. Its Depends are what the binary needs at run
# time: what dpkg-shlibdeps finds it linked against, and libunwind8, which it loads with dlopen
# when it first unwinds a stack. X and Wayland libraries are linked in or not needed; compilers
# and test tools are not dependencies.
#
# The clean root: `debootstrap --variant=minbase bookworm` with only the package's dependencies
# and recommendations added (and man-db, bash-completion to read the page and complete), kept as
# a tarball in $LAUNCHPROF_PACKAGE_CACHE (default /var/cache/launchprof-package, outside the
# clone: built once, a few minutes; each check unpacks a fresh copy in seconds). Needs root. Where
# debootstrap cannot run (not root, no network, no debootstrap), --check says so and falls back
# to checking the package's contents and dependencies only.
set -euo pipefail
cd "$(dirname "$0")/.."
check=false
[ "${1:-}" = "--check" ] && check=true

bash Scripts/setup.sh package
swift build -c release --static-swift-stdlib --disable-local-rpath --product launchprof >&2
bin="$(swift build -c release --static-swift-stdlib --disable-local-rpath --show-bin-path)/launchprof"
version=$("$bin" --version | sed -n '1s/^launchprof //p')
arch=$(dpkg --print-architecture)
out=.build/package
root="$out/root"
deb="$out/launchprof_${version}_${arch}.deb"
rm -rf "$root"
mkdir -p "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" "$root/usr/include" \
  "$root/usr/share/pkgconfig" "$root/usr/share/doc/launchprof" \
  "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
  "$root/usr/share/fish/vendor_completions.d"

# Stripped, as Debian's dh_strip would (41 → 19 MB): launchprof needs neither its symbols nor its
# debug information to run (a stripped build measured its own uprobe hit, sampled and inspected).
install -m 755 "$bin" "$root/usr/bin/launchprof"
strip --strip-unneeded "$root/usr/bin/launchprof"

# Man pages and completions, from the binary being packaged.
bash Scripts/references.sh "$out/references" "$bin"
for page in "$out/references/man"/*.1; do
  gzip -9n < "$page" > "$root/usr/share/man/man1/$(basename "$page").gz"
done
install -m 644 "$out/references/completions/launchprof.bash" "$root/usr/share/bash-completion/completions/launchprof"
install -m 644 "$out/references/completions/_launchprof" "$root/usr/share/zsh/vendor-completions/_launchprof"
install -m 644 "$out/references/completions/launchprof.fish" "$root/usr/share/fish/vendor_completions.d/launchprof.fish"

# The C hooks: one header, nothing to link.
install -m 644 Sources/LaunchprofHooks/include/launchprof.h "$root/usr/include/launchprof.h"
cat > "$root/usr/share/pkgconfig/launchprof.pc" <<EOF
prefix=/usr
includedir=\${prefix}/include

Name: launchprof
Description: launchprof's launch hooks (header-only: launchprof.h)
Version: $version
Cflags: -I\${includedir}
EOF

# The Swift hooks as a package of their own: `.package(path: "/usr/share/launchprof/launchprof-hooks")`.
swift_root="$root/usr/share/launchprof/launchprof-hooks"
mkdir -p "$swift_root/Sources/LaunchprofHooks/include" "$swift_root/Sources/LaunchprofApp"
install -m 644 Sources/LaunchprofHooks/hooks.c "$swift_root/Sources/LaunchprofHooks/"
# launchprof.h for C, and what Swift imports of the hooks (the USDT probe functions and their
# module map: LaunchprofApp fires the probes through them).
install -m 644 Sources/LaunchprofHooks/include/launchprof.h Sources/LaunchprofHooks/include/launchprof_usdt.h \
  Sources/LaunchprofHooks/include/module.modulemap "$swift_root/Sources/LaunchprofHooks/include/"
install -m 644 Sources/LaunchprofApp/*.swift "$swift_root/Sources/LaunchprofApp/"
cat > "$swift_root/Package.swift" <<'EOF'
// swift-tools-version:6.0
// launchprof's launch hooks for Swift apps, as installed by the launchprof package. Depend on it
// with `.package(path: "/usr/share/launchprof/launchprof-hooks")` and `.product(name: "LaunchprofApp",
// package: "launchprof-hooks")`; `import LaunchprofApp`.
import PackageDescription

let package = Package(
    name: "launchprof-hooks",
    products: [
        .library(name: "LaunchprofApp", targets: ["LaunchprofApp"]),
        .library(name: "LaunchprofHooks", targets: ["LaunchprofHooks"]),
    ],
    targets: [
        .target(name: "LaunchprofHooks"),
        .target(name: "LaunchprofApp", dependencies: ["LaunchprofHooks"]),
    ]
)
EOF

# A systemd unit, when the repository has one (launchprof monitor's).
if compgen -G "Packaging/systemd/*" > /dev/null; then
  mkdir -p "$root/usr/lib/systemd/system"
  install -m 644 Packaging/systemd/* "$root/usr/lib/systemd/system/"
fi

install -m 644 README.md "$root/usr/share/doc/launchprof/README.md"

# Depends: the shared libraries the binary links (dpkg-shlibdeps) and libunwind8 (dlopen).
shlibs=$(cd "$out" && mkdir -p debian && printf 'Source: launchprof\n\nPackage: launchprof\nArchitecture: any\n' > debian/control \
  && dpkg-shlibdeps -O root/usr/bin/launchprof 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
depends="libunwind8${shlibs:+, $shlibs}"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<EOF
Package: launchprof
Version: $version
Architecture: $arch
Maintainer: launchprof maintainers <maintainers@launchprof.invalid>
Installed-Size: $size
Depends: $depends
Recommends: libc6-dbg
Suggests: gcc
Section: devel
Priority: optional
Description: launch-performance profiler for Linux programs
 launchprof launches a program under ptrace or uprobes and times every phase
 from the spawn to the first frame: the exec, the dynamic loader, each
 library's initializers, main, the app's own phases and the first frame as
 the X server or Wayland compositor sees it. It explains the loader's work
 from the ELF files (inspect), models prewarming (prewarm), samples the main
 thread, writes MetricKit payloads, Perfetto traces and HTML reports, and
 gates CI on launch regressions (bench, compare).
 .
 libc6-dbg lets it split the loader's time into mapping and relocation; gcc
 is needed by 'launchprof calibrate', which builds its test programs.
EOF
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | xargs -0 md5sum > DEBIAN/md5sums)
dpkg-deb --root-owner-group --build "$root" "$deb" >&2
echo "package: $deb ($(du -h "$deb" | cut -f1); Depends: $depends)" >&2
$check || exit 0

# --- The check -----------------------------------------------------------------------------------
fail() { echo "package check: $*" >&2; exit 1; }

# Contents and dependencies, always.
contents=$(dpkg-deb -c "$deb")
for path in ./usr/bin/launchprof ./usr/share/man/man1/launchprof.1.gz ./usr/share/man/man1/launchprof.run.1.gz \
  ./usr/share/bash-completion/completions/launchprof ./usr/share/zsh/vendor-completions/_launchprof \
  ./usr/share/fish/vendor_completions.d/launchprof.fish ./usr/include/launchprof.h \
  ./usr/share/pkgconfig/launchprof.pc ./usr/share/launchprof/launchprof-hooks/Package.swift; do
  grep -q " $path\$" <<<"$contents" || fail "the package has no $path"
done
# By package name: libgcc-s1 (the C++ runtime's unwinder, which the Swift runtime linked in
# needs) is a run-time library, gcc the compiler is not.
depends_names=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/(.*//; s/[[:space:]]//g')
if grep -Eqx 'swift.*|libxcb.*|libx11.*|libwayland.*|libgtk.*|chromium.*|python.*|gcc(-[0-9]+)?|cpp(-[0-9]+)?' <<<"$depends_names"; then
  fail "Depends names a build, test or display library: $(dpkg-deb -f "$deb" Depends)"
fi
if ldd "$root/usr/bin/launchprof" 2>/dev/null | grep -E 'libswift|libFoundation|libdispatch|libxcb|libX'; then
  fail "launchprof links a library a machine without Swift or X does not have (above)"
fi

cache=${LAUNCHPROF_PACKAGE_CACHE:-/var/cache/launchprof-package}
# The root holds the package's Depends (and what reads its man page and completions): a root
# per list, so a binary that links a new library gets a root with it, as apt would install it.
root_packages=$(printf '%s\n' $depends_names libc6-dbg man-db bash-completion pkg-config | sort -u | paste -sd, -)
tarball="$cache/debian12-minbase-$(sha256sum <<<"$root_packages" | cut -c1-12).tar"
reason=
if [ "$(id -u)" -ne 0 ]; then
  reason="not root (chroot and debootstrap need it)"
elif ! command -v debootstrap > /dev/null; then
  reason="debootstrap is not installed"
elif [ ! -f "$tarball" ]; then
  echo "package check: making the clean Debian 12 root (once; kept in $cache)…" >&2
  mkdir -p "$cache"
  rm -f "$cache"/debian12-minbase*.tar   # roots made for an earlier list of dependencies
  staging=$(mktemp -d "$cache/root.XXXXXX")
  chmod 755 "$staging"   # the root's own mode: other users (man-db's) must traverse it
  if debootstrap --variant=minbase --include="$root_packages" \
      bookworm "$staging" http://deb.debian.org/debian > "$cache/debootstrap.log" 2>&1; then
    tar -C "$staging" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
  else
    reason="debootstrap failed (see $cache/debootstrap.log)"
  fi
  rm -rf "$staging"
fi
if [ -n "$reason" ]; then
  echo "package check: no clean root: $reason; checked the package's contents and dependencies only" >&2
  exit 0
fi

chroot_dir=$(mktemp -d /var/tmp/launchprof-package-check.XXXXXX)
cleanup() {
  # launchprof's uprobe holder, if one started in the root, releases its probes and exits
  # (LAUNCHPROF_UPROBE_LINGER=0); wait for it (and anything else living in the root) first.
  local living=
  for _ in $(seq 100); do
    living=$(for link in /proc/[0-9]*/root; do
      if [ "$(readlink "$link" 2>/dev/null)" = "$chroot_dir" ]; then echo "${link%/root}"; fi
    done)
    [ -z "$living" ] && break
    sleep 0.1
  done
  for process in $living; do kill -KILL "${process#/proc/}" 2>/dev/null || true; done
  umount "$chroot_dir/sys/kernel/tracing" 2>/dev/null || true
  umount "$chroot_dir/proc" 2>/dev/null || true
  rm -rf --one-file-system "$chroot_dir"
}
trap cleanup EXIT
tar -C "$chroot_dir" -xf "$tarball"
chmod 755 "$chroot_dir"
mount -t proc proc "$chroot_dir/proc"
mkdir -p "$chroot_dir/sys/kernel/tracing"
mount -t tracefs nodev "$chroot_dir/sys/kernel/tracing" 2>/dev/null || true
in_root() { chroot "$chroot_dir" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 LAUNCHPROF_UPROBE_LINGER=0 "$@"; }

in_root sh -c '! ls /usr/lib/swift /usr/share/swift 2>/dev/null && ! find / -xdev -name "libswiftCore*" | grep -q .' \
  || fail "the clean root has Swift in it"
cp "$deb" "$chroot_dir/tmp/"
in_root dpkg -i "/tmp/$(basename "$deb")" >&2 || fail "dpkg -i failed"
in_root launchprof --version >&2
run=$(in_root launchprof run -r 3 /bin/true) || fail "launchprof run /bin/true failed: $run"
for phase in exec loader.map loader.relocate main exit; do
  grep -q "^$phase " <<<"$run" || fail "launchprof run /bin/true shows no $phase phase: $run"
done
in_root launchprof run -r 3 --observer ptrace /bin/true > /dev/null || fail "launchprof run --observer ptrace /bin/true failed"
inspect=$(in_root launchprof inspect /bin/true) || fail "launchprof inspect /bin/true failed: $inspect"
grep -q 'libc.so.6' <<<"$inspect" || fail "inspect /bin/true does not list libc: $inspect"
in_root launchprof run -r 2 --sample --json /tmp/sampled.json /bin/true > /dev/null || fail "run --sample failed"
manual=$(in_root sh -c 'MANWIDTH=120 man launchprof 2>&1') || fail "man launchprof failed: $manual"
grep -q "Prewarm a program" <<<"$manual" || fail "man launchprof does not describe prewarm"
! grep -q "warning" <<<"$manual" || fail "man launchprof warns: $(grep warning <<<"$manual" | head -3)"
in_root bash -c 'source /usr/share/bash-completion/bash_completion; _completion_loader launchprof; complete -p launchprof' > /dev/null \
  || fail "bash does not load the completion"
in_root pkg-config --exists launchprof || fail "pkg-config does not find launchprof"
in_root dpkg -r launchprof > /dev/null || fail "dpkg -r failed"
echo "package check: installed with dpkg -i in a clean Debian 12 root (no Swift), ran run, run --sample and inspect on /bin/true, read the man page, loaded the bash completion, removed it" >&2
