"use strict";
// Free-text search of report.html: a phrase (case folded, Chinese as written) looked up in the sources, the
// memories, the questions with their gold answers, and the answers. The texts are folded once, at the first search.
const pageSearch = (function () {
  const PART = "\u0000"; // between two texts of one string: a phrase never holds it, so no match runs across
  // lower case, keeping every offset (a highlight indexes the text as written): a character whose lower case is
  // longer (İ: i and a dot above) stays as written
  function fold(text) {
    const low = text.toLowerCase();
    if (low.length === text.length) return low;
    let out = "";
    for (const c of text) {
      const l = c.toLowerCase();
      out += l.length === c.length ? l : c;
    }
    return out;
  }
  function needle(query) {
    return fold(query.trim()).split(PART).join("");
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

  // The texts of a goal other than its source, folded into one string (one look-up a goal, not one a text):
  // its questions with their gold answers, what its memories hold that is not in the source, and its answers,
  // parted by PART. A memory's verbatim spans need no text of their own: a phrase in one
  // is in the source, which keeps every answer of the goal.
  function index(data) {
    const sources = new Map();
    const goals = new WeakMap();
    function source(context) {
      if (!sources.has(context)) {
        const text = data.sources[context];
        sources.set(context, typeof text === "string" ? fold(text) : "");
      }
      return sources.get(context);
    }
    // parts in order: the questions, the memories of `keys`, the answers; `starts`: where each part begins
    function texts(goal) {
      let t = goals.get(goal);
      if (t) return t;
      const parts = goal.questions.map((q) => (q.refs.length ? q.text + "\n" + q.refs.join("\n") : q.text));
      const keys = [];
      for (const key in goal.memories) {
        const other = data.kept[goal.memories[key][0]].o;
        if (other) parts.push(other), keys.push(Number(key));
      }
      for (const r of goal.answers) parts.push(r.length > 5 ? r[5] : r[2] === null ? "" : r[2]);
      const starts = new Int32Array(parts.length);
      let at = 0;
      for (let i = 0; i < parts.length; i++) (starts[i] = at), (at += parts[i].length + 1);
      const joined = parts.join(PART);
      t = { source: source(goal.context), text: fold(joined), starts, questions: goal.questions.length, keys };
      goals.set(goal, t);
      return t;
    }
    function part(starts, at) {
      let lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid] <= at) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    }
    // (row, its index in goal.answers) -> whether the phrase is in the goal's source, the row's question or its
    // gold answers, the memory it read, or its answer
    function inGoal(goal, phrase) {
      const t = texts(goal);
      if (t.source.includes(phrase)) return () => true;
      const questions = new Set();
      const read = new Set();
      const answers = new Set();
      const memories = t.questions + t.keys.length;
      for (let at = t.text.indexOf(phrase); at !== -1; at = t.text.indexOf(phrase, at + 1)) {
        const i = part(t.starts, at);
        if (i < t.questions) questions.add(i);
        else if (i < memories) read.add(t.keys[i - t.questions]);
        else answers.add(i - memories);
      }
      if (!questions.size && !read.size && !answers.size) return () => false;
      return (row, j) => questions.has(row[0]) || read.has(row[1]) || answers.has(j);
    }
    // fold every goal's texts a few goals a task, so that the first search finds them folded; `done` at the end
    function warm(done, from = 0) {
      const end = Math.min(from + 40, data.goals.length);
      for (let i = from; i < end; i++) texts(data.goals[i]);
      if (end < data.goals.length) setTimeout(() => warm(done, end), 0);
      else done();
    }
    return { inGoal, warm };
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

  return { fold, needle, hits, index, markInto };
})();
