"""What a run holds while it prepares, and what it takes to turn that into a board.

The search player plans a *target*: the board it wants to field, as a `Layout`. `Assets.of(state)`
is what the player may see of its own run: its runes (board and hand), artifacts (placed and in
the inventory), open sectors, mana, slots, relics, max HP, and the shop's offers on display. Never
the run's generator: what a reroll will show is not known, only how likely it is.

`Assets.reach(layout)` says whether the target can be reached in this preparation, and at what
price (`Reach`), or None:

- **Runes**, kind by kind. A target rune of grade g is made of `merge_count`^(g-1) grade-I runes
  (D-11). An owned rune of the same kind and grade serves as it is; else the rune is built from
  `merge_count` runes of the grade below, each owned or built in turn, down to grade-I runes that
  are bought. Owned runes the target does not use are sold (RULES D-40: one mana a grade-I rune
  they were made of).
- **The shop.** A rune to buy that is on display is bought now. The rest need rerolls: a view
  shows `shop_rune_offers` runes drawn uniformly from the unlocked kinds, so a kind short by d
  runes needs about d x kinds / offers views, and several short kinds share the views (the
  largest shortfall, plus half of the others: `expected_views`). Artifacts likewise, with the
  artifact offers. Each view after the one on display costs `reroll_cost`. With `rerolls=False`
  (a plan for what is on display now) a shortfall makes the target unreachable.
- **Sectors** the target's ring-3 cells need are opened in the order of `sectors.open_costs`.
- **Actions**: buys, rerolls, merges, placements and pick-ups, sales, sector openings and the
  sun's element, against the round's actions left (D-41: the preparation ends by itself at
  `run.action_cap`).

`private_copy(state)` is the run to weigh a choice on: a copy without the run's generator.

These are estimates of a plan, not the executor's exact path (`agents.search.execute` follows
the plan with the shop it meets and re-plans when the shop falls short).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace

from rune_env.rules import Board, Rules
from rune_env.run.state import RunState

from .boards import Layout, board_fields_key

Rune = tuple[str, int]


@dataclass(frozen=True)
class Reach:
    """The price of reaching a target from the assets (`Assets.reach`)."""

    mana: int                      # purchases, sectors and rerolls, less what sales return
    actions: int                   # preparation actions, estimated
    rerolls: int                   # expected rerolls
    waste: int = 0                 # mana gone for good: rerolls, and sales below the price paid
    buy: dict = field(default_factory=dict)    # kind -> grade-I runes to buy
    artifacts: tuple = ()          # artifacts to buy
    sectors: tuple = ()            # sectors to open


@dataclass(frozen=True, eq=False)
class Assets:
    """A run's own holdings in preparation (the module docstring); `of(state)` reads them."""

    rules: Rules
    core: str
    sun_element: str | None
    board: dict                    # cell -> (kind, grade)
    hand: tuple
    artifacts: dict                # placed: cell -> artifact
    inventory: tuple               # artifacts not placed
    open_sectors: tuple            # in the order opened
    mana: int
    hand_slots: int
    artifact_slots: int
    shop_runes: tuple              # offers on display (None: bought)
    shop_artifacts: tuple
    unlocked: tuple
    actions_left: int              # preparation actions before the round's cap forces ready
    relics: tuple
    max_hp: float
    round: int
    boss_rules: tuple = ()         # this round's opponent's (visible from the run's start, D-43)

    @classmethod
    def of(cls, state: RunState) -> "Assets":
        run = state.rules.spec.run
        return cls(rules=state.rules, core=state.core, sun_element=state.sun_element,
                   board=dict(state.board), hand=tuple(state.hand),
                   artifacts=dict(state.artifacts), inventory=tuple(state.artifact_inventory),
                   open_sectors=tuple(state.open_sectors), mana=state.mana,
                   hand_slots=state.hand_slots, artifact_slots=state.artifact_slots,
                   shop_runes=tuple(state.shop_runes), shop_artifacts=tuple(state.shop_artifacts),
                   unlocked=tuple(state.unlocked),
                   actions_left=max(0, run.action_cap - 1 - state.prep_actions),
                   relics=tuple(state.relics), max_hp=state.max_hp, round=state.round,
                   boss_rules=tuple(state.boss_rules))

    def shopping_freely(self) -> "Assets":
        """These assets as if the shop showed every unlocked kind and artifact as often as a
        target could want (no rerolls) and the round had no action cap: the budget boards of
        the audit, for weighing a choice made before any shop is seen (the core)."""
        many = self.rules.spec.run.hand_slots_max * self.rules.spec.grades.merge_count ** (
            self.rules.max_grade - 1)
        return replace(self, shop_runes=tuple(k for k in self.unlocked for _ in range(many)),
                       shop_artifacts=tuple(a for a in self.rules.spec.artifacts
                                            for _ in range(self.artifact_slots)),
                       actions_left=10**6)

    _HOLDINGS_CACHES = ("_kind_plans", "_artifact_plans", "_rune_plans")
    _SHOP_AND_MANA = frozenset({"shop_runes", "shop_artifacts", "mana"})

    def varied(self, **changes) -> "Assets":
        """These assets with other offers on display or other mana (`changes`: shop_runes,
        shop_artifacts, mana), sharing the plans remembered per rune multiset, kind and artifact
        layout: they read the holdings and the kinds unlocked only, never the shop or the mana,
        so a lookahead's searches over many views of one holding price each plan once."""
        unknown = set(changes) - self._SHOP_AND_MANA
        if unknown:
            raise ValueError(f"varied: only {', '.join(sorted(self._SHOP_AND_MANA))} may vary; "
                             f"got {', '.join(sorted(unknown))}")
        other = replace(self, **changes)
        for cache in self._HOLDINGS_CACHES:
            object.__setattr__(other, cache, getattr(self, cache))
        return other

    # -- what is owned ----------------------------------------------------------------------
    def layout(self) -> Layout:
        """The board as it stands, as a layout (the hand as its reserves)."""
        return Layout(dict(self.board), self.core, self.sun_element, dict(self.artifacts),
                      list(self.hand))

    def owned_runes(self) -> list[Rune]:
        return [*self.board.values(), *self.hand]

    def owned_artifacts(self) -> list[str]:
        return [*self.artifacts.values(), *self.inventory]

    # -- the board a layout fields -------------------------------------------------------------
    def board_of(self, layout: Layout, sectors: frozenset[int] | None = None) -> Board:
        """The board the run would field with this layout: the run's core, relics, max HP and
        round, and the sectors it has open plus those the layout's cells need."""
        if sectors is None:
            sectors = self.fielded_sectors(layout)
        return Board(runes=dict(layout.runes), artifacts=dict(layout.artifacts),
                     hand=tuple(layout.hand), core=self.core, sun_element=layout.sun_element,
                     open_sectors=frozenset(sectors), relics=self.relics, max_hp=self.max_hp,
                     round=self.round)

    def fielded_sectors(self, layout: Layout) -> frozenset[int]:
        """The sectors the board of `layout` has open: the run's and those its cells need."""
        return self._open_set | layout.sectors(self.rules)

    def fielded_key(self, key: tuple, sectors: frozenset[int]) -> tuple:
        """`fast_key(self.board_of(layout))` from the layout's `layout_key` and its
        `fielded_sectors`, without building the board: a search keys many more edits than it
        keeps (the board's fields as `board_of` sets them)."""
        if key[0] != self.core:       # the board takes the run's core
            key = (self.core, *key[1:])
        return key + board_fields_key(sectors, self.relics, self.max_hp, (), self.round, "")

    # -- the price of a target -----------------------------------------------------------------
    def __post_init__(self) -> None:
        # what every `reach` reads, computed once: per kind the owned runes by grade (index =
        # grade) and their grade-I units; the offers and artifacts on display and owned
        rules = self.rules
        grades = rules.max_grade + 1
        by_kind: dict[str, list[int]] = {}
        for k, g in self.owned_runes():
            by_kind.setdefault(k, [0] * grades)[g] += 1
        m = rules.spec.grades.merge_count
        units = {k: sum(c * m ** (g - 1) for g, c in enumerate(counts) if g)
                 for k, counts in by_kind.items()}
        put = object.__setattr__     # a frozen dataclass: these are caches of its fields
        put(self, "_owned", by_kind)
        put(self, "_owned_units", units)
        put(self, "_shown_runes", Counter(k for k in self.shop_runes if k is not None))
        put(self, "_shown_arts", Counter(a for a in self.shop_artifacts if a is not None))
        put(self, "_owned_arts", Counter(self.owned_artifacts()))
        put(self, "_kind_plans", {})    # (kind, *grades wanted) -> _kind_plan's answer
        put(self, "_artifact_plans", {})   # the layout's artifacts, in order -> _artifact_plan's
        put(self, "_hand_count", Counter(self.hand))
        put(self, "_open_set", frozenset(self.open_sectors))
        put(self, "_rune_plans", {})    # the runes' multiset -> _rune_plan's answer (`price`)

    def reach(self, layout: Layout, rerolls: bool = True) -> Reach | None:
        """What reaching `layout` takes (the module docstring), or None when it cannot be
        reached in this preparation: more mana or actions than are left, more hand runes or
        artifacts than slots, a kind not unlocked, another core, or (with `rerolls=False`) a
        rune or artifact the shop does not show now."""
        if layout.core != self.core or len(layout.hand) > self.hand_slots \
                or len(layout.artifacts) > self.artifact_slots:
            return None
        found = self._reach(layout, rerolls, _rune_plan(self, layout))
        if found is None:
            return None
        mana, actions, views, waste, buy, arts, new_sectors = found
        return Reach(int(mana), int(actions), int(views), int(waste), dict(buy), tuple(arts),
                     tuple(new_sectors))

    def price(self, layout: Layout, rerolls: bool = True) -> tuple[int, int] | None:
        """(waste, mana) of `reach(layout, rerolls)`, or None where it is None: what a search
        scores. The runes' part is remembered per multiset of the layout's runes (board and
        hand): a search prices many layouts that only place the same runes elsewhere. (Only
        the order of `Reach.buy` would differ for another layout of the same runes: a price
        does not read it.)"""
        if layout.core != self.core or len(layout.hand) > self.hand_slots \
                or len(layout.artifacts) > self.artifact_slots:
            return None
        key = tuple(sorted([*layout.runes.values(), *layout.hand]))
        runes = self._rune_plans.get(key, _UNSET)
        if runes is _UNSET:
            runes = self._rune_plans[key] = _rune_plan(self, layout)
        found = self._reach(layout, rerolls, runes)
        return None if found is None else (int(found[3]), int(found[0]))

    def _reach(self, layout: Layout, rerolls: bool, runes) -> tuple | None:
        """`reach` given the layout's `_rune_plan`, as (mana, actions, views, waste, runes to
        buy, artifacts to buy, sectors to open): `price` reads two of them, for most of the
        layouts a search prices, and builds no `Reach`."""
        rules = self.rules
        spec = rules.spec
        if runes is None:
            return None
        buy, merges, _sold, sale_loss, rune_mana, bought = runes     # sales are in rune_mana
        arts = self._artifact_plans.get(key := tuple(layout.artifacts.items()))
        if arts is None:
            arts = self._artifact_plans[key] = _artifact_plan(self, layout)
        mana = rune_mana + arts[4]
        if mana > self.mana:          # before the sectors and rerolls, which only add to it:
            return None               # most rejected targets stop here
        sectors = self._sectors_needed(layout)
        if sectors is None:
            return None
        new_sectors, sector_mana = sectors
        mana += sector_mana
        if mana > self.mana:
            return None
        views = _views_needed(self, buy, arts[0])
        if views is None or (views > 0 and not rerolls):
            return None
        mana += views * spec.run.reroll_cost
        if mana > self.mana:
            return None
        actions = (bought + len(arts[0]) + views + merges + len(new_sectors)
                   + _moves(self, layout) + arts[2]
                   + (layout.sun_element != self.sun_element))
        if actions > self.actions_left:
            return None
        waste = views * spec.run.reroll_cost + sale_loss + arts[3]
        return mana, actions, views, waste, buy, arts[0], new_sectors

    def _sectors_needed(self, layout: Layout) -> tuple[list[int], int] | None:
        costs = self.rules.spec.sectors.open_costs
        needed = sorted(layout.sectors(self.rules) - self._open_set)
        n = len(self.open_sectors)
        if n + len(needed) > len(costs):
            return None
        return needed, sum(costs[n:n + len(needed)])


_UNSET = object()     # a rune plan not remembered yet (None is an answer: out of reach)


# -- the pieces of `reach` ----------------------------------------------------------------------
def build_runes(targets: list[int], owned, merge_count: int) -> tuple[int, int]:
    """Grade-I runes to buy and merges to make runes of the grades `targets` (one kind) from
    `owned` (grade -> count: a Counter or a list indexed by grade, consumed in place): an owned
    rune of a target's grade serves as it is, else the rune is merged from `merge_count` of the
    grade below, each owned or built in turn. Grade by grade from the highest: a grade's demand
    is its targets plus `merge_count` for each rune of the grade above still short, met by the
    owned runes of that grade first."""
    top = max(targets, default=0)
    demand = [0] * (top + 1)
    for g in targets:
        demand[g] += 1
    buy = merges = short = 0
    for g in range(top, 0, -1):
        need = demand[g] + short * merge_count
        use = min(owned[g], need)
        owned[g] -= use
        short = need - use
        if g > 1:
            merges += short
        else:
            buy = short
    return buy, merges


def _rune_plan(assets: Assets, layout: Layout) -> tuple[dict, int, int, int, int, int] | None:
    """(kind -> grade-I runes to buy, merges, grade-I runes sold, mana the sales lose against
    the price paid, mana the runes take: the purchases less the sales, runes bought) or None
    for a kind the shop cannot give."""
    rules = assets.rules
    m = rules.spec.grades.merge_count
    grades = rules.max_grade + 1
    want: dict[str, list[int]] = {}
    for k, g in layout.runes.values():
        want.setdefault(k, []).append(g)
    for k, g in layout.hand:
        want.setdefault(k, []).append(g)
    plans = assets._kind_plans
    buy: dict[str, int] = {}
    merges = 0
    left = dict(assets._owned_units)       # kind -> grade-I units of owned runes not used
    for kind, wanted in want.items():
        # build_runes reads the grades, not their order
        key = (kind, wanted[0]) if len(wanted) == 1 else (kind, *sorted(wanted))
        plan = plans.get(key)
        if plan is None:
            plan = plans[key] = _kind_plan(assets, kind, wanted, m, grades)
        n, mg, units = plan
        if n:
            if kind not in assets.unlocked:
                return None
            buy[kind] = n
        merges += mg
        if units is not None:
            left[kind] = units
    per_unit = rules.spec.run.rune_sell_per_unit
    sold = loss = 0
    for k, n in left.items():
        if n:
            sold += n
            loss += max(0, rules.prices[k] - per_unit) * n
    mana = sum(rules.prices[k] * n for k, n in buy.items()) - sold * per_unit
    return buy, merges, sold, loss, mana, sum(buy.values())


def _kind_plan(assets: Assets, kind: str, wanted: list[int], m: int,
               grades: int) -> tuple[int, int, int | None]:
    """One kind's part of `_rune_plan`: (grade-I runes to buy, merges, grade-I units of the owned
    runes of the kind left unused, None if none is owned). It depends on the assets and the
    grades wanted only, so `_rune_plan` remembers it per (kind, grades) in the assets."""
    owned = assets._owned.get(kind)
    counts = list(owned) if owned is not None else [0] * grades
    n, mg = build_runes(wanted, counts, m)
    if owned is None:
        return n, mg, None
    units = 0
    for g in range(1, grades):
        if counts[g]:
            units += counts[g] * m ** (g - 1)
    return n, mg, units


def _artifact_plan(assets: Assets, layout: Layout) -> tuple[list[str], int, int, int, int]:
    """(artifacts to buy, mana the sales of unused ones return, placement actions, mana those
    sales lose against the price paid, mana the artifacts take: the purchases less the
    sales)."""
    spec = assets.rules.spec
    owned = Counter(assets._owned_arts)
    to_buy = []
    for a in layout.artifacts.values():
        if owned[a] > 0:
            owned[a] -= 1
        else:
            to_buy.append(a)
    refund = sum(int(spec.artifacts[a].price * spec.run.artifact_sell_x) * c
                 for a, c in owned.items())
    placed = sum(1 for c, a in layout.artifacts.items() if assets.artifacts.get(c) != a)
    picked = sum(1 for c, a in assets.artifacts.items() if layout.artifacts.get(c) != a)
    sales = sum(owned.values())
    loss = sum(spec.artifacts[a].price * c for a, c in owned.items()) - refund
    mana = sum(spec.artifacts[a].price for a in to_buy) - refund
    return to_buy, refund, placed + picked + sales, loss, mana


def expected_views(short: list[int], kinds: int, offers: int) -> int:
    """Views of the shop beyond the one on display to find runes short by `short` (per kind), a
    view showing `offers` draws uniform over `kinds` (the module docstring)."""
    short = [s for s in short if s > 0]
    if not short or offers <= 0:
        return 0 if not short else 10**6
    top = max(short)
    return math.ceil(kinds / offers * (top + 0.5 * (sum(short) - top)))


def _views_needed(assets: Assets, buy: Counter, arts: list[str]) -> int | None:
    run = assets.rules.spec.run
    shown = assets._shown_runes
    short_runes = [n - shown[k] for k, n in buy.items()]
    shown_arts = assets._shown_arts
    short_arts = [n - shown_arts[a] for a, n in Counter(arts).items()] if arts else []
    views = max(expected_views(short_runes, len(assets.unlocked), run.shop_rune_offers),
                expected_views(short_arts, len(assets.rules.spec.artifacts),
                               run.shop_artifact_offers))
    return None if views >= 10**6 else views


def _moves(assets: Assets, layout: Layout) -> int:
    """Placements and pick-ups: a target cell that does not hold its rune yet takes a placement,
    a cell holding a rune the target does not want there a pick-up, a rune in hand the target
    does not keep a sale."""
    place = sum(1 for c, r in layout.runes.items() if assets.board.get(c) != r)
    pick = sum(1 for c, r in assets.board.items() if layout.runes.get(c) != r)
    if not assets.hand or tuple(layout.hand) == assets.hand:
        return place + pick                 # no rune in hand to sell
    sales = sum((assets._hand_count - Counter(layout.hand)).values())
    return place + pick + sales


def private_copy(state: RunState) -> RunState:
    """A copy of the run to weigh a choice on, without the run's generator (a reroll, a shop
    or a battle on it fails: the player never previews a draw it has not made)."""
    trial = state.clone(with_rng=False)
    trial.pending = None if state.pending is None else state.pending.copy()
    return trial
