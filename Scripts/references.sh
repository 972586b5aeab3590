#!/usr/bin/env bash
# Generates launchprof's reference files from its command definitions, and checks them:
#   DIR/man/launchprof.1             every subcommand and option on one page (`man ./launchprof.1`)
#   DIR/man/launchprof.SUBCOMMAND.1  a page per subcommand (`man launchprof.run` once installed)
#   DIR/completions/launchprof.bash, _launchprof (zsh), launchprof.fish
#
#   bash Scripts/references.sh DIR [LAUNCHPROF]   (LAUNCHPROF: the binary to describe; default
#                                                  the debug build, built if needed)
#
# The man pages come from swift-argument-parser's own generator (Tools/generate-manual, what its
# generate-manual plugin runs), built from the package's resolved checkout so that it reads the
# `--experimental-dump-help` of the same parser version; the plugin itself is not used because it
# builds every product again in its own configuration. The completions are the parser's
# `--generate-completion-script`. The check: the rendered man page names every subcommand and
# every option spelling the parser knows, and bash completes subcommands and options.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bash Scripts/references.sh DIR [LAUNCHPROF]}
bin=${2:-}
if [ -z "$bin" ]; then
  swift build --product launchprof >&2
  bin="$(swift build --show-bin-path)/launchprof"
fi
bin=$(realpath "$bin")
[ -x "$bin" ] || { echo "references: $bin is not an executable" >&2; exit 66; }

parser=.build/checkouts/swift-argument-parser
[ -d "$parser" ] || swift package resolve >&2
# Built in a copy: a build inside .build/checkouts would write into SwiftPM's own checkout.
tool=.build/generate-manual
rm -rf "$tool/swift-argument-parser"
mkdir -p "$tool/swift-argument-parser"
git -C "$parser" archive HEAD | tar -x -C "$tool/swift-argument-parser"
swift build --package-path "$tool/swift-argument-parser" --scratch-path "$tool/build" --product generate-manual >&2
generate="$tool/build/debug/generate-manual"

# The page's date: the commit's, so the same sources give the same page.
date=$(git log -1 --format=%cs 2>/dev/null || date -u +%F)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/single" "$work/multi" "$out/man" "$out/completions"
"$generate" "$bin" --date "$date" --output-directory "$work/single"
"$generate" "$bin" --date "$date" --multi-page --output-directory "$work/multi"
# An empty line is not mdoc (groff warns of each when the page is read): a paragraph is `.Pp`.
sed -i 's/^$/.Pp/' "$work/single/launchprof.1" "$work/multi"/launchprof.*.1
cp "$work/single/launchprof.1" "$out/man/launchprof.1"
for page in "$work/multi"/launchprof.*.1; do
  cp "$page" "$out/man/"
done
"$bin" --generate-completion-script bash > "$out/completions/launchprof.bash"
"$bin" --generate-completion-script zsh > "$out/completions/_launchprof"
"$bin" --generate-completion-script fish > "$out/completions/launchprof.fish"

# The check: the one page describes every subcommand, and each subcommand's page (and the one
# page) shows every option spelling the parser knows, from the parser's own description of itself.
"$bin" --experimental-dump-help > "$work/help.json"
for page in "$out/man"/*.1; do
  MANWIDTH=200 man -l "$page" 2> "$work/warnings" | col -b > "$work/$(basename "$page").txt"
  if [ -s "$work/warnings" ]; then
    echo "references: man warns reading $(basename "$page"):" >&2
    head -5 "$work/warnings" >&2
    exit 1
  fi
done
python3 - "$work/help.json" "$work" <<'EOF'
import json, os, re, sys
help, rendered = json.load(open(sys.argv[1])), sys.argv[2]
def text(page):
    path = os.path.join(rendered, page + ".txt")
    return re.sub(r"\s+", " ", open(path).read()) if os.path.exists(path) else None
whole, problems = text("launchprof.1"), []
for command in help["command"].get("subcommands", []):
    name = command["commandName"]
    if name == "help":  # the parser's own `help` command, described by the root page
        continue
    abstract = re.sub(r"\s+", " ", command.get("abstract", ""))
    if abstract[:50] not in whole:
        problems.append(f"launchprof.1 does not describe '{name}' ({abstract[:50]}…)")
    own = text(f"launchprof.{name}.1")
    if own is None:
        problems.append(f"no page launchprof.{name}.1")
        continue
    for argument in command.get("arguments", []):
        for spelling in argument.get("names", []):
            flag = ("--" if spelling["kind"] in ("long", "longWithSingleDash") else "-") + spelling["name"]
            shown = re.compile(r"(^|[\s\[,])" + re.escape(flag) + r"(?![\w-])")
            if not shown.search(own) or not shown.search(whole):
                problems.append(f"'{name}' has {flag}, which its pages do not show")
for problem in problems:
    print("references:", problem, file=sys.stderr)
sys.exit(1 if problems else 0)
EOF

# bash loads the script and completes a subcommand and an option of it.
completed=$(bash -c '
  source "$1"
  COMP_WORDS=(launchprof ru); COMP_CWORD=1; COMP_LINE="launchprof ru"; COMP_POINT=${#COMP_LINE}
  _launchprof launchprof ru launchprof; echo "${COMPREPLY[*]}"
  COMP_WORDS=(launchprof run --rea); COMP_CWORD=2; COMP_LINE="launchprof run --rea"; COMP_POINT=${#COMP_LINE}
  _launchprof launchprof --rea run; echo "${COMPREPLY[*]}"
' _ "$out/completions/launchprof.bash")
grep -qx run <<<"$(head -1 <<<"$completed" | tr ' ' '\n')" || { echo "references: bash does not complete 'ru' to 'run' ($completed)" >&2; exit 1; }
grep -q -- --ready <<<"$(tail -1 <<<"$completed")" || { echo "references: bash does not complete 'run --rea' ($completed)" >&2; exit 1; }
# zsh and fish (where installed: `setup.sh package` installs them) read theirs; fish completes.
if command -v zsh >/dev/null; then zsh -n "$out/completions/_launchprof"; fi
if command -v fish >/dev/null; then
  fish -n "$out/completions/launchprof.fish"
  fish -c 'source $argv[1]; complete -C "launchprof ru"' "$out/completions/launchprof.fish" | grep -q '^run' \
    || { echo "references: fish does not complete 'ru' to 'run'" >&2; exit 1; }
fi
echo "references: $(ls "$out/man" | wc -l) man pages and 3 completion scripts in $out" >&2
