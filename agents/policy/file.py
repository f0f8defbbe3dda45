"""The exported policy file: tensors and a JSON description, nothing that runs when it is read.

An exported policy (`.pt`, agents/models/*.pt, a run's final_policy.pt) is a safetensors file
(https://huggingface.co/docs/safetensors): an 8-byte header length, a JSON header naming each
tensor's dtype, shape and byte range, then the raw bytes. Its header's metadata holds one entry,
`rune-env-policy`, a JSON description of the network: the policy class, the observation and
action spaces, net_arch, the activation, the features extractor and its options. Reading one
parses JSON and copies bytes; unlike a torch pickle (the format up to v2), no Python object is
rebuilt from the file, so a hostile file cannot run code. Every name in the description is looked
up in a short list of allowed classes here, every number is bounded, and the network it describes
must hold exactly the tensors the file has, before anything is built; every weight must be a
finite number of magnitude at most MAX_WEIGHT (a NaN, or a 1e38 that overflows the logits, would
load, and fail the first action inside torch), and the provenance card beside the file
(`read_card`), if there is one, must be a card.

The `.pt` name is kept (configs/ranks.yaml, the pools' provenance and the docs name policies by
path); the content, not the name, says which format a file is. A pickled file (torch's zip or a
raw pickle) is refused with the command that converts it (`scripts/export_policy.py --convert
FILE --trust`, for files you made yourself). The safetensors layout is tried first: its first
8 bytes are a header length, whose low byte may be a pickle's 0x80 (a header of 0x580 bytes).

What is not stored: the optimizer (an exported policy acts; it is not trained on) and the value
head (dropped at export; loaded as zeros by agents.policy.load_policy).
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from rune_env.files import shown

EXPORT_FORMAT = "rune-env-policy"
EXPORT_VERSION = 3           # 3: safetensors + JSON; 2 and 1 were torch pickles (refused)
METADATA_KEY = "rune-env-policy"
FILE_DTYPES = {"F16": "float16", "F32": "float32"}
# Bounds on what a description may ask for, so a hostile file cannot make the loader allocate
# more than a few hundred MB before the tensors are compared: the shipped drafters are 1 MB files
# with 0.8M parameters (value head included), 1031 inputs and 593 actions.
MAX_FILE_BYTES = 256 * 2**20
MAX_INPUTS = 10**7           # observation entries (all of a Dict's parts together)
MAX_ACTIONS = 10**6
MAX_LAYERS, MAX_WIDTH = 16, 16384
MAX_PARAMETERS = 50_000_000  # the whole network, value head included: 200 MB as float32
MAX_DICT_PARTS = 64
BOX_DTYPES = ("float32", "float64")    # no image (uint8) spaces: those would build a CNN

POLICY_CLASSES = ("MaskableActorCriticPolicy", "MaskableMultiInputActorCriticPolicy")
ACTIVATIONS = ("Tanh", "ReLU", "ELU", "LeakyReLU", "GELU", "SiLU", "Sigmoid", "Identity")
EXTRACTORS = {"FlattenExtractor": (), "CombinedExtractor": ("cnn_output_dim", "normalized_image")}
VALUE_PARTS = ("mlp_extractor.value_net.", "value_net.", "vf_features_extractor.")


class PolicyFileError(ValueError):
    """A policy file that is not a readable exported policy (agents.policy.PolicyLoadError)."""


def convert_hint(path) -> str:
    return (f"if you made it yourself, convert it: python scripts/export_policy.py --convert "
            f"{path} --trust")


def pickled_message(path) -> str:
    """The one line that refuses a pickled policy file."""
    if str(path).endswith(".zip"):
        return (f"{path}: a stable-baselines3 checkpoint, not an exported policy (a pickle, "
                f"refused here); export it: python scripts/export_policy.py {path} --out FILE.pt")
    return (f"{path}: a pickled policy (the format before rune-env-policy v{EXPORT_VERSION}), "
            f"refused: loading a pickle can run any code; {convert_hint(path)}")


def looks_safetensors(head: bytes, size: int | None = None) -> bool:
    """Whether a file's first bytes `head` (9 of them to see the header's first character) have
    the safetensors layout: an 8-byte little-endian header length that a policy file can hold
    (at most MAX_FILE_BYTES, and within the file's `size` when given), then the JSON header's
    '{'. The length's bytes are anything: a header of 0x580 bytes starts the file with 0x80."""
    if len(head) < 8:
        return False
    length = int.from_bytes(head[:8], "little")
    if not 2 <= length <= MAX_FILE_BYTES or (size is not None and 8 + length > size):
        return False
    return len(head) == 8 or head[8:9] == b"{"


def looks_pickled(head: bytes, size: int | None = None) -> bool:
    """torch.save's zip archive ("PK") or a raw pickle (protocol 2+: 0x80 then the protocol,
    2..5), and not a safetensors file: that layout is tried first (`looks_safetensors`), since
    a safetensors header length's low byte may be 0x80 or its first two bytes "PK"."""
    if looks_safetensors(head, size):
        return False
    return head[:2] == b"PK" or (head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03",
                                                                      b"\x04", b"\x05"))


# -- spaces as JSON ------------------------------------------------------------------------------
def _bound_to_json(values) -> Any:
    import numpy as np
    flat = np.asarray(values, dtype=np.float64).ravel()
    out = [v if math.isfinite(v) else ("inf" if v > 0 else "-inf") for v in flat.tolist()]
    return out[0] if len(set(out)) == 1 else out


def space_to_json(space) -> dict:
    """A Box, Discrete or Dict (of Boxes) space as JSON; ValueError for any other."""
    from gymnasium import spaces
    if isinstance(space, spaces.Box):
        return {"type": "Box", "shape": list(space.shape), "dtype": str(space.dtype),
                "low": _bound_to_json(space.low), "high": _bound_to_json(space.high)}
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.Dict):
        return {"type": "Dict", "spaces": [[k, space_to_json(v)] for k, v in space.spaces.items()]}
    raise ValueError(f"cannot export a policy over a {type(space).__name__} space "
                     f"(Box, Discrete and Dict of Boxes only)")


def _whole(value, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise PolicyFileError(f"{where} must be a whole number in {low}..{high}, got {value!r}")
    return value


def _bound_from_json(value, size: int, where: str):
    import numpy as np
    items = value if isinstance(value, list) else [value]
    if len(items) not in (1, size):
        raise PolicyFileError(f"{where}: {len(items)} bounds for {size} entries")
    out = []
    for v in items:
        if v in ("inf", "-inf"):
            out.append(float(v))
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            out.append(float(v))
        else:
            raise PolicyFileError(f"{where}: a bound must be a finite number, 'inf' or '-inf', "
                                  f"got {v!r}")
    return np.array(out if len(out) == size else out * size, dtype=np.float64)


def space_from_json(data, where: str, allow_dict: bool = True):
    """The space `space_to_json` wrote, every field checked (PolicyFileError names `where`)."""
    from gymnasium import spaces
    import numpy as np
    if not isinstance(data, dict):
        raise PolicyFileError(f"{where} must be an object, got {type(data).__name__}")
    kind = data.get("type")
    keys = {"Box": {"type", "shape", "dtype", "low", "high"}, "Discrete": {"type", "n", "start"},
            "Dict": {"type", "spaces"}}.get(kind)
    if keys is None or (kind == "Dict" and not allow_dict):
        raise PolicyFileError(f"{where}.type must be one of "
                              f"{['Box', 'Discrete', 'Dict'] if allow_dict else ['Box']}, got {kind!r}")
    if set(data) != keys:
        raise PolicyFileError(f"{where}: expected the keys {sorted(keys)}, got {sorted(data)}")
    if kind == "Discrete":
        return spaces.Discrete(_whole(data["n"], f"{where}.n", 1, MAX_ACTIONS),
                               start=_whole(data["start"], f"{where}.start", -2**31, 2**31))
    if kind == "Dict":
        parts = data["spaces"]
        if not isinstance(parts, list) or not 1 <= len(parts) <= MAX_DICT_PARTS or not all(
                isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in parts):
            raise PolicyFileError(f"{where}.spaces must be 1..{MAX_DICT_PARTS} [name, space] pairs")
        # all the parts together within MAX_INPUTS before any part's bounds are built: 64 parts
        # of 10^7 entries each passed alone and built 6.6 GB of bounds before the network's
        # size was refused (red team)
        total = sum(_box_size(s, f"{where}.{name}") for name, s in parts
                    if isinstance(s, dict) and s.get("type") == "Box")
        if total > MAX_INPUTS:
            raise PolicyFileError(f"{where}: its parts hold {total:,} entries together, more "
                                  f"than {MAX_INPUTS:,}")
        return spaces.Dict({name: space_from_json(s, f"{where}.{name}", allow_dict=False)
                            for name, s in parts})
    shape = data["shape"]
    size = _box_size(data, where)
    if data["dtype"] not in BOX_DTYPES:
        raise PolicyFileError(f"{where}.dtype must be one of {list(BOX_DTYPES)}, got {data['dtype']!r}")
    low = _bound_from_json(data["low"], size, f"{where}.low").reshape(shape)
    high = _bound_from_json(data["high"], size, f"{where}.high").reshape(shape)
    if (low > high).any():
        raise PolicyFileError(f"{where}: a low bound above its high bound")
    return spaces.Box(low.astype(data["dtype"]), high.astype(data["dtype"]), dtype=np.dtype(data["dtype"]))


def _box_size(data: dict, where: str) -> int:
    """The entries of a Box description's shape (1 to 4 sizes, each and all at most
    MAX_INPUTS); PolicyFileError naming `where` otherwise."""
    shape = data.get("shape")
    if not isinstance(shape, list) or not 1 <= len(shape) <= 4:
        raise PolicyFileError(f"{where}.shape must be a list of 1 to 4 sizes, got {shown(shape)}")
    size = math.prod(_whole(s, f"{where}.shape", 1, MAX_INPUTS) for s in shape)
    if size > MAX_INPUTS:
        raise PolicyFileError(f"{where}: {size} entries, more than {MAX_INPUTS}")
    return size


# -- the description -----------------------------------------------------------------------------
def describe(policy, class_name: str, dtype: str) -> dict:
    """The JSON description of an SB3 maskable policy (its constructor's arguments, as data)."""
    params = policy._get_constructor_parameters()
    activation = params["activation_fn"].__name__
    extractor = params["features_extractor_class"].__name__
    kwargs = dict(params.get("features_extractor_kwargs") or {})
    if activation not in ACTIVATIONS or extractor not in EXTRACTORS or \
            any(k not in EXTRACTORS[extractor] for k in kwargs):
        raise ValueError(f"cannot export this policy as data: activation {activation}, features "
                         f"extractor {extractor} {kwargs} (allowed: {ACTIVATIONS}, "
                         f"{ {k: list(v) for k, v in EXTRACTORS.items()} })")
    out = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "dtype": dtype, "class": class_name,
           "observation_space": space_to_json(params["observation_space"]),
           "action_space": space_to_json(params["action_space"]),
           "net_arch": params["net_arch"], "activation_fn": activation,
           "ortho_init": bool(params["ortho_init"]),
           "normalize_images": bool(params.get("normalize_images", True)),
           "share_features_extractor": bool(params.get("share_features_extractor", True)),
           "features_extractor": extractor, "features_extractor_kwargs": kwargs}
    # what is written is what is read back: a space or option that does not survive JSON fails
    # here, at export, not when someone loads the file
    back = check_description(json.loads(json.dumps(out)), "export")
    if back["observation_space"] != params["observation_space"] or \
            back["action_space"] != params["action_space"]:
        raise ValueError("cannot export this policy as data: its spaces do not survive JSON")
    return out


DESCRIPTION_KEYS = {"format", "version", "dtype", "class", "observation_space", "action_space",
                    "net_arch", "activation_fn", "ortho_init", "normalize_images",
                    "share_features_extractor", "features_extractor", "features_extractor_kwargs"}


def _layers(value, where: str) -> list[int]:
    if not isinstance(value, list) or len(value) > MAX_LAYERS:
        raise PolicyFileError(f"{where} must be a list of at most {MAX_LAYERS} layer widths")
    return [_whole(v, where, 1, MAX_WIDTH) for v in value]


def _net_arch(value) -> tuple[list[int], list[int]]:
    if isinstance(value, dict):
        if set(value) - {"pi", "vf"}:
            raise PolicyFileError(f"net_arch: keys pi and vf only, got {sorted(value)}")
        return _layers(value.get("pi", []), "net_arch.pi"), _layers(value.get("vf", []), "net_arch.vf")
    layers = _layers(value, "net_arch")
    return layers, layers


def _choice(data: dict, key: str, allowed) -> str:
    if data[key] not in allowed:
        raise PolicyFileError(f"{key} must be one of {sorted(allowed)}, got {data[key]!r}")
    return data[key]


def check_description(data, where: str) -> dict:
    """The description's values, checked and rebuilt (spaces as gymnasium spaces, names as
    names from the allowed lists); PolicyFileError names the key."""
    if not isinstance(data, dict) or set(data) != DESCRIPTION_KEYS:
        got = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise PolicyFileError(f"{where}: the description must have the keys "
                              f"{sorted(DESCRIPTION_KEYS)}, got {got}")
    if data["format"] != EXPORT_FORMAT or data["version"] != EXPORT_VERSION:
        raise PolicyFileError(f"{where}: format {data['format']!r} version {data['version']!r}; "
                              f"this rune-env reads {EXPORT_FORMAT} version {EXPORT_VERSION}")
    out = dict(data)
    _choice(data, "dtype", FILE_DTYPES.values())
    _choice(data, "class", POLICY_CLASSES)
    _choice(data, "activation_fn", ACTIVATIONS)
    extractor = _choice(data, "features_extractor", EXTRACTORS)
    for key in ("ortho_init", "normalize_images", "share_features_extractor"):
        if not isinstance(data[key], bool):
            raise PolicyFileError(f"{key} must be true or false, got {data[key]!r}")
    kwargs = data["features_extractor_kwargs"]
    if not isinstance(kwargs, dict) or any(k not in EXTRACTORS[extractor] for k in kwargs):
        raise PolicyFileError(f"features_extractor_kwargs: {extractor} takes "
                              f"{list(EXTRACTORS[extractor]) or 'no options'}, got {kwargs!r}")
    if "cnn_output_dim" in kwargs:
        _whole(kwargs["cnn_output_dim"], "features_extractor_kwargs.cnn_output_dim", 1, MAX_WIDTH)
    if not isinstance(kwargs.get("normalized_image", False), bool):
        raise PolicyFileError("features_extractor_kwargs.normalized_image must be true or false")
    multi = data["class"] == POLICY_CLASSES[1]
    out["observation_space"] = space_from_json(data["observation_space"], "observation_space",
                                               allow_dict=multi)
    if multi != (type(out["observation_space"]).__name__ == "Dict") or \
            multi != (extractor == "CombinedExtractor"):
        # the multi-input class reads a Dict of Boxes through CombinedExtractor, the other a Box
        wants = "a Dict observation and CombinedExtractor" if multi else \
            "a Box observation and FlattenExtractor"
        raise PolicyFileError(f"{data['class']} takes {wants}, got "
                              f"{type(out['observation_space']).__name__} and {extractor}")
    out["action_space"] = space_from_json(data["action_space"], "action_space", allow_dict=False)
    if type(out["action_space"]).__name__ != "Discrete":
        raise PolicyFileError("action_space must be Discrete (the masked policies' actions)")
    out["pi"], out["vf"] = _net_arch(data["net_arch"])
    return out


def _chain(inputs: int, layers: list[int], outputs: int) -> int:
    sizes = [inputs, *layers, outputs]
    return sum(a * b + b for a, b in zip(sizes, sizes[1:]))


def flat_size(space) -> int:
    """The entries of an observation space flattened: a Box's, or a Dict's Boxes together (what
    FlattenExtractor and CombinedExtractor over Boxes feed the network)."""
    from gymnasium import spaces
    parts = space.spaces.values() if isinstance(space, spaces.Dict) else [space]
    return sum(math.prod(p.shape) for p in parts)


def mlp_parameters(inputs: int, pi: list[int], vf: list[int], actions: int) -> tuple[int, int]:
    """(parameters of the acting network, of the whole network) of MLPs over `inputs` values:
    `pi` hidden layers to `actions` logits, and `vf` to one value."""
    acting = _chain(inputs, list(pi), actions)
    return acting, acting + _chain(inputs, list(vf), 1)


def acting_parameters(desc: dict) -> tuple[int, int]:
    """(parameters of the acting network, of the whole network) the description builds: an MLP
    over the flattened observation (FlattenExtractor and CombinedExtractor over Boxes have no
    weights of their own), one for the actions and one for the value."""
    return mlp_parameters(flat_size(desc["observation_space"]), desc["pi"], desc["vf"],
                          int(desc["action_space"].n))


# -- the file ------------------------------------------------------------------------------------
def write_policy_file(path: str | Path, tensors: dict, description: dict) -> None:
    """Write `tensors` (name -> torch tensor) and `description` atomically (temp file, rename)."""
    from safetensors.torch import save_file
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        save_file({k: v.detach().cpu().contiguous() for k, v in tensors.items()}, str(tmp),
                  metadata={METADATA_KEY: json.dumps(description, sort_keys=True)})
        os.chmod(tmp, 0o644)        # readable by all, as a plain write makes a file
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _no_constants(name: str):
    raise ValueError(f"{name} is not JSON")


def read_policy_file(path: str | Path) -> tuple[dict, dict]:
    """(checked description, tensors) of an exported policy file. Everything is checked against
    the file's header before a tensor is read; PolicyFileError names the file and the problem."""
    path = Path(path)
    if not path.is_file():
        raise PolicyFileError(f"{path}: no such policy file")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise PolicyFileError(f"{path}: {size} bytes, more than a policy file's {MAX_FILE_BYTES}")
    with open(path, "rb") as fh:
        head = fh.read(9)
    if looks_pickled(head, size):
        raise PolicyFileError(pickled_message(path))
    from safetensors import safe_open
    try:
        with safe_open(str(path), framework="pt", device="cpu") as f:
            meta = f.metadata() or {}
            shapes = {k: (tuple(f.get_slice(k).get_shape()), f.get_slice(k).get_dtype()) for k in f.keys()}
            desc = _header_description(path, meta, shapes)
            tensors = {k: f.get_tensor(k) for k in shapes}
    except PolicyFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - safetensors' and JSON's errors on a corrupt file
        raise PolicyFileError(f"{path}: not an exported policy (not a safetensors file: "
                              f"{' '.join(str(exc).split())[:200]})") from None
    _check_weights(path, tensors)
    read_card(card_path(path))      # its provenance card, if any, is one too (PolicyFileError)
    return desc, tensors


# The largest weight magnitude a policy file may hold. Trained weights are small: the shipped
# policies' largest is 58 (agents/models/exit_thrift.pt, action_net), their usual largest 0.5 to
# 5; a float16 file cannot exceed 65504. Finite but huge weights (1e38 in a float32 file) make the
# logits overflow to infinity or NaN at the first action, which fails deep inside torch. Below
# this bound a Tanh network's logits stay finite whatever its shape (on observations of any sane
# size: the envs' are in [0, 1]): each Tanh output is at most 1 and a layer at most MAX_WIDTH
# wide, so a logit is at most 16384 * 1e6 + 1e6, about 1.6e10, far from float32's 3.4e38. Other
# activations have no such bound: PolicyAgent says so in one line if the logits are not finite.
MAX_WEIGHT = 1e6


def _check_weights(path: Path, tensors: dict) -> None:
    """Refuse a weight that is NaN, infinite or larger than MAX_WEIGHT: the network would build
    and load, and its first action fail inside torch (a NaN logit makes no distribution)."""
    import torch
    for name in sorted(tensors):
        values = tensors[name]
        bad = int((~torch.isfinite(values)).sum())
        if bad:
            raise PolicyFileError(f"{path}: tensor {name!r} holds {bad} non-finite value"
                                  f"{'s' if bad > 1 else ''} (NaN or infinity); a policy's "
                                  f"weights are finite numbers")
        huge = int((values.abs() > MAX_WEIGHT).sum())
        if huge:
            raise PolicyFileError(f"{path}: tensor {name!r} holds {huge} weight"
                                  f"{'s' if huge > 1 else ''} larger than {MAX_WEIGHT:g} in "
                                  f"magnitude (the largest {float(values.abs().max()):g}); a "
                                  f"policy's weights are far smaller, and these would make its "
                                  f"logits overflow")


def _header_description(path: Path, meta: dict, shapes: dict) -> dict:
    if METADATA_KEY not in meta:
        raise PolicyFileError(f"{path}: not an exported policy (no {METADATA_KEY!r} description "
                              f"in the safetensors header)")
    try:
        raw = json.loads(meta[METADATA_KEY], parse_constant=_no_constants)
    except (ValueError, RecursionError) as exc:
        raise PolicyFileError(f"{path}: the description is not JSON ({exc})") from None
    desc = check_description(raw, str(path))
    want = {v: k for k, v in FILE_DTYPES.items()}[desc["dtype"]]
    bad = sorted(k for k, (_, dt) in shapes.items() if dt != want)
    if bad:
        raise PolicyFileError(f"{path}: tensors {bad[:3]} are not {desc['dtype']} as the "
                              f"description says")
    acting, whole = acting_parameters(desc)
    if whole > MAX_PARAMETERS:
        raise PolicyFileError(f"{path}: the network described has {whole} parameters, more than "
                              f"{MAX_PARAMETERS}")
    held = sum(math.prod(s) for s, _ in shapes.values())
    if held != acting:
        raise PolicyFileError(f"{path}: the file holds {held} weights, the network it describes "
                              f"acts with {acting}")
    return desc


# -- the provenance card -------------------------------------------------------------------------
# The JSON beside an exported policy (agents/models/*.json, a run's final_policy.json: written by
# agents/train/export.py, expert iteration and the league). What is read from it is checked here:
# `timesteps` (TensorBoard's step: an int64, and 10**10 is far beyond any run's) and the rules'
# hash (compared with the rules played). A shipped card is 1.3-3 KB.
MAX_CARD_BYTES = 2**20
MAX_TIMESTEPS = 10**10
CARD_HASH_KEYS = ("rules_hash", "rules_hash_now")   # the second: cards before the first existed
MAX_HASH_CHARS = 128


def card_path(path: str | Path) -> Path:
    """The card of an exported policy `path` (.pt): the .json beside it."""
    return Path(path).with_suffix(".json")


def read_card(card: str | Path) -> dict | None:
    """The provenance card at `card`, checked: None if there is no such file; PolicyFileError
    (one line naming the card) if it is not a card: unreadable, over MAX_CARD_BYTES, not JSON
    (nested too deep included), not an object, `timesteps` not null or a whole number in
    0..MAX_TIMESTEPS, a rules hash not a string."""
    card = Path(card)
    if not card.is_file():
        return None
    try:
        size = card.stat().st_size
        if size > MAX_CARD_BYTES:
            raise PolicyFileError(f"{card}: {size} bytes, more than a policy card's "
                                  f"{MAX_CARD_BYTES}")
        text = card.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyFileError(f"{card}: cannot read the policy's card "
                              f"({' '.join(str(exc).split())[:200]})") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise PolicyFileError(f"{card}: the policy's card is nested too deep to be a card") from None
    except ValueError as exc:
        raise PolicyFileError(f"{card}: the policy's card is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise PolicyFileError(f"{card}: the policy's card must be a JSON object, got "
                              f"{type(data).__name__}")
    steps = data.get("timesteps")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int)
                              or not 0 <= steps <= MAX_TIMESTEPS):
        raise PolicyFileError(f"{card}: timesteps must be a whole number in 0..{MAX_TIMESTEPS} "
                              f"or null, got {shown(steps, 60)}")
    for key in CARD_HASH_KEYS:
        value = data.get(key)
        if value is not None and (not isinstance(value, str) or len(value) > MAX_HASH_CHARS):
            raise PolicyFileError(f"{card}: {key} must be a string (the rules' hash) of at most "
                                  f"{MAX_HASH_CHARS} characters, got {shown(value, 60)}")
    return data

