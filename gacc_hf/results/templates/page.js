"use strict";
// The goal browser of report.html: filters, counts, one goal drawn at a time. Every text from the data is set
// with textContent (never parsed as HTML); offsets in the data are UTF-16 code units, as JS strings index.
(function () {
  const data = JSON.parse(document.getElementById("page-data").textContent);
  const cells = data.cells; // [compressor, condition, ratio, ceiling]
  const outcomes = data.outcomes;
  const NONE = "-"; // a row without a verdict (the reader or judge failed)
  const $ = (id) => document.getElementById(id);
  const settings = data.settings; // a run of several (reader, judge) settings: their labels
  const FILTERS = ["compressor", "condition", "ratio", "language", "outcome"].concat(settings ? ["setting"] : []);
  if (settings) data.goals.forEach((g) => g.answers.forEach((r, i) => (r.setting = g.settings[i])));

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function option(value, label) {
    const node = el("option", label);
    node.value = value;
    return node;
  }
  function cellName(i) {
    const c = cells[i];
    const bound = c[1] === "closed" ? " (floor)" : " (ceiling)";
    return c[0] + " · " + c[1] + " · " + c[2] + (c[3] ? bound : "");
  }
  function outcomeName(row) {
    return row[4] === null ? NONE : outcomes[row[4]];
  }
  function unique(values) {
    return Array.from(new Set(values));
  }
  function pairs(flat) {
    const out = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
    return out;
  }

  function fillFilters() {
    const seen = { compressor: [], condition: [], ratio: [], language: [], outcome: [], setting: settings || [] };
    cells.forEach((c) => {
      seen.compressor.push(c[0]);
      seen.condition.push(c[1]);
      seen.ratio.push(String(c[2]));
    });
    data.goals.forEach((g) => {
      seen.language.push(g.language || NONE);
      g.answers.forEach((r) => seen.outcome.push(outcomeName(r)));
    });
    seen.outcome = outcomes.concat(seen.outcome.includes(NONE) ? [NONE] : []);
    FILTERS.forEach((name) => {
      const select = $("f-" + name);
      const labels = { [NONE]: name === "outcome" ? "no verdict" : "not recorded" };
      select.replaceChildren(option("", "all"), ...unique(seen[name]).map((v) => option(v, labels[v] || v)));
      select.addEventListener("change", update);
    });
  }

  function matches(goal, row, chosen) {
    const c = cells[row[1]];
    return (
      (!chosen.compressor || c[0] === chosen.compressor) &&
      (!chosen.condition || c[1] === chosen.condition) &&
      (!chosen.ratio || String(c[2]) === chosen.ratio) &&
      (!chosen.language || (goal.language || NONE) === chosen.language) &&
      (!chosen.outcome || outcomeName(row) === chosen.outcome) &&
      (!chosen.setting || row.setting === undefined || settings[row.setting] === chosen.setting)
    );
  }

  function chosenFilters() {
    const chosen = {};
    FILTERS.forEach((name) => (chosen[name] = $("f-" + name).value));
    return chosen;
  }

  function update() {
    const chosen = chosenFilters();
    const counts = {};
    let visible = 0;
    let total = 0;
    const shown = [];
    data.goals.forEach((goal, i) => {
      let n = 0;
      goal.answers.forEach((row) => {
        total += 1;
        if (matches(goal, row, chosen)) {
          n += 1;
          counts[outcomeName(row)] = (counts[outcomeName(row)] || 0) + 1;
        }
      });
      visible += n;
      if (n) shown.push([i, n]);
    });
    $("visible").textContent = String(visible);
    $("total").textContent = String(total);
    $("outcome-counts").replaceChildren(
      ...outcomes.concat([NONE]).map((name) => {
        const span = el("span", (name === NONE ? "no verdict" : name) + " " + (counts[name] || 0), "o-" + name);
        span.dataset.outcome = name;
        span.dataset.count = String(counts[name] || 0);
        return span;
      })
    );
    $("goal-count").textContent = shown.length + " goal(s)";
    const goalSelect = $("goal");
    const before = goalSelect.value;
    goalSelect.replaceChildren(...shown.map(([i, n]) => option(String(i), data.goals[i].id + " (" + n + ")")));
    if (shown.some(([i]) => String(i) === before)) goalSelect.value = before;
    drawGoal();
  }

  function fillSides(goal, chosen) {
    const keys = Object.keys(goal.memories).map(Number);
    const preferred = keys.filter((k) => matches(goal, [0, k, null, null, null], { ...chosen, outcome: "" }));
    const methods = preferred.filter((k) => !cells[k][3]);
    const first = methods[0] ?? preferred[0] ?? keys[0];
    // B: another compressor on A's condition and ratio where there is one, to show what one kept and not the other
    const rival = methods.find((k) => cells[k][0] !== cells[first][0] && cells[k][1] === cells[first][1]);
    [
      ["side-a", first],
      ["side-b", rival ?? methods[1] ?? ""],
    ].forEach(([id, fallback]) => {
      const select = $(id);
      const before = select.value;
      select.replaceChildren(option("", "none"), ...keys.map((k) => option(String(k), cellName(k))));
      const keep = keys.some((k) => String(k) === before) && select.dataset.goal === goal.id;
      select.value = keep ? before : fallback === undefined ? "" : String(fallback);
      select.dataset.goal = goal.id;
    });
  }

  function covered(spans, at) {
    let lo = 0;
    let hi = spans.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (spans[mid][1] <= at) lo = mid + 1;
      else if (spans[mid][0] > at) hi = mid - 1;
      else return true;
    }
    return false;
  }

  function mergeMarks(spans) {
    const sorted = spans.slice().sort((x, y) => x[0] - y[0]);
    const out = [];
    sorted.forEach((s) => {
      if (out.length && s[0] <= out[out.length - 1][1]) out[out.length - 1][1] = Math.max(out[out.length - 1][1], s[1]);
      else out.push([s[0], s[1]]);
    });
    return out;
  }

  function paintSource(source, a, b, marks) {
    const box = el("div", null, "source");
    box.id = "source";
    const cuts = new Set([0, source.length]);
    [a, b, marks].forEach((spans) => spans.forEach((s) => (cuts.add(s[0]), cuts.add(s[1]))));
    const points = Array.from(cuts).sort((x, y) => x - y);
    for (let i = 0; i + 1 < points.length; i++) {
      const [start, end] = [points[i], points[i + 1]];
      const inA = covered(a, start);
      const inB = covered(b, start);
      const cls = [inA && inB ? "k-ab" : inA ? "k-a" : inB ? "k-b" : "", covered(marks, start) ? "ref" : ""];
      const text = source.slice(start, end);
      box.appendChild(cls.join("").length ? el("span", text, cls.join(" ").trim()) : document.createTextNode(text));
    }
    return box;
  }

  function besideBox(label, key, goal, hasSource) {
    const wrap = el("div");
    if (key === "") return wrap;
    const [k, kept, budget, error] = goal.memories[key];
    const m = data.kept[k];
    const tokens = kept === null ? "" : " — " + kept + (budget === null ? "" : " / " + budget) + " tokens";
    wrap.appendChild(el("h3", label + ": " + cellName(Number(key)) + tokens, label === "A" ? "k-a" : "k-b"));
    if (error) wrap.appendChild(el("p", "error: " + error, "warn"));
    const note = hasSource ? "kept, not verbatim in the source:" : "the memory (no source in this folder):";
    if (m.o) wrap.append(el("p", note), el("pre", m.o));
    else if (hasSource) wrap.appendChild(el("p", "all of it verbatim in the source (" + m.s.length / 2 + " span(s))"));
    return wrap;
  }

  function answerTable(goal, chosen) {
    const wrap = el("div");
    goal.questions.forEach((q, qi) => {
      const rows = goal.answers.filter((r) => r[0] === qi && matches(goal, r, chosen));
      if (!rows.length) return;
      wrap.appendChild(el("h3", q.text, "text question"));
      wrap.appendChild(el("p", "gold: " + q.refs.join(" | ") + " (" + q.id + ")", "text refs"));
      const table = el("table", null, "answers");
      const head = el("tr");
      ["memory", "answer", "verdict", "outcome"].forEach((h) => head.appendChild(el("th", h)));
      table.appendChild(head);
      rows.forEach((r) => {
        const tr = el("tr");
        tr.dataset.outcome = outcomeName(r);
        const answer = r.length > 5 ? "error: " + r[5] : r[2];
        const verdict = r[3] === null ? "—" : r[3] ? "✓ right" : "✗ wrong";
        const name = outcomeName(r);
        const memory = cellName(r[1]) + (settings ? " · " + settings[r.setting] : "");
        [memory, answer, verdict].forEach((t) => tr.appendChild(el("td", t, "text")));
        tr.appendChild(el("td", name === NONE ? "no verdict" : name, "o-" + name));
        table.appendChild(tr);
      });
      wrap.appendChild(table);
    });
    return wrap;
  }

  function drawGoal() {
    const view = $("goal-view");
    const index = $("goal").value;
    if (index === "") return view.replaceChildren(el("p", "No answer matches these filters."));
    const goal = data.goals[Number(index)];
    const chosen = chosenFilters();
    fillSides(goal, chosen);
    const [a, b] = [$("side-a").value, $("side-b").value];
    const spans = (key) => (key === "" ? [] : pairs(data.kept[goal.memories[key][0]].s));
    const source = data.sources[goal.context];
    const hasSource = typeof source === "string";
    const head = el("h2", "Goal " + goal.id + " — context " + goal.context + (goal.language ? " — " + goal.language : ""));
    const marks = mergeMarks(goal.questions.flatMap((q) => pairs(q.marks)));
    const left = hasSource
      ? paintSource(source, spans(a), spans(b), marks)
      : el("p", "No source in this folder: a run with the `full` condition records it.", "source");
    const beside = el("div", null, "beside");
    beside.append(besideBox("A", a, goal, hasSource), besideBox("B", b, goal, hasSource));
    const panes = el("div", null, "panes");
    panes.append(left, beside);
    view.replaceChildren(head, panes, answerTable(goal, chosen));
  }

  fillFilters();
  $("goal").addEventListener("change", drawGoal);
  $("side-a").addEventListener("change", drawGoal);
  $("side-b").addEventListener("change", drawGoal);
  update();
  document.body.dataset.ready = "1";
})();
