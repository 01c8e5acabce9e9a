#!/usr/bin/env python3
"""tutorial_check.py BUILD_DIR SOURCE_DIR CMAKE: the ctest test docs/tutorial.

Runs docs/tutorial.md as a reader would: installs the build into a temporary prefix, puts its
bin/ on PATH and its pkg-config files on PKG_CONFIG_PATH, and in an empty directory, in the order
of the page,
  - writes each fenced block whose info string names a file (```python file=kernels.py),
  - runs each ```sh block with bash -e (a ```sh gpu block only where an NVIDIA driver is present),
  - compares the output of the block before with each ```text output block: line by line, where
    `...` in an expected line stands for any text (addresses).
Exits 1 with the block's line in the page on the first difference."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(.*)$")


def blocks(text):
    """(line, info, body) of each fenced block."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m and m.group(1).strip():
            start, info, body = i + 1, m.group(1).strip(), []
            i += 1
            while i < len(lines) and lines[i] != "```":
                body.append(lines[i])
                i += 1
            yield start, info, "\n".join(body) + "\n"
        i += 1


def matches(expected, got):
    exp, out = expected.rstrip("\n").split("\n"), got.rstrip("\n").split("\n")
    if len(exp) != len(out):
        return False
    for e, o in zip(exp, out):
        pattern = ".*".join(re.escape(part) for part in e.split("..."))
        if not re.fullmatch(pattern, o):
            return False
    return True


def has_gpu():
    return os.path.exists("/dev/nvidiactl") and shutil.which("nvidia-smi") is not None


def main():
    build, source, cmake = sys.argv[1:4]
    page = os.path.join(source, "docs", "tutorial.md")
    with tempfile.TemporaryDirectory(prefix="tric-tutorial.") as tmp:
        prefix, work = os.path.join(tmp, "prefix"), os.path.join(tmp, "work")
        os.mkdir(work)
        subprocess.run([cmake, "--install", build, "--prefix", prefix], check=True,
                       stdout=subprocess.DEVNULL)
        libdir = os.path.dirname(os.path.dirname(
            subprocess.run(["find", prefix, "-name", "tric.pc"], check=True,
                           capture_output=True, text=True).stdout.split("\n")[0]))
        env = dict(os.environ)
        env["PATH"] = os.path.join(prefix, "bin") + os.pathsep + env.get("PATH", "")
        env["PKG_CONFIG_PATH"] = os.path.join(libdir, "pkgconfig")
        env["TRIC_CACHE_DIR"] = os.path.join(tmp, "cache")
        env.pop("TRIC_DEVICE", None)
        last_output, last_ran = None, False
        with open(page, encoding="utf-8") as f:
            text = f.read()
        nblocks = 0
        for line, info, body in blocks(text):
            words = info.split()
            files = [w[5:] for w in words if w.startswith("file=")]
            if files:
                with open(os.path.join(work, files[0]), "w", encoding="utf-8") as out:
                    out.write(body)
            elif words[0] == "sh":
                last_ran = "gpu" not in words[1:] or has_gpu()
                if not last_ran:
                    print(f"tutorial.md:{line}: skipped (no GPU)")
                    continue
                r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", body], cwd=work, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                last_output = r.stdout
                if r.returncode != 0:
                    print(f"tutorial.md:{line}: the commands failed ({r.returncode}):\n{body}"
                          f"{r.stdout}")
                    return 1
            elif words[:2] == ["text", "output"]:
                if not last_ran:
                    continue
                if last_output is None or not matches(body, last_output):
                    print(f"tutorial.md:{line}: the output differs; expected:\n{body}got:\n"
                          f"{last_output}")
                    return 1
            else:
                continue
            nblocks += 1
        print(f"tutorial check: {nblocks} blocks ran or were written as the page says")
    return 0


if __name__ == "__main__":
    sys.exit(main())
