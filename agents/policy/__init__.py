"""`PolicyAgent`: a saved stable-baselines3 / sb3-contrib model on the agent protocol.

Two formats: a full checkpoint (`.zip`, as SB3 saves it, optimizer included, for resuming: a
training format holding pickles, loaded only when this machine's training signed it or pickles
are trusted, agents/policy/trust.py) and an exported policy (`.pt`, the acting network alone in
float16, about 1 MB: tensors and a JSON description, nothing pickled, agents/policy/file.py),
which is what we commit and share."""
from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import numpy as np

from .file import (EXPORT_FORMAT, EXPORT_VERSION, FILE_DTYPES, VALUE_PARTS,  # noqa: F401
                   PolicyFileError, describe, read_policy_file, write_policy_file)


class PolicyLoadError(ValueError):
    """A checkpoint that cannot be loaded; the message names the file and the problem."""


# The exported format: the acting network alone (the value head is dropped: an opponent or an
# evaluation only acts), its weights stored as float16 (half the bytes; loaded back as float32).
# 482k parameters for the shipped [256, 256] drafters: 0.97 MB a file instead of SB3's 3.3 MB
# (policy.save, value net and float32 included), so the shipped models and pools fit the 10 MB
# the repository allows them (docs/RESULTS.md, "Shipped artefacts"). float16 keeps 11 bits of
# mantissa: the logits move by about 1e-3 of their size, and a deterministic policy's choices
# were the same as its float32 original's in every step measured (scripts/export_policy.py
# --check compares them on evaluation runs; docs/RESULTS.md gives the figure).
EXPORT_DTYPES = tuple(FILE_DTYPES.values())
_VALUE_PARTS = VALUE_PARTS


def _policy_classes() -> dict:
    from sb3_contrib.common.maskable.policies import (MaskableActorCriticPolicy,
                                                      MaskableMultiInputActorCriticPolicy)
    return {c.__name__: c for c in (MaskableActorCriticPolicy, MaskableMultiInputActorCriticPolicy)}


def build_policy(desc: dict, state: dict, where: str):
    """The SB3 policy a checked description (agents.policy.file.check_description) builds, with the
    acting weights `state` (float16 or float32) loaded and the value head as zeros, so
    predict_values is 0, never random."""
    import torch
    from stable_baselines3.common import torch_layers
    kwargs = dict(observation_space=desc["observation_space"], action_space=desc["action_space"],
                  lr_schedule=lambda _progress: 0.0, net_arch=desc["net_arch"],
                  activation_fn=getattr(torch.nn, desc["activation_fn"]),
                  ortho_init=desc["ortho_init"], normalize_images=desc["normalize_images"],
                  share_features_extractor=desc["share_features_extractor"],
                  features_extractor_class=getattr(torch_layers, desc["features_extractor"]),
                  features_extractor_kwargs=desc["features_extractor_kwargs"])
    try:
        policy = _policy_classes()[desc["class"]](**kwargs)
    except Exception as exc:  # noqa: BLE001 - SB3 and torch refuse a network in many ways
        raise PolicyLoadError(f"{where}: cannot build the network described ({type(exc).__name__}: "
                              f"{' '.join(str(exc).split())[:200]})") from None
    own = policy.state_dict()
    acting = {k for k in own if not k.startswith(_VALUE_PARTS)}
    wrong = sorted(set(state) ^ acting) + sorted(k for k in acting & set(state)
                                                 if tuple(state[k].shape) != tuple(own[k].shape))
    if wrong:
        raise PolicyLoadError(f"{where}: the weights do not fit the network described "
                              f"({len(wrong)} missing, extra or mis-shaped, e.g. {wrong[:3]})")
    full = {k: (state[k].float() if k in state else torch.zeros_like(v)) for k, v in own.items()}
    policy.load_state_dict(full)
    policy.set_training_mode(False)
    return policy


def load_policy(path: str | Path, device: str = "cpu"):
    """Load an exported policy (`.pt`, written by `export_policy`): no pickle is read (module
    docstring). A missing, corrupt or pickled file raises PolicyLoadError, one line."""
    try:
        desc, state = read_policy_file(path)
        policy = build_policy(desc, state, str(path))
    except PolicyFileError as exc:
        raise PolicyLoadError(str(exc)) from None
    _apply_torch_threads()
    return policy.to(device)


def _exported_class(policy) -> str:
    """The sb3-contrib class a policy is loaded as: training's FastMaskablePolicy
    (agents/train/masking.py) has the same network and distribution as MaskableActorCriticPolicy, its
    base, and loads as it (as SB3-format exports always did)."""
    for name, cls in sorted(_policy_classes().items(), key=lambda kv: -len(kv[1].__mro__)):
        if isinstance(policy, cls):
            return name
    raise ValueError(f"cannot export a {type(policy).__name__}: not a maskable actor-critic policy")


def acting_state(policy, dtype: str) -> dict:
    """The acting network's weights (no value head) of `policy`, cast to `dtype`."""
    import torch
    cast = torch.float16 if dtype == "float16" else torch.float32
    return {k: (v.detach().cpu().to(cast) if v.is_floating_point() else v.detach().cpu())
            for k, v in policy.state_dict().items() if not k.startswith(_VALUE_PARTS)}


def export_policy(model, path: str | Path, dtype: str = "float16") -> None:
    """Save the acting part of a model's policy (`model.policy`, or a policy itself): no value
    head, no optimizer state, weights as `dtype` ("float16", the default, or "float32"), with
    its JSON description (agents/policy/file.py). Written atomically (a temp file, a rename)."""
    if dtype not in EXPORT_DTYPES:
        raise ValueError(f"dtype must be one of {EXPORT_DTYPES}, got {dtype!r}")
    policy = getattr(model, "policy", model)
    write_policy_file(path, acting_state(policy, dtype),
                      describe(policy, _exported_class(policy), dtype))


def model_card(path: str | Path) -> dict | None:
    """The provenance card of a saved policy, if it has one: the `.json` beside an exported
    `.pt` (agents/models/*.json, a run's final_policy.json); for a run's `.zip` (final_model.zip
    or checkpoints/model_<N>_steps.zip), the run's final_policy.json. None if there is none or
    it is not valid JSON."""
    path = Path(path)
    if path.suffix == ".pt":
        card = path.with_suffix(".json")
    else:
        card = next((d / "final_policy.json" for d in (path.parent, path.parent.parent)
                     if (d / "final_policy.json").is_file()), path.with_suffix(".json"))
    from rune_env.files import load_json, read_text

    from .file import MAX_CARD_BYTES
    try:     # bounded: it is read before a checkpoint's trust is checked (a 3 GB sparse file
        # beside an unsigned .zip took 6.4 GB and 22 s to refuse; a FIFO hung)
        data = load_json(read_text(card, "card", ValueError, limit=MAX_CARD_BYTES), str(card),
                         ValueError)
    except (OSError, ValueError, RecursionError):   # the file check names a bad card
        return None
    return data if isinstance(data, dict) else None


def model_rules_hash(path: str | Path) -> str | None:
    """The hash of the rules a saved policy was trained under, from its card (None: unknown;
    cards written before the key existed say `rules_hash_now`, the hash at export time)."""
    card = model_card(path) or {}
    value = card.get("rules_hash", card.get("rules_hash_now"))
    return value if isinstance(value, str) else None


def check_model_rules(path: str | Path, rules, strict: bool = False) -> None:
    """Warn (a UserWarning) when a saved policy was trained under other rules than `rules`, as a
    pool of other rules warns (`load_pool`); with `strict`, refuse it (ValueError). A policy
    without a card, or whose card names no rules, passes: nothing is known of it."""
    trained = model_rules_hash(path)
    if trained is None or rules is None or trained == rules.hash:
        return
    msg = f"{path}: policy was trained under rules {trained}, the current rules are {rules.hash}"
    if strict:
        raise ValueError(msg)
    import warnings
    warnings.warn(msg, stacklevel=3)


def load_acting_policy(path: str | Path):
    """The policy of an exported policy (`.pt`) or of a saved model (any other path, its
    `.policy`), each read as its loader reads it (no pickle from a stranger)."""
    return load_policy(path) if str(path).endswith(".pt") else load_model(path).policy


def load_model(path: str | Path, device: str = "cpu"):
    """Load a MaskablePPO (or PPO) zip that this machine's training saved (or any, when pickles
    are trusted: agents/policy/trust.py); a missing, corrupt or untrusted file raises PolicyLoadError."""
    from .trust import UntrustedCheckpoint, check_checkpoint
    path = Path(path)
    if not path.exists() and path.with_suffix(".zip").exists():
        path = path.with_suffix(".zip")
    if not path.is_file():
        raise PolicyLoadError(f"{path}: no such checkpoint file")
    if not zipfile.is_zipfile(path):
        raise PolicyLoadError(f"{path}: not a stable-baselines3 checkpoint (not a zip archive; "
                              f"truncated or corrupt?)")
    try:
        check_checkpoint(path)
    except UntrustedCheckpoint as exc:
        raise PolicyLoadError(str(exc)) from None
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO
    errors = []
    _apply_torch_threads()
    for cls in (MaskablePPO, PPO):
        try:
            return cls.load(path, device=device)
        except Exception as exc:  # noqa: BLE001 - report every loader's reason
            errors.append(f"{cls.__name__}: {type(exc).__name__}: {' '.join(str(exc).split())}")
    raise PolicyLoadError(f"{path}: cannot load the checkpoint ({'; '.join(errors)})")


def limit_torch_threads(n: int = 1) -> None:
    """Run torch on `n` threads. The scripts that play policies call it: one observation at a
    time is far too little work to share, and torch's worker threads spin while they wait, so
    on a busy machine a forward pass with the default (one thread per core) can take 100x longer
    (measured: 28 ms instead of 0.2 ms per layer while other jobs ran).

    Torch is not imported for this: if it is not imported yet, the count is set when a policy is
    loaded (`load_policy`, `load_model`). A process that plays no policy (the search player,
    greedy) then never imports torch, whose modules would double the objects that every full
    garbage collection walks, and with them that part of each decision's time
    (docs/PERFORMANCE.md, "Where the search player's time goes")."""
    global _torch_threads
    _torch_threads = max(1, int(n))
    if "torch" in sys.modules:
        _apply_torch_threads()


_torch_threads: int | None = None     # `limit_torch_threads`' count, for torch once imported


def _apply_torch_threads() -> None:
    if _torch_threads is None:
        return
    try:
        import torch
    except ImportError:     # without the train extra: no torch, no threads to limit
        return
    torch.set_num_threads(_torch_threads)


# logits further apart than this are ranked alike by the masked distribution's float32
# probabilities (exp of differences >= 1e-4 differ by far more than float32's 6e-8 relative step)
ARGMAX_GAP = 1e-4
# The numpy path (`_ActingNet`) computes the logits in float64, torch in float32: they differ by
# torch's rounding, about 1e-6 of the logits' size on the shipped networks (1031 inputs, two
# layers of 256). A top logit clear of the next by more than this is the top of both; a nearer
# pair goes through torch, so the action is still predict()'s.
NUMPY_GAP = 1e-2


class _ActingNet:
    """The acting network of a masked MLP policy (flattened Box observation, Linear layers with
    Tanh or ReLU, a Linear action head) as float64 numpy arrays: its logits without torch's
    per-operation overhead and with sparse reads (`logits`): a quarter of torch's time for one
    observation. `of(policy)` is None for any other network, which then acts through torch."""

    ACTIVATIONS = {"Tanh": np.tanh, "ReLU": lambda x: np.maximum(x, 0.0)}

    def __init__(self, layers, head):
        self.layers, self.head = layers, head

    @classmethod
    def of(cls, policy) -> "_ActingNet | None":
        import torch
        from stable_baselines3.common.torch_layers import FlattenExtractor
        from stable_baselines3.common.preprocessing import is_image_space
        space = policy.observation_space
        if not isinstance(policy.pi_features_extractor, FlattenExtractor) \
                or len(getattr(space, "shape", ()) or ()) != 1 or is_image_space(space) \
                or not isinstance(policy.action_net, torch.nn.Linear):
            return None
        layers, linear = [], None
        for module in policy.mlp_extractor.policy_net:
            if isinstance(module, torch.nn.Linear) and linear is None:
                linear = module
            elif type(module).__name__ in cls.ACTIVATIONS and linear is not None:
                layers.append((*cls._weights(linear), cls.ACTIVATIONS[type(module).__name__]))
                linear = None
            else:
                return None
        if linear is not None or not layers:
            return None
        w, b, act = layers[0]
        layers[0] = (np.ascontiguousarray(w.T), b, act)    # the first layer: a row per input
        return cls(layers, cls._weights(policy.action_net))

    @staticmethod
    def _weights(linear) -> tuple[np.ndarray, np.ndarray]:
        """(weight, bias) as float64, the weight as torch keeps it: a row per output."""
        w = linear.weight.detach().cpu().numpy().astype(np.float64)
        return np.ascontiguousarray(w), linear.bias.detach().cpu().numpy().astype(np.float64)

    def logits(self, observation: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """The logits of `actions` (indices) for one observation. An observation is mostly
        zeros (one-hot parts: about 6% of its entries are set) and an action mask leaves about
        8% of the actions: the first layer reads the set entries' columns only and the head
        the asked actions' rows only, a fifth of the dense products' work."""
        # torch reads the observation as float32 (obs_to_tensor): the same input values
        x = np.asarray(observation, dtype=np.float32).reshape(-1).astype(np.float64)
        (w, b, act), *rest = self.layers
        set_ = np.flatnonzero(x)
        h = act(x[set_] @ w[set_] + b)
        for w, b, act in rest:
            h = act(w @ h + b)
        w, b = self.head
        return w[actions] @ h + b[actions]


class PolicyAgent:
    """A policy on the agent protocol. A masked MLP policy acts deterministically through a
    numpy copy of its acting weights taken here (`_ActingNet`, the same actions as predict()):
    a model that trains on afterwards needs a new PolicyAgent to act with its new weights."""

    needs_state = False

    def __init__(self, model_or_path, deterministic: bool = True, device: str = "cpu",
                 rules=None):
        # `rules`: the env's, for a policy trained on dict observations (obs_mode "dict") that
        # is given the flat ones (evaluate.py, pools, duels): its parts are the flat vector's
        # slices under those rules (rune_env.envs.observation.ObservationLayout)
        self._rules = rules
        self._parts: list | None = None
        if isinstance(model_or_path, (str, Path)):
            loader = load_policy if str(model_or_path).endswith(".pt") else load_model
            self.model = loader(model_or_path, device)
        else:
            self.model = model_or_path
        self.deterministic = deterministic
        self.name = str(model_or_path) if isinstance(model_or_path, (str, Path)) else "policy"
        self._seed = None
        # the length of the observation the policy reads: in a duel (rune_env/duel), a policy
        # trained on RuneRun-v0 reads the first part of the duel observation, its own run
        space = getattr(self.model, "observation_space", None)
        shape = getattr(space, "shape", None)
        self._flat_size = int(shape[0]) if shape is not None and len(shape) == 1 else None
        self._dict_space = space if type(space).__name__ == "Dict" else None
        actions = getattr(getattr(self.model, "action_space", None), "n", None)
        self.action_count = int(actions) if actions is not None else None
        # a masked policy is put in evaluation mode once, here, instead of at every predict()
        # (set_training_mode walks every module: a third of an action's time); `act` then runs
        # predict()'s own steps, the same arithmetic on the same tensors, so the same actions
        policy = getattr(self.model, "policy", self.model)   # a .zip's model, or a .pt's policy
        try:
            from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
        except ImportError:
            MaskableActorCriticPolicy = ()
        self._masked = policy if isinstance(policy, MaskableActorCriticPolicy) else None
        if self._masked is not None:
            self._masked.set_training_mode(False)
        self._net = _ActingNet.of(self._masked) if self._masked is not None else None

    def _masked_action(self, observation: np.ndarray, action_mask) -> int:
        """predict()'s action for one observation of a masked policy, without its per-call
        overhead. Deterministic: the legal action of the highest logit, when it leads the next
        by more than ARGMAX_GAP (the masked distribution's probabilities are increasing in the
        logits, and such a gap keeps them apart in float32, so it is the action predict() takes);
        a nearer tie, or sampling, goes through the distribution itself as predict() does."""
        mask = np.asarray(action_mask, dtype=bool).reshape(-1)
        if self.deterministic and self._net is not None:
            legal = np.flatnonzero(mask)
            if len(legal) == 1:
                return int(legal[0])
            if len(legal) > 1:
                values = self._net.logits(observation, legal)
                second, first = np.partition(values, -2)[-2:]
                if first - second > NUMPY_GAP:
                    return int(legal[int(values.argmax())])
        import torch
        policy = self._masked
        obs_tensor, _ = policy.obs_to_tensor(observation)
        with torch.no_grad():
            if self.deterministic:
                logits = self._torch_logits(obs_tensor)
                legal = np.flatnonzero(mask)
                values = logits.reshape(-1).numpy()[legal]
                if len(values) == 1:
                    return int(legal[0])
                if not np.isfinite(values).all():
                    raise self._overflow()
                if len(values) > 1:
                    second, first = np.partition(values, -2)[-2:]
                    if first - second > ARGMAX_GAP:
                        return int(legal[int(values.argmax())])
            try:
                action = policy._predict(obs_tensor, deterministic=self.deterministic,
                                         action_masks=mask)
            except ValueError:      # torch's distribution refuses NaN logits, in many lines
                if not bool(torch.isfinite(self._torch_logits(obs_tensor)).all()):
                    raise self._overflow() from None
                raise
        return int(action.reshape(-1)[0])

    def _torch_logits(self, obs_tensor):
        """The masked policy's logits of every action for `obs_tensor`, as predict() makes them."""
        policy = self._masked
        features = policy.extract_features(obs_tensor, policy.pi_features_extractor)
        return policy.action_net(policy.mlp_extractor.forward_actor(features))

    def _overflow(self) -> PolicyLoadError:
        """The one line for logits that are not finite numbers (weights so large, within
        agents.policy.file.MAX_WEIGHT or from a model in memory, that float32 overflows)."""
        return PolicyLoadError(f"{self.name}: the policy's logits are not finite numbers (NaN or "
                               f"infinity) for this observation: its weights overflow float32")

    def reset(self, seed: int | None = None) -> None:
        # predict() samples from torch's generator when not deterministic
        self._seed = seed
        if seed is not None and not self.deterministic:
            import torch
            torch.manual_seed(seed)

    def _misfit(self, got: int, actions: int) -> PolicyLoadError:
        return PolicyLoadError(
            f"{self.name}: the policy reads {self.observation_size} observation entries and "
            f"chooses among {self.action_count} actions; this env gives {got} entries and "
            f"{actions} actions (a policy of another env, or of rules with other tables)")

    @property
    def observation_size(self) -> int | None:
        """The flat observation's length the policy reads (a dict policy's: all its parts
        together), or None if it reads any. In a duel (rune_env/duel), a policy trained on
        RuneRun-v0 reads the first part of the duel observation, its own run."""
        if self._dict_space is not None and self._parts is None:
            self._layout_parts()
        return self._flat_size

    def _layout_parts(self) -> None:
        """A dict policy's parts as slices of the flat observation (`ObservationLayout` of the
        rules given, or the defaults); a policy whose parts are not this env's is refused in one
        line."""
        from rune_env.envs.observation import ObservationLayout
        from rune_env.rules import default_rules
        layout = ObservationLayout.of(self._rules or default_rules())
        want = {k: tuple(v.shape) for k, v in self._dict_space.spaces.items()}
        have = {k: tuple(v) for k, v in layout.shapes.items()}
        if want != have:
            raise PolicyLoadError(
                f"{self.name}: the policy reads a dict observation of parts {want}; this "
                f"env's are {have} (a policy of another env, or of rules with other tables)")
        self._parts = [(k, layout.slices[k], layout.shapes[k]) for k in layout.shapes]
        self._flat_size = layout.size

    def _as_dict(self, flat: np.ndarray) -> dict:
        """A flat observation as the dict one this policy was trained on: each part the flat
        vector's slice (`_layout_parts`)."""
        if self._parts is None:
            self._layout_parts()
        if flat.shape[-1] != self._flat_size:
            raise PolicyLoadError(
                f"{self.name}: the policy reads a dict observation of {self._flat_size} entries "
                f"in all; this env gives {flat.shape[-1]} (a policy of another env)")
        return {k: flat[..., s].reshape(flat.shape[:-1] + shape) for k, s, shape in self._parts}

    def act(self, observation, action_mask: np.ndarray, state=None) -> int:
        size = self.observation_size
        actions = self.action_count
        if isinstance(observation, np.ndarray) and size is not None and (
                observation.shape[-1] > size
                or (actions is not None and np.size(action_mask) > actions)):
            # a policy made for another env: one line, not torch's or SB3's error from inside
            # (a shorter observation is a duel policy's in a run: padded below)
            raise self._misfit(observation.shape[-1], np.size(action_mask))
        if size is not None and isinstance(observation, np.ndarray) and observation.shape[-1] < size \
                and self._dict_space is None:
            # a duel-trained policy in a one-player run (a pool's drafter, an evaluation): the
            # run's observation is the first part of the duel's; the opponent part reads as
            # zeros, "no battle seen" (rune_env/duel/observation.py)
            padded = np.zeros(observation.shape[:-1] + (size,), dtype=observation.dtype)
            padded[..., :observation.shape[-1]] = observation
            observation = padded
        if self._dict_space is not None and isinstance(observation, np.ndarray):
            observation = self._as_dict(observation)
        if self._masked is not None and isinstance(observation, np.ndarray):
            return self._masked_action(observation, action_mask)
        try:
            action, _ = self.model.predict(observation, action_masks=action_mask,
                                           deterministic=self.deterministic)
        except TypeError:  # a plain PPO has no masks
            action, _ = self.model.predict(observation, deterministic=self.deterministic)
        return int(action)
