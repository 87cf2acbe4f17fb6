#!/usr/bin/env python3
"""The similarity engine on Debian's own nodejs and npm of Debian 12 and 13: long (minutes, cached).

For each release, a minimal Debian made by debootstrap, with Debian's nodejs, npm and ca-certificates
installed by its apt-get (cached as /var/cache/scalebook-tests/similarity-RELEASE.tar; the first run
downloads it), and in it,
run with bubblewrap: the engine's npm packages installed by that npm exactly as the lockfile pins
them (npm ci, as loop/packages.py runs it), then compare.mjs on chapter 4's known files (reference,
variant, independent solutions, disguised copies) with that nodejs. Its answer must be the one this
machine's node gives, byte for byte. As root only (debootstrap); exits 77 (skipped) otherwise.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from maintainer.disguise import DISGUISES
from scalebook.course import all_chapters
from scalebook.grading import similarity
from scalebook.loop.packages import npm_modules
from tests.harness import ROOT, expect, finish

CACHE = Path("/var/cache/scalebook-tests")
NPM_FILES = ("package.json", "package-lock.json")
HOST_CAS = "/etc/ssl/certs/ca-certificates.crt"
RELEASES = ("bookworm", "trixie")
CHAPTER = "04-causal-masking"
INDEPENDENT = ROOT / "tools" / "tests" / "grading" / "similarity" / "independent"
NPM_CI = ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"]  # as loop/packages.py runs it


def base_system(release: str) -> Path:
    """The cached tar of a minimal RELEASE with Debian's nodejs and npm, made once."""
    cached = CACHE / f"similarity-{release}.tar"
    if cached.exists():
        return cached
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"scalebook-{release}-", dir=CACHE) as temp:
        root = Path(temp) / "root"
        done = subprocess.run(["debootstrap", "--variant=minbase", release, str(root)], capture_output=True,
                              text=True, timeout=3000)
        if done.returncode != 0:
            raise RuntimeError(f"debootstrap {release} failed: {(done.stdout + done.stderr)[-1500:]}")
        (root / "engine").mkdir()
        done = in_system(root, ["sh", "-c", "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "
                                            "--no-install-recommends nodejs npm ca-certificates && apt-get clean"])
        if done.returncode != 0:
            raise RuntimeError(f"apt-get install nodejs npm in {release} failed: {(done.stdout + done.stderr)[-1500:]}")
        partial = cached.with_suffix(".partial")
        with tarfile.open(partial, "w") as tar:
            tar.add(root, arcname=".")
        partial.rename(cached)
    return cached


def in_system(root: Path, command: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """COMMAND run in ROOT with bubblewrap: this machine's network and certificate authorities (a
    proxy between it and npm's registry may sign with one of its own), nothing else of it."""
    env = dict(env or {})
    trust = []  # this machine's certificate authorities, where its way to the registry needs one of its own
    if Path(HOST_CAS).is_file():
        trust = ["--ro-bind", HOST_CAS, HOST_CAS]
        env.setdefault("NODE_EXTRA_CA_CERTS", HOST_CAS)
    setenv = [a for key, value in env.items() for a in ("--setenv", key, value)]
    return subprocess.run(["bwrap", "--bind", str(root), "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
                           "--ro-bind", "/etc/resolv.conf", "/etc/resolv.conf", *trust, "--unshare-pid", "--die-with-parent",
                           "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/root",
                           *setenv, "--chdir", "/engine", *command], capture_output=True, text=True, timeout=1200)


def known_jobs() -> list[dict]:
    chapter = next(c for c in all_chapters() if c.folder == CHAPTER)
    contract = similarity.contract_texts(ROOT / "chapters" / CHAPTER, ROOT / "lib" / "include")
    jobs = []
    for index, (exercise, functions) in enumerate(chapter.functions_of().items()):
        relative = f"{CHAPTER}/{chapter.source_of(exercise)}"
        reference = (ROOT / "solutions" / relative).read_text()
        files = {"ref": reference, **{name: disguise(reference) for name, disguise in DISGUISES.items()}}
        for path in [ROOT / "solutions" / CHAPTER / "variants" / chapter.source_of(exercise),
                     *(folder / relative for folder in sorted(INDEPENDENT.iterdir()))]:
            if path.exists():
                files[str(path.relative_to(ROOT))] = path.read_text()
        jobs.append(similarity.job(files, {}, (ROOT / "exercises" / relative).read_text(), functions, contract, index))
    return jobs


def main() -> int:
    if os.geteuid() != 0 or not shutil.which("debootstrap") or not shutil.which("bwrap"):
        print("skipped: needs root, debootstrap and bubblewrap")
        return 77
    if similarity.available():
        print(f"skipped: {similarity.available()}")
        return 77
    jobs = json.dumps(known_jobs())
    here = subprocess.run(["node", str(similarity.ENGINE)], input=jobs, capture_output=True, text=True,
                          env=dict(os.environ, SCALEBOOK_SIMILARITY_MODULES=str(npm_modules(similarity.ENGINE.parent))))
    expect(here.returncode == 0, f"this machine's node compares chapter 4's known files: {here.stderr[-300:]}")
    pairs = sum(len(answer["pairs"]) for answer in json.loads(here.stdout or "[]"))
    for release in RELEASES:
        with tempfile.TemporaryDirectory(prefix=f"scalebook-similarity-{release}-") as temp:
            root = Path(temp)
            with tarfile.open(base_system(release)) as tar:
                tar.extractall(root, filter="fully_trusted") if hasattr(tarfile, "data_filter") else tar.extractall(root)
            engine = root / "engine"
            engine.mkdir(exist_ok=True)
            for name in NPM_FILES:
                shutil.copyfile(ROOT / similarity.ENGINE.parent.relative_to(ROOT) / name, engine / name)
            shutil.copyfile(similarity.ENGINE, engine / "compare.mjs")
            (engine / "jobs.json").write_text(jobs)
            version = in_system(root, ["sh", "-c", "node --version; dpkg-query -W -f='${Version}' nodejs npm"])
            print(f"{release}: node {version.stdout.strip()}")
            expect(version.returncode == 0 and "nodesource" not in version.stdout,
                   f"{release}: Debian's own nodejs and npm ({' '.join(version.stdout.split())})")
            installed = in_system(root, NPM_CI)
            expect(installed.returncode == 0, f"{release}: Debian's npm installs the lockfile's packages "
                                              f"(npm ci): {(installed.stdout + installed.stderr)[-600:]}")
            there = in_system(root, ["sh", "-c", "node compare.mjs < jobs.json"],
                              {"SCALEBOOK_SIMILARITY_MODULES": "/engine/node_modules"})
            expect(there.returncode == 0 and there.stdout == here.stdout,
                   f"{release}: Debian's nodejs gives this machine's answer, byte for byte ({pairs} pairs): "
                   f"{there.stderr[-600:]}")
    return finish("similarity: the engine installs and answers alike on Debian 12's and 13's own nodejs")


if __name__ == "__main__":
    sys.exit(main())
