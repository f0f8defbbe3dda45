"""(Re)compute the golden traces: tests/data/golden.json, golden_balance.json, golden_amplify_cap.json.

    python scripts/pin_golden.py [--set literal|balance]   # recompute and write (default: both)
    python scripts/pin_golden.py --check                  # recompute and report, write nothing

Two sets. "literal": tests/data/golden.json, pinned under the frozen rules tests/data/rules.yaml
(the rules as written: no balance rules). "balance": tests/data/golden_balance.json, pinned under
tests/data/default_rules.yaml, a frozen copy of the default rules with the balance rules of RULES
section 13 (rest turns, the seal cap floor, one freeze at a time); it holds the same 24 battles
and 6 small-board battles where those rules act. "amplify_cap": tests/data/golden_amplify_cap.json,
pinned under tests/data/amplify_cap_rules.yaml, a frozen copy of the defaults with the amplify cap
(RULES D-54); the balance set's 30 battles and 5 amplify battles where the cap acts.

The golden set is 24 battles: 16 pairs drawn by `random_board` with fixed seeds across rounds
1..12, and 8 hand-chosen pairs that together field every core, every relic, every boss rule,
every artifact and every rune kind. Each entry keeps both boards (in the board-file format,
so a change to the sampler never changes the set), the result, `trace_hash()` and a short hash
of every traced event (so the test can name the first event that changed).

The values are whatever the engine computes, against the FROZEN rules tests/data/rules.yaml:
they are pinned, not worked out by hand, and they only detect change. Re-pinning (running this
script and committing the new golden.json) needs a reason in the commit message: which rule or
engine change moved which battle, and why the new values are right. Never re-pin to make a
failing test pass without that reason.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

import numpy as np

from rune_env.battle import battle
from rune_env.rules import Board, load_rules
from rune_env.files import write_json_atomic
from rune_env.rules.sampling import random_board

FROZEN_RULES = ROOT / "tests" / "data" / "rules.yaml"
GOLDEN = ROOT / "tests" / "data" / "golden.json"
# set name -> (the frozen rules it is pinned under, the file)
SETS = {"literal": (FROZEN_RULES, GOLDEN),
        "balance": (ROOT / "tests" / "data" / "default_rules.yaml",
                    ROOT / "tests" / "data" / "golden_balance.json"),
        "amplify_cap": (ROOT / "tests" / "data" / "amplify_cap_rules.yaml",
                        ROOT / "tests" / "data" / "golden_amplify_cap.json")}

# 16 random pairs: (seed, round). Rounds 1..12, then four more across the range.
RANDOM_PAIRS = [(1000 + i, 1 + i % 12) for i in range(12)] + [
    (2001, 3), (2002, 6), (2003, 9), (2004, 12)]

# 8 hand-chosen pairs (board-file format). Together: every core, relic, boss rule, artifact
# and rune kind.
HAND_PAIRS: list[tuple[str, dict, dict]] = [
    ("sun-vein-focus-warding-amplify vs star-sixfold-mirror",
     {"core": "sun", "sun_element": "fire", "round": 6,
      "runes": {"1:0": ["wind", 1], "1:3": ["thunder", 2], "2:0": ["fire", 2],
                "1:1": ["amplify", 2], "2:2": ["wind", 1], "2:3": ["ice", 1]},
      "relics": ["mana_vein", "focusing_mirror", "warding_seal"]},
     {"core": "star", "round": 6,
      "runes": {"1:0": ["wind", 1], "1:1": ["wind", 1], "1:2": ["wind", 1],
                "1:3": ["wind", 1], "1:4": ["wind", 1], "1:5": ["wind", 1],
                "2:0": ["water", 1]},
      "relics": ["resonance_mirror"]}),
    ("moon-hourglass-ember-lava-storm vs eclipse-thorn-corrosion",
     {"core": "moon", "round": 5,
      "runes": {"1:0": ["fire", 2], "1:2": ["earth", 1], "2:3": ["fire", 1],
                "1:4": ["thunder", 1], "2:8": ["wind", 1]},
      "relics": ["hourglass", "ember_jar"]},
     {"core": "eclipse", "round": 5, "boss_rules": ["corrosion"],
      "runes": {"1:0": ["water", 1], "2:0": ["earth", 2], "1:3": ["dark", 1],
                "2:6": ["fire", 1], "2:1": ["light", 1]},
      "relics": ["thorn_crown"]}),
    ("tree-reserves-bag-purse vs ironwall-giant-wardstone",
     {"core": "tree", "round": 4,
      "runes": {"1:0": ["fire", 1], "1:3": ["fire", 1], "2:0": ["wind", 1],
                "2:6": ["water", 1]},
      "hand": [["earth", 2], ["light", 1], ["ice", 1]],
      "relics": ["big_bag", "coin_purse"]},
     {"round": 10, "boss_rules": ["ironwall", "giant"],
      "runes": {"1:0": ["earth", 1], "1:1": ["thunder", 1], "1:5": ["ice", 2],
                "2:0": ["wind", 1]},
      "artifacts": {"1:0": "ward_stone"}}),
    ("node-mimic-delay vs mirror-swift-doll-spring",
     {"round": 7,
      "runes": {"1:0": ["fire", 2], "2:0": ["mimic", 2], "1:2": ["node", 1],
                "1:1": ["water", 1], "1:3": ["earth", 1], "2:4": ["amplify", 1],
                "2:5": ["wind", 1], "1:4": ["delay", 1], "2:8": ["thunder", 1]}},
     {"round": 7, "boss_rules": ["mirror", "swift"],
      "runes": {"1:0": ["ice", 1], "1:3": ["ice", 1], "1:2": ["wind", 1],
                "1:4": ["water", 2], "2:6": ["resonator", 1]},
      "artifacts": {"2:0": "scapegoat_doll", "1:3": "mana_spring"}}),
    ("warding-tide-bulwark-mudwall-blessedrain vs drizzle-storm-thundercloud",
     {"round": 8,
      "runes": {"1:0": ["water", 1], "2:0": ["earth", 2], "2:1": ["light", 1],
                "1:3": ["light", 2], "2:6": ["water", 1]},
      "relics": ["warding_seal", "tide_vessel", "bulwark"]},
     {"round": 8,
      "runes": {"1:0": ["wind", 1], "2:0": ["thunder", 1], "2:1": ["water", 1],
                "1:3": ["thunder", 1], "2:6": ["wind", 2]}}),
    ("phoenix-furnace-deepfreeze-blizzard vs sun-light-umbra-blackflame",
     {"round": 3,
      "runes": {"1:0": ["water", 1], "2:0": ["ice", 2], "1:3": ["wind", 1],
                "2:6": ["ice", 1]},
      "artifacts": {"1:0": "mana_furnace"}, "relics": ["phoenix_feather"]},
     {"core": "sun", "sun_element": "light", "round": 3,
      "runes": {"1:0": ["dark", 2], "1:3": ["dark", 1], "2:6": ["fire", 1],
                "1:2": ["water", 1]}}),
    ("eclipse-ring3-lava-discharge-electrocute vs star-ring3-wardstone",
     {"core": "eclipse", "round": 9, "open_sectors": [0, 1],
      "runes": {"1:0": ["earth", 1], "2:0": ["fire", 2], "2:1": ["water", 1],
                "3:0": ["fire", 1], "3:1": ["thunder", 1], "2:2": ["wind", 1],
                "3:3": ["wind", 1]}},
     {"core": "star", "round": 9, "open_sectors": [3],
      "runes": {"3:9": ["earth", 3], "3:10": ["earth", 1], "1:0": ["fire", 1],
                "1:3": ["fire", 1], "2:0": ["light", 1]},
      "artifacts": {"3:9": "ward_stone"}}),
    ("round12-moon-grade3 vs round12-tree-giant-corrosion",
     {"core": "moon", "round": 12, "open_sectors": [0, 2],
      "runes": {"1:0": ["thunder", 3], "1:3": ["fire", 3], "2:0": ["wind", 2],
                "2:6": ["amplify", 2], "3:8": ["fire", 2], "3:1": ["ice", 3]},
      "relics": ["hourglass", "focusing_mirror", "mana_vein"]},
     {"core": "tree", "round": 12, "boss_rules": ["giant", "corrosion"],
      "runes": {"1:0": ["earth", 3], "1:1": ["water", 3], "2:1": ["earth", 2],
                "2:2": ["light", 2], "1:4": ["dark", 3], "2:8": ["fire", 2]},
      "hand": [["fire", 3], ["water", 1]]}),
]


# 6 small boards for the balance set: one and two runes (rest turns, the cap floor), ices (the
# freeze limit), a mimic copying an ice, a tree core with reserves, a moon core.
SMALL_PAIRS: list[tuple[str, dict, dict]] = [
    ("one moon ice vs five runes",
     {"core": "moon", "round": 6, "runes": {"1:0": ["ice", 2]}},
     {"core": "sun", "sun_element": "wind", "round": 6,
      "runes": {"1:0": ["fire", 2], "1:1": ["wind", 1], "2:0": ["wind", 2], "1:3": ["water", 1],
                "2:6": ["thunder", 1]}}),
    ("two ices vs ice and mimic",
     {"core": "star", "round": 4, "runes": {"1:0": ["ice", 1], "1:3": ["ice", 2]}},
     {"core": "moon", "round": 4, "runes": {"1:0": ["ice", 2], "2:0": ["mimic", 1],
                                            "1:2": ["fire", 1]}}),
    ("tree two with reserves vs eclipse three",
     {"core": "tree", "round": 8, "runes": {"1:0": ["thunder", 2], "2:0": ["wind", 2]},
      "hand": [["fire", 1], ["ice", 2], ["thunder", 1]]},
     {"core": "eclipse", "round": 8, "runes": {"1:0": ["dark", 2], "1:2": ["ice", 1],
                                               "2:4": ["fire", 2]}}),
    ("lone fire with a reserve vs lone ice",
     {"core": "sun", "sun_element": "wind", "round": 3, "runes": {"1:0": ["fire", 2]},
      "hand": [["fire", 1]]},
     {"core": "moon", "round": 3, "runes": {"2:0": ["ice", 1]}}),
    ("storm on a rester",
     {"core": "moon", "round": 5, "runes": {"1:0": ["water", 2]}, "relics": ["tide_vessel"]},
     {"core": "sun", "sun_element": "thunder", "round": 5,
      "runes": {"1:0": ["thunder", 1], "2:0": ["wind", 2], "1:3": ["earth", 1]}}),
    ("deep freeze pair vs ward stone trio",
     {"core": "moon", "round": 10, "runes": {"1:0": ["water", 2], "2:0": ["ice", 2]},
      "artifacts": {"2:0": "scapegoat_doll"}},
     {"core": "star", "round": 10, "runes": {"1:0": ["ice", 1], "1:2": ["ice", 1],
                                             "1:4": ["ice", 1]},
      "artifacts": {"1:0": "ward_stone"}}),
]


# 5 amplify boards for the amplify-cap set (D-54): a tower whose amplifies reach it inward and
# through two nodes (x16.9, capped), one amplify under the cap, three over it, a focusing mirror
# lifting two amplifies over it, a mimic copying a capped rune.
TOWER = {"core": "moon", "round": 6,
         "runes": {"2:1": ["thunder", 2], "1:0": ["amplify", 1], "1:1": ["amplify", 1],
                   "2:0": ["node", 1], "2:11": ["amplify", 1], "2:2": ["node", 1],
                   "2:3": ["amplify", 1]},
         "artifacts": {"2:1": "mana_spring"}}
DRAFTED = {"core": "sun", "sun_element": "wind", "round": 6,
           "runes": {"1:0": ["fire", 2], "1:1": ["wind", 1], "2:0": ["wind", 2],
                     "1:3": ["water", 1], "2:6": ["thunder", 1], "1:4": ["earth", 1]}}
AMPLIFY_PAIRS: list[tuple[str, dict, dict]] = [
    ("tower through nodes vs six runes", TOWER, DRAFTED),
    ("six runes vs tower through nodes", DRAFTED, TOWER),
    ("one amplify under the cap vs three over it",
     {"core": "star", "round": 4, "runes": {"1:0": ["amplify", 1], "2:0": ["fire", 1],
                                            "1:3": ["water", 1]}},
     {"core": "star", "round": 4, "runes": {"1:0": ["amplify", 1], "1:1": ["amplify", 1],
                                            "2:1": ["fire", 1], "2:0": ["node", 1],
                                            "2:11": ["amplify", 1]}}),
    ("focusing mirror over the cap vs ward stone",
     {"core": "eclipse", "round": 8, "relics": ["focusing_mirror"],
      "runes": {"1:0": ["amplify", 2], "1:1": ["amplify", 1], "2:1": ["wind", 2],
                "1:3": ["earth", 1]}},
     {"core": "tree", "round": 8, "runes": {"1:0": ["earth", 2], "1:2": ["fire", 2],
                                            "2:4": ["dark", 1]},
      "artifacts": {"1:0": "ward_stone"}}),
    ("mimic of a capped rune vs five runes",
     {"core": "sun", "sun_element": "fire", "round": 9,
      "runes": {"1:0": ["amplify", 2], "1:1": ["amplify", 2], "2:1": ["fire", 2],
                "3:2": ["mimic", 2], "2:2": ["node", 1], "2:3": ["amplify", 1]},
      "open_sectors": [0]},
     {"core": "star", "round": 9, "runes": {"1:0": ["wind", 2], "1:3": ["thunder", 1],
                                            "2:0": ["water", 2], "2:6": ["fire", 2],
                                            "1:4": ["dark", 1]}}),
]


def event_hash(event: dict) -> str:
    """A short digest of one traced event (the test names the first one that changed)."""
    text = json.dumps(event, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def result_record(r) -> dict:
    return {"winner": r.winner, "reason": r.reason, "time": r.time, "hp": list(r.hp),
            "max_hp": list(r.max_hp), "casts": list(r.casts), "turns": list(r.turns),
            "seals": list(r.seals)}


def play(entry: dict, rules):
    """Play one golden entry's boards (traced)."""
    b0 = Board.from_json(entry["board0"], rules, source=f"{entry['name']} board0")
    b1 = Board.from_json(entry["board1"], rules, source=f"{entry['name']} board1")
    return battle(b0, b1, rules, trace=True)


def make_entry(name: str, b0: Board, b1: Board, rules) -> dict:
    entry = {"name": name, "board0": b0.to_json(rules), "board1": b1.to_json(rules)}
    r = play(entry, rules)  # played from the stored JSON, exactly as the test will
    entry["result"] = result_record(r)
    entry["trace_hash"] = r.trace_hash()
    entry["n_events"] = len(r.events)
    entry["event_hashes"] = " ".join(event_hash(e) for e in r.events)
    return entry


def compute(rules, set_name: str = "literal") -> dict:
    battles = []
    for seed, rnd in RANDOM_PAIRS:
        rng = np.random.default_rng(seed)
        b0 = random_board(rng, rnd, rules)
        b1 = random_board(rng, rnd, rules)
        battles.append(make_entry(f"random seed {seed} round {rnd}", b0, b1, rules))
    for name, d0, d1 in HAND_PAIRS:
        b0 = Board.from_json(d0, rules, source=f"{name} board0")
        b1 = Board.from_json(d1, rules, source=f"{name} board1")
        battles.append(make_entry(name, b0, b1, rules))
    extra = {"balance": SMALL_PAIRS, "amplify_cap": SMALL_PAIRS + AMPLIFY_PAIRS}
    if set_name in extra:
        for name, d0, d1 in extra[set_name]:
            b0 = Board.from_json(d0, rules, source=f"{name} board0")
            b1 = Board.from_json(d1, rules, source=f"{name} board1")
            battles.append(make_entry(name, b0, b1, rules))
    rules_file = SETS[set_name][0].relative_to(ROOT)
    return {
        "about": (f"Golden traces ({set_name}): computed once by the engine against {rules_file} "
                  "and pinned; not hand-worked. Recompute with scripts/pin_golden.py; re-pinning "
                  "needs a reason in the commit message."),
        "rules_hash": rules.hash,
        "battles": battles,
    }


def main(argv: list[str] | None = None) -> int:
    from agents.cli.args import script_parser
    ap = script_parser(__doc__)        # a bad argument: one `error: ...` line, exit status 2
    ap.add_argument("--check", action="store_true",
                    help="compare with the pinned files, write nothing (default off: recompute "
                         "and write)")
    ap.add_argument("--set", choices=sorted(SETS), action="append",
                    help="the golden set to recompute (repeatable; default: every set)")
    args = ap.parse_args(argv)
    status = 0
    for set_name in args.set or sorted(SETS):
        rules_path, golden = SETS[set_name]
        rules = load_rules(rules_path)
        data = compute(rules, set_name)
        if args.check:
            status |= _check(set_name, data, golden)
            continue
        write_json_atomic(golden, data)
        kinds = {}
        for b in data["battles"]:
            key = (b["result"]["reason"], b["result"]["winner"])
            kinds[key] = kinds.get(key, 0) + 1
        print(f"wrote {golden.relative_to(ROOT)}: {len(data['battles'])} battles {kinds}")
    return status


def _check(set_name: str, data: dict, golden: Path) -> int:
    old = json.loads(golden.read_text(encoding="utf-8"))
    old_by_name = {b["name"]: b for b in old["battles"]}
    changed = [b["name"] for b in data["battles"] if old_by_name.get(b["name"]) != b]
    gone = sorted(set(old_by_name) - {b["name"] for b in data["battles"]})
    for name in changed:
        print(f"{set_name}: changed: {name}")
    for name in gone:
        print(f"{set_name}: no longer computed: {name}")
    if old.get("rules_hash") != data["rules_hash"]:
        print(f"note: {SETS[set_name][0].relative_to(ROOT)} changed since pinning (the battles "
              "above are what count; the stored hash is information)")
    print(f"{set_name}: golden traces up to date" if not (changed or gone) else
          f"{set_name}: {len(changed) + len(gone)} battle(s) differ")
    return 1 if changed or gone else 0


if __name__ == "__main__":
    sys.exit(main())
