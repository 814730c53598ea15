"use strict";
// A person's labels on the answers of report.html: right or wrong, and a note, kept in the browser's storage
// under the run's key (every page from file:// shares one storage) and written out as a labels file, the JSON
// lines gacc_hf.scoring.labels reads (key, question_id, label, note). An answer's key is
// gacc_hf.keys.answer_key: the first 16 hex digits of sha256 of its question id and text joined by a newline,
// hashed by crypto.subtle, which a page has from file://, https:// and localhost (a secure context).
const pageLabels = (function () {
  const hashes = new Map(); // "question id\nanswer" -> the promise of its key
  const available = Boolean(window.isSecureContext && window.crypto && crypto.subtle);

  function hex(buffer) {
    return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
  }
  function key(questionId, answer) {
    const text = questionId + "\n" + answer;
    if (!hashes.has(text)) {
      const bytes = new TextEncoder().encode(text);
      hashes.set(text, crypto.subtle.digest("SHA-256", bytes).then((b) => hex(b).slice(0, 16)));
    }
    return hashes.get(text);
  }

  // the labels of one run: key -> [question id, "right" | "wrong", note]
  function open(run) {
    const name = "gacc-labels:" + run;
    let marks = {};
    let kept = true; // whether the browser keeps them (storage may be off: then they last as long as the page)
    try {
      const stored = JSON.parse(localStorage.getItem(name) || "{}");
      // only entries of the shape this page writes (an edited or older store is left out, not trusted)
      const fine = (k, v) =>
        /^[0-9a-f]{16}$/.test(k) && Array.isArray(v) && typeof v[0] === "string" && ["right", "wrong"].includes(v[1]);
      if (stored && typeof stored === "object" && !Array.isArray(stored)) {
        Object.entries(stored).forEach(([k, v]) => {
          if (fine(k, v)) marks[k] = [v[0], v[1], String(v[2] || "")];
        });
      }
    } catch (e) {
      kept = false;
    }
    function save() {
      try {
        localStorage.setItem(name, JSON.stringify(marks));
      } catch (e) {
        kept = false;
      }
    }
    return {
      get: (k) => (Object.prototype.hasOwnProperty.call(marks, k) ? marks[k] : null),
      // the same label again takes it off
      mark(k, questionId, label) {
        const before = this.get(k);
        if (before && before[1] === label) delete marks[k];
        else marks[k] = [questionId, label, before ? before[2] : ""];
        save();
      },
      note(k, text) {
        if (!this.get(k)) return;
        marks[k][2] = text;
        save();
      },
      count: () => Object.keys(marks).length,
      kept: () => kept,
      // the labels file, one label a line in key order
      lines() {
        return Object.keys(marks)
          .sort()
          .map((k) => {
            const [questionId, label, note] = marks[k];
            return JSON.stringify({ key: k, question_id: questionId, label, ...(note ? { note } : {}) }) + "\n";
          })
          .join("");
      },
    };
  }

  function download(text, filename) {
    const url = URL.createObjectURL(new Blob([text], { type: "application/x-ndjson" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = filename;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  return { available, key, open, download };
})();
