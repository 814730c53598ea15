"use strict";
// Free-text search of report.html: a phrase (case folded, Chinese as written) looked up in the sources, the
// memories, the questions with their gold answers, and the answers. The texts are folded once, at the first search.
const pageSearch = (function () {
  // lower case where that keeps every offset (a highlight indexes the text as written), else the text as written
  function fold(text) {
    const low = text.toLowerCase();
    return low.length === text.length ? low : text;
  }
  function needle(query) {
    return fold(query.trim());
  }
  function pairs(flat) {
    const out = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
    return out;
  }
  // [[start, end], ...]: where the phrase occurs in `text`, in UTF-16 code units as JS strings index
  function hits(text, phrase) {
    const out = [];
    if (!phrase || !text) return out;
    const hay = fold(String(text));
    for (let at = hay.indexOf(phrase); at !== -1; at = hay.indexOf(phrase, at + phrase.length)) {
      out.push([at, at + phrase.length]);
    }
    return out;
  }

  function index(data) {
    const sources = new Map();
    const memories = new Map();
    const goals = new WeakMap();
    function source(context) {
      if (!sources.has(context)) {
        const text = data.sources[context];
        sources.set(context, typeof text === "string" ? fold(text) : "");
      }
      return sources.get(context);
    }
    // a memory's text: the spans of its source it copies, then what it holds that is not in the source
    function memory(k, context) {
      if (!memories.has(k)) {
        const m = data.kept[k];
        const text = data.sources[context];
        const copied = typeof text === "string" ? pairs(m.s).map(([s, e]) => text.slice(s, e)) : [];
        memories.set(k, fold(copied.concat(m.o ? [m.o] : []).join("\n")));
      }
      return memories.get(k);
    }
    function texts(goal) {
      let t = goals.get(goal);
      if (!t) {
        t = {
          source: source(goal.context),
          questions: goal.questions.map((q) => fold([q.text].concat(q.refs).join("\n"))),
          memories: Object.entries(goal.memories).map(([key, m]) => [Number(key), memory(m[0], goal.context)]),
          answers: goal.answers.map((r) => fold(String(r.length > 5 ? r[5] : r[2] ?? ""))),
        };
        goals.set(goal, t);
      }
      return t;
    }
    // (row, its index in goal.answers) -> whether the phrase is in the goal's source, the row's question, the
    // memory it read, or its answer
    function inGoal(goal, phrase) {
      const t = texts(goal);
      if (t.source.includes(phrase)) return () => true;
      const questions = t.questions.map((q) => q.includes(phrase));
      const read = new Set(t.memories.filter(([, text]) => text.includes(phrase)).map(([key]) => key));
      return (row, j) => questions[row[0]] || read.has(row[1]) || t.answers[j].includes(phrase);
    }
    return { inGoal };
  }

  // append `text` to `node`, the phrase's occurrences as <mark class="hit"> (every piece set as text)
  function markInto(node, text, phrase) {
    const value = text === null || text === undefined ? "" : String(text);
    let at = 0;
    hits(value, phrase).forEach(([s, e]) => {
      if (s > at) node.appendChild(document.createTextNode(value.slice(at, s)));
      const mark = document.createElement("mark");
      mark.className = "hit";
      mark.textContent = value.slice(s, e);
      node.appendChild(mark);
      at = e;
    });
    if (at < value.length) node.appendChild(document.createTextNode(value.slice(at)));
    return node;
  }

  return { needle, hits, index, markInto };
})();
