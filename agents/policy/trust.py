"""Which stable-baselines3 checkpoints may be unpickled: the ones this machine's training wrote.

An SB3 checkpoint (`.zip`: a run's checkpoints/model_<N>_steps.zip, final_model.zip, a league's
checkpoints) is a training format: its `data` part holds cloudpickled Python objects (the
schedules, the spaces), and loading it runs whatever they say. A run directory's layout proves
nothing (anyone can write a config.yaml beside a hostile zip), so the check is a signature:
every checkpoint this project saves (`save_checkpoint`: train.py, league.py, exploit.py) gets a
`<name>.zip.sig` beside it, an HMAC-SHA256 of the file's bytes under a key that never leaves
this machine (`key_path()`: $RUNE_ENV_KEY_FILE, else $XDG_CONFIG_HOME/rune-env/checkpoint.key,
else ~/.config/rune-env/checkpoint.key; 32 random bytes, made on the first save, mode 0600).
A checkpoint loads (`check_checkpoint`) if its signature matches under this key, or if pickles
are trusted for this process: `--trust-pickle` on the scripts, which sets RUNE_ENV_TRUST_PICKLE=1
(inherited by the scripts' worker processes and Ray's local workers). A checkpoint from
elsewhere (a colleague's run, a run of an older rune-env, another machine of a cluster that does
not share the key file) needs that switch; an exported policy (`.pt`) never does.

Saving is atomic too: the zip goes to a temp name in the same folder, its signature is written,
then the zip is renamed, so the name a resume reads never holds half a checkpoint.

RLlib's checkpoints (train_rllib.py's checkpoints/algo_<steps>/) are directories of pickles, and
restoring one unpickles them all. Such a directory is signed as a whole (`sign_directory`): its
`<name>.sig` lists every file's relative path, size and HMAC, itself under an HMAC of that list,
and it loads (`check_checkpoint_dir`) only if every file is listed, matches, and none is added.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

KEY_ENV = "RUNE_ENV_KEY_FILE"
TRUST_ENV = "RUNE_ENV_TRUST_PICKLE"
SIGNATURE_FORMAT = "rune-env-checkpoint-signature"
SIGNATURE_SUFFIX = ".sig"
_DOMAIN = b"rune-env checkpoint v1\0"    # so the key signs nothing but checkpoints
_MAX_SIGNATURE_BYTES = 4096
_MAX_DIRECTORY_SIGNATURE_BYTES = 1 << 20     # an RLlib checkpoint's listing: a few dozen files


class UntrustedCheckpoint(ValueError):
    """A checkpoint that would be unpickled without a reason to trust it."""


def key_path() -> Path:
    if os.environ.get(KEY_ENV):
        return Path(os.environ[KEY_ENV])
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "rune-env" / "checkpoint.key"


def _read_key(path: Path) -> bytes | None:
    try:
        text = path.read_text(encoding="ascii").strip()
        return bytes.fromhex(text) if len(text) == 64 else None
    except (OSError, ValueError):
        return None


def _key(create: bool) -> bytes | None:
    """This machine's key; with `create`, made (once, whichever process is first) if missing."""
    path = key_path()
    key = _read_key(path)
    if key is not None or not create:
        return key
    if path.exists():
        raise OSError(f"{path}: not a rune-env checkpoint key (64 hex digits); move it away and a "
                      f"new one is made (checkpoints signed with the old one then need --trust-pickle)")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(secrets.token_hex(32) + "\n")
        try:
            os.link(tmp, path)         # atomic and refuses to replace: two first saves agree
        except FileExistsError:
            pass
    finally:
        tmp.unlink(missing_ok=True)
    key = _read_key(path)
    if key is None:
        raise OSError(f"{path}: cannot read the checkpoint key just made")
    return key


def _digest(key: bytes, path: Path) -> tuple[str, int]:
    mac = hmac.new(key, _DOMAIN, hashlib.sha256)
    size = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            mac.update(chunk)
            size += len(chunk)
    return mac.hexdigest(), size


def signature_path(path: Path) -> Path:
    return path.with_name(path.name + SIGNATURE_SUFFIX)


def write_signature(data_file: Path, named: Path, run: str | None = None) -> None:
    """Sign the bytes of `data_file` as the checkpoint `named` (its signature file beside it);
    `run`: the identity of the training run that saved it (agents/train/resume.py's
    run_identity), kept in the signature, where the file's bytes cannot be changed without
    unsigning it."""
    digest, size = _digest(_key(create=True), data_file)
    _write_signature(named, hmac_sha256=digest, bytes=size,
                     **({} if run is None else {"run": run}))


def _write_signature(named: Path, **fields) -> None:
    """The signature file of the checkpoint (file or directory) `named`, with `fields`."""
    from rune_env.files import write_text_atomic
    write_text_atomic(signature_path(Path(named)), json.dumps(
        {"format": SIGNATURE_FORMAT, "version": 1, **fields,
         "note": "written by rune-env's training on the machine whose key signed it "
                 "(agents/policy/trust.py)"}, indent=1) + "\n")


def _read_signature(path: Path, limit: int = _MAX_SIGNATURE_BYTES) -> dict | None:
    """The signature of the checkpoint `path` (a mapping of this format, at most `limit`
    bytes), or None."""
    sig = signature_path(Path(path))
    try:
        if sig.stat().st_size > limit:
            return None
        data = json.loads(sig.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    ok = (isinstance(data, dict) and data.get("format") == SIGNATURE_FORMAT
          and isinstance(data.get("hmac_sha256"), str))
    return data if ok else None


def signed_run(path: Path) -> str | None:
    """The run identity a checkpoint's signature names (None: none named, or no signature)."""
    run = (_read_signature(path) or {}).get("run")
    return run if isinstance(run, str) else None


def is_signed(path: Path) -> bool:
    """Whether `path`'s signature file matches its bytes under this machine's key."""
    key, data = _key(create=False), _read_signature(path)
    if key is None or data is None:
        return False
    try:
        digest, size = _digest(key, Path(path))
    except OSError:
        return False
    return data.get("bytes") == size and hmac.compare_digest(data["hmac_sha256"], digest)


def _listing(key: bytes, folder: Path) -> dict[str, list]:
    """Every regular file under `folder` (relative POSIX path -> [HMAC, bytes]); a symlink or
    anything but a file or a folder is listed as such, so it never matches a signature."""
    out: dict[str, list] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            out[rel] = ["not a regular file", -1]
        elif path.is_file():
            out[rel] = list(_digest(key, path))
    return out


def _listing_mac(key: bytes, files: dict) -> str:
    return hmac.new(key, _DOMAIN + json.dumps(files, sort_keys=True).encode(),
                    hashlib.sha256).hexdigest()


def sign_directory(folder: Path, named: Path) -> None:
    """Sign the files of the directory `folder` as the checkpoint directory `named` (its
    `<name>.sig` beside it): each file's HMAC and size, and an HMAC of the whole list."""
    key = _key(create=True)
    files = _listing(key, Path(folder))
    _write_signature(named, kind="directory", files=files, hmac_sha256=_listing_mac(key, files))


def is_signed_directory(folder: Path) -> bool:
    """Whether the directory `folder` is exactly the one its signature lists, under this key."""
    key = _key(create=False)
    data = _read_signature(folder, _MAX_DIRECTORY_SIGNATURE_BYTES)
    if key is None or data is None or data.get("kind") != "directory" or not Path(folder).is_dir():
        return False
    try:
        files = _listing(key, Path(folder))
    except OSError:
        return False
    return (data.get("files") == files
            and hmac.compare_digest(data["hmac_sha256"], _listing_mac(key, files)))


def check_checkpoint_dir(folder) -> None:
    """Raise UntrustedCheckpoint unless the RLlib checkpoint directory `folder` may be restored
    (signed here as it is, or pickles trusted)."""
    if not (pickle_trusted() or is_signed_directory(Path(folder))):
        raise UntrustedCheckpoint(
            f"{folder}: an RLlib checkpoint is a directory of pickled Python, which runs code when "
            f"restored, and this one is not exactly what a training run on this machine saved (no "
            f"valid {Path(folder).name}{SIGNATURE_SUFFIX} beside it, or a file in it changed, "
            f"added or missing); pass --trust-pickle if you trust whoever made it")


def pickle_trusted() -> bool:
    return os.environ.get(TRUST_ENV) == "1"


def trust_pickle() -> None:
    """Trust pickled checkpoints in this process and the processes it starts (--trust-pickle)."""
    os.environ[TRUST_ENV] = "1"


def untrusted_message(path) -> str:
    return (f"{path}: a stable-baselines3 checkpoint holds pickled Python, which runs code when "
            f"loaded, and this one was not saved by a training run on this machine (no valid "
            f"{Path(path).name}{SIGNATURE_SUFFIX} beside it); share policies as exported .pt files "
            f"(scripts/export_policy.py), or pass --trust-pickle if you trust whoever made it")


def check_checkpoint(path) -> None:
    """Raise UntrustedCheckpoint unless `path` may be unpickled (signed here, or trusted)."""
    if not (pickle_trusted() or is_signed(Path(path))):
        raise UntrustedCheckpoint(untrusted_message(path))


def save_checkpoint(model, path, run: str | None = None) -> Path:
    """`model.save(path)` atomically, signed: the zip is written to a temp name in the same
    folder and signed, then renamed to `path` (a kill leaves the old file or none, never half);
    `run`: the saving run's identity, kept in the signature (`signed_run`)."""
    path = Path(path)
    if path.suffix != ".zip":
        path = path.with_name(path.name + ".zip")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp.zip")
    try:
        model.save(str(tmp))
        write_signature(tmp, path, run)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path
