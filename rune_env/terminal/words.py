"""Things of the rules described in words, every number from the rules config: runes, cores,
relics, boss rules, artifacts, rewards and flows (`info_lines`, the game's `info NAME`), max HP
and why, and the placement warnings (supports that do nothing where they stand).
"""
from __future__ import annotations

import difflib

from ..rules.config import ATTACK_KINDS, CASTING_KINDS, KINDS, Rules
from ..rules.geometry import geometry
from ..rules.hp import max_hp_terms, round_max_hp
from ..run.rewards import ARTIFACT, REWARD_CATEGORIES, RewardOption
from ..run.state import RunState
from .diagram import RUNE_CODES, WIDTH, wrap, wrap_items

HEAL_KINDS = ("water", "light")
ROMAN = ("I", "II", "III", "IV", "V", "VI")


# -- numbers in words -----------------------------------------------------------------------------
def _x(v: float) -> str:
    return f"x{v:g}"


def _pct(v: float) -> str:
    """The percentage a factor v changes something by: 0.8 -> "20%"."""
    return f"{round(abs(1.0 - v) * 100, 4):g}%"


def _share(v: float) -> str:
    return f"{round(v * 100, 4):g}%"


def plural(n: int | float, word: str) -> str:
    return f"{n:g} {word}" + ("" if n == 1 else "s")


def _by_grade(values, fmt=_x) -> str:
    return "/".join(fmt(v) for v in values)


def _grades(rules: Rules) -> str:
    return "/".join(ROMAN[i] if i < len(ROMAN) else str(i + 1) for i in range(rules.max_grade))


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def modifier_phrases(rules: Rules, m) -> list[str]:
    """The effects of a core, boss rule or relic (a `Modifier`) in words, with the config's
    numbers: moon -> ["turns 20% faster", "power x0.9"]."""
    spec = rules.spec
    out: list[str] = []
    if m.core_flow_strength > 0:
        s = m.core_flow_strength
        out.append("flows into ring 1 as a rune of its element, "
                   + ("at half strength" if s == 0.5 else f"at strength {s:g}"))
    if m.interval_x != 1.0:
        out.append(f"turns {_pct(m.interval_x)} {'faster' if m.interval_x < 1 else 'slower'}")
    if m.power_x != 1.0:
        out.append(f"power {_x(m.power_x)}")
    if m.outermost_power_x != 1.0:
        out.append(f"power {_x(m.outermost_power_x)} in the outermost ring")
    if m.power_x_by_kind:
        groups: dict[float, list[str]] = {}
        for kind, v in m.power_x_by_kind.items():
            groups.setdefault(v, []).append(kind)
        for v, kinds in groups.items():
            what = "healing" if all(k in HEAL_KINDS for k in kinds) else \
                ("barrier" if kinds == ["earth"] else "power")
            out.append(f"{_and(kinds)} {what} {_x(v)}")
    if m.hp_x != 1.0:
        out.append(f"max HP {_x(m.hp_x)}")
    if m.extra_erosions:
        out.append(f"+{plural(m.extra_erosions, 'erosion')} per cycle")
    if m.outermost_wards:
        out.append(f"every rune in its outermost ring holds {plural(m.outermost_wards, 'ward')}")
    if m.hand_slots:
        out.append(f"+{plural(m.hand_slots, 'hand slot')}")
    if m.income:
        out.append(f"{m.income:+d} income per round")
    if m.lamp_saves:
        out.append(("once" if m.lamp_saves == 1 else f"{m.lamp_saves} times")
                   + ", a lost battle costs no lamp")
    if m.loose_resonance:
        pats = spec.resonance.patterns
        out.append(f"loose resonance ({_by_grade([p.loose for p in pats])} instead of "
                   f"{_by_grade([p.normal for p in pats])})")
    if m.reserve_any_kind:
        out.append("reserves of any kind")
    if m.resonance_add:
        out.append(f"every resonance multiplier {m.resonance_add:+g}")
    if m.seal_cap_divisor is not None:
        out.append(f"at most 1/{m.seal_cap_divisor} of its runes sealed "
                   f"(not 1/{spec.erosion.seal_cap_divisor})")
    if m.amplify_increase_x != 1.0:
        out.append(f"amplify's increase {_x(m.amplify_increase_x)}")
    if m.flow_increase_x != 1.0:
        out.append(f"every flow's increase {_x(m.flow_increase_x)}")
    if m.unseal_after_s is not None:
        out.append(f"a rune sealed by erosion unseals {m.unseal_after_s:g} s later")
    return out or ["no effect"]


def modifier_text(rules: Rules, m) -> str:
    return ", ".join(modifier_phrases(rules, m))


def core_text(rules: Rules, core: str) -> str:
    """"moon: turns 20% faster, power x0.9"."""
    return f"{core}: {modifier_text(rules, rules.spec.cores[core])}"


def artifact_phrases(rules: Rules, art: str) -> list[str]:
    a = rules.spec.artifacts[art]
    top = ROMAN[rules.max_grade - 1] if rules.max_grade <= len(ROMAN) else str(rules.max_grade)
    out = []
    if a.wards:
        out.append(f"every rune it reaches at battle start holds {plural(a.wards, 'ward')}")
    if a.income_per_runes:
        out.append(f"+1 income per round for every {a.income_per_runes} runes it reaches")
    if a.grade_bonus:
        out.append(f"runes it reaches count {plural(a.grade_bonus, 'grade')} higher "
                   f"({top} at most)")
    if a.absorbs:
        out.append(f"the opponent's erosions spend it first: it absorbs {a.absorbs}")
    return out or ["no effect"]


def artifact_text(rules: Rules, art: str) -> str:
    return ", ".join(artifact_phrases(rules, art))


def reward_text(rules: Rules, option: str) -> str:
    """A reward option in words (options are categories; `artifact:<id>` names the artifact)."""
    run = rules.spec.run
    if option == "mana":
        return f"+{run.reward_mana} mana"
    if option == "hand_slot":
        return f"+{plural(run.reward_hand_slots, 'hand slot')} (up to {run.hand_slots_max})"
    if option == "artifact_slot":
        return (f"+{plural(run.reward_artifact_slots, 'artifact slot')} "
                f"(up to {run.artifact_slots_max})")
    if option == "base_stat":
        return f"max HP +{_share(run.reward_base_stat_hp_x)} for the rest of the run"
    if RewardOption.parse(option).gives_artifact:
        art = RewardOption.parse(option).artifact
        return f"a free {art} ({artifact_text(rules, art)})"
    if option == "artifact":
        return "a free artifact, drawn at random, into the inventory"
    return option


def describe_option(rules: Rules, kind: str, option: str) -> str:
    """A pending choice's option in words."""
    spec = rules.spec
    if kind == "core":
        return core_text(rules, option)
    if kind == "relic":
        return f"{option}: {modifier_text(rules, spec.relics[option])}"
    return f"{option}: {reward_text(rules, option)}"


def fmt(x: float) -> str:
    return f"{x:.1f}"


# -- max HP ---------------------------------------------------------------------------------------
def _hp_x(rules: Rules, names, table) -> float:
    x = 1.0
    for n in names:
        x *= table[n].hp_x
    return x


def round_hp(rules: Rules, round_: int) -> float:
    return round_max_hp(rules, round_)


def hp_why(rules: Rules, round_: int, hp_bonus: float = 0.0, core: str | None = None,
           relics=(), short: bool = False) -> str:
    """Why the player's max HP is what it is: "330 = (100 + 2 rounds x 100) +10% (base-stat
    rewards)": the base, the round's `hp_per_round` for each round after the first, the
    base-stat rewards, and the hp_x of the core and relics, if any. `short`: "330 = (100 + 2 x
    100) +10%"."""
    spec = rules.spec
    terms = max_hp_terms(rules, round_)
    rounds = f"{terms.rounds_after_first}" if short else plural(terms.rounds_after_first, "round")
    parts = f"{terms.base:g}" if round_ == 1 or not terms.per_round else \
        f"{terms.base:g} + {rounds} x {terms.per_round:g}"
    total = round_max_hp(rules, round_, hp_bonus)
    text = parts
    if hp_bonus:
        text = f"({parts}) +{_share(hp_bonus)}" + ("" if short else " (base-stat rewards)")
    x = _hp_x(rules, [core] if core else [], spec.cores) * _hp_x(rules, relics, spec.relics)
    if x != 1.0:
        total *= x
        text += f" {_x(x)}" + ("" if short else " (core and relics)")
    return f"{total:g} = {text}" if text != f"{total:g}" else f"{total:g}"


def boss_hp_text(rules: Rules, round_: int, boss_rules) -> str | None:
    """The boss's max HP when a boss rule changes it (giant): "390 = 300 x1.3 (giant)"."""
    spec = rules.spec
    hp_rules = [b for b in boss_rules if spec.boss_rules[b].hp_x != 1.0]
    if not hp_rules:
        return None
    x = _hp_x(rules, hp_rules, spec.boss_rules)
    base = round_hp(rules, round_)
    return f"{base * x:g} = {base:g} {_x(x)} ({'+'.join(hp_rules)})"


# -- placement warnings -------------------------------------------------------------------------
def placement_warnings(rules: Rules, board: dict[int, tuple[str, int]]) -> list[str]:
    """Supports on the board that do nothing as it stands: an amplify or a delay with no casting
    rune outward (an amplify also acts through a node), a mimic with no casting rune inward, a
    node linking fewer than two runes."""
    geo = geometry(rules.radius)
    casting = set(CASTING_KINDS)

    def kind(c: int) -> str | None:
        r = board.get(c)
        return r[0] if r else None

    def names(cells) -> str:
        return ", ".join(geo.name(c) for c in cells)

    out = []
    for c in sorted(board):
        k, name = board[c][0], geo.name(c)
        if k in ("amplify", "delay"):
            if any(kind(o) in casting for o in geo.outward[c]):
                continue
            if k == "amplify" and any(
                    kind(n) == "node"
                    and any(kind(m) in casting for m in geo.neighbors[n] if m != c)
                    for n in geo.neighbors[c]):
                continue        # it amplifies through a node (D-19)
            where = "it is in the outermost ring, with no outward neighbour" \
                if not geo.outward[c] else f"no casting rune outward ({names(geo.outward[c])})"
            out.append(f"{k} at {name} does nothing: {where}")
        elif k == "mimic":
            if any(kind(i) in casting for i in geo.inward[c]):
                continue
            where = "ring 1 has nothing inward but the core" if not geo.inward[c] \
                else f"no casting rune inward ({names(geo.inward[c])})"
            out.append(f"mimic at {name} does nothing: {where}")
        elif k == "node":
            linked = [n for n in geo.neighbors[c] if kind(n) is not None and kind(n) != "node"]
            if len(linked) < 2:
                out.append(f"node at {name} does nothing: it links "
                           f"{plural(len(linked), 'rune')}, and needs 2 neighbours (nodes "
                           f"do not count)")
    return out


# -- info: anything of the rules in words ---------------------------------------------------------
def _rune_effect(rules: Rules, kind: str) -> list[str]:
    spec = rules.spec
    r = getattr(spec.runes, kind)
    g = _grades(rules)
    if kind in ATTACK_KINDS:
        hit = f"one hit of {r.damage:g} damage" if r.hits == 1 else \
            f"{r.hits} hits of {r.damage:g} damage each"
        if kind == "thunder":
            return [f"{hit}; each point of it that barrier absorbs costs "
                    f"{r.barrier_wear:g} barrier"]
        if kind == "dark":
            return [f"{hit}, then curses the opponent for {r.curse_s:g} s (their healing "
                    f"{_x(spec.battle.curse_heal_x)} while cursed; curses do not stack)"]
        if kind == "ice":
            limit = spec.freeze.max_frozen
            return [f"{hit}, then freezes the opponent's strongest rune for {r.freeze_s:g} s"
                    + (f" (no new freeze while {limit} of their cells "
                       f"{'is' if limit == 1 else 'are'} frozen)" if limit else "")]
        return [hit]
    if kind == "water":
        return [f"heals its side {r.heal:g}"]
    if kind == "light":
        return [f"heals its side {r.heal:g}, then unseals {_by_grade(r.unseals_by_grade, str)} "
                f"of its sealed runes (grade {g})"]
    if kind == "earth":
        return [f"gives its side {r.barrier:g} barrier; in the outermost ring it also holds "
                f"{plural(r.outermost_wards, 'ward')}"]
    if kind == "amplify":
        factors = [1.0 + r.increase * x for x in rules.spec.grades.power_x]
        cap = spec.runes.amplify.max_factor      # D-54: a rune's amplifies together, at most
        if cap is None:
            return [f"multiplies the power of its outward-adjacent casting runes by 1 + "
                    f"{r.increase:g} x its grade x its resonance: "
                    f"{_by_grade([round(f, 6) for f in factors])} at grade {g}; several "
                    f"amplifies multiply again"]
        capped = [round(min(f, cap), 6) for f in factors]
        return [f"multiplies the power of its outward-adjacent casting runes by 1 + "
                f"{r.increase:g} x its grade x its resonance, and all the amplifies on one rune "
                f"together by at most {_x(cap)} (the amplify cap): {_by_grade(capped)} at grade "
                f"{g} (uncapped {_by_grade([round(f, 6) for f in factors])})"]
    if kind == "resonator":
        return ["never casts; counts as any kind in a resonance pattern"]
    if kind == "delay":
        return [f"its outward-adjacent casting runes cast on 1 turn in {r.period}, at "
                f"{_x(r.power_x)}; several delays count as one"]
    if kind == "node":
        return ["links the runes adjacent to it: they flow into, attune and amplify each other "
                "both ways; nodes do not chain; needs 2 neighbours"]
    if kind == "mimic":
        return [f"copies each cast of its strongest inward-adjacent casting rune at "
                f"{_by_grade(r.copy_x_by_grade)} (its own grade {g}); in ring 1 it has nothing "
                f"inward"]
    return []  # pragma: no cover - every kind is above


def _flow_extras(f) -> list[str]:
    out = []
    if f.erosions:
        out.append(f"+{plural(f.erosions, 'erosion')} per cast")
    if f.reflect:
        out.append(f"reflects {_share(f.reflect)} of attack damage while it has barrier")
    if f.drizzle_charges:
        out.append(f"gives the opponent {plural(f.drizzle_charges, 'drizzle charge')}")
    if f.barrier_strip:
        out.append(f"strips {_share(f.barrier_strip)} of the opponent's barrier")
    if f.extra_casts:
        out.append(f"casts {f.extra_casts} more time" + ("s" if f.extra_casts > 1 else ""))
    if f.storm_delay_s:
        out.append(f"delays the opponent's next turn {f.storm_delay_s:g} s")
    if f.overflow_to_barrier:
        out.append("healing beyond max HP becomes barrier")
    if f.curse_s:
        out.append(f"curses for {f.curse_s:g} s")
    if f.curse_duration_x != 1.0:
        out.append(f"curses last {_x(f.curse_duration_x)}")
    if f.freeze_duration_x != 1.0:
        out.append(f"freezes last {_x(f.freeze_duration_x)}")
    return out


def _flow_text(f, other: str) -> str:
    extra = _flow_extras(f)
    return f"{other} ({f.id} {_x(f.multiplier)}" + (", " + ", ".join(extra) if extra else "") + ")"


def _rune_info(rules: Rules, kind: str) -> list[str]:
    spec = rules.spec
    r = getattr(spec.runes, kind)
    role = "a casting rune" if kind in CASTING_KINDS else "a support (no turns of its own)"
    lines = [f"{kind} ({RUNE_CODES[kind]}): {role}, price {r.price} mana"]
    lines += [f"  {t}" for t in _rune_effect(rules, kind)]
    if kind in CASTING_KINDS:
        lines.append(f"  power: grade {_by_grade(spec.grades.power_x)} ({_grades(rules)}), ring "
                     f"{_by_grade(spec.rings.power_x)} (rings "
                     f"{'/'.join(str(i + 1) for i in range(rules.radius))})")
        fed = [_flow_text(f, f.from_) for f in spec.flows if f.to == kind]
        feeds = [_flow_text(f, f.to) for f in spec.flows if f.from_ == kind]
        if fed:
            lines.append("  fed by (inward): " + "; ".join(fed))
        if feeds:
            lines.append("  feeds (outward): " + "; ".join(feeds))
        lines.append(f"  attunement: fed by its own kind {_x(spec.attunement.multiplier)}")
        opp = [b if a == kind else a for a, b in spec.opposition.pairs if kind in (a, b)]
        if opp:
            lines.append(f"  opposition: next to {_and(opp)}, power "
                         f"{_x(spec.opposition.multiplier)}")
        if kind in ATTACK_KINDS:
            beats = [b for a, b in spec.affinity.beats if a == kind]
            beaten = [a for a, b in spec.affinity.beats if b == kind]
            aff = ([f"beats {_and(beats)}"] if beats else []) + \
                ([f"beaten by {_and(beaten)}"] if beaten else [])
            if aff:
                lines.append(f"  affinity: {', '.join(aff)} (its hits {_x(spec.affinity.min)} "
                             f"to {_x(spec.affinity.max)} by the opponent's runes)")
    ach = getattr(spec.achievements, kind, None) if kind in ("delay", "node", "mimic") else None
    if ach:
        lines.append(f"  with a profile, unlocked by the achievement {ach}")
    return lines


def info_index(rules: Rules) -> dict[str, str]:
    """Every name `info` explains -> its category."""
    spec = rules.spec
    index: dict[str, str] = {}
    for cat, names in (("rune", KINDS), ("core", spec.cores), ("boss rule", spec.boss_rules),
                       ("relic", spec.relics), ("artifact", spec.artifacts),
                       ("reward", sorted(REWARD_CATEGORIES, key=lambda c: c == ARTIFACT)),
                       ("flow", [f.id for f in spec.flows])):
        for n in names:
            index.setdefault(n, cat)
    return index


def _normal(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def info_lines(rules: Rules, name: str, state: RunState | None = None) -> list[str]:
    """`name` (a rune, core, relic, boss rule, artifact, reward or flow) explained in words, with
    the rules' numbers, as screen lines of at most WIDTH columns. With no name: every name.
    Raises KeyError (its message says what is known) for an unknown name."""
    spec = rules.spec
    run = spec.run
    index = info_index(rules)
    key = _normal(name)
    if RewardOption.parse(key).gives_artifact:
        key = RewardOption.parse(key).artifact
    if not key:
        by_cat: dict[str, list[str]] = {}
        for n, cat in index.items():
            by_cat.setdefault(cat, []).append(n)
        out = ["info NAME explains any of these:"]
        for cat, names in by_cat.items():
            out += wrap_items(f"  {cat}s: ", names, sep=", ", indent="    ")
        return out
    if key not in index:
        close = difflib.get_close_matches(key, list(index), n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(close)}?" if close else \
            "; type info alone for the list"
        raise KeyError(f"nothing is called {name!r}{hint}")
    cat = index[key]
    if cat == "rune":
        lines = _rune_info(rules, key)
    elif cat == "core":
        m = spec.cores[key]
        lines = [f"{key} (a core: chosen at the start of a run, kept for the run)"]
        lines += [f"  {p}" for p in modifier_phrases(rules, m)]
        if m.interval_x != 1.0:
            ms = spec.battle.base_interval_s * m.interval_x
            lines.append(f"  (a turn every {ms:g} s instead of {spec.battle.base_interval_s:g} s)")
        if m.core_flow_strength > 0:
            lines.append("  its element: set with `element NAME` (any element, any time in "
                         "preparation)")
    elif cat in ("boss rule", "relic"):
        table = spec.boss_rules if cat == "boss rule" else spec.relics
        m = table[key]
        if cat == "boss rule":
            head = (f"{key} (a boss rule: the opponent plays with it in boss rounds, every "
                    f"{run.boss_every}th round)")
        else:
            head = (f"{key} (a relic: after a boss win you choose 1 of {run.relic_choices}, "
                    f"kept for the run)")
        lines = [head] + [f"  {p}" for p in modifier_phrases(rules, m)]
        if m.hp_x != 1.0 and cat == "boss rule":
            r = run.boss_every
            lines.append(f"  (round {r}: {round_hp(rules, r):g} -> "
                         f"{round_hp(rules, r) * m.hp_x:g} max HP)")
        if state is not None and cat == "boss rule":
            rounds = [str(r) for r, b in sorted(state.boss_schedule.items()) if key in b]
            where = (f"round{'s' if len(rounds) > 1 else ''} " + ", ".join(rounds)) if rounds \
                else "never"
            lines.append(f"  in this run: {where}")
    elif cat == "artifact":
        a = spec.artifacts[key]
        sell = int(a.price * run.artifact_sell_x)
        lines = [f"{key} (an artifact, price {a.price} mana, sells for {sell}): it stands on an "
                 f"open cell and reaches that cell and its six neighbours"]
        lines += [f"  {p}" for p in artifact_phrases(rules, key)]
    elif cat == "reward":
        lines = [f"{key} (a reward: at the start of round {run.reward_first_round} and every "
                 f"{run.reward_every} rounds after, you choose 1 of {run.reward_choices})",
                 f"  {reward_text(rules, key)}"]
        if key == "base_stat":
            lines.append(f"  they add up: max HP x(1 + {run.reward_base_stat_hp_x:g} n) after n")
    else:  # flow
        f = next(f for f in spec.flows if f.id == key)
        extra = _flow_extras(f)
        lines = [f"{key} (a flow): a {f.from_} rune inward-adjacent to a {f.to} rune (or linked "
                 f"by a node) makes its power {_x(f.multiplier)}"]
        if extra:
            lines.append("  and the fed rune " + ", ".join(extra))
    out: list[str] = []
    for line in lines:
        out += wrap(line, WIDTH, "    " if line.startswith("  ") else "  ")
    return out
