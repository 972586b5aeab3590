#!/usr/bin/env python3
"""Differential fuzzing of launchprof's ELF acceptance against the kernel's own verdict.

Each input is a copy of a real program (/bin/true, /usr/bin/env) with its ELF header mutated —
cut short, section headers moved past the end, e_phnum 0 or 0xffff, another e_type or
e_phentsize, random header bytes, an interpreter that does not exist. The kernel's verdict is
execve's (as uid 65534, two seconds at most: a refused exec raises its errno here); launchprof's is
`launchprof inspect`'s exit status. A disagreement is an input the kernel runs (it exits 0, as the original does) that
inspect refuses (65, 66, 69), or one the kernel refuses that inspect reads as a program (0, 3); an
input that gets past execve and then dies (killed past the point of no return, refused by the
loader, crashed) may be judged either way.

    Fuzz/kernel-verdict.py [inputs] [seed]      (default 400 inputs, seed 1; LAUNCHPROF=binary)

Prints the figures (inputs, seconds, agreements by verdict, disagreements with their inputs kept
in Fuzz/artifacts/kernel-verdict-*) and exits 1 when there is any disagreement.
"""
import os, random, shutil, struct, subprocess, sys, tempfile, time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
launchprof = os.environ.get("LAUNCHPROF", os.path.join(root, ".build/debug/launchprof"))
count = int(sys.argv[1]) if len(sys.argv) > 1 else 400
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
bases = [p for p in ("/bin/true", "/usr/bin/env") if os.path.exists(p)]


def put(data, offset, fmt, value):
    struct.pack_into(fmt, data, offset, value)


def mutate(original):
    data = bytearray(original)
    kind = rng.randrange(9)
    if kind == 0:  # cut short: anywhere past the ELF header, often by a few bytes
        cut = rng.choice([1, 2, 8, 64, rng.randrange(1, len(data) - 64)])
        return bytes(data[: len(data) - cut]), f"cut by {cut} bytes"
    if kind == 1:
        value = rng.choice([len(data), len(data) + 1, len(data) - 1, 2**63, 2**64 - 1, rng.randrange(2**32)])
        put(data, 40, "<Q", value)
        return bytes(data), f"e_shoff {value}"
    if kind == 2:
        value = rng.choice([0, 1, 0xFFFF, rng.randrange(0x10000)])
        put(data, 60, "<H", value)
        return bytes(data), f"e_shnum {value}"
    if kind == 3:
        value = rng.choice([0, 1, 64, 73, 74, 1170, 1171, 0xFFFF])
        put(data, 56, "<H", value)
        return bytes(data), f"e_phnum {value}"
    if kind == 4:
        value = rng.choice([0, 32, 55, 57, 64, 0xFFFF])
        put(data, 54, "<H", value)
        return bytes(data), f"e_phentsize {value}"
    if kind == 5:
        value = rng.choice([0, 1, 4, 0xFE00, rng.randrange(0x10000)])
        put(data, 16, "<H", value)
        return bytes(data), f"e_type {value}"
    if kind == 6:  # the interpreter's path renamed: the kernel cannot open it
        start = data.find(b"/lib64/ld-linux-x86-64.so.2")
        if start < 0:
            start = data.find(b"ld-linux-x86-64.so.2")
        if start >= 0:
            data[start + 1 : start + 3] = b"zz"
        return bytes(data), "interpreter renamed"
    if kind == 7:
        value = rng.choice([0, 1, len(data), 2**64 - 1, rng.randrange(4096)])
        put(data, 32, "<Q", value)
        return bytes(data), f"e_phoff {value}"
    offsets = sorted(rng.sample(range(16, 64), rng.randrange(1, 4)))
    for offset in offsets:
        data[offset] = rng.randrange(256)
    return bytes(data), "header bytes " + ",".join(map(str, offsets)) + " changed"


def kernel_runs(path):
    """True when the program ran and exited 0 (as the original does), the errno's name when
    execve refused it, None when it got past execve but failed (killed by the kernel past the
    point of no return, the loader's refusal, a crash): either verdict of inspect's is fair."""
    try:
        done = subprocess.run([path], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=2, user=65534, group=65534, extra_groups=[], cwd="/")
        return True if done.returncode == 0 else None
    except subprocess.TimeoutExpired:
        return None
    except OSError as error:
        return os.strerror(error.errno)


def inspect_status(path):
    try:
        done = subprocess.run([launchprof, "inspect", path], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=60)
        return done.returncode, done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
    except subprocess.TimeoutExpired:
        return "hang", ["inspect did not finish in 60 s"]


def main():
    work = tempfile.mkdtemp(prefix="lp-kernel-verdict-")
    os.chmod(work, 0o755)
    artifacts = os.path.join(here, "artifacts")
    os.makedirs(artifacts, exist_ok=True)
    started = time.monotonic()
    tally = {}
    disagreements = []
    try:
        for index in range(count):
            base = rng.choice(bases)
            data, what = mutate(open(base, "rb").read())
            path = os.path.join(work, f"input-{index}")
            with open(path, "wb") as out:
                out.write(data)
            os.chmod(path, 0o755)
            kernel = kernel_runs(path)
            status, said = inspect_status(path)
            accepted = status in (0, 3)
            refused = status in (65, 66, 69)
            verdict = {True: "runs", None: "fails after exec"}.get(kernel, "refuses")
            key = verdict + "/" + ("inspected" if accepted else f"exit {status}")
            tally[key] = tally.get(key, 0) + 1
            if (kernel is True and not accepted) or (isinstance(kernel, str) and not refused):
                kept = os.path.join(artifacts, f"kernel-verdict-{index}")
                shutil.copyfile(path, kept)
                disagreements.append(f"{os.path.basename(base)} {what}: kernel "
                                     f"{'runs it' if kernel is True else 'refuses: ' + str(kernel)}, inspect exits {status}: "
                                     f"{said[0]} (kept as {kept})")
            os.unlink(path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    seconds = time.monotonic() - started
    print(f"kernel-verdict: {count} inputs in {seconds:.1f} s, {len(disagreements)} disagreement(s)")
    for key in sorted(tally):
        print(f"  kernel {key.replace('/', ', inspect ')}: {tally[key]}")
    for line in disagreements:
        print("  DISAGREES: " + line)
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
