"use strict";
// The board of index.html: search, filters, a sortable table and two SVG plots of the cells shown. Every text from
// the data is set with textContent (never parsed as HTML); a run's link is the bundle's own relative path.
(function () {
  const data = JSON.parse(document.getElementById("board-data").textContent);
  const rows = data.rows;
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  const FILTERS = ["data", "compressor", "reader", "judge", "condition", "ratio", "language"];
  const AXES = { tokens: "memory tokens read per question", compressor_cost: "compressor cost per question", compressor_seconds: "compressor seconds per question" };
  const fixed = (d) => (v) => (v === null || v === undefined ? "" : Number(v).toFixed(d));
  const withCi = (key) => (r) => (r[key] === null || r[key] === undefined ? "" : r[key].toFixed(3) + (r[key + "_ci"] ? " [" + r[key + "_ci"][0].toFixed(3) + ", " + r[key + "_ci"][1].toFixed(3) + "]" : ""));
  // [field, heading, shown text]; the table sorts by the field's value
  const COLUMNS = [
    ["pareto_tokens", "Pareto rank", (r) => (r.pareto_tokens === null ? "" : String(r.pareto_tokens))],
    ["compressor", "compressor", (r) => r.compressor + (r.revision ? " (" + r.revision + ")" : "") + (r.bound ? " — " + r.bound : "")],
    ["reader", "reader", (r) => r.reader],
    ["judge", "judge", (r) => r.judge],
    ["condition", "condition", (r) => r.condition],
    ["ratio", "ratio", (r) => String(r.ratio)],
    ["run", "run", (r) => r.run],
    ["micro", "Micro [95% CI]", withCi("micro")],
    ["macro", "Macro [95% CI]", withCi("macro")],
    ["evidence_micro", "evidence recall [95% CI]", withCi("evidence_micro")],
    ["retention", "retention [95% CI]", withCi("retention")],
    ["auc", "Micro AUC [95% CI]", withCi("auc")],
    ["tokens", "memory tokens read", fixed(1)],
    ["compressor_seconds", "compressor s / question", fixed(4)],
    ["compressor_cost", "compressor cost / question", fixed(6)],
    ["questions", "questions", (r) => String(r.questions ?? "")],
    ["date", "date", (r) => r.date],
  ];
  const collator = new Intl.Collator();
  const FIRST = 500; // rows listed before "list all": a sort or a search redraws at most these
  let whole = false;
  let sortKey = "micro";
  let sortDir = "desc";

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    Object.entries(attrs).forEach(([k, v]) => node.setAttribute(k, String(v)));
    if (text !== undefined) node.textContent = String(text);
    return node;
  }
  function option(value, label) {
    const node = el("option", label);
    node.value = value;
    return node;
  }
  function values(r, name) {
    if (name === "language") return r.languages;
    return [String(r[name])];
  }

  function fillFilters() {
    FILTERS.forEach((name) => {
      const seen = Array.from(new Set(rows.flatMap((r) => values(r, name))));
      const select = $("f-" + name);
      const label = name === "data" ? (key) => data.groups.find((g) => g.key === key).name : (v) => v;
      // cells on different data are never ranked together: with several data sets, one is shown at a time
      const all = name === "data" && seen.length > 1 ? [] : [option("", "all")];
      select.replaceChildren(...all, ...seen.map((v) => option(v, label(v))));
      select.addEventListener("change", update);
    });
    $("axis").replaceChildren(...Object.keys(AXES).map((k) => option(k, AXES[k])));
    $("axis").addEventListener("change", update);
    $("search").addEventListener("input", update);
    $("more").addEventListener("click", () => {
      whole = true;
      drawTable(shownRows());
    });
  }

  function searchText(r) {
    return [r.run, r.compressor, r.revision, r.reader, r.judge, r.condition, String(r.ratio), r.data_name, r.bound, r.date]
      .concat(r.languages)
      .join(" ")
      .toLowerCase();
  }
  rows.forEach((r) => (r._text = searchText(r)));

  function shownRows() {
    const words = $("search").value.toLowerCase().split(/\s+/).filter(Boolean);
    const chosen = {};
    FILTERS.forEach((name) => (chosen[name] = $("f-" + name).value));
    return rows.filter(
      (r) =>
        FILTERS.every((name) => !chosen[name] || values(r, name).includes(chosen[name])) &&
        words.every((w) => r._text.includes(w))
    );
  }

  function compare(a, b) {
    const [x, y] = [a[sortKey], b[sortKey]];
    const missing = (v) => v === null || v === undefined || v === "";
    if (missing(x) || missing(y)) return missing(x) - missing(y); // empty cells last, either way
    const order = typeof x === "number" ? x - y : collator.compare(String(x), String(y));
    return sortDir === "asc" ? order : -order;
  }

  function drawHead() {
    $("board-head").replaceChildren(
      ...COLUMNS.map(([key, label]) => {
        const th = el("th", label);
        th.dataset.key = key;
        if (key === sortKey) th.dataset.dir = sortDir;
        th.addEventListener("click", () => {
          sortDir = key === sortKey && sortDir === "desc" ? "asc" : "desc";
          sortKey = key;
          drawHead();
          drawTable(shownRows()); // the same cells: the plots stay
        });
        return th;
      })
    );
  }

  function tableRow(r) {
    const tr = el("tr", null, r.bound ? "bound" : "");
    COLUMNS.forEach(([key, , text]) => {
      const td = el("td", null, key === "pareto_tokens" && r.pareto_tokens === 1 ? "front" : "");
      if (key === "run") {
        const a = el("a", text(r));
        a.href = data.pages[r.run];
        td.appendChild(a);
      } else td.textContent = text(r);
      tr.appendChild(td);
    });
    tr.dataset.run = r.run;
    return tr;
  }

  function drawTable(shown) {
    const sorted = shown.slice().sort(compare);
    const body = document.createDocumentFragment();
    const listed = whole ? sorted : sorted.slice(0, FIRST);
    listed.forEach((r) => body.appendChild(r._tr || (r._tr = tableRow(r)))); // each row built once, then moved
    $("board-body").replaceChildren(body);
    $("more").hidden = listed.length === sorted.length;
    $("more").textContent = "list all " + sorted.length + " cells (the first " + FIRST + " are listed)";
    $("shown").textContent = String(shown.length);
    $("total").textContent = String(rows.length);
  }

  // a plot frame: x and y scales over the given ranges, axes with ticks, labels
  function frame(box, xs, ys, xLabel, yLabel) {
    const [W, H, L, B] = [560, 340, 56, 40];
    const root = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img" });
    const x0 = Math.min(...xs);
    const x1 = Math.max(...xs) > x0 ? Math.max(...xs) : x0 + 1;
    const y1 = Math.max(1e-9, ...ys);
    const sx = (v) => L + ((v - x0) / (x1 - x0)) * (W - L - 12);
    const sy = (v) => H - B - (v / y1) * (H - B - 12);
    root.appendChild(svg("line", { x1: L, y1: H - B, x2: W - 12, y2: H - B, stroke: "#333" }));
    root.appendChild(svg("line", { x1: L, y1: 12, x2: L, y2: H - B, stroke: "#333" }));
    for (let i = 0; i <= 4; i++) {
      const [xv, yv] = [x0 + ((x1 - x0) * i) / 4, (y1 * i) / 4];
      root.appendChild(svg("text", { x: sx(xv), y: H - B + 14, "text-anchor": "middle" }, Number(xv.toPrecision(3))));
      root.appendChild(svg("text", { x: L - 4, y: sy(yv) + 4, "text-anchor": "end" }, yv.toFixed(2)));
    }
    root.appendChild(svg("text", { x: (L + W) / 2, y: H - 6, "text-anchor": "middle" }, xLabel));
    root.appendChild(svg("text", { x: 12, y: H / 2, transform: "rotate(-90 12 " + H / 2 + ")", "text-anchor": "middle" }, yLabel));
    box.replaceChildren(root);
    return { root, sx, sy, x0, x1 };
  }
  const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];
  const color = (i) => COLORS[i % COLORS.length];

  function drawCurves(shown) {
    const methods = shown.filter((r) => !r.bound && r.micro !== null);
    // the bounds of every run shown, whatever the condition and ratio chosen: the lines the curves sit between
    const runs = new Set(methods.map((r) => r.run + "\u0000" + r.reader + "\u0000" + r.judge));
    const bounds = rows.filter((r) => r.bound && r.micro !== null && runs.has(r.run + "\u0000" + r.reader + "\u0000" + r.judge));
    const series = new Map();
    methods.forEach((r) => {
      const key = [r.run, r.compressor, r.condition, r.reader, r.judge].join(" · ");
      if (!series.has(key)) series.set(key, []);
      series.get(key).push(r);
    });
    const ratios = methods.map((r) => r.ratio);
    const micros = methods.concat(bounds).map((r) => r.micro);
    const plot = frame($("curves"), ratios.length ? [0, ...ratios] : [0, 1], micros.length ? micros : [1], "retention ratio r", "Micro");
    const drawn = Array.from(series.entries()).slice(0, COLORS.length * 3);
    $("curves-legend").replaceChildren(
      ...drawn.map(([key], i) => {
        const item = el("li", null);
        const swatch = el("span");
        swatch.style.background = color(i);
        item.append(swatch, document.createTextNode(key));
        return item;
      }),
      ...(series.size > drawn.length ? [el("li", "and " + (series.size - drawn.length) + " more: filter to see them")] : [])
    );
    drawn.forEach(([key, points], i) => {
      points.sort((a, b) => a.ratio - b.ratio);
      const path = points.map((p) => plot.sx(p.ratio) + "," + plot.sy(p.micro)).join(" ");
      const line = svg("polyline", { points: path, fill: "none", stroke: color(i), "stroke-width": 1.6 });
      line.appendChild(svg("title", {}, key));
      plot.root.appendChild(line);
      points.forEach((p) => plot.root.appendChild(svg("circle", { cx: plot.sx(p.ratio), cy: plot.sy(p.micro), r: 2.5, fill: color(i) })));
    });
    bounds.forEach((r) => {
      const y = plot.sy(r.micro);
      const dash = r.bound === "floor" ? "2,3" : "6,4";
      const line = svg("line", { x1: plot.sx(plot.x0), x2: plot.sx(plot.x1), y1: y, y2: y, stroke: "#555", "stroke-dasharray": dash });
      line.appendChild(svg("title", {}, r.run + " · " + r.compressor + " · " + r.condition + " (" + r.bound + ")"));
      plot.root.appendChild(line);
    });
  }

  function drawPareto(shown) {
    const axis = $("axis").value;
    const points = shown.filter((r) => !r.bound && r.micro !== null && r[axis] !== null);
    const box = $("pareto");
    if (!points.length) return box.replaceChildren(el("p", "No cell shown records " + AXES[axis] + "."));
    const plot = frame(box, points.map((r) => r[axis]), points.map((r) => r.micro), AXES[axis], "Micro");
    const fronts = new Map();
    points.forEach((r) => {
      const front = r["pareto_" + axis] === 1;
      const dot = svg("circle", { cx: plot.sx(r[axis]), cy: plot.sy(r.micro), r: front ? 5 : 3, fill: front ? "#fff" : "#1f77b4", stroke: "#1f77b4", "stroke-width": front ? 2 : 1 });
      dot.appendChild(svg("title", {}, r.run + " · " + r.compressor + " · " + r.condition + " · " + r.ratio + " · " + r.reader));
      if (front) dot.dataset.front = "1";
      plot.root.appendChild(dot);
      const key = r.data + "\u0000" + r.condition;
      if (front) fronts.set(key, (fronts.get(key) || []).concat([r]));
    });
    fronts.forEach((members) => {
      members.sort((a, b) => a[axis] - b[axis]);
      const path = members.map((p) => plot.sx(p[axis]) + "," + plot.sy(p.micro)).join(" ");
      plot.root.appendChild(svg("polyline", { points: path, fill: "none", stroke: "#1b6e20", "stroke-dasharray": "4,2" }));
    });
  }

  function update() {
    const shown = shownRows();
    drawTable(shown);
    drawCurves(shown);
    drawPareto(shown);
  }

  fillFilters();
  drawHead();
  update();
  document.body.dataset.ready = "1";
})();
