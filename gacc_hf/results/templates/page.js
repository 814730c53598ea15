"use strict";
// The goal browser of report.html: search, filters, counts, sortable answer tables, one goal drawn at a time, and
// the view kept in the URL fragment; each judge's verdict beside an answer (a run of several judges) and a
// person's labels on it (page_labels.js). Every text from the data is set with textContent (never parsed as HTML);
// offsets in the data are UTF-16 code units, as JS strings index.
(function () {
  const data = JSON.parse(document.getElementById("page-data").textContent);
  const cells = data.cells; // [compressor, condition, ratio, ceiling]
  const outcomes = data.outcomes;
  const NONE = "-"; // a row without a verdict (the reader or judge failed)
  const $ = (id) => document.getElementById(id);
  const settings = data.settings; // a run of several (reader, judge) settings: their labels
  const roles = data.roles || []; // [reader, judge] of each setting
  const judges = unique(roles.map((r) => r[1])); // several: each answer's verdicts side by side, and their filter
  const FILTERS = ["compressor", "condition", "ratio", "language", "outcome"]
    .concat(settings ? ["setting"] : [])
    .concat(judges.length > 1 ? ["judges"] : []);
  const COLUMNS = ["memory", "answer", "verdict", "outcome"]; // of an answer table, each sortable
  const collator = new Intl.Collator();
  let found = null; // the search index, built at the first search
  let sort = { key: "", dir: "asc" };
  let pending = null; // the sides and answer of a link being opened, applied when its goal is drawn
  let named = ""; // the answer a link named: marked, and kept in the link, until the view is changed
  if (settings) data.goals.forEach((g) => g.answers.forEach((r, i) => (r.setting = g.settings[i])));
  if (judges.length > 1) data.goals.forEach(judgedTogether);
  const labels = pageLabels.open(data.run);
  let painting = 0; // the goal drawn last: a label paint of an earlier one is dropped

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function marked(tag, text, cls, phrase) {
    return pageSearch.markInto(el(tag, null, cls), text, phrase);
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
  function answerText(row) {
    return row.length > 5 ? "error: " + row[5] : row[2];
  }
  function unique(values) {
    return Array.from(new Set(values));
  }
  // the rows of one answer (a reader's, to one question, from one memory) judged by several judges share
  // `judged` (judge -> verdict); `split`: their verdicts differ (one right, one wrong; a failed verdict is none)
  function judgedTogether(goal) {
    const answers = new Map();
    goal.answers.forEach((r) => {
      const at = r[0] + "|" + r[1] + "|" + roles[r.setting][0];
      if (!answers.has(at)) answers.set(at, {});
      r.judged = answers.get(at);
      r.judged[roles[r.setting][1]] = r[3];
    });
    goal.answers.forEach((r) => {
      const said = Object.values(r.judged);
      r.split = said.includes(0) && said.includes(1);
    });
  }
  function pairs(flat) {
    const out = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
    return out;
  }
  function choose(select, value) {
    // a value this page does not offer (a link to another run, say) leaves the first option
    const offered = Array.from(select.options).some((o) => o.value === value);
    select.value = offered ? value : select.options.length ? select.options[0].value : "";
  }

  function fillFilters() {
    const seen = { compressor: [], condition: [], ratio: [], language: [], outcome: [], setting: settings || [] };
    seen.judges = ["disagree", "agree"];
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
      const none = { [NONE]: name === "outcome" ? "no verdict" : "not recorded" };
      const names = name === "judges" ? JUDGED : none;
      select.replaceChildren(option("", "all"), ...unique(seen[name]).map((v) => option(v, names[v] || v)));
      select.addEventListener("change", byUser(update));
    });
  }
  const JUDGED = { disagree: "judges disagree", agree: "judges agree" };
  function byUser(draw) {
    return () => {
      named = "";
      draw();
    };
  }

  function matches(goal, row, chosen) {
    const c = cells[row[1]];
    return (
      (!chosen.compressor || c[0] === chosen.compressor) &&
      (!chosen.condition || c[1] === chosen.condition) &&
      (!chosen.ratio || String(c[2]) === chosen.ratio) &&
      (!chosen.language || (goal.language || NONE) === chosen.language) &&
      (!chosen.outcome || outcomeName(row) === chosen.outcome) &&
      (!chosen.setting || row.setting === undefined || settings[row.setting] === chosen.setting) &&
      (!chosen.judges || row.split === undefined || row.split === (chosen.judges === "disagree"))
    );
  }

  function chosenFilters() {
    const chosen = {};
    FILTERS.forEach((name) => (chosen[name] = $("f-" + name).value));
    return chosen;
  }

  function phrase() {
    return pageSearch.needle($("search").value);
  }
  // (row, index) -> whether the search found the row; null without a search
  function searched(goal, needle) {
    if (needle && !found) found = pageSearch.index(data);
    return needle ? found.inGoal(goal, needle) : null;
  }
  // (row, index) -> whether the row is shown: the filters, and the search where there is one
  function shownIn(goal, chosen, needle) {
    const hit = searched(goal, needle);
    return (row, j) => matches(goal, row, chosen) && (!hit || hit(row, j));
  }

  function update() {
    const chosen = chosenFilters();
    const needle = phrase();
    const counts = {};
    let visible = 0;
    let total = 0;
    const shown = [];
    const split = new Set(); // the answers shown on which the judges disagree
    data.goals.forEach((goal, i) => {
      const hit = searched(goal, needle);
      let n = 0;
      goal.answers.forEach((row, j) => {
        total += 1;
        if (matches(goal, row, chosen) && (!hit || hit(row, j))) {
          n += 1;
          counts[outcomeName(row)] = (counts[outcomeName(row)] || 0) + 1;
          if (row.split) split.add(row.judged);
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
    const disagree = $("disagree-count");
    disagree.dataset.count = judges.length > 1 ? String(split.size) : "";
    disagree.textContent = judges.length > 1 ? "judges disagree on " + split.size + " answer(s)" : "";
    const count = $("search-count");
    count.dataset.answers = needle ? String(visible) : "";
    count.dataset.goals = needle ? String(shown.length) : "";
    count.textContent = needle ? "found in " + visible + " answer(s) of " + shown.length + " goal(s)" : "";
    const goalSelect = $("goal");
    let before = goalSelect.value;
    if (pending && pending.goal !== undefined) {
      before = String(data.goals.findIndex((g) => g.id === pending.goal));
    }
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
      ["side-a", first, "a"],
      ["side-b", rival ?? methods[1] ?? "", "b"],
    ].forEach(([id, fallback, key]) => {
      const select = $(id);
      const before = select.value;
      select.replaceChildren(option("", "none"), ...keys.map((k) => option(String(k), cellName(k))));
      const keep = keys.some((k) => String(k) === before) && select.dataset.goal === goal.id;
      if (pending && pending[key] !== undefined) choose(select, pending[key]);
      else select.value = keep ? before : fallback === undefined ? "" : String(fallback);
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

  function paintSource(source, a, b, marks, hits) {
    const box = el("div", null, "source");
    box.id = "source";
    const cuts = new Set([0, source.length]);
    [a, b, marks, hits].forEach((spans) => spans.forEach((s) => (cuts.add(s[0]), cuts.add(s[1]))));
    const points = Array.from(cuts).sort((x, y) => x - y);
    for (let i = 0; i + 1 < points.length; i++) {
      const [start, end] = [points[i], points[i + 1]];
      const inA = covered(a, start);
      const inB = covered(b, start);
      const hit = covered(hits, start);
      const cls = [inA && inB ? "k-ab" : inA ? "k-a" : inB ? "k-b" : "", covered(marks, start) ? "ref" : "", hit ? "hit" : ""];
      const text = source.slice(start, end);
      const name = cls.filter(Boolean).join(" ");
      box.appendChild(name ? el(hit ? "mark" : "span", text, name) : document.createTextNode(text));
    }
    return box;
  }

  function besideBox(label, key, goal, hasSource, needle) {
    const wrap = el("div");
    if (key === "") return wrap;
    const [k, kept, budget, error] = goal.memories[key];
    const m = data.kept[k];
    const tokens = kept === null ? "" : " — " + kept + (budget === null ? "" : " / " + budget) + " tokens";
    wrap.appendChild(el("h3", label + ": " + cellName(Number(key)) + tokens, label === "A" ? "k-a" : "k-b"));
    if (error) wrap.appendChild(el("p", "error: " + error, "warn"));
    const note = hasSource ? "kept, not verbatim in the source:" : "the memory (no source in this folder):";
    if (m.o) wrap.append(el("p", note), marked("pre", m.o, null, needle));
    else if (hasSource) wrap.appendChild(el("p", "all of it verbatim in the source (" + m.s.length / 2 + " span(s))"));
    return wrap;
  }

  // sort keys of an answer row; a missing one (no verdict, an error) goes last either way
  function compareCells(x, y) {
    const [a, b] = [cells[x], cells[y]];
    return collator.compare(a[0], b[0]) || collator.compare(a[1], b[1]) || a[2] - b[2];
  }
  const ORDER = {
    memory: (x, y) => compareCells(x[1], y[1]),
    answer: (x, y) => collator.compare(String(answerText(x) ?? ""), String(answerText(y) ?? "")),
    verdict: (x, y) => x[3] - y[3],
    outcome: (x, y) => x[4] - y[4],
  };
  const MISSING = { memory: () => false, answer: (r) => r.length > 5 || r[2] === null, verdict: (r) => r[3] === null, outcome: (r) => r[4] === null };
  function sorted(rows) {
    if (!ORDER[sort.key]) return rows;
    const sign = sort.dir === "desc" ? -1 : 1;
    const missing = MISSING[sort.key];
    return rows.slice().sort((x, y) => {
      const [mx, my] = [missing(x), missing(y)];
      if (mx || my) return mx - my;
      return sign * ORDER[sort.key](x, y);
    });
  }

  function answerHead() {
    const head = el("tr");
    COLUMNS.forEach((key) => {
      const th = el("th", key, "sortable");
      th.dataset.key = key;
      th.tabIndex = 0;
      if (sort.key === key) th.setAttribute("aria-sort", sort.dir === "asc" ? "ascending" : "descending");
      const flip = () => {
        sort = { key, dir: sort.key === key && sort.dir === "asc" ? "desc" : "asc" };
        named = "";
        drawGoal();
      };
      th.addEventListener("click", flip);
      th.addEventListener("keydown", (e) => (e.key === "Enter" || e.key === " " ? (e.preventDefault(), flip()) : null));
      head.appendChild(th);
    });
    if (judges.length > 1) head.appendChild(el("th", "judges"));
    head.appendChild(el("th", "label"));
    head.appendChild(el("th", "link"));
    return head;
  }

  function answerKey(goal, row) {
    return row[1] + "~" + goal.questions[row[0]].id + (settings ? "~" + row.setting : "");
  }

  // each judge's verdict on the row's answer
  function judgesCell(row) {
    const td = el("td", null, "judges");
    judges.forEach((judge) => {
      if (!(judge in row.judged)) return;
      const v = row.judged[judge];
      const mark = v === null ? "—" : v ? "✓" : "✗";
      const span = el("span", judge + " " + mark, v === null ? "" : v ? "o-right" : "o-lost");
      span.dataset.judge = judge;
      span.dataset.verdict = v === null ? "" : v ? "right" : "wrong";
      td.appendChild(span);
    });
    return td;
  }

  // right / wrong buttons and a note; painted once the answer's key is known (`paintLabels`)
  function labelCell(goal, row, tr, painted) {
    const td = el("td", null, "label");
    if (row.length > 5 || typeof row[2] !== "string") return td; // no answer to label (the reader failed)
    const qid = goal.questions[row[0]].id;
    const buttons = ["right", "wrong"].map((label) => {
      const button = el("button", label);
      button.type = "button";
      button.dataset.label = label;
      button.disabled = !pageLabels.available;
      button.addEventListener("click", () =>
        pageLabels.key(qid, row[2]).then((k) => {
          labels.mark(k, qid, label);
          repaint(k);
        })
      );
      return button;
    });
    const note = el("input");
    note.type = "text";
    note.placeholder = "note";
    note.disabled = true;
    note.addEventListener("change", () =>
      pageLabels.key(qid, row[2]).then((k) => {
        labels.note(k, note.value);
        repaint(k);
      })
    );
    td.append(...buttons, note);
    if (pageLabels.available) painted.push([tr, pageLabels.key(qid, row[2])]);
    return td;
  }
  function showLabel(tr) {
    const mark = labels.get(tr.dataset.key);
    tr.querySelectorAll("td.label button").forEach((b) => {
      b.setAttribute("aria-pressed", String(Boolean(mark && mark[1] === b.dataset.label)));
    });
    const note = tr.querySelector("td.label input");
    note.disabled = !mark;
    if (note !== document.activeElement) note.value = mark ? mark[2] : "";
    tr.dataset.label = mark ? mark[1] : "";
  }
  function repaint(k) {
    document.querySelectorAll("#goal-view tr[data-key]").forEach((tr) => {
      if (tr.dataset.key === k) showLabel(tr);
    });
    countLabels();
  }
  function paintLabels(painted) {
    const view = $("goal-view");
    const drawn = ++painting;
    view.dataset.labels = "";
    Promise.all(painted.map(([tr, k]) => k.then((key) => (tr.dataset.key = key)))).then(() => {
      if (drawn !== painting) return;
      painted.forEach(([tr]) => showLabel(tr));
      view.dataset.labels = "ready";
    });
  }
  function countLabels() {
    const n = labels.count();
    const count = $("label-count");
    count.dataset.count = String(n);
    count.textContent = !pageLabels.available
      ? "labelling needs the page opened from file://, https:// or localhost"
      : n + " labelled" + (labels.kept() ? "" : " (not kept: this browser's storage is off)");
    $("export-labels").disabled = !n;
  }

  function answerTable(goal, keep, needle, target, painted) {
    const wrap = el("div");
    const state = { ...linkState(), answer: "" };
    goal.questions.forEach((q, qi) => {
      const rows = goal.answers.filter((r, j) => r[0] === qi && keep(r, j));
      if (!rows.length) return;
      wrap.appendChild(marked("h3", q.text, "text question", needle));
      const refs = el("p", "gold: ", "text refs");
      q.refs.forEach((ref, i) => pageSearch.markInto(refs, (i ? " | " : "") + ref, needle));
      refs.appendChild(document.createTextNode(" (" + q.id + ")"));
      wrap.appendChild(refs);
      const table = el("table", null, "answers");
      table.appendChild(answerHead());
      sorted(rows).forEach((r) => {
        const tr = el("tr");
        const key = answerKey(goal, r);
        tr.dataset.outcome = outcomeName(r);
        tr.dataset.answer = key;
        if (key === target) tr.classList.add("target");
        const verdict = r[3] === null ? "—" : r[3] ? "✓ right" : "✗ wrong";
        const name = outcomeName(r);
        const memory = cellName(r[1]) + (settings ? " · " + settings[r.setting] : "");
        tr.appendChild(el("td", memory, "text"));
        tr.appendChild(marked("td", answerText(r), "text", needle));
        tr.appendChild(el("td", verdict, "text"));
        tr.appendChild(el("td", name === NONE ? "no verdict" : name, "o-" + name));
        if (judges.length > 1) tr.appendChild(judgesCell(r));
        if (r.split) tr.classList.add("split");
        tr.appendChild(labelCell(goal, r, tr, painted));
        const link = el("a", "link");
        link.href = "#" + pageLink.text({ ...state, answer: key });
        const td = el("td");
        td.appendChild(link);
        tr.appendChild(td);
        table.appendChild(tr);
      });
      wrap.appendChild(table);
    });
    return wrap;
  }

  function linkState() {
    const state = chosenFilters();
    const index = $("goal").value;
    if (index !== "") state.goal = data.goals[Number(index)].id;
    state.q = $("search").value.trim();
    state.a = $("side-a").value;
    state.b = $("side-b").value;
    state.sort = sort.key ? sort.key + "-" + sort.dir : "";
    state.answer = named;
    return state;
  }

  // the view into the address and into "link to this view"
  function writeLink() {
    const state = linkState();
    pageLink.write(state);
    $("share").href = "#" + pageLink.text(state);
  }

  function drawGoal() {
    const view = $("goal-view");
    const index = $("goal").value;
    const opened = pending && pending.answer;
    if (pending) named = pending.answer || "";
    if (index === "") {
      pending = null;
      named = "";
      view.replaceChildren(el("p", "No answer matches these filters."));
      paintLabels([]);
      $("search-here").textContent = "";
      $("search-here").dataset.count = "";
      return writeLink();
    }
    const goal = data.goals[Number(index)];
    const chosen = chosenFilters();
    const needle = phrase();
    fillSides(goal, chosen);
    pending = null;
    const [a, b] = [$("side-a").value, $("side-b").value];
    const spans = (key) => (key === "" ? [] : pairs(data.kept[goal.memories[key][0]].s));
    const source = data.sources[goal.context];
    const hasSource = typeof source === "string";
    const head = el("h2", "Goal " + goal.id + " — context " + goal.context + (goal.language ? " — " + goal.language : ""));
    const marks = mergeMarks(goal.questions.flatMap((q) => pairs(q.marks)));
    const left = hasSource
      ? paintSource(source, spans(a), spans(b), marks, pageSearch.hits(source, needle))
      : el("p", "No source in this folder: a run with the `full` condition records it.", "source");
    const beside = el("div", null, "beside");
    beside.append(besideBox("A", a, goal, hasSource, needle), besideBox("B", b, goal, hasSource, needle));
    const panes = el("div", null, "panes");
    panes.append(left, beside);
    writeLink();
    const painted = [];
    view.replaceChildren(head, panes, answerTable(goal, shownIn(goal, chosen, needle), needle, named, painted));
    paintLabels(painted);
    const n = view.querySelectorAll("mark.hit").length;
    $("search-here").dataset.count = needle ? String(n) : "";
    $("search-here").textContent = needle ? n + " highlighted in this goal" : "";
    const row = opened && view.querySelector("tr.target");
    if (row) row.scrollIntoView({ block: "center" });
  }

  function openLink(state) {
    FILTERS.forEach((name) => choose($("f-" + name), state[name] || ""));
    $("search").value = state.q || "";
    const [key, dir] = (state.sort || "").split("-");
    sort = ORDER[key] && (dir === "asc" || dir === "desc") ? { key, dir } : { key: "", dir: "asc" };
    pending = state;
    update();
  }

  fillFilters();
  countLabels();
  $("export-labels").addEventListener("click", () => pageLabels.download(labels.lines(), "labels.jsonl"));
  $("search").addEventListener("input", byUser(update));
  $("goal").addEventListener("change", byUser(drawGoal));
  $("side-a").addEventListener("change", byUser(drawGoal));
  $("side-b").addEventListener("change", byUser(drawGoal));
  pageLink.listen(openLink);
  openLink(pageLink.read());
  document.body.dataset.ready = "1";
  // the search's texts are folded after the first render, while the page is idle
  if (!found) found = pageSearch.index(data);
  setTimeout(() => found.warm(() => (document.body.dataset.indexed = "1")), 0);
})();
