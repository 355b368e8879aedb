#!/usr/bin/env python3
"""Builds the `sqlite-agentmem` wheel around an already compiled extension.

    build_wheel.py --lib target/dist/libagentmem0.so --cli target/dist/agentmem --version 0.3.0 --out dist/

No setuptools: a wheel is a zip with three metadata files, and writing them here keeps the
platform tag honest. The tag is computed from the library itself: its machine (ELF header)
and the newest glibc symbol version it and the `agentmem` command need (`objdump -T`), so a wheel
built on Debian 12
says `manylinux_2_34_x86_64` — pip on a system with an older glibc refuses it instead of
failing at load time. Other platforms are built the same way on their own machines (a
macOS wheel from `libagentmem0.dylib` tagged `macosx_11_0_arm64`, Windows from
`agentmem0.dll`); this script handles the Linux ELF case, which is what this project builds.
"""

import argparse
import base64
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
NAME = "sqlite_agentmem"
MACHINES = {0x3E: "x86_64", 0xB7: "aarch64"}


def platform_tag(*binaries):
    """The tag every one of `binaries` can run under: their machine and newest glibc."""
    machines, minors = set(), [17]
    for path in binaries:
        with open(path, "rb") as f:
            head = f.read(20)
        if head[:4] != b"\x7fELF":
            sys.exit(f"{path}: not an ELF file; build other platforms' wheels on those platforms")
        machine = MACHINES.get(int.from_bytes(head[18:20], "little"))
        if machine is None:
            sys.exit(f"{path}: unsupported machine {head[18:20].hex()}")
        machines.add(machine)
        symbols = subprocess.run(["objdump", "-T", path], check=True, capture_output=True, text=True).stdout
        minors += [int(m) for m in re.findall(r"GLIBC_2\.(\d+)", symbols)]
    if len(machines) != 1:
        sys.exit(f"the files are built for different machines: {sorted(machines)}")
    return f"manylinux_2_{max(minors)}_{machines.pop()}"


def stripped(path):
    """The file's bytes without symbols it does not need to run."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, os.path.basename(path))
        shutil.copyfile(path, copy)
        subprocess.run(["strip", "--strip-unneeded", copy], check=True)
        with open(copy, "rb") as f:
            return f.read()


def metadata(version):
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        f"Name: sqlite-agentmem\nVersion: {version}\n"
        "Summary: agentmem: the memory of an AI coding agent, as a SQLite extension\n"
        "Home-page: https://github.com/agentmem/agentmem\n"
        "License: MIT OR Apache-2.0\n"
        "License-File: LICENSE-MIT\nLicense-File: LICENSE-APACHE\n"
        "Requires-Python: >=3.8\n"
        "Provides-Extra: langgraph\n"
        "Requires-Dist: langgraph>=1; extra == 'langgraph'\n"
        "Classifier: Programming Language :: Python :: 3\n"
        "Classifier: Operating System :: POSIX :: Linux\n"
        "Classifier: Topic :: Database\n"
        "Description-Content-Type: text/markdown\n\n" + readme
    )


def record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


EXECUTABLE = {f"{NAME}/agentmem0.so", f"{NAME}/bin/agentmem"}


def build(lib, cli, version, out):
    tag = platform_tag(lib, cli)
    dist_info = f"{NAME}-{version}.dist-info"
    files = {}
    for module in ["__init__.py", "_cli.py", "langgraph.py"]:
        with open(os.path.join(HERE, NAME, module), encoding="utf-8") as f:
            files[f"{NAME}/{module}"] = f.read().replace("@VERSION@", version).encode()
    files[f"{NAME}/py.typed"] = b""
    files[f"{NAME}/agentmem0.so"] = stripped(lib)
    files[f"{NAME}/bin/agentmem"] = stripped(cli)
    # `pip install` puts an `agentmem` command on the PATH that runs the binary.
    files[f"{dist_info}/entry_points.txt"] = (
        f"[console_scripts]\nagentmem = {NAME}._cli:main\n"
    ).encode()
    for lic in ["LICENSE-MIT", "LICENSE-APACHE"]:
        with open(os.path.join(ROOT, lic), "rb") as f:
            files[f"{dist_info}/{lic}"] = f.read()
    files[f"{dist_info}/METADATA"] = metadata(version).encode()
    files[f"{dist_info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: agentmem build_wheel.py\nRoot-Is-Purelib: false\nTag: py3-none-{tag}\n"
    ).encode()
    record = [record_line(p, d) for p, d in files.items()] + [f"{dist_info}/RECORD,,"]
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()

    os.makedirs(out, exist_ok=True)
    wheel = os.path.join(out, f"{NAME}-{version}-py3-none-{tag}.whl")
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            # A regular file's type bits too: pip keeps the mode of regular files only.
            mode = 0o755 if path in EXECUTABLE else 0o644
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return wheel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True, help="the compiled libagentmem0.so")
    ap.add_argument("--cli", required=True, help="the compiled agentmem command")
    ap.add_argument("--version", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    print(build(a.lib, a.cli, a.version, a.out))


if __name__ == "__main__":
    main()
