"""The battle replay page: ONE self-contained HTML file (inline CSS, JS and SVG; no network).

    replay_html(board_a, board_b, rules, names=("A", "B")) -> str
    python -m rune_env replay A.json B.json -o replay.html [--rules FILE]

The page plays the battle from its trace (`battle(a, b, rules, trace=True).events`, RULES.md
section 18), one *moment* (the events of one millisecond) at a time: both circles (the SVG of
`board_image`, with hidden layers the script shows), HP and barrier bars, the rune casting at that
moment outlined in white with its power, seals (dark, red ring), freezes (cyan), wards left (the
shield's number; a ward spent flashes), reserves taking a cell (the new rune drawn there, its hand
slot crossed out), curses, drizzle charges, doll uses, and the overdrive factor. Controls: play /
pause, step back and forward, to start, to end, speed, and a time slider (keys: space, left, right).

Everything the page shows is computed by its script from the trace alone: the HP at each moment is
the "hp" of the moment's last event, clamped at 0, so the HP shown at the end is the battle's result.
For tests: the element #result carries the engine's result in data-winner, data-time, data-hp0,
data-hp1 and data-reason; #hp-0 and #hp-1 carry the HP the page shows in data-hp; #slider's value
and max, and #time's data-t, tell where the replay is; document.body's data-ready="1" says the
script ran.
"""
from __future__ import annotations

import html
import json
import math
from typing import Any

from ..battle import battle
from ..battle.analysis import SideSetup
from ..rules.board import Board
from ..rules.config import Rules, default_rules
from ..rules.geometry import geometry
from .board_image import ReplayMarks, board_scene, status_line
from .scene import to_svg


def _clean(x: Any) -> Any:
    """JSON-safe: non-finite floats become null (the trace has none; this is only a guard)."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def replay_data(board_a: Board, board_b: Board, rules: Rules | None = None,
                names: tuple[str, str] = ("A", "B")) -> tuple[dict[str, Any], list[str]]:
    """The page's data (sides, events, result) and the two circles' SVG."""
    rules = rules or default_rules()
    geo = geometry(rules.radius)
    result = battle(board_a, board_b, rules, trace=True)
    events = result.events or []
    sides, svgs = [], []
    for side, board in enumerate((board_a, board_b)):
        setup = SideSetup.of(board, rules)
        reserves = [(geo.parse(e["cell"]), e["kind"], e["grade"]) for e in events
                    if e["type"] == "reserve" and e["side"] == side]
        marks = ReplayMarks(prefix=f"s{side}-", reserves=reserves, wards=setup.wards)
        scene = board_scene(board, rules, annotate=False, replay=marks)
        svgs.append(to_svg(scene, {"id": f"circle-{side}", "class": "circle"}))
        sides.append({
            "name": names[side], "label": board.label, "status": status_line(board, rules),
            "max_hp": setup.max_hp, "doll_uses": setup.doll_uses, "seal_cap": setup.seal_cap,
            "interval_ms": setup.interval_ms,
            # D-50: a board with fewer turn cells than the minimum cycle rests at each cycle's end
            "cycle_turns": setup.cycle_turns, "rest_turns": setup.rest_turns,
            "wards": {geo.name(c): w for c, w in enumerate(setup.wards) if w and c in board.runes},
            "hand": [list(h) for h in board.hand],
        })
    od = rules.spec.overdrive
    data = {
        "sides": sides,
        "events": events,
        "result": {"winner": result.winner, "time": result.time, "hp": list(result.hp),
                   "max_hp": list(result.max_hp), "casts": list(result.casts),
                   "reason": result.reason},
        "overdrive": {"start_s": od.start_s, "per_second": od.per_second},
        "duration_s": rules.spec.battle.duration_s,
    }
    return _clean(data), svgs


def replay_html(board_a: Board, board_b: Board, rules: Rules | None = None,
                names: tuple[str, str] = ("A", "B"), title: str | None = None) -> str:
    """The whole page as one string."""
    data, svgs = replay_data(board_a, board_b, rules, names)
    res = data["result"]
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False)
    payload = payload.replace("</", "<\\/").replace("<!--", "<\\!--")
    title = title or f"Rune Circle replay: {names[0]} vs {names[1]}"
    esc = html.escape
    winner = "" if res["winner"] is None else str(res["winner"])

    def panel(side: int) -> str:
        s = data["sides"][side]
        return f"""
<section class="side" id="side-{side}">
 <h2><span class="tag">side {side}</span> {esc(s['name'])}</h2>
 <div class="label">{esc(s['label'])}</div>
 <div class="bars">
  <div class="bar hp" id="hpbar-{side}"><div class="fill" id="hpfill-{side}"></div>
   <span class="btext">HP <b id="hp-{side}" data-hp="{s['max_hp']!r}">{s['max_hp']:.1f}</b> / {s['max_hp']:g}</span></div>
  <div class="bar barrier" id="barbar-{side}"><div class="fill" id="barfill-{side}"></div>
   <span class="btext">barrier <b id="barrier-{side}" data-barrier="0">0.0</b></span></div>
 </div>
 <div class="chips">
  <span class="chip" id="casts-{side}">casts 0</span>
  <span class="chip" id="seals-{side}">sealed 0 / cap {s['seal_cap']}</span>
  <span class="chip rest" id="rests-{side}" title="rest turns: a cycle lasts at least {s['cycle_turns']} turns" {'' if s['rest_turns'] else 'hidden'}>rests 0 ({s['rest_turns']} a cycle)</span>
  <span class="chip curse" id="curse-{side}" hidden>cursed</span>
  <span class="chip drizzle" id="drizzle-{side}" hidden>drizzle</span>
  <span class="chip doll" id="doll-{side}" {'' if s['doll_uses'] else 'hidden'}>doll {s['doll_uses']}</span>
 </div>
 {svgs[side]}
</section>"""

    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{esc(title)}</title>
<link rel="icon" href="data:,">
<style>{_CSS}</style>
</head>
<body data-ready="0">
<header>
 <h1>{esc(title)}</h1>
 <div id="result" hidden data-winner="{winner}" data-time="{res['time']!r}" data-hp0="{res['hp'][0]!r}"
  data-hp1="{res['hp'][1]!r}" data-reason="{esc(res['reason'])}"></div>
</header>
<div class="controls">
 <button id="btn-start" title="to the start">&#xAB; start</button>
 <button id="btn-back" title="one moment back (left arrow)">&#x2039; back</button>
 <button id="btn-play" title="play / pause (space)">&#x25B6; play</button>
 <button id="btn-step" title="one moment forward (right arrow)">step &#x203A;</button>
 <button id="btn-end" title="to the end">end &#xBB;</button>
 <label>speed <select id="speed"><option value="0.5">0.5x</option><option value="1">1x</option>
  <option value="2" selected>2x</option><option value="4">4x</option><option value="10">10x</option></select></label>
 <input type="range" id="slider" min="0" max="0" value="0" step="1">
 <span id="time" data-t="0">t = 0.000 s</span>
 <span id="overdrive" class="chip">overdrive x1.0</span>
</div>
<main>{panel(0)}{panel(1)}</main>
<section id="moment"><h3>this moment</h3><ol id="log"></ol></section>
<footer>White outline: the rune casting now, with its power. Dark with a red ring: sealed. Cyan:
frozen. Shield: wards left. A crossed-out hand slot: that reserve has taken a cell. Diamonds:
artifacts (W ward stone, F furnace, S spring, D doll).</footer>
<script type="application/json" id="battle-data">{payload}</script>
<script>{_JS}</script>
</body>
</html>
"""


_CSS = """
body{background:#11141b;color:#e8ecf4;font-family:"DejaVu Sans",Verdana,Arial,sans-serif;margin:0;padding:10px 16px}
h1{font-size:18px;margin:4px 0}
h2{font-size:15px;margin:4px 0}
h3{font-size:13px;margin:6px 0;color:#9aa3b5}
.tag{font-size:11px;color:#11141b;background:#9aa3b5;border-radius:3px;padding:1px 5px;vertical-align:middle}
#result{font-size:15px;font-weight:bold;color:#ffd23f;margin:4px 0}
.controls{display:flex;align-items:center;gap:8px;flex-wrap:wrap;background:#1b1f2a;padding:6px 8px;border-radius:6px}
.controls button{background:#2a3040;color:#e8ecf4;border:1px solid #454e63;border-radius:4px;padding:3px 9px;font-size:14px;cursor:pointer}
.controls button:hover{background:#39415a}
#slider{flex:1;min-width:200px}
#time{font-variant-numeric:tabular-nums;min-width:150px}
main{display:flex;gap:16px;flex-wrap:wrap;margin-top:8px}
.side{background:#161a23;border-radius:6px;padding:6px 10px;flex:1;min-width:480px}
.label{font-size:12px;color:#9aa3b5;min-height:15px}
.bars{margin:6px 0}
.bar{position:relative;height:20px;background:#2a3040;border-radius:4px;margin:3px 0;overflow:hidden}
.bar .fill{position:absolute;left:0;top:0;bottom:0;width:100%;transition:width .12s}
.hp .fill{background:#3fae5a}.hp.low .fill{background:#d9534f}
.barrier .fill{background:#6c8ebf;width:0}
.bar .btext{position:relative;padding-left:6px;font-size:12px;line-height:20px}
.bar.hit{outline:2px solid #ff4d6d}
.chips{display:flex;gap:6px;flex-wrap:wrap;font-size:12px}
.chip{background:#2a3040;border-radius:10px;padding:1px 8px;font-size:12px}
.chip.curse{background:#6a3a8c}.chip.drizzle{background:#2d5f8a}.chip.doll{background:#8a4d6c}
.chip.flash,.flash{outline:2px solid #ffd23f}
#overdrive.on{background:#b33a1f}
svg.circle{display:block;max-width:100%;height:auto;margin:4px auto 0}
#moment{background:#161a23;border-radius:6px;padding:4px 10px;margin-top:8px;font-size:12px}
#log{margin:0;padding-left:22px;max-height:180px;overflow:auto}
footer{font-size:11px;color:#9aa3b5;margin-top:8px}
"""

_JS = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("battle-data").textContent);
  var ev = D.events, sides = D.sides;
  var $ = function (id) { return document.getElementById(id); };
  // moments: the events of one millisecond; moment 0 is the start
  var moments = [{t: 0, start: 0, end: 0}];
  for (var i = 0; i < ev.length;) {
    var j = i;
    while (j < ev.length && ev[j].t === ev[i].t) j++;
    moments.push({t: ev[i].t, start: i, end: j});
    i = j;
  }
  // a battle that ends later than its last event (a timeout; two empty boards have no event
  // at all) ends on a moment of its own, so the clock and the overdrive reach the result's time
  if (D.result.time > moments[moments.length - 1].t)
    moments.push({t: D.result.time, start: ev.length, end: ev.length});
  var last = moments.length - 1;
  var slider = $("slider");
  slider.max = String(last);
  var cur = 0, timer = null;

  function cellId(side, cell, what) { return "s" + side + "-" + what + "-" + cell.replace(":", "-"); }
  function fmt(x) { return (Math.round(x * 10) / 10).toFixed(1); }

  function fresh(s) {
    var w = {};
    for (var k in sides[s].wards) w[k] = sides[s].wards[k];
    return {hp: sides[s].max_hp, barrier: 0, sealed: {}, frozen: {}, wards: w, reserve: {},
            curseUntil: 0, cursed: false, drizzle: 0, doll: sides[s].doll_uses, used: {},
            casts: 0, seals: 0, rests: 0};
  }

  function apply(st, e) {
    st[0].hp = e.hp[0]; st[1].hp = e.hp[1];
    st[0].barrier = e.barrier[0]; st[1].barrier = e.barrier[1];
    var s = st[e.side];
    switch (e.type) {
      case "cast": if (e.copy_of === undefined && !e.repeat) s.casts++; break;
      case "rest": s.rests++; break;
      case "seal": s.sealed[e.cell] = true; s.seals++; break;
      case "unseal": delete s.sealed[e.cell]; s.seals--; break;
      case "reserve":
        delete s.sealed[e.cell]; delete s.frozen[e.cell]; s.wards[e.cell] = 0;
        s.reserve[e.cell] = e.kind + ":" + e.grade; s.used[e.slot] = true; break;
      case "freeze": s.frozen[e.cell] = e.until; break;
      case "thaw": delete s.frozen[e.cell]; break;
      case "curse": s.curseUntil = Math.max(s.curseUntil, e.until); s.cursed = true; break;
      case "curse_end": s.cursed = false; break;
      case "ward": s.wards[e.cell] = e.wards_left; break;
      case "doll": s.doll = e.uses_left; break;
      case "drizzle_charge": case "drizzle_use": s.drizzle = e.charges; break;
    }
  }

  function stateAt(m) {
    var st = [fresh(0), fresh(1)];
    for (var i = 0; i < moments[m].end; i++) apply(st, ev[i]);
    return st;
  }

  function describe(e) {
    var who = "side " + e.side + " (" + sides[e.side].name + ")";
    var at = e.cell ? " at " + e.cell : "";
    switch (e.type) {
      case "cast": return who + ": " + e.kind + at + " casts, power " + fmt(e.value) +
        (e.copy_of ? " (copy of " + e.copy_of + ")" : "") + (e.repeat ? " (second cast)" : "");
      case "hit": return who + " is hit for " + fmt(e.value) + " from " + e.source +
        (e.absorbed ? " (" + fmt(e.absorbed) + " absorbed)" : "");
      case "heal": return who + " heals " + fmt(e.value) + at + (e.overflow ? " (overflow " + fmt(e.overflow) + ")" : "");
      case "barrier": return who + " gains " + fmt(e.value) + " barrier" + at;
      case "barrier_strip": return who + " loses " + fmt(e.value) + " barrier (discharge from " + e.source + ")";
      case "reflect": return who + " takes " + fmt(e.value) + " reflected";
      case "erosion": return who + " is eroded";
      case "doll": return who + ": the doll absorbs the erosion (" + e.uses_left + " left)";
      case "ward": return who + ": a ward" + at + " is spent (" + e.wards_left + " left)";
      case "seal": return who + ": the rune" + at + " is sealed";
      case "seal_capped": return who + ": seal cap reached, " + e.cell + " stays";
      case "reserve": return who + ": reserve " + e.kind + " " + e.grade + " (slot " + e.slot + ") takes " + e.cell;
      case "unseal": return who + ": " + e.cell + " unsealed (" + e.cause + ")";
      case "freeze": return who + ": " + e.cell + " frozen until " + e.until + " s";
      case "thaw": return who + ": " + e.cell + " thaws";
      case "curse": return who + " is cursed until " + e.until + " s";
      case "curse_end": return who + ": the curse ends";
      case "storm_delay": return who + ": next turn delayed " + e.value + " ms";
      case "drizzle_charge": return who + " gets a drizzle charge (" + e.charges + ")";
      case "drizzle_use": return who + " uses a drizzle charge (" + e.charges + " left)";
      case "delay_skip": return who + ": " + e.cell + " skips (delay)";
      case "rest": return who + ": a rest turn, nothing is cast (a cycle lasts at least " +
        sides[e.side].cycle_turns + " turns)";
    }
    return who + ": " + e.type;
  }

  function show(el, on) { if (el) { if (on) el.removeAttribute("display"); else el.setAttribute("display", "none"); } }

  function render(m) {
    cur = Math.max(0, Math.min(last, m));
    slider.value = String(cur);
    var mo = moments[cur], t = mo.t, st = stateAt(cur);
    var timeEl = $("time");
    timeEl.textContent = "t = " + t.toFixed(3) + " s / " + moments[last].t.toFixed(3) + " s";
    timeEl.setAttribute("data-t", String(t));
    var od = 1 + D.overdrive.per_second * Math.max(0, Math.floor(t + 1e-9) - D.overdrive.start_s);
    var odEl = $("overdrive");
    odEl.textContent = "overdrive x" + od.toFixed(1);
    odEl.className = "chip" + (od > 1 ? " on" : "");
    var now = ev.slice(mo.start, mo.end);
    for (var s = 0; s < 2; s++) {
      var x = st[s], maxhp = sides[s].max_hp, hp = Math.max(0, x.hp);
      var hpEl = $("hp-" + s);
      hpEl.textContent = fmt(hp);
      hpEl.setAttribute("data-hp", String(hp));
      $("hpfill-" + s).style.width = (100 * hp / maxhp) + "%";
      $("hpbar-" + s).className = "bar hp" + (hp < 0.25 * maxhp ? " low" : "");
      var barEl = $("barrier-" + s);
      barEl.textContent = fmt(x.barrier);
      barEl.setAttribute("data-barrier", String(x.barrier));
      $("barfill-" + s).style.width = Math.min(100, 100 * x.barrier / maxhp) + "%";
      $("casts-" + s).textContent = "casts " + x.casts;
      $("seals-" + s).textContent = "sealed " + x.seals + " / cap " + sides[s].seal_cap;
      $("rests-" + s).textContent = "rests " + x.rests + " (" + sides[s].rest_turns + " a cycle)";
      var cursed = x.cursed && x.curseUntil > t + 1e-9;
      $("curse-" + s).hidden = !cursed;
      $("curse-" + s).textContent = "cursed until " + x.curseUntil + " s";
      $("drizzle-" + s).hidden = !x.drizzle;
      $("drizzle-" + s).textContent = "drizzle charges " + x.drizzle;
      $("doll-" + s).textContent = "doll " + x.doll;
      var cells = document.querySelectorAll("#circle-" + s + " g.cell");
      for (var c = 0; c < cells.length; c++) {
        var g = cells[c], name = g.getAttribute("data-cell");
        var frozen = x.frozen[name] !== undefined && x.frozen[name] > t + 1e-9;
        show(g.querySelector(".ov-freeze"), frozen);
        show(g.querySelector(".ov-seal"), !!x.sealed[name]);
        show(g.querySelector(".ov-cast"), false);
        var alts = g.querySelectorAll(".alt");
        for (var a = 0; a < alts.length; a++) show(alts[a], alts[a].getAttribute("data-rune") === x.reserve[name]);
        var wb = g.querySelector(".wards");
        if (wb) {
          var n = x.wards[name] || 0;
          show(wb, n > 0);
          wb.querySelector(".wards-n").textContent = String(n);
          wb.classList.remove("flash");
        }
      }
      for (var h = 0; h < sides[s].hand.length; h++) {
        var slot = $("s" + s + "-h-" + h);
        if (slot) show(slot.querySelector(".ov-used"), !!x.used[h]);
      }
      $("hpbar-" + s).classList.remove("hit");
    }
    var casts = {};
    var log = $("log");
    while (log.firstChild) log.removeChild(log.firstChild);
    now.forEach(function (e) {
      var li = document.createElement("li");
      li.textContent = describe(e);
      log.appendChild(li);
      if (e.type === "cast" && e.cell) {
        var key = e.side + "|" + e.cell;
        casts[key] = (casts[key] || []).concat([e.value]);
        var g = $(cellId(e.side, e.cell, "c"));
        var ov = g && g.querySelector(".ov-cast");
        if (ov) {
          show(ov, true);
          var vals = casts[key];
          ov.querySelector(".castval").textContent = fmt(vals[0]) + (vals.length > 1 ? " x" + vals.length : "");
        }
      } else if (e.type === "hit" || e.type === "reflect") {
        $("hpbar-" + e.side).classList.add("hit");
      } else if (e.type === "ward" && e.cell) {
        var w = $(cellId(e.side, e.cell, "w"));
        if (w) { show(w, true); w.classList.add("flash"); }
      }
    });
    var resEl = $("result");
    if (cur === last) {
      var r = D.result;
      resEl.textContent = (r.winner === null ? "Draw" : "Side " + r.winner + " (" + sides[r.winner].name + ") wins") +
        " by " + r.reason + " at " + r.time + " s: HP " + fmt(Math.max(0, st[0].hp)) + " vs " + fmt(Math.max(0, st[1].hp));
      resEl.hidden = false;
    } else {
      resEl.hidden = true;
    }
  }

  function stop() {
    if (timer !== null) { clearTimeout(timer); timer = null; }
    $("btn-play").textContent = "\u25B6 play";
  }
  function tick() {
    if (cur >= last) { stop(); return; }
    var dt = moments[cur + 1].t - moments[cur].t;
    render(cur + 1);
    var speed = parseFloat($("speed").value) || 1;
    timer = setTimeout(tick, Math.max(16, 1000 * dt / speed));
  }
  function play() {
    if (timer !== null) { stop(); return; }
    if (cur >= last) render(0);
    $("btn-play").textContent = "\u275A\u275A pause";
    var speed = parseFloat($("speed").value) || 1;
    timer = setTimeout(tick, Math.max(16, 1000 * (moments[Math.min(last, cur + 1)].t - moments[cur].t) / speed));
  }

  $("btn-play").addEventListener("click", play);
  $("btn-step").addEventListener("click", function () { stop(); render(cur + 1); });
  $("btn-back").addEventListener("click", function () { stop(); render(cur - 1); });
  $("btn-start").addEventListener("click", function () { stop(); render(0); });
  $("btn-end").addEventListener("click", function () { stop(); render(last); });
  slider.addEventListener("input", function () { stop(); render(parseInt(slider.value, 10)); });
  document.addEventListener("keydown", function (k) {
    if (k.target && k.target.tagName === "SELECT") return;
    if (k.key === " ") { k.preventDefault(); play(); }
    else if (k.key === "ArrowRight") { stop(); render(cur + 1); }
    else if (k.key === "ArrowLeft") { stop(); render(cur - 1); }
  });
  render(0);
  document.body.setAttribute("data-ready", "1");
})();
"""
