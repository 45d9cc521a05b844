"""Helpers of ``make wheelhouse`` (issue 29 item 3): an offline wheelhouse for air-gapped nodes.

Standard library only (it runs before any venv exists). Commands:

* ``native-platform`` — this machine's most specific manylinux tag (``manylinux_2_36_x86_64``
  from glibc 2.36), the default of ``WHEEL_PLATFORM``.
* ``platform-flags TAG`` — pip's ``--platform`` matches tags exactly, so a wheelhouse for
  ``manylinux_2_28_x86_64`` must also accept every older glibc (``manylinux_2_5`` …
  ``manylinux_2_27``) and the legacy aliases (``manylinux1``, ``manylinux2010``,
  ``manylinux2014``); prints one ``--platform`` flag per tag.
* ``stub NAME VERSION DIR`` — writes ``NAME-VERSION+wheelhouse.stub-py3-none-any.whl``, a wheel
  with no files and no dependencies, and prints the constraint ``NAME==VERSION+wheelhouse.stub``
  that makes pip's resolver take it: the resolution then never downloads torch (a CUDA build is
  GBs) nor its CUDA libraries, which the node already has. The stub never enters the wheelhouse.
* ``sdists REPORT`` — ``name==version`` of the packages the resolution found only as source
  (``connection_pool``): ``make wheelhouse`` builds their wheels first (pure Python), since a
  resolution for another platform takes wheels only.
* ``pins REPORT --exclude 'torch nvidia-* triton'`` — the ``name==version`` of every package of a
  ``pip install --dry-run --report`` resolution, without the excluded ones (shell patterns on
  the normalised name) and without ppaudit itself (installed from the checkout).

Exit status 2 on a bad argument or report.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import sys

LEGACY = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


def _normalise(name: str) -> str:
    """PEP 503 name: lower case, runs of ``-_.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def native_platform() -> str:
    """This machine's manylinux tag from its glibc (``linux_<arch>`` without glibc)."""
    arch = os.uname().machine
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError):
        libc = ""
    m = re.match(r"glibc (\d+)\.(\d+)", libc)
    return f"manylinux_{m[1]}_{m[2]}_{arch}" if m else f"linux_{arch}"


def platform_tags(tag: str) -> list[str]:
    """Every platform tag a node with ``tag`` runs: ``manylinux_2_Y_arch`` down to ``manylinux_2_5``
    and the legacy aliases at or below it; other tags (``linux_x86_64``, ``macosx_…``) as given.

    >>> platform_tags("manylinux_2_17_x86_64")[:2], platform_tags("manylinux_2_17_x86_64")[-2:]
    (['manylinux_2_17_x86_64', 'manylinux_2_16_x86_64'], ['manylinux2010_x86_64', 'manylinux2014_x86_64'])
    """
    m = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", tag)
    legacy = re.fullmatch(r"(manylinux1|manylinux2010|manylinux2014)_(\w+)", tag)
    if legacy:
        (major, minor), arch = LEGACY[legacy[1]], legacy[2]
    elif m:
        major, minor, arch = int(m[1]), int(m[2]), m[3]
    elif re.fullmatch(r"[a-z]+[\w.]*_\w+", tag):
        return [tag]
    else:
        raise ValueError(f"WHEEL_PLATFORM must be a wheel platform tag such as manylinux_2_28_x86_64, got {tag!r}")
    if major != 2:
        raise ValueError(f"WHEEL_PLATFORM {tag!r}: only glibc 2 manylinux tags are known")
    tags = [f"manylinux_2_{y}_{arch}" for y in range(minor, 4, -1)]
    return tags + [f"{name}_{arch}" for name, (_, y) in LEGACY.items() if y <= minor]


def pins(report: dict, exclude: list[str]) -> list[str]:
    """``name==version`` lines of a pip ``--report`` resolution, excluded names and ppaudit left out."""
    out = []
    for item in _items(report):
        meta = item.get("metadata") or {}
        name, version = _normalise(str(meta.get("name", ""))), str(meta.get("version", ""))
        if not name or not version:
            raise ValueError(f"report item without name/version: {item.get('download_info', {}).get('url', item)!r}")
        if name == "ppaudit" or STUB_LABEL in version or any(fnmatch.fnmatch(name, _normalise(p)) for p in exclude):
            continue
        out.append(f"{name}=={version}")
    return sorted(out)


STUB_LABEL = "wheelhouse.stub"


def write_stub(name: str, version: str, folder: str) -> str:
    """An empty wheel ``name==version+wheelhouse.stub`` (no files, no dependencies) in ``folder``;
    returns the constraint line that selects it."""
    import zipfile

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name) or not re.fullmatch(r"\d+(\.\d+)*", version):
        raise ValueError(f"stub needs a package name and a release version such as 2.13.0, got {name!r} {version!r}")
    full = f"{version}+{STUB_LABEL}"
    dist = f"{re.sub(r'[-.]+', '_', name)}-{full}"
    files = {
        f"{dist}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {full}\n",
        f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: ppaudit-wheelhouse\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{dist}.dist-info/RECORD"] = "".join(f"{k},,\n" for k in files) + f"{dist}.dist-info/RECORD,,\n"
    os.makedirs(folder, exist_ok=True)
    with zipfile.ZipFile(os.path.join(folder, f"{dist}-py3-none-any.whl"), "w") as zf:
        for k, v in files.items():
            zf.writestr(k, v)
    return f"{name}=={full}"


def _items(report: dict) -> list[dict]:
    if not isinstance(report, dict) or not isinstance(report.get("install"), list):
        raise ValueError("not a pip install --report file (needs an 'install' list)")
    return report["install"]


def sdists(report: dict) -> list[str]:
    """``name==version`` of the resolved packages that came as source distributions (not ppaudit)."""
    out = []
    for item in _items(report):
        meta, url = item.get("metadata") or {}, str((item.get("download_info") or {}).get("url", ""))
        name = _normalise(str(meta.get("name", "")))
        if name != "ppaudit" and not url.endswith(".whl"):
            out.append(f"{name}=={meta.get('version')}")
    return sorted(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("native-platform")
    pf = sub.add_parser("platform-flags")
    pf.add_argument("tag")
    st = sub.add_parser("stub")
    st.add_argument("name")
    st.add_argument("version")
    st.add_argument("folder")
    sd = sub.add_parser("sdists")
    sd.add_argument("report")
    pp = sub.add_parser("pins")
    pp.add_argument("report")
    pp.add_argument("--exclude", default="", help="space-separated shell patterns of package names")
    args = ap.parse_args(argv)
    try:
        if args.command == "native-platform":
            print(native_platform())
        elif args.command == "platform-flags":
            print(" ".join(f"--platform {t}" for t in platform_tags(args.tag)))
        elif args.command == "stub":
            print(write_stub(args.name, args.version, args.folder))
        else:
            with open(args.report, encoding="utf-8") as fh:
                report = json.load(fh)
            lines = sdists(report) if args.command == "sdists" else pins(report, args.exclude.split())
            print("\n".join(lines))
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
