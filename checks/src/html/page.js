// The counterexample page: the state panel follows the selected row; arrow keys step.
(function () {
  "use strict";
  var steps = JSON.parse(document.getElementById("steps").textContent);
  var rows = Array.prototype.slice.call(document.querySelectorAll("svg.swimlanes g.row"));
  var table = document.getElementById("state");
  var label = document.getElementById("step-label");
  var eventLine = document.getElementById("step-event");
  var initial = Number(document.body.getAttribute("data-initial-step")) || 0;
  var cur = -1;

  function cell(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    e.textContent = text;
    return e;
  }

  function show(k, scroll) {
    k = Math.max(0, Math.min(steps.length - 1, k));
    var prev = cur >= 0 ? steps[cur].values : steps[k].values;
    var before = {};
    prev.forEach(function (v) { before[v.group + "\u0000" + v.object] = v.value; });
    cur = k;
    var s = steps[k];
    rows.forEach(function (r) { r.classList.toggle("sel", Number(r.getAttribute("data-step")) === k); });
    var row = rows[k - 1];
    label.textContent = s.event === null ? "at the start" : "after #" + s.event + " (step " + k + " of " + (steps.length - 1) + ")";
    eventLine.textContent = s.event === null ? "before any event" : s.task + ": " + s.text + (s.in_cycle ? "  [in the cycle]" : "");
    eventLine.classList.toggle("violating", !!(row && row.classList.contains("violating")));
    while (table.firstChild) table.removeChild(table.firstChild);
    var group = null;
    s.values.forEach(function (v) {
      if (v.group !== group) {
        group = v.group;
        var g = document.createElement("tr");
        var th = cell("th", "group", group);
        th.colSpan = 2;
        g.appendChild(th);
        table.appendChild(g);
      }
      var tr = document.createElement("tr");
      tr.setAttribute("data-object", v.object);
      if (before[v.group + "\u0000" + v.object] !== v.value) tr.className = "changed";
      tr.appendChild(cell("td", "obj", v.object));
      tr.appendChild(cell("td", "val", v.value));
      table.appendChild(tr);
    });
    document.body.setAttribute("data-step", String(k));
    if (scroll && row) {
      // Scroll the drawing's own box (never the page) so that the row is in view.
      var box = document.querySelector(".diagram");
      var rb = row.getBoundingClientRect(), bb = box.getBoundingClientRect();
      if (rb.top < bb.top + 8 || rb.bottom > bb.bottom - 8) box.scrollTop += rb.top - bb.top - bb.height / 3;
      // And sideways, so that the row's own cell is in view when the lanes do not all fit.
      var c = row.querySelector("rect.cell");
      if (c) {
        var cb = c.getBoundingClientRect();
        if (cb.right > bb.right - 8 || cb.left < bb.left + 8) box.scrollLeft += cb.left - bb.left - 60;
      }
    }
    if (history.replaceState) history.replaceState(null, "", "#step=" + k);
  }

  function fromHash() {
    var m = /step=(e?)(\d+|last)/.exec(location.hash);
    if (!m) return initial;
    if (m[2] === "last") return steps.length - 1;
    var n = Number(m[2]);
    if (m[1] === "e") {
      for (var i = 0; i < steps.length; i++) if (steps[i].event === n) return i;
      return initial;
    }
    return n;
  }

  rows.forEach(function (r) {
    r.addEventListener("click", function () { show(Number(r.getAttribute("data-step")), false); });
  });
  Array.prototype.forEach.call(document.querySelectorAll("a.goto"), function (a) {
    a.addEventListener("click", function (e) {
      e.preventDefault();
      var n = Number(a.getAttribute("data-event"));
      for (var i = 0; i < steps.length; i++) if (steps[i].event === n) show(i, true);
    });
  });
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var k = { ArrowDown: cur + 1, ArrowRight: cur + 1, j: cur + 1, ArrowUp: cur - 1, ArrowLeft: cur - 1, k: cur - 1,
              Home: 0, End: steps.length - 1, v: initial, V: initial }[e.key];
    if (k === undefined) return;
    e.preventDefault();
    show(k, true);
  });
  // The drawing's box ends at the bottom of the window, so that a row scrolled into it is seen.
  var box = document.querySelector(".diagram");
  // Lanes: the drawing is scaled down (to 3/4 at most) to fit its box; if it is still wider,
  // the note above it says that it scrolls sideways and how many lanes are in view.
  var drawing = box.querySelector("svg.swimlanes");
  var note = document.getElementById("scroll-note");
  function fit() {
    var full = Number(drawing.getAttribute("width"));
    var avail = box.clientWidth - 12;
    var scale = Math.max(0.75, Math.min(1, avail / full));
    Array.prototype.forEach.call(box.querySelectorAll("svg"), function (s) {
      s.style.width = Number(s.getAttribute("width")) * scale + "px";
      s.style.height = Number(s.getAttribute("height")) * scale + "px";
    });
    var right = box.getBoundingClientRect().left + box.clientWidth;
    var lanes = drawing.querySelectorAll("g.lane rect");
    var seen = 0;
    Array.prototype.forEach.call(lanes, function (r) {
      if (r.getBoundingClientRect().right - box.scrollLeft <= right + 0.5) seen++;
    });
    document.body.setAttribute("data-scale", scale.toFixed(2));
    document.body.setAttribute("data-lanes-in-view", seen + " of " + lanes.length);
    note.hidden = seen === lanes.length;
    note.textContent = "The drawing is wider than its box: " + seen + " of " + lanes.length +
      " lanes are in view; scroll the drawing sideways (Shift and the mouse wheel) for the others, or widen the window.";
  }
  fit();
  window.addEventListener("resize", fit);
  box.style.maxHeight = Math.max(320, window.innerHeight - box.getBoundingClientRect().top - 12) + "px";
  // The lane heads stay in view once the drawing's own heads have scrolled away.
  box.addEventListener("scroll", function () { box.classList.toggle("scrolled", box.scrollTop > 90); });
  show(fromHash(), true);
  box.classList.toggle("scrolled", box.scrollTop > 90);
  document.body.setAttribute("data-ready", "yes");
})();
