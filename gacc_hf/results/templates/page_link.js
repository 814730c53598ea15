"use strict";
// The state of report.html in its URL fragment (goal, filters, search, memories beside, sort, one answer), so a
// link reopens the same view: read on load and on every fragment change, written (replaced) on every change.
const pageLink = (function () {
  const FILTERS = ["compressor", "condition", "ratio", "language", "outcome", "setting", "judges"];
  const KEYS = ["goal", ...FILTERS, "q", "a", "b", "sort", "answer"];
  let written = null;
  function read() {
    const params = new URLSearchParams(location.hash.slice(1));
    const state = {};
    KEYS.forEach((key) => {
      if (params.has(key)) state[key] = params.get(key);
    });
    return state;
  }
  function text(state) {
    const params = new URLSearchParams();
    KEYS.forEach((key) => {
      if (state[key]) params.set(key, state[key]);
    });
    return params.toString();
  }
  function write(state) {
    written = text(state);
    if (location.hash.slice(1) !== written) location.replace("#" + written);
  }
  // `apply` runs on a fragment changed from outside (a link followed, the address edited), not on our own writes
  function listen(apply) {
    window.addEventListener("hashchange", () => {
      if (location.hash.slice(1) !== written) apply(read());
    });
  }
  return { read, text, write, listen };
})();
