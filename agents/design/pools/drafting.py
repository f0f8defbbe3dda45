"""Drafting ghosts: the opponent side's economy of a rank (`drafting_overrides`), the drafting
agents (`make_drafting_agent`, `make_agents`), the ghosts of their runs (`ghosts_of`,
`draft_ghosts`: one ghost per battle), the metagame's boards as a rank's ghosts
(`metagame_ghosts`, the recipe's agent `metagame`) and their tally into pool entries (`tally`, one
entry per distinct (round, agent, board) with its count; `by_round`, `summary`)."""
from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

from agents import SAMPLED_PREFIX, SCHEDULE_PREFIX, is_builtin, make_agent
from agents.cli.args import round_ranges
from agents.cli.progress import CountRuns, bar
from agents.evaluation.runs import eval_run_seed
from rune_env.run.opponents import Pool, ghost_count
from rune_env.run.ranks import rank_effects

# what the drafting runs battle: the budget drafter (the opponents the PPO agents trained
# against), never a shipped pool, so a pool does not depend on the pools already shipped
DRAFTING_OPPONENTS = "generator"
SEED_STRIDE = 1000   # agent i drafts on evaluation seed seed * SEED_STRIDE + i
METAGAME = "metagame"   # a recipe's source of the metagame's boards (not an agent that plays)


def drafting_overrides(rules, rank: int) -> dict:
    """The opponent side's economy of `rank`: income and start mana x the budget factor."""
    x = rank_effects(rules, rank).opponent_budget_x
    run = rules.spec.run
    out = {"run.endless": True}
    if x != 1.0:
        out["run.income"] = int(math.floor(run.income * x + 1e-9))
        out["run.start_mana"] = int(math.floor(run.start_mana * x + 1e-9))
    return out


# a pool records each drafter's policy file and its hash; a by_round agent is several, and is a
# teacher to distil (pretrain.agent) rather than a drafter
NO_SCHEDULES = ("agent {!r}: a by_round agent does not draft pools; distil it into one policy "
                "(a train config's pretrain.agent) and draft with that")


# a pool's provenance names one policy file and its hash per drafter; sampled search plays a
# policy and a reference, which a pool does not record yet
NO_SAMPLED = ("agent {!r}: sampled search does not draft pools (a pool records one policy file "
              "per drafter); draft with its policy, or with the planner")


def is_trained(agent_name: str) -> bool:
    """A trained policy (a saved model or exported policy), not a baseline, greedy:NOISE, the
    planner or the metagame."""
    return not (is_builtin(agent_name) or agent_name == METAGAME)


def make_drafting_agent(agent_name: str, rules, seed: int, sample: bool = False,
                        path: str | Path | None = None):
    """The agent `agent_name` (make_agent's names). A trained policy loads from `path` (default:
    the name itself) and, with `sample`, samples its actions from the policy's distribution
    instead of taking the likeliest one (diverse ghosts; reproducible: PolicyAgent seeds torch
    with each run seed). A policy trained under other rules than `rules` warns, as make_agent's
    does."""
    if agent_name == METAGAME:
        return None             # boards of a pool, not an agent that plays
    if agent_name.startswith(SCHEDULE_PREFIX):
        raise ValueError(NO_SCHEDULES.format(agent_name))
    if agent_name.startswith(SAMPLED_PREFIX):
        raise ValueError(NO_SAMPLED.format(agent_name))
    if not is_trained(agent_name):
        if sample:
            raise ValueError(f"agent {agent_name!r}: only trained policies sample their actions")
        return make_agent(agent_name, rules, seed=seed)
    if path is None and not (agent_name.endswith((".zip", ".pt")) or Path(agent_name).exists()):
        make_agent(agent_name, rules, seed=seed)     # raises make_agent's "unknown agent"
    from agents.policy import PolicyAgent, check_model_rules
    check_model_rules(path or agent_name, rules)
    return PolicyAgent(str(path or agent_name), deterministic=not sample, rules=rules)


def ghosts_of(agent_name: str, rank: int, runs: int, seed: int, max_round: int,
              rules, env_kwargs: dict | None = None, agent=None, start: int = 0) -> list[dict]:
    """Play `runs` drafting runs (runs start.. of seed `seed`) and return a ghost per battle
    (rounds 1..max_round), labelled `agent_name`. `agent`: an agent object to play (default:
    make_agent(agent_name)). A run depends only on its run seed (the agent is reset with it), so
    runs may be played in any split (agents/cli/fanout.py)."""
    from rune_env.envs.run_env import RuneRunEnv
    agent = agent if agent is not None else make_agent(agent_name, rules, seed=seed)
    kwargs = {"opponents": DRAFTING_OPPONENTS, **(env_kwargs or {})}
    # the drafting runs play under `rules` (a designer's file too) with the rank's economy on top
    env = RuneRunEnv(rank=0, rules=rules, rules_overrides=drafting_overrides(rules, rank), **kwargs)
    rank_name = rules.spec.ranks[rank].id
    return [{"board": b["board"], "agent": agent_name, "seed": run_seed, "round": b["round"],
             "rank": rank_name}
            for run_seed, b in fielded_boards(env, agent, seed, runs, max_round, start)]


def fielded_boards(env, agent, seed: int, runs: int, last_round: int, start: int = 0,
                   refill: bool = False, before_act=None):
    """Yield (run seed, battle info) for every battle `agent` fields in runs start..start+runs-1
    of evaluation seed `seed` on `env`, rounds 1..last_round. The lamps never go out (the run
    plays on past lost lamps, and past the 10th win when `env`'s rules are endless), so every
    run reaches last_round; a run depends only on its run seed (the agent is reset with it).
    The drafting runs' lamps are a million from the start. `refill` keeps the run's own lamps
    and lights a lost one again after the agent's next choice, so that up to its first lost
    lamp the agent plays the run `evaluate.py` plays on the same seed (the same observations and
    state: a policy reads its lamps), and on past it (a run of one lamp: a million, as
    drafting). `before_act(state)`, if given, sees the run's state before each of the agent's
    choices (a copy is the caller's to make)."""
    for i in range(start, start + runs):
        run_seed = eval_run_seed(seed, i)
        obs, info = env.reset(options={"run_seed": run_seed})
        agent.reset(run_seed)
        full = env.state.lamps
        relight = refill and full > 1     # a run of one lamp cannot show the agent its own
        if not relight:
            env.state.lamps = 10**6   # play on past lost lamps (observations clip lamps at 1)
        while True:
            if before_act is not None:
                before_act(env.state)
            state = env.state if agent.needs_state else None
            action = agent.act(obs, info["action_mask"], state=state)
            if relight and env.state.lamps < full:
                env.state.lamps = full    # after the agent's choice, which saw the lost lamp
            obs, _, term, trunc, info = env.step(action)
            b = info.get("battle")
            if b is not None:
                yield run_seed, b
                if b["round"] >= last_round:
                    break
            if term or trunc:
                break


def metagame_ghosts(rules, rank: int, runs: int, max_round: int) -> list[dict]:
    """The shipped metagame's boards (`configs/meta/meta_<rules hash>.json.gz`) as a rank's
    ghosts, rounds 1..max_round: each round's `runs` drafts shared among its boards in
    proportion to their weights (largest remainders, ties to the earlier board), as many runs
    fielding the mixture would meet them. Only boards a run of the rank could field are kept:
    their cost within the rank's opponent budget of the round (D-44), their artifacts and hand
    within a fresh run's slots. ValueError when no metagame is shipped for the rules or a round
    has no such board."""
    from agents.search.boards import board_cost, hand_slots
    from agents.search.reference import meta_path
    from rune_env.run.opponents import load_pool, opponent_budget
    path = meta_path(rules)
    if not path.is_file():
        raise ValueError(f"{METAGAME}: no metagame shipped for the rules {rules.hash} "
                         f"({path}; scripts/metagame.py --rules FILE --out configs/meta makes "
                         f"it, or draft with a recipe file without the metagame agent)")
    pool = load_pool(path, rules, strict=True)
    effects = rank_effects(rules, rank)
    rank_name = rules.spec.ranks[rank].id
    missing = [r for r in range(1, max_round + 1) if not pool.boards(r, rules)]
    if missing:
        raise ValueError(f"{METAGAME}: {path} has no boards of round"
                         f"{'s' if len(missing) > 1 else ''} {round_ranges(missing)} (it was "
                         f"made for rounds {round_ranges(sorted(pool.rounds))}; "
                         f"a recipe drafts rounds 1-{max_round}: scripts/metagame.py --rules FILE "
                         f"--rounds 1-{max_round} --out {path.parent} --force)")
    unreached = [r for r in pool.provenance.get("unreached", []) if isinstance(r, int)
                 and r <= max_round]
    if unreached:
        import warnings
        warnings.warn(f"{METAGAME}: {path}: round{'s' if len(unreached) > 1 else ''} "
                      f"{round_ranges(unreached)} did not reach the metagame's target (a fresh "
                      f"best response beats the mixture): their boards are drafted as they are",
                      stacklevel=2)
    out = []
    for rnd in range(1, max_round + 1):
        budget = opponent_budget(rules, rnd, effects)
        kept = [(b, c) for b, c in zip(pool.boards(rnd, rules), pool.counts(rnd))
                if board_cost(b, rules) <= budget and len(b.hand) <= hand_slots(rules, b.core)
                and len(b.artifacts) <= rules.spec.run.artifact_slots]
        if not kept:
            raise ValueError(f"{METAGAME}: round {rnd} has no metagame board a {rank_name} run "
                             f"could field (budget {budget})")
        total = sum(c for _, c in kept)
        shares = [runs * c / total for _, c in kept]
        counts = [math.floor(s) for s in shares]
        by_remainder = sorted(range(len(kept)), key=lambda i: (-(shares[i] - counts[i]), i))
        for i in by_remainder[: runs - sum(counts)]:
            counts[i] += 1
        for (board, _), n in zip(kept, counts):
            if n:
                out.append({"board": board.replace(round=rnd).to_json(rules), "agent": METAGAME,
                            "seed": 0, "round": rnd, "rank": rank_name, "count": n})
    return out


def _board_key(g: dict) -> str:
    return json.dumps(g["board"], sort_keys=True)


def tally(ghosts: list[dict]) -> list[dict]:
    """One ghost per distinct (round, agent, board), in first-seen order (so its "seed" is the
    first run that drafted it), with "count": the drafts it stands for (existing counts add up).
    Keyed by agent too, so every entry says truly which agent drafted it: a board two agents
    both drafted is kept once for each, with each agent's count."""
    index: dict[tuple, dict] = {}
    out = []
    for g in ghosts:
        key = (g["round"], g.get("agent"), _board_key(g))
        if key in index:
            index[key]["count"] += ghost_count(g)
        else:
            index[key] = {**g, "count": ghost_count(g)}
            out.append(index[key])
    return out


def by_round(ghosts: list[dict]) -> dict[int, list[dict]]:
    rounds: dict[int, list[dict]] = {}
    for g in ghosts:
        rounds.setdefault(g["round"], []).append(g)
    return dict(sorted(rounds.items()))


def summary(pool: Pool) -> str:
    """Per round: distinct boards and the drafts they stand for; agents (boards/drafts), and the
    rune kinds, grades and cores of the distinct boards."""
    n_boards = sum(len(v) for v in pool.rounds.values())
    n_drafts = sum(ghost_count(g) for v in pool.rounds.values() for g in v)
    lines = [f"pool for {pool.rank}: {n_boards} boards ({n_drafts} drafts)"]
    for rnd, ghosts in sorted(pool.rounds.items()):
        kinds = Counter(k for g in ghosts for k, _ in g["board"]["runes"].values())
        grades = Counter(gr for g in ghosts for _, gr in g["board"]["runes"].values())
        cores = Counter(g["board"].get("core") for g in ghosts)
        agents = Counter(g.get("agent") for g in ghosts)
        drafts = Counter()
        for g in ghosts:
            drafts[g.get("agent")] += ghost_count(g)
        lines.append(f"round {rnd:>2}: {len(ghosts):>4} boards {sum(drafts.values()):>4} drafts"
                     " | agents (boards/drafts) "
                     + ", ".join(f"{a} {n}/{drafts[a]}" for a, n in agents.most_common())
                     + " | kinds " + ", ".join(f"{k} {n}" for k, n in kinds.most_common(5))
                     + " | grades " + ", ".join(f"{g}:{n}" for g, n in sorted(grades.items()))
                     + " | cores " + ", ".join(f"{c} {n}" for c, n in cores.most_common()))
    return "\n".join(lines)


def make_agents(names: list[str], seed: int, sample: bool, rules) -> list[tuple[str, int, Any]]:
    """(name, drafting seed, agent) of each name, agent i on seed seed * SEED_STRIDE + i; every
    agent is made (a policy loaded) before anything is drafted. `sample` reaches the trained
    policies only. A ValueError names the agent."""
    if any(is_trained(name) for name in names):
        from agents.policy import limit_torch_threads
        limit_torch_threads(1)   # one observation at a time: extra threads only spin
    agents = []
    for i, name in enumerate(names):
        agent_seed = seed * SEED_STRIDE + i
        try:
            agents.append((name, agent_seed, make_drafting_agent(
                name, rules, agent_seed, sample=sample and is_trained(name))))
        except ValueError as exc:   # an unknown name, a policy file that does not load
            raise ValueError(str(exc) if name in str(exc) else f"agent {name!r}: {exc}") from None
    return agents


def draft_ghosts(agents: list[tuple[str, int, Any]], rank: int, runs: int, max_round: int,
                 rules, progress: bool | None) -> list[dict]:
    """Every agent's ghosts of `runs` drafting runs, with a bar of the runs (`progress`: the
    --progress flag). A ValueError names the agent."""
    ghosts: list[dict] = []
    with bar(len(agents) * runs, "drafting", progress) as pb:
        for name, seed, agent in agents:
            pb.set_description(f"drafting {name}")
            counted = CountRuns(agent, pb)
            try:
                ghosts += ghosts_of(name, rank, runs, seed, max_round, rules, agent=counted)
            except ValueError as exc:
                raise ValueError(f"agent {name!r}: {exc}") from None
            counted.finish(runs)
    return ghosts
